"""The Quality–Diversity page on the cached paper-B runs (cached_runs/local_smollm2_paper_b).

Expected numbers are recomputed here from the dataset's files with pandas and numpy (Vendi
by its definition: exp of the entropy of the eigenvalues of K / n), not through the page."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
DATASET = REPO / "cached_runs" / "local_smollm2_paper_b"

pytestmark = [pytest.mark.slow,  # embeds the dataset's final outputs on a cold cache (~20 s)
              pytest.mark.skipif(not (DATASET / "manifest.json").exists(),
                                 reason="cached_runs/local_smollm2_paper_b is not built")]


@pytest.fixture
def paper_b_root(cached_runs_of):
    return cached_runs_of(DATASET.name)


def open_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/quality_diversity.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def vendi_by_definition(vectors: np.ndarray) -> float:
    x = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    eigenvalues = np.clip(np.linalg.eigvalsh(x @ x.T / len(x)), 0, None)
    p = eigenvalues[eigenvalues > 1e-12] / eigenvalues.sum()
    return float(np.exp(-(p * np.log(p)).sum()))


def homo_runs(conversations: pd.DataFrame, task: str) -> pd.DataFrame:
    rows = conversations[(conversations["discussion"] == "homo_mad") & (conversations["task"] == task)]
    return rows.sort_values(["replicate", "conversation_id"])


def table_with(at: AppTest, column: str) -> pd.DataFrame:
    return next(df.value for df in at.dataframe if column in df.value.columns)


def test_quality_diversity_page_numbers_come_from_the_data(paper_b_root):
    from engine.embedding.embedder import Embedder

    at = open_page()
    conversations = pd.read_parquet(DATASET / "conversations.parquet")
    records = pd.read_parquet(DATASET / "quality.parquet")
    summary = table_with(at, "pareto (rubric × Vendi)")
    homo = summary[summary["condition"].str.startswith("homo_mad")].iloc[0]
    # Vendi: mean over the groups of 5 runs of both tasks (15 runs -> 3 groups each)
    embedder = Embedder()
    per_group = []
    for task in ("plastic_waste", "singing_shower"):
        texts = homo_runs(conversations, task)["final_idea"].tolist()
        assert len(texts) == 15
        vectors = embedder.encode(texts)
        per_group += [vendi_by_definition(vectors[g * 5:(g + 1) * 5]) for g in range(3)]
    assert homo["groups"] == 6
    assert homo["vendi"] == pytest.approx(np.mean(per_group), abs=1e-3)
    # rubric: the judge's final-output scores of those 30 sessions
    ids = set(conversations.loc[conversations["discussion"] == "homo_mad", "conversation_id"])
    final = records[(records["kind"] == "rubric") & records["round"].isna() & records["conversation_id"].isin(ids)]
    scores = pd.to_numeric(final["score"]).dropna()
    assert homo["rubric_n"] == len(scores)
    assert homo["rubric"] == pytest.approx(scores.mean(), abs=1e-3)
    # consensus bias check: unreadable picks of Homo MAD, from the sessions' own records
    consensus = table_with(at, "unparsed_share")
    row = consensus[consensus["condition"] == homo["condition"]].iloc[0]
    parsed = conversations.loc[conversations["discussion"] == "homo_mad", "consensus_parsed"]
    assert row["unparsed"] == int((parsed == False).sum())  # noqa: E712
    assert sum(row[c] for c in consensus.columns if c.startswith("chose ")) == 30
    # the ablation table has section 7.4's designs
    ablation = table_with(at, "ablation")
    assert {"neither (Homo MAD)", "CLA only", "EPS only", "CLA + EPS (Creative-MAD)", "CLA + closest-k",
            "CLA + random-k"} <= set(ablation["ablation"])
    # published numbers are there, labelled as published
    published = table_with(at, "published")
    assert "+26.2%" in published["published"].tolist()
    assert any("published" in m.value for m in at.markdown)


def test_quality_diversity_page_warm_render_embeds_nothing_again(paper_b_root, monkeypatch):
    """A second session's first render reuses the cached final-output vectors: no text reaches
    the model again (its time is measured by ``benchmarks.bench_dashboard``, not here)."""
    from engine.embedding.embedder import Embedder

    open_page()  # cold: loads the dataset, embeds the final outputs once (cached)
    encoded = []
    original = Embedder.encode
    monkeypatch.setattr(Embedder, "encode", lambda self, texts, *a, **k: encoded.append(len(texts))
                        or original(self, texts, *a, **k))
    open_page()  # a new session: the first render of the page, warm caches
    assert sum(encoded) == 0
