"""Generated inputs for the newer entry points: ``judge``, ``pilot``, an embedding server that
misbehaves (``--embed-base-url``), idea files, benchmark files, dashboard uploads and damaged
run folders; ``N_EXAMPLES`` below (430 in all).

Every input is held to the error contract: exit 0, or exit 2 with exactly one ``error:`` line
(naming the file or option at fault), never a traceback and never a silent change: an accepted
input gives the values the generator put in (the retries it was given, the server's vectors,
the ideas' ratings, the benchmark's distinct items, the upload's turns), and a dry run leaves
the files it read as they were. Commands run in this process (``engine.cli.main``: no
interpreter start per case); the loopback servers stop by themselves after ``lifetime``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from benchmarks.loopback_server import EMBEDDING_FAULTS, LoopbackServer, embedding_of
from engine.corpus import Conversation, Corpus, Turn
from engine.llm import ScriptedBackend
from engine.llm.retry import RetryPolicy
from engine.runner import run_grid
from tests.cli_run import Outcome, cli

pytestmark = pytest.mark.timeout(600)
N_EXAMPLES = {"judge": 70, "pilot": 30, "embed": 60, "ideas": 80, "benchmark": 70, "upload": 60,
              "run_folder": 60}
assert sum(N_EXAMPLES.values()) >= 400


def fuzz(entry_point: str):
    return settings(max_examples=N_EXAMPLES[entry_point], deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


def held(outcome: Outcome, *names) -> bool:
    """True when accepted; a refusal must be one line naming one of ``names`` (if given)."""
    assert "Traceback" not in outcome.err, outcome.err[-3000:]
    assert outcome.code in (0, 2), (outcome.code, outcome.err[-3000:])
    if outcome.code == 0:
        event("accepted")
        return True
    event("refused")
    errors = [line for line in outcome.err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, outcome.err[-3000:]
    if names:
        assert any(str(n) in errors[0] for n in names), (errors[0], names)
    return False


@contextmanager
def folder():
    with tempfile.TemporaryDirectory(prefix="fuzz2-") as name:
        yield Path(name)


def digest(path: Path) -> str | None:
    """A fingerprint of a file or folder tree (None when absent): a dry run must not change it."""
    if not path.exists():
        return None
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    parts = sorted((str(p.relative_to(path)), digest(p)) for p in path.rglob("*") if p.is_file())
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


# -- junk ------------------------------------------------------------------------------------
NUMBERS = st.one_of(st.integers(-5, 30).map(str), st.sampled_from(
    ["0", "-1", "1e3", "2.5", "0x10", "abc", "", " ", "nan", "inf", "9" * 30, "9" * 5000, "١", "+3", "07"]))
URLS = st.sampled_from(["", " ", ",", "http://127.0.0.1:9/v1", "https://host.example/v1", "ftp://x/v1",
                        "localhost:8000/v1", "http://", "http://h:port/v1", "http://127.0.0.1:9/v1,",
                        "http://user:pw@127.0.0.1:9/v1?api-key=sk-FAKE-12345678"])
CELLS = st.one_of(
    st.sampled_from(["", " ", "nan", "NaN", "inf", "-inf", "1e308", "1e400", "-1", "0", "0.5", "1", "5", "10",
                     "11", "2.5", "abc", "9" * 30, "9" * 5000, "1,5", "\u2028", "é", "None", "TRUE"]),
    st.integers(-10 ** 6, 10 ** 6).map(str), st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=8))


# -- judge ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("fuzz-judge") / "run"
    grid = {"name": "q", "model": "scripted", "tasks": ["plastic_waste"],
            "conditions": [{"method": "homo_mad", "agents": 2, "rounds": 1, "replicates": 2},
                           {"method": "homo_mad", "agents": 2, "rounds": 1, "lenses": True, "replicates": 2}]}

    def reply(messages):
        return "Response 1" if "Answer only 'Response N'" in messages[-1]["content"] else "an idea"

    run_grid(grid, out, backend=ScriptedBackend(responder=reply), progress=False, cache=False)
    return out


@fuzz("judge")
@given(kind=st.sampled_from(["quality", "pairwise"]), per_round=st.booleans(),
       options=st.dictionaries(st.sampled_from(["--retries", "--concurrency", "--per-round-limit",
                                                "--max-per-pair", "--base-url"]),
                               st.one_of(NUMBERS, URLS), max_size=3))
def test_judge_options(run_dir, kind, per_round, options):
    argv = ["judge", kind, run_dir, "--dry-run"]
    if per_round and kind == "quality":
        argv.append("--per-round")
    for name, value in options.items():
        if name == "--base-url":
            argv += ["--judge-model", "some-model"]
        argv += [name, value]
    before = digest(run_dir)
    outcome = cli(argv)
    assert digest(run_dir) == before  # a dry run reads only
    if held(outcome, *options, "--per-round", "python -m engine judge"):
        retries = int(options.get("--retries", "2"))
        assert f"each retried at most {retries} times" in outcome.err  # the value given, not a default


# -- pilot ------------------------------------------------------------------------------------
@fuzz("pilot")
@given(seed=st.none() | NUMBERS, budget=st.sampled_from([None, "small", "standard", "large", ""]),
       baseline=st.sampled_from([None, "open", "instructed", "iterative", "creative_mad", "zzz", ""]),
       model=st.sampled_from(["local", "gpt-x"]), url=st.none() | URLS)
def test_pilot_dry_run_options(seed, budget, baseline, model, url):
    with folder() as tmp:
        argv = ["pilot", "--model", model, "--out", tmp / "pilot", "--dry-run"]
        for name, value in (("--seed", seed), ("--budget", budget), ("--baseline", baseline), ("--base-url", url)):
            if value is not None:
                argv += [name, value]
        outcome = cli(argv)
        if held(outcome, "--seed", "--budget", "--baseline", "--base-url", "baseline", "base_url", "api_key"):
            assert "Plan" in outcome.out
        assert not (tmp / "pilot").exists()  # a dry run writes nothing


# -- an embedding server that misbehaves ------------------------------------------------------------
# every broken reply but "emb_resized" (a server of another size throughout is consistent, and
# test_embed_server_replies checks sizes that change); retryable faults among them
SERVER_FAULTS = (*[f for f in EMBEDDING_FAULTS if f != "emb_resized"], "ok", "ok", "ok", "500", "429",
                 "malformed", "html", "redirect")


@pytest.fixture(scope="module")
def embed_server():
    with LoopbackServer(lifetime=400, retry_after=0.01) as server:
        yield server


@fuzz("embed")
@given(texts=st.lists(st.text(min_size=1, max_size=30).filter(str.strip), min_size=1, max_size=6),
       script=st.lists(st.sampled_from(SERVER_FAULTS), max_size=3), batch=st.integers(1, 4),
       dead=st.integers(0, 19))
def test_embedding_server_replies(embed_server, texts, script, batch, dead):
    import engine.embed_openai

    with folder() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine.embed_openai, "RetryPolicy",
                      lambda max_attempts=6, **_: RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.002))
        corpus = Corpus([Conversation("c1", [Turn("AB"[i % 2], text) for i, text in enumerate(texts)])])
        path = corpus.to_jsonl(tmp / "corpus.jsonl")
        url = "http://127.0.0.1:9/v1" if dead == 0 else embed_server.base_url
        embed_server.script = list(script)
        outcome = cli(["embed", path, tmp / "e.npy", "--embed-base-url", url, "--embed-model", "m",
                       "--cache", tmp / "cache.sqlite", "--batch-size", batch, "--embed-concurrency", 1,
                       "--no-progress"])
        embed_server.script = []
        if held(outcome, url):
            vectors = np.load(tmp / "e.npy")
            kept = Corpus.from_jsonl(path).trajectory_view()
            expected = np.array([embedding_of(t.text) for c in kept for t in c.turns], dtype=np.float64)
            expected /= np.linalg.norm(expected, axis=1, keepdims=True)
            np.testing.assert_allclose(vectors, expected, rtol=1e-6)  # the server's vectors, nothing else


# -- idea files -------------------------------------------------------------------------------
IDEA_COLUMNS = ["avg_novelty_rating", "avg_usefulness_rating", "avg_creativity_rating", "N2", "U4",
                "number_of_agents", "run_num", "replacement_pool_size", "grand_total_tokens", "file_id",
                "question_id", "data_type", "discussion", "persona"]


@pytest.fixture(scope="module")
def ideas_base():
    from tests.ideas_fixture import RELEASE, build_ideas

    if not RELEASE.exists():
        pytest.skip("needs the paper release metrics file")
    frame = build_ideas()
    human = frame[frame["data_type"].eq("human")].head(5)
    return pd.concat([frame.head(25), human, frame.tail(5)], ignore_index=True)


@fuzz("ideas")
@given(changes=st.lists(st.tuples(st.integers(0, 34), st.sampled_from(IDEA_COLUMNS), CELLS), max_size=3),
       duplicate=st.integers(0, 9), line_end=st.sampled_from(["\n", "\n", "\r\n", "\r"]))
def test_idea_files(ideas_base, changes, duplicate, line_end):
    frame = ideas_base.astype(object).copy()
    for row, column, value in changes:
        frame.loc[row, column] = value
    if duplicate == 0:
        frame = pd.concat([frame, frame.iloc[[3]]], ignore_index=True)
    with folder() as tmp:
        path = tmp / "ideas.csv"
        path.write_bytes(frame.to_csv(index=False, lineterminator=line_end).encode("utf-8", "surrogatepass"))
        outcome = cli(["import", path, tmp / "out.csv"])
        if not held(outcome, str(path)):
            return
        assert duplicate != 0, "an idea listed twice was accepted"
        out = pd.read_csv(tmp / "out.csv", keep_default_na=False, dtype=str)
        assert len(out) == len(frame)  # no idea dropped or added
        renamed = {"avg_novelty_rating": "novelty", "avg_usefulness_rating": "usefulness",
                   "avg_creativity_rating": "creativity", "number_of_agents": "team_size",
                   "run_num": "replicate", "replacement_pool_size": "pool", "grand_total_tokens": "tokens"}
        for row, column, value in changes:
            if column not in renamed and column not in ("N2", "U4"):
                continue
            final = frame.loc[row, column]
            shown = out.loc[row, renamed.get(column, column)]
            text = str(final).strip()
            if text == "" or text.lower() in ("nan", "na", "n/a"):
                if column != "number_of_agents":  # a blank team size is read from llm_count
                    assert shown == "", (column, final, shown)
            else:
                assert float(shown) == pytest.approx(float(text)), (column, final, shown)


# -- benchmark files ----------------------------------------------------------------------------
KEYWORDS = st.one_of(st.sampled_from(["C++", "C#", "量子", "光合作用", "a b", "a_b", "A B", "x" * 80, "", " ",
                                      "photosynthesis", "quantum dots", "\u2028", "e\u0301"]), st.text(max_size=10))


@fuzz("benchmark")
@given(name=st.sampled_from(["liveideabench", "macgyver", "arena_hard_creative"]),
       items=st.lists(st.tuples(KEYWORDS, st.one_of(st.integers(-3, 5), KEYWORDS, st.none()),
                                st.sampled_from(["creative_writing", "Creative Writing", "coding", None])),
                      min_size=1, max_size=6),
       as_jsonl=st.booleans())
def test_benchmark_files(name, items, as_jsonl):
    column = {"liveideabench": "keywords", "macgyver": "Problem", "arena_hard_creative": "prompt"}[name]
    id_column = {"liveideabench": None, "macgyver": "id", "arena_hard_creative": "uid"}[name]
    rows = []
    for text, item_id, category in items:
        row = {column: text}
        if id_column:
            row[id_column] = item_id
        if name == "arena_hard_creative":
            row["category"] = category
        rows.append(row)
    with folder() as tmp:
        path = tmp / ("items.jsonl" if as_jsonl else "items.csv")
        if as_jsonl:
            path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8", errors="surrogatepass")
        else:
            # every cell quoted: pandas leaves a lone "\r" unquoted, which CSV reads as a line end
            pd.DataFrame(rows).to_csv(path, index=False, encoding="utf-8", errors="surrogatepass",
                                      quoting=csv.QUOTE_ALL)
        outcome = cli(["run", "--method", "direct", "--benchmark", name, "--benchmark-file", path,
                       "--out", tmp / "out", "--dry-run"])
        if not held(outcome, str(path), "benchmark"):
            return
        from engine.benchmarks import load_benchmark

        tasks = load_benchmark(name, path)
        assert len({t.id for t in tasks}) == len(tasks)  # unique ids, always
        assert outcome.err.startswith(f"{len(tasks)} sessions")
        if name == "liveideabench":  # one task per distinct keyword (case and spacing ignored);
            # in a one-column CSV a blank keyword is a blank line, which every CSV reader skips
            distinct = {" ".join(str(r[column]).split()).lower() for r in rows
                        if as_jsonl or str(r[column]).strip()}
            assert len(tasks) == len(distinct)
        assert not (tmp / "out").exists()


# -- dashboard uploads ------------------------------------------------------------------------------
class HashEmbedder:
    """Deterministic unit vectors from each text's hash (a test stand-in for the model)."""

    model_name = "hash-embedder"

    def encode(self, texts, progress=False):
        rows = [np.frombuffer(hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest()[:16], dtype=np.uint8)
                .astype(np.float32) + 1 for t in texts]
        vectors = np.array(rows, dtype=np.float32).reshape(len(texts), 16)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    __call__ = encode


@fuzz("upload")
@given(turns=st.lists(st.tuples(st.sampled_from(["c1", "c2", "c3"]), st.sampled_from(["A", "B"]),
                                st.text(min_size=1, max_size=12).filter(str.strip), CELLS), min_size=1, max_size=8),
       suffix=st.sampled_from([".csv", ".jsonl"]), line_end=st.sampled_from(["\n", "\r\n", "\r"]))
def test_dashboard_uploads(turns, suffix, line_end):
    from dashboard.page_data.uploads import read_upload
    from engine.errors import InputError

    rows = [{"conversation_id": c, "speaker": s, "text": t, "turn": n} for c, s, t, n in turns]
    if suffix == ".csv":
        payload = pd.DataFrame(rows).to_csv(index=False, lineterminator=line_end).encode("utf-8", "surrogatepass")
    else:
        lines = []
        for row in rows:
            turn = row["turn"]
            literal = turn if _json_number(turn) else json.dumps(turn)
            lines.append(json.dumps({k: v for k, v in row.items() if k != "turn"})[:-1] + f', "turn": {literal}}}')
        payload = "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n"
    try:
        dataset = read_upload(f"upload{suffix}", payload, embedder_factory=HashEmbedder)
    except InputError as error:
        event("refused")
        assert error.path == f"upload{suffix}" and "\n" not in str(error), str(error)
        return
    event("accepted")
    written = pd.Series([c for c, *_ in turns]).value_counts().to_dict()
    read = dict(zip(dataset.conversations["conversation_id"], dataset.conversations["n_turns"]))
    assert read == written  # every turn of every conversation, none dropped


def _json_number(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return text.strip() != "" and text.strip()[0] in "-0123456789"


# -- damaged run folders --------------------------------------------------------------------------
DAMAGE = ["corpus_junk_line", "corpus_huge_int", "corpus_cut_line", "corpus_not_object", "corpus_empty",
          "manifest_junk", "manifest_huge_int", "manifest_folder", "quality_junk", "quality_no_kind",
          "quality_folder", "quality_cut", "corpus_folder", "corpus_fifo", "failed_junk"]


def damage(run: Path, kind: str, junk: str) -> None:
    corpus, manifest, quality = run / "corpus.jsonl", run / "manifest.json", run / "quality.jsonl"
    if kind == "corpus_junk_line":
        with open(corpus, "a", encoding="utf-8", errors="surrogatepass") as handle:
            handle.write(junk + "\n")
    elif kind == "corpus_huge_int":
        lines = corpus.read_text().splitlines()
        lines[1] = lines[1].replace('"replicate": 0', '"replicate": ' + "9" * 5000, 1)
        corpus.write_text("\n".join(lines) + "\n")
    elif kind == "corpus_cut_line":
        data = corpus.read_bytes()
        corpus.write_bytes(data[: max(1, len(data) - 1 - len(junk) % 40)])
    elif kind == "corpus_not_object":
        with open(corpus, "a") as handle:
            handle.write("[1, 2, 3]\n")
    elif kind == "corpus_empty":
        corpus.write_bytes(b"")
    elif kind == "manifest_junk":
        manifest.write_text(junk[:50] or "{")
    elif kind == "manifest_huge_int":
        manifest.write_text('{"seed": ' + "9" * 5000 + "}")
    elif kind == "manifest_folder":
        manifest.unlink()
        manifest.mkdir()
    elif kind == "quality_junk":
        quality.write_text(junk + "\n", encoding="utf-8", errors="surrogatepass")
    elif kind == "quality_no_kind":
        quality.write_text('{"key": "k", "judge": "j", "score": 3}\n')
    elif kind == "quality_folder":
        quality.mkdir()
    elif kind == "quality_cut":
        quality.write_text('{"kind": "rubric", "key": "k1", "judge": "j", "score": 3}\n{"kind": "rub')
    elif kind == "corpus_folder":
        corpus.unlink()
        corpus.mkdir()
    elif kind == "corpus_fifo":
        corpus.unlink()
        os.mkfifo(corpus)
    elif kind == "failed_junk":
        (run / "failed.jsonl").write_text(junk + "\n", encoding="utf-8", errors="surrogatepass")


@fuzz("run_folder")
@given(kinds=st.lists(st.sampled_from(DAMAGE), min_size=1, max_size=2,
                     unique_by=lambda kind: kind.split("_")[0]),  # one damage per file
       junk=st.sampled_from(["{", "not json", "null", '{"conversation_id": 5}', '{"x": 1e400}', "\u2028",
                             '{"conversation_id": "c", "turns": "no"}', "\x00", "{}" * 3]),
       command=st.sampled_from([["judge", "quality"], ["judge", "pairwise"], ["judge", "quality", "--per-round"]]))
def test_damaged_run_folders(run_dir, kinds, junk, command):
    with folder() as tmp:
        run = tmp / "run"
        shutil.copytree(run_dir, run)
        for kind in kinds:
            damage(run, kind, junk)
        before = {name: digest(run / name) for name in ("corpus.jsonl", "manifest.json", "quality.jsonl")}
        outcome = cli([command[0], command[1], run, "--dry-run", *command[2:]])
        held(outcome, str(run))
        after = {name: digest(run / name) for name in before}
        assert after == before  # a dry run repairs nothing silently and writes nothing
