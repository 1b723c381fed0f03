"""The cached dataset of paper B's comparison on its own benchmarks
(``cached_runs/local_smollm2_paper_b_benchmarks``): every page renders on it, and the Diversity
and Quality-Diversity pages show its numbers per benchmark beside paper B's published ones,
labelled and with the "different models and scale" caveat. Our Vendi Score is recomputed here
from the final outputs with the textbook formula (exp of the entropy of the eigenvalues of
K / n, cosine kernel of the bundled MiniLM's embeddings), not through the page's code."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import pages

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
NAME = "local_smollm2_paper_b_benchmarks"
FOLDER = REPO / "cached_runs" / NAME

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not (FOLDER / "manifest.json").is_file(), reason="not built")]


def _open(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=600)
    at.session_state["dataset_choice"] = NAME
    at.run()
    at.switch_page(pages.page(page).script)
    at.run()
    assert not at.exception, (page, [e.value for e in at.exception])
    return at


def _tables(at: AppTest) -> list[pd.DataFrame]:
    return [frame.value for frame in at.dataframe]


def _texts(at: AppTest) -> str:
    """The page's markdown and captions with the markdown escapes (``ui.escape``) taken off."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    return re.sub(r"\\(.)", r"\1", "\n".join(str(p) for p in parts))


def test_the_manifest_says_where_the_items_come_from():
    manifest = json.loads((FOLDER / "manifest.json").read_text())
    assert set(manifest["benchmark_of_task"].values()) == {"macgyver", "arena_hard_creative"}
    assert manifest["benchmarks"]["macgyver"]["sha256"] == \
        "85faadd871e081066ed6dbe0ecafad82f4c79c16619f6b90da562a81f3ccceac"
    assert manifest["regenerate"] == "make cached-runs-paper-b-benchmarks"
    frame = pd.read_parquet(FOLDER / "conversations.parquet")
    counts = frame.groupby(["discussion", "task"]).size()
    assert len(counts) == 12 and (counts == 10).all()  # 3 methods x 4 items x 10 runs


def test_every_page_renders_on_the_dataset(page_renders):
    """A title, no exception, no error box on every page (the session's one render of each page
    per cached dataset, ``tests.support.page_renders``)."""
    for page, shown in page_renders(NAME).items():
        assert shown.titles and not shown.exceptions and not shown.errors, (page, shown.exceptions, shown.errors)


def _vendi(vectors: np.ndarray) -> float:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    eigenvalues = np.linalg.eigvalsh(unit @ unit.T / len(unit))
    eigenvalues = eigenvalues[eigenvalues > 1e-12]
    return float(np.exp(-(eigenvalues * np.log(eigenvalues)).sum()))


def test_diversity_page_sets_our_per_benchmark_gain_beside_the_published_one(cached_runs_of):
    from engine.embedding.embedder import Embedder  # the bundled MiniLM (vectors only; Vendi by hand)

    cached_runs_of(NAME)
    at = _open("diversity")
    gains = next(t for t in _tables(at) if "Vendi gain % · ours" in t.columns).set_index("benchmark")
    assert set(gains.index) == {"macgyver", "arena_hard_creative"}
    assert (gains["Vendi gain % · published (Qwen3-8B)"] == 26.2).all()
    assert (gains["Div-BLEU gain % · published (Gemma-3-12B-Instruct)"] == 24.0).all()
    assert "different models and scale, not comparable" in _texts(at)
    assert "pooled over its four benchmarks" in _texts(at)
    # ours, by hand: per item and method, the mean Vendi of consecutive groups of 5 runs in
    # replicate order; per benchmark the mean over its items; the gain in percent
    frame = pd.read_parquet(FOLDER / "conversations.parquet").sort_values(["task", "replicate"])
    benchmark_of = json.loads((FOLDER / "manifest.json").read_text())["benchmark_of_task"]
    model = Embedder()
    cell = {}
    for (method, task), part in frame.groupby(["discussion", "task"]):
        texts = part["final_idea"].astype(str).tolist()
        groups = [texts[i:i + 5] for i in range(0, len(texts) - len(texts) % 5, 5)]
        cell[(method, task)] = np.mean([_vendi(model.encode(g)) for g in groups])
    for name in ("macgyver", "arena_hard_creative"):
        tasks = [t for t, b in benchmark_of.items() if b == name]
        mine = {m: np.mean([cell[(m, t)] for t in tasks]) for m in ("creative_mad", "homo_mad")}
        expected = 100 * (mine["creative_mad"] - mine["homo_mad"]) / mine["homo_mad"]
        assert gains.loc[name, "Vendi gain % · ours"] == pytest.approx(expected, abs=0.06)  # shown rounded to 0.1


def test_quality_diversity_page_shows_the_rubric_per_benchmark_beside_the_published_distance(cached_runs_of):
    cached_runs_of(NAME)
    at = _open("quality_diversity")
    by_benchmark = next(t for t in _tables(at) if {"benchmark", "rubric", "vendi"} <= set(t.columns))
    assert set(by_benchmark["benchmark"]) == {"macgyver", "arena_hard_creative"}
    assert set(by_benchmark["method"]) == {"direct", "homo_mad", "creative_mad"}
    quality = pd.read_parquet(FOLDER / "quality.parquet")
    final = quality[(quality["kind"] == "rubric") & quality["round"].isna()]
    per_session = final.groupby("conversation_id")["score"].mean()  # mean of the raters' readable scores
    frame = pd.read_parquet(FOLDER / "conversations.parquet").set_index("conversation_id")
    benchmark_of = json.loads((FOLDER / "manifest.json").read_text())["benchmark_of_task"]
    scored = frame.assign(score=per_session, benchmark=frame["task"].map(benchmark_of))
    expected = scored.groupby(["benchmark", "discussion"])["score"].mean()
    for _, row in by_benchmark.iterrows():
        assert row["rubric"] == pytest.approx(expected[(row["benchmark"], row["method"])], abs=5e-4)
    gap = next(t for t in _tables(at) if "Creative-MAD below the best % · ours" in t.columns)
    assert (gap["Creative-MAD below the best · published (Qwen3-8B)"] == "within 1.2%").all()
    assert "different models and scale, not comparable" in _texts(at)
