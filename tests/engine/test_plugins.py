"""A plugin package from outside the project, found through its entry points.

The package (``tests/support/plugin_package.py``) is pip-installed on a temporary path; the project's
files are not touched (checked: ``git status`` of the checkout is the same before and after).
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.support.plugin_package import PLUGIN_NAME, PLUGIN_VERSION, env_with, install_plugin

REPO = Path(__file__).resolve().parents[2]


def project_state() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO,
                          capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    before = project_state()
    site = install_plugin(tmp_path_factory.mktemp("plugin"))
    yield site
    assert project_state() == before, "installing and using the plugin changed the project's files"


def engine(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=cwd or REPO, env=env_with(site),
                          capture_output=True, text=True, timeout=600)


def write_embeddings(folder: Path) -> tuple[Path, list[np.ndarray]]:
    """Two conversations' turn embeddings and their index, as ``embed`` writes them."""
    from engine.embedding.embedder import write_embeddings as write

    a = np.array([[1, 0, 0], [0, 1, 0], [0.6, 0.8, 0]], dtype=np.float32)
    b = np.array([[0, 0, 1], [0, 0, 1]], dtype=np.float32)
    index = pd.DataFrame({"conversation_id": ["a", "a", "a", "b", "b"], "turn": [0, 1, 2, 0, 1],
                          "speaker": ["x", "y", "x", "x", "y"]})
    path = folder / "turn_embeddings.npy"
    write(np.vstack([a, b]), index, path, folder / "turn_index.parquet")
    return path, [a, b]


def test_the_plugins_command_names_the_plugin_and_its_broken_entry(plugin_site):
    done = engine(plugin_site, "plugins", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    features = {e["name"]: e for e in report["features"]["entries"]}
    assert features["first_last_distance"]["plugin"] == PLUGIN_NAME
    assert features["first_last_distance"]["version"] == PLUGIN_VERSION
    assert features["local_coherence"]["plugin"] is None
    [failure] = report["features"]["failures"]
    assert "lab_plugin_example_missing" in failure and "failed to import" in failure
    text = engine(plugin_site, "plugins")
    assert text.returncode == 0
    [line] = [l for l in text.stdout.splitlines() if l.split()[:1] == ["first_last_distance"]]
    assert f"{PLUGIN_NAME} {PLUGIN_VERSION}" in line
    assert "plugins that failed: 1" in text.stdout


def test_the_features_command_computes_the_plugins_feature(plugin_site, tmp_path):
    path, (a, b) = write_embeddings(tmp_path)
    done = engine(plugin_site, "features", str(path), "--no-progress")
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(io.StringIO(done.stdout))
    assert {"forward_flow", "discursive_diversity", "first_last_distance"} <= set(table.columns)
    # embeddings alone carry no text: the plugin's text feature is left out, and said so
    assert "question_share" not in table.columns
    assert "note: question_share left out: the input has no turn text" in done.stderr
    # 1 - cos(first, last): a ends at (0.6, 0.8, 0) from (1, 0, 0): 1 - 0.6; b repeats itself: 0
    assert table["first_last_distance"].tolist() == pytest.approx([0.4, 0.0], abs=1e-7)
    # forward flow of a by hand: t=2: 1; t=3: mean(1 - 0.6, 1 - 0.8) = 0.3; mean 0.65
    assert table["forward_flow"].tolist() == pytest.approx([0.65, 0.0], abs=1e-7)
    # discursive diversity of a: x = mean((1,0,0), (0.6,0.8,0)) = (0.8, 0.4, 0), y = (0,1,0)
    x = np.array([0.8, 0.4, 0.0])
    assert table["discursive_diversity"][0] == pytest.approx(1 - 0.4 / math.sqrt(x @ x), abs=1e-7)
    assert "lab_plugin_example_missing" not in done.stdout  # a broken plugin is no column


def test_the_features_command_computes_the_plugins_text_feature_from_a_corpus(plugin_site, tmp_path, monkeypatch):
    """A plugin's feature that reads the turns' text, from a corpus (embeddings from a cache
    filled here, so no model runs); question_share counted by hand."""
    from engine.corpus import Conversation, Corpus, Turn
    from engine.embedding.embedder import DEFAULT_MODEL, EmbeddingCache, text_key

    talks = {"q": ["What if we recycle?", "Yes.", "  How?  ", "Why not"], "none": ["no", "questions here"]}
    texts = [t for turns in talks.values() for t in turns]
    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
    cache = EmbeddingCache(tmp_path / "cache" / "embeddings.sqlite")
    cache.put_many(DEFAULT_MODEL, {text_key(t): np.eye(len(texts), dtype=np.float32)[i] for i, t in enumerate(texts)})
    cache.close()
    corpus = Corpus([Conversation(cid, turns=[Turn(f"agent {i % 2}", t) for i, t in enumerate(turns)])
                     for cid, turns in talks.items()])
    done = engine(plugin_site, "features", str(corpus.write(tmp_path / "corpus.jsonl")), "--no-progress")
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(io.StringIO(done.stdout)).set_index("conversation_id")
    assert table.loc["q", "question_share"] == pytest.approx(2 / 4)  # "recycle?" and "How?" (stripped)
    assert table.loc["none", "question_share"] == 0.0


def test_the_plugins_method_is_a_choice_of_run_and_its_dry_run_counts_its_calls(plugin_site, tmp_path):
    help_text = engine(plugin_site, "run", "--help").stdout
    assert "round_robin_once" in help_text
    done = engine(plugin_site, "run", "--method", "round_robin_once", "--task", "plastic_waste",
                  "--agents", "4", "--replicates", "2", "--provider", "canned", "--model", "canned-1",
                  "--out", str(tmp_path / "dry"), "--dry-run")
    assert done.returncode == 0, done.stderr
    # 2 sessions x 4 agents x one call each (the method's own count), priced by the backend:
    # 8 calls; cost needs tokens, so the dry run says sessions and calls
    assert "2 sessions" in done.stdout + done.stderr and "8 chat calls" in done.stdout + done.stderr
    assert not (tmp_path / "dry" / "corpus.jsonl").exists()


def test_a_grid_runs_the_plugins_method_through_the_plugins_backend(plugin_site, tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text("model: canned-1\nprovider: canned\ntasks: [plastic_waste]\n"
                    "conditions:\n  - {method: round_robin_once, agents: 3, replicates: 2}\n")
    out = tmp_path / "run"
    done = engine(plugin_site, "run", "--grid", str(grid), "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    from engine.runs.run_folder import read_run_corpus

    corpus = read_run_corpus(out)
    assert len(corpus) == 2
    for conversation in corpus:
        assert conversation.status == "ok" and conversation.protocol == "round_robin_once"
        assert [t.speaker for t in conversation.turns] == ["Agent 1", "Agent 2", "Agent 3"]
        # the backend counts its replies across the run's concurrent sessions: each text names
        # its speaker, and the final idea is the last agent's reply
        assert all(t.text.startswith("canned reply ") and t.text.endswith(f"to {t.speaker}")
                   for t in conversation.turns)
        assert conversation.final_idea == conversation.turns[-1].text
    manifest = json.loads((out / "manifest.json").read_text())
    text = json.dumps(manifest)
    assert PLUGIN_NAME in text and PLUGIN_VERSION in text
    plugins = manifest["plugins"]
    assert plugins["methods"]["round_robin_once"]["plugin"] == PLUGIN_NAME
    assert plugins["methods"]["round_robin_once"]["version"] == PLUGIN_VERSION
    assert plugins["backends"]["canned"]["plugin"] == PLUGIN_NAME


def test_the_plugins_method_takes_an_option_of_its_own(plugin_site, tmp_path):
    """``passes`` (round_robin_once's own options model, ``lab_plugin_example.options``):
    checked, counted, recorded in each session's meta and in its id."""
    run = ("run", "--method", "round_robin_once", "--task", "plastic_waste", "--agents", "4",
           "--provider", "canned", "--model", "canned-1", "--dry-run")
    dry = engine(plugin_site, *run, "--option", "passes=2")
    assert dry.returncode == 0, dry.stderr
    assert "1 sessions, at most 8 chat calls" in dry.stdout + dry.stderr  # 4 agents, twice around
    bad = engine(plugin_site, *run, "--option", "passes=9")
    assert bad.returncode == 2 and "passes" in bad.stderr and "Traceback" not in bad.stderr
    grid = tmp_path / "grid.yaml"
    grid.write_text("model: canned-1\nprovider: canned\ntasks: [plastic_waste]\nconditions:\n"
                    "  - {method: round_robin_once, agents: 2, passes: 2}\n"
                    "  - {method: round_robin_once, agents: 2}\n")
    done = engine(plugin_site, "run", "--grid", str(grid), "--out", str(tmp_path / "run"), "--no-progress")
    assert done.returncode == 0, done.stderr
    from engine.runs.run_folder import read_run_corpus

    corpus = read_run_corpus(tmp_path / "run")
    speakers = {c.meta["passes"]: [t.speaker for t in c.turns] for c in corpus}
    assert speakers == {2: ["Agent 1", "Agent 2", "Agent 1", "Agent 2"], 1: ["Agent 1", "Agent 2"]}
    assert len({c.conversation_id for c in corpus}) == 2


@pytest.fixture(scope="module")
def plugin_dataset(plugin_site, tmp_path_factory):
    """A copy of the cached local dataset, given the registered features it lacks by
    ``dataset features`` run with the plugin installed."""
    import shutil

    root = tmp_path_factory.mktemp("cached") / "cached_runs"
    for name, source in (("with_plugin", "local_smollm2"), ("with_plugin_fidelity", "local_smollm2_fidelity")):
        shutil.copytree(REPO / "cached_runs" / source, root / name)
        done = engine(plugin_site, "dataset", "features", str(root / name))
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().endswith("added " + ", ".join(added_to(source)))
    return root / "with_plugin"


PLUGIN_FEATURES = ["first_last_distance", "question_share"]


def added_to(source: str) -> list[str]:
    """What ``dataset features`` adds to a cached dataset with the plugin installed: the
    built-ins registered since it was built (this process's registry has no plugin), then the
    plugin's two."""
    from engine.measures.registry import feature_names

    stored = pd.read_parquet(REPO / "cached_runs" / source / "conversations.parquet").columns
    return [n for n in feature_names() if n not in stored] + PLUGIN_FEATURES


def question_share_by_hand(folder: Path, cid: str) -> float:
    """The share of the conversation's embedded turns whose text ends with "?"."""
    from engine.corpus import Corpus

    index = pd.read_parquet(folder / "turn_index.parquet")
    turns = Corpus.from_parquet(folder / "corpus.parquet")[cid].turns
    positions = index.loc[index["conversation_id"] == cid, "turn"].tolist()
    return sum(turns[p].text.strip().endswith("?") for p in positions) / len(positions)


def test_dataset_features_adds_the_plugins_column_and_changes_none(plugin_dataset):
    before = pd.read_parquet(REPO / "cached_runs" / "local_smollm2" / "conversations.parquet")
    after = pd.read_parquet(plugin_dataset / "conversations.parquet")
    assert {"forward_flow", "discursive_diversity"} <= set(before.columns)  # the cached build has them
    assert list(after.columns) == [*before.columns, *added_to("local_smollm2")]
    for column in before.columns:  # paper A's nine among them, bit for bit
        assert after[column].equals(before[column]), column
    # first_last_distance by hand from the stored embeddings of one conversation
    emb = np.load(plugin_dataset / "turn_embeddings.npy")
    index = pd.read_parquet(plugin_dataset / "turn_index.parquet")
    cid = after.loc[after["n_turns"] >= 3, "conversation_id"].iloc[0]
    turns = emb[index[index["conversation_id"] == cid].sort_values("turn").index.to_numpy()].astype(float)
    first, last = turns[0], turns[-1]
    expected = 1 - first @ last / (np.linalg.norm(first) * np.linalg.norm(last))
    got = after.loc[after["conversation_id"] == cid, "first_last_distance"].item()
    assert got == pytest.approx(expected, abs=1e-9)
    manifest = json.loads((plugin_dataset / "manifest.json").read_text())
    assert manifest["feature_plugins"]["first_last_distance"]["plugin"] == PLUGIN_NAME
    assert manifest["feature_plugins"]["first_last_distance"]["version"] == PLUGIN_VERSION
    assert manifest["features_added"]["first_last_distance"]["from"] == "turn_embeddings.npy"
    # the plugin's text feature, from the corpus's texts of the embedded turns
    asking = after[after["n_turns"] >= 2]["conversation_id"].tolist()
    assert any(question_share_by_hand(plugin_dataset, c) > 0 for c in asking)  # some turn asks
    for c in asking[:20]:
        got = after.loc[after["conversation_id"] == c, "question_share"].item()
        assert got == pytest.approx(question_share_by_hand(plugin_dataset, c), abs=1e-12), c
    assert manifest["feature_plugins"]["question_share"]["version"] == PLUGIN_VERSION


def test_reading_a_dataset_computes_the_plugins_features_it_lacks(plugin_in_this_process, tmp_path,
                                                                 monkeypatch):
    """No ``dataset features``: reading a copy of the cached dataset gives it the plugin's
    columns (the text feature from its corpus), cached on disk, each saying who computed it."""
    import shutil

    from engine.datasets import Dataset

    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "local_smollm2"
    shutil.copytree(REPO / "cached_runs" / "local_smollm2", folder)
    dataset = Dataset.load(folder)
    table = dataset.conversations
    cid = table.loc[table["n_turns"] >= 2, "conversation_id"].iloc[0]
    assert table.loc[table["conversation_id"] == cid, "question_share"].item() == pytest.approx(
        question_share_by_hand(folder, cid), abs=1e-12)
    said = dataset.manifest["features_at_read"]
    assert (said["question_share"]["by"]["plugin"], said["question_share"]["by"]["version"]) == (PLUGIN_NAME, PLUGIN_VERSION)
    assert said["first_last_distance"]["computed"] == "when the dataset was read"
    assert dataset.manifest["feature_plugins"]["question_share"]["plugin"] == PLUGIN_NAME
    assert len(list((tmp_path / "cache" / "features_at_read").glob("*.parquet"))) >= 2


@pytest.fixture
def plugin_in_this_process(plugin_site):
    """The plugin importable here (the dashboard runs in this process under AppTest)."""
    from engine.llm.providers import BACKENDS
    from engine.measures.registry import FEATURES
    from engine.protocols.registry import METHODS_REGISTRY

    registries = (FEATURES, METHODS_REGISTRY, BACKENDS)
    sys.path.insert(0, str(plugin_site))
    for registry in registries:
        registry.forget_plugins()
    yield
    sys.path.remove(str(plugin_site))
    for registry in registries:
        registry.forget_plugins()
    assert not set(PLUGIN_FEATURES) & set(FEATURES.names()) and "canned" not in BACKENDS.names()


def test_the_dashboards_feature_pickers_offer_the_plugins_feature(plugin_dataset, plugin_in_this_process,
                                                                 monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    from dashboard import pages

    monkeypatch.setenv("CDL_CACHED_RUNS", str(plugin_dataset.parent))
    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
    at = AppTest.from_file(str(REPO / "dashboard" / "app.py"), default_timeout=180)
    at.run()
    at.switch_page(pages.page("trajectories").script).run()
    assert not at.exception, [e.value for e in at.exception]
    colours = at.selectbox(key="traj_colour").options
    assert {"forward_flow", "discursive_diversity", *PLUGIN_FEATURES} <= set(colours)
    at.switch_page(pages.page("compare").script).run()
    at.multiselect(key="compare_datasets").set_value(["with_plugin", "with_plugin_fidelity"]).run()
    assert not at.exception, [e.value for e in at.exception]
    [picker] = [m for m in at.multiselect if m.key == "compare_features"]
    assert "first_last_distance" in picker.options and "forward_flow" in picker.options


def test_the_pilot_page_offers_the_plugins_method_and_backend(plugin_in_this_process):
    from dashboard.pilot import settings

    assert "round_robin_once" in settings.method_choices()
    assert settings.provider_choices()["canned"] == f"canned (plugin {PLUGIN_NAME} {PLUGIN_VERSION})"
