"""Pages on a dataset that has what the paper release lacks: turns, turn embeddings, ratings
and paper-B debate runs (15 replicates per method). Built here from a small corpus embedded
with the project's real embedder; expected numbers are recomputed with numpy/statsmodels."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from streamlit.testing.v1 import AppTest

from engine.corpus import Conversation, Corpus, Turn

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
TOPICS = ("refill stations", "bacteria that eat plastic", "a deposit scheme", "seaweed packaging",
          "school recycling games", "a plastic tax", "river cleanup drones", "repair cafes",
          "bulk-buy markets", "compostable cutlery")
VERBS = ("scale up", "reward", "gamify", "regulate", "crowdfund", "automate")
FEATURES = ["local_coherence", "global_coherence", "path_length", "convergence_ratio", "max_distance",
            "trajectory_curvature", "topic_switching_rate", "revisit_score", "semantic_spread"]


def make_corpus(seed: int = 7) -> Corpus:
    rng = np.random.default_rng(seed)
    conversations = []
    plan = [("creative_mad", "llm", 15), ("homo_mad", "llm", 15), ("open", "human", 12)]
    for method, source, replicates in plan:
        for r in range(replicates):
            turns = []
            for round_, speakers in enumerate((3, int(rng.integers(3, 7)))):  # 6 to 9 turns
                for agent in range(speakers):
                    topic = TOPICS[rng.integers(len(TOPICS))]
                    verb = VERBS[rng.integers(len(VERBS))]
                    turns.append(Turn(speaker=f"agent{agent % 3}", round=round_,
                                      text=f"We could {verb} {topic} in neighbourhood {rng.integers(100)}."))
            final = f"Final: {VERBS[rng.integers(len(VERBS))]} {TOPICS[rng.integers(len(TOPICS))]} " \
                    f"and {TOPICS[rng.integers(len(TOPICS))]} (run {r})."
            novelty, usefulness = float(rng.uniform()), float(rng.uniform())
            conversations.append(Conversation(
                conversation_id=f"{method}-r{r}", turns=turns, source=source, task="plastic_waste",
                model="smollm2" if source == "llm" else "human", protocol=method, replicate=r,
                final_idea=final, outcomes={"novelty": novelty, "usefulness": usefulness,
                                            "creativity": novelty * usefulness}))
    return Corpus(conversations, name="rich")


@pytest.fixture(scope="module")
def rich(tmp_path_factory):
    """(cached_runs root, Dataset) with the rich dataset saved as the only dataset."""
    from engine.datasets import dataset_from_corpus
    from engine.embedding.embedder import Embedder

    base = tmp_path_factory.mktemp("rich")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CDL_CACHE_DIR", str(base / "cache"))
        dataset = dataset_from_corpus(make_corpus(), Embedder(), name="rich_runs",
                                      manifest={"description": "test corpus"})
    dataset.save(base / "cached_runs" / "rich_runs")
    return base, dataset


@pytest.fixture
def env(rich, monkeypatch):
    base, dataset = rich
    monkeypatch.setenv("CDL_CACHED_RUNS", str(base / "cached_runs"))
    monkeypatch.setenv("CDL_CACHE_DIR", str(base / "cache"))
    return dataset


def open_page(page: str, widgets=None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page(f"views/{page}.py").run()
    if widgets is not None:
        widgets(at)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def figures(at):
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def decode(values):
    if isinstance(values, dict) and "bdata" in values:
        array = np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"]))
        return array.reshape([int(s) for s in str(values["shape"]).split(",")]) if values.get("shape") else array
    return np.asarray(values)


def vendi_by_hand(vectors: np.ndarray) -> float:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    eigenvalues = np.linalg.eigvalsh(unit @ unit.T / len(unit))
    eigenvalues = eigenvalues[eigenvalues > 1e-12]
    return float(np.exp(-(eigenvalues * np.log(eigenvalues)).sum()))


def test_diversity_page_vendi_matches_hand_computation(env):
    from engine.embedding.embedder import Embedder

    at = open_page("diversity")
    table = next(d.value for d in at.dataframe if "vendi" in d.value.columns)
    assert set(table["method"]) == {"creative_mad", "homo_mad"}
    frame = env.conversations
    expected = {}
    for method in ("creative_mad", "homo_mad"):
        rows = frame[frame["discussion"] == method].sort_values("replicate")
        vectors = Embedder().encode(rows["final_idea"].tolist())
        expected[method] = np.mean([vendi_by_hand(vectors[g * 5:(g + 1) * 5]) for g in range(3)])
        shown = table.set_index("method").loc[method]
        assert shown["n_runs"] == 15 and shown["n_groups"] == 3
        assert shown["vendi"] == pytest.approx(expected[method], abs=1e-3)
    gain = 100 * (expected["creative_mad"] - expected["homo_mad"]) / expected["homo_mad"]
    shown_gain = {m.label: m.value for m in at.metric}["Creative-MAD vs Homo MAD, vendi"]
    assert float(shown_gain.rstrip("%")) == pytest.approx(gain, abs=0.1)
    rounds = next(f for f in figures(at) if f["layout"]["title"]["text"].lower().startswith("intra-session vendi"))
    assert [list(decode(t["x"])) for t in rounds["data"]] == [[0, 1], [0, 1]]


def test_trajectories_draw_paths_and_feature_values(env):
    at = open_page("trajectories")
    frame = env.conversations
    # default pair: highest vs lowest creativity among rated conversations
    ordered = frame.sort_values("creativity", ascending=False)["conversation_id"].tolist()
    assert at.selectbox(key="traj_left").value == ordered[0]
    assert at.selectbox(key="traj_right").value == ordered[-1]
    panel = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Two conversations on shared axes"))
    path = panel["data"][0]
    n_turns = int(frame.set_index("conversation_id").loc[ordered[0], "n_turns"])
    # colour = progress through the conversation: turn i of n at i / (n - 1)
    assert len(decode(path["x"])) == n_turns
    assert list(decode(path["marker"]["color"])) == pytest.approx([i / (n_turns - 1) for i in range(n_turns)])
    # both panels on the same axes
    layout = panel["layout"]
    assert layout["xaxis"]["range"] == layout["xaxis2"]["range"]
    assert layout["yaxis"]["range"] == layout["yaxis2"]["range"]
    assert "agent0" in path["text"][0]
    values = next(d.value for d in at.dataframe if "global_coherence" in d.value.index)
    e = env.embeddings_for(ordered[0]).astype(float)
    centroid = e.mean(axis=0)
    coherence = np.mean(e @ centroid / (np.linalg.norm(e, axis=1) * np.linalg.norm(centroid)))
    assert float(values.loc["global_coherence", ordered[0]]) == pytest.approx(coherence, abs=1e-3)


@pytest.mark.slow  # UMAP's first call compiles numba kernels (~40 s on 2 cores)
def test_trajectories_umap_projection(env):
    at = open_page("trajectories", widgets=lambda at: at.radio(key="traj_method").set_value("umap"))
    main = next(f for f in figures(at) if "UMAP" in f["layout"]["title"]["text"])
    assert len(decode(main["data"][0]["x"])) == len(env.turn_index)


def test_ratings_views_top_share_and_regression(env):
    at = open_page("llm_vs_human")
    frame = env.conversations
    threshold = np.quantile(frame["creativity"], 0.95)
    top = frame[frame["creativity"] >= threshold]
    shown = next(d.value for d in at.dataframe if "share_of_top" in d.value.columns).set_index("group")
    assert shown.loc["llm", "share_of_top"] == pytest.approx(round((top["source"] == "llm").mean(), 4))
    assert shown.loc["human", "n"] == 12

    # paper B's debates are not in paper A's trajectory sample (the default): no LLM fit; the
    # 12 human teams cannot carry 10 coefficients (N - k = 2 < 5): every rung is refused
    at = open_page("regression", widgets=lambda at: at.selectbox(key="reg_outcome").set_value("creativity"))
    assert not any("specification" in d.value.columns for d in at.dataframe)
    refused = [i.value.replace("\\", "") for i in at.info if "No specification could be fitted" in i.value]
    assert refused and "fit refused: N − k = 2 (N = 12 rows, k = 10 estimated coefficients)" in refused[0]

    def every_row(at):
        at.selectbox(key="reg_paper_sample").set_value("all")
        at.run()
        at.selectbox(key="reg_outcome").set_value("creativity")

    at = open_page("regression", widgets=every_row)
    llm = frame[frame["source"] == "llm"]
    z = lambda s: (s - s.mean()) / s.std(ddof=1)  # noqa: E731
    fit = sm.OLS(z(llm["creativity"]), sm.add_constant(llm[FEATURES].apply(z))).fit()
    ladder = next(d.value for d in at.dataframe if "specification" in d.value.columns).set_index("specification")
    assert ladder.loc["trajectory", "LLM"] == pytest.approx(round(100 * fit.rsquared, 1))
    # task has one level here: it is dropped from the +task rung, which then equals the
    # trajectory-only fit, and the page says so
    assert ladder.loc["+task (task dropped)", "LLM"] == pytest.approx(round(100 * fit.rsquared, 1))
    assert any("factor task dropped: 1 level (plastic_waste)" in c.value.replace("\\", "") for c in at.caption)


def test_embedding_map_search_feeds_the_table_picker_and_reader(env):
    """Search selects turns (as a lasso would): the table lists exactly the turns whose text
    holds the phrase, the picker draws their conversations (capped at 8, and says so), and the
    reader shows a conversation's turns with the cosine distance to the previous turn (in its
    table, shown on request)."""
    at = open_page("trajectories", widgets=lambda at: (at.text_input(key="traj_search").input("seaweed"),
                                                         at.toggle(key="traj_table_on").set_value(True)))
    turns = env.corpus.turns_frame()
    trajectory = env.turn_index.merge(turns, on=["conversation_id", "turn"])
    expected = trajectory[trajectory["text"].str.contains("seaweed", case=False)]
    table = next(d.value for d in at.dataframe if {"conversation_id", "text"} <= set(d.value.columns)
                 and "distance to previous turn" not in d.value.columns)
    assert len(table) == len(expected) and table["text"].str.contains("seaweed").all()
    conversations = list(dict.fromkeys(table["conversation_id"]))
    assert at.multiselect(key="traj_conversations").value == conversations[:8]
    if len(conversations) > 8:
        assert any(f"holds {len(conversations):,} conversations" in i.value for i in at.info)
    # the map: one point per turn, an excerpt in the hover; a click selects a point (drag pans;
    # Streamlit turns clicks into selections only outside the lasso and box modes)
    explore = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Turns in semantic space"))
    assert explore["layout"]["dragmode"] == "pan" and explore["layout"]["clickmode"] == "event+select"
    n_points = sum(len(decode(t["x"])) for t in explore["data"] if not t["name"].startswith("search hits"))
    assert n_points == len(env.turn_index)
    # the reader: distance of turn i to turn i-1 = 1 - cosine of their embeddings
    reader = next(d.value for d in at.dataframe if "distance to previous turn" in d.value.columns)
    cid = at.selectbox(key="traj_reader").value
    assert cid == conversations[0]
    e = env.embeddings_for(cid).astype(float)
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    by_hand = [1 - e[i] @ e[i - 1] for i in range(1, len(e))]
    assert reader["distance to previous turn"].iloc[1:].tolist() == pytest.approx(by_hand, abs=1e-4)
    assert {"speaker", "phase", "round", "text"} <= set(reader.columns)


def test_embedding_map_cluster_labels_and_feature_colour(env):
    def widgets(at):
        at.toggle(key="traj_clusters").set_value(True)
        at.run()
        at.number_input(key="traj_k").set_value(3)
        at.run()
        at.selectbox(key="traj_colour").set_value("cluster")

    at = open_page("trajectories", widgets=widgets)
    explore = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Turns in semantic space"))
    names = [t["name"] for t in explore["data"]]
    assert len(names) == 3 and all(n.split(": ")[0] in {"0", "1", "2"} and ": " in n for n in names)
    at.selectbox(key="traj_colour").set_value("global_coherence").run()
    explore = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Turns in semantic space"))
    assert len(explore["data"]) == 1 and explore["data"][0]["marker"]["showscale"]


def test_diversity_headline_without_enough_groups_says_so_beside_the_published_gain(env):
    at = open_page("diversity")
    captions = [c.value.replace("\\", "") for c in at.caption]  # markdown escapes undone
    # 15 runs per method on one task in groups of 5: 3 groups per side, too few for a bootstrap
    assert any("No interval: too few groups for a bootstrap interval (3 and 3; at least 10 a side)" in c
               and "over 3 Creative-MAD and 3 Homo MAD groups of 5 runs" in c for c in captions), captions
    assert not any("bootstrap interval [" in c for c in captions)
    assert any(c.startswith(":orange-badge[published] paper B, section 6: Qwen3-8B +26.2%") for c in captions)


def test_large_map_puts_every_turn_in_its_image_draws_whole_conversations_and_says_so(env, monkeypatch):
    """Above the cap every turn goes into the map's image (one cell per 1/400 of each axis),
    whole conversations sampled with a seed are drawn over it, and the page says what is drawn
    and what is aggregated; search, the table and the paths keep every turn. The cap is
    lowered to 100 here (the rich corpus has ~320 turns)."""
    import base64
    import io
    import re

    from PIL import Image

    from dashboard.page_data import trajectories

    monkeypatch.setattr(trajectories, "MAX_MAP_POINTS", 100)
    at = open_page("trajectories", widgets=lambda at: at.text_input(key="traj_search").input("seaweed"))
    explore = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Turns in semantic space"))
    drawn = [t for t in explore["data"] if not t["name"].startswith("search hits")]
    texts = [text for t in drawn for text in t["text"]]
    per_conversation = pd.Series([re.match(r"<b>(.*?)</b>", text).group(1) for text in texts]).value_counts()
    n_turns = env.conversations.set_index("conversation_id")["n_turns"]
    total = len(env.turn_index)
    assert total > 100
    # whole conversations, at most 100 turns, and no room left for the next one drawn at random
    assert (per_conversation == n_turns.loc[per_conversation.index]).all()
    assert len(texts) == per_conversation.sum() <= 100
    assert len(texts) > 100 - n_turns.max()
    assert f"all {total:,} in the image, {len(texts):,} drawn as points" in explore["layout"]["title"]["text"].replace("<br>", " ")
    assert any(f"all {total:,} turns are aggregated into the image" in c.value for c in at.caption)
    # the image holds every turn: its cells' opacity adds up to the turns' count per cell
    (image,) = explore["layout"]["images"]
    pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(image["source"].split(",", 1)[1]))))
    assert pixels.shape == (400, 400, 4) and 0 < (pixels[..., 3] > 0).sum() <= total
    # the search still covers every turn (the table), not only the drawn ones
    turns = env.corpus.turns_frame().merge(env.turn_index, on=["conversation_id", "turn"])
    expected = int(turns["text"].str.contains("seaweed", case=False).sum())
    table = next(d.value for d in at.dataframe if {"conversation_id", "text"} <= set(d.value.columns)
                 and "distance to previous turn" not in d.value.columns)
    assert len(table) == expected
    assert any(f"{expected:,} turns (" in c.value and "among the drawn points" in c.value for c in at.caption)
    # the same selection gives the same sample (seeded)
    again = open_page("trajectories")
    explore2 = next(f for f in figures(again) if f["layout"]["title"]["text"].startswith("Turns in semantic space"))
    assert sorted(text for t in explore2["data"] for text in t["text"]) == sorted(texts)


def test_sample_conversations_keeps_everything_under_the_cap_and_whole_conversations_above():
    from dashboard.page_data.trajectories import sample_conversations

    points = pd.DataFrame({"conversation_id": ["a"] * 3 + ["b"] * 5 + ["c"] * 2, "turn": [0, 1, 2, 0, 1, 2, 3, 4, 0, 1]})
    assert sample_conversations(points, cap=10) is points
    # seed 0: numpy's permutation of (a, b, c) is (c, a, b): c (2 turns) and a (3) fit in 7,
    # b (5 more) does not; seed 1 gives (a, b, c): a and b (8 turns) exceed 7, so only a
    assert list(np.random.default_rng(0).permutation(3)) == [2, 0, 1]
    sample = sample_conversations(points, cap=7, seed=0)
    assert sample.equals(points[points["conversation_id"].isin(["a", "c"])])
    assert list(sample_conversations(points, cap=7, seed=1)["conversation_id"]) == ["a"] * 3


@pytest.mark.slow  # UMAP's first call compiles numba kernels (~40 s on 2 cores)
def test_trajectories_say_when_umap_was_fitted_on_a_sample(env, monkeypatch):
    """With the fit cap lowered to 100 turns (the rich corpus has ~320), the page states the
    sample: 100 of every turn fitted, every turn still on the map."""
    import engine.maps.projection
    from dashboard.widgets import cached

    monkeypatch.setattr(engine.maps.projection, "MAX_FIT_TURNS", 100)
    cached._turn_points.clear()
    cached._map_frames.clear()
    try:
        at = open_page("trajectories", widgets=lambda at: at.radio(key="traj_method").set_value("umap"))
        total = len(env.turn_index)
        assert total > 100
        assert any(f"UMAP fitted on 100 of {total:,} turns (seeded sample, seed 42), every turn placed with it."
                   == c.value for c in at.caption)
        main = next(f for f in figures(at) if "UMAP" in f["layout"]["title"]["text"])
        assert len(decode(main["data"][0]["x"])) == total
        pca = open_page("trajectories")  # PCA: no sample, no sentence
        assert not any("fitted on" in c.value for c in pca.caption)
    finally:
        cached._turn_points.clear()
        cached._map_frames.clear()


def test_trajectories_pickers_past_their_limit_list_the_kept_ones_and_find_any_by_id(env, monkeypatch):
    """With the pickers' limit lowered to 5 conversations, every picker lists 5 (the chosen ones
    first), and an id typed in the find box joins every picker and opens in the reader; an id
    not in the selection is said, not picked."""
    from dashboard.page_data import trajectories

    monkeypatch.setattr(trajectories, "PICKER_LIMIT", 5)
    ids = [c for c in env.conversations["conversation_id"] if c in set(env.turn_index["conversation_id"])]
    assert len(ids) > 6
    at = open_page("trajectories")
    chosen = at.multiselect(key="traj_conversations").value
    assert len(at.multiselect(key="traj_conversations").options) == 5
    assert len(at.selectbox(key="traj_left").options) == 5 and len(at.selectbox(key="traj_reader").options) == 5
    assert any("list 5 of the" in c.value for c in at.caption)
    far = ids[-1]
    assert far not in chosen and far not in ids[:5]
    at.text_input(key="traj_find").input(far).run()
    assert not at.exception
    assert at.selectbox(key="traj_reader").value == far
    labels = trajectories.conversation_labels(env.conversations)
    assert labels[far] in at.selectbox(key="traj_left").options
    at.text_input(key="traj_find").input("nosuchconversation").run()
    assert any("No conversation “nosuchconversation”" in w.value for w in at.warning)
