"""The Steering page on the cached steered-vs-baselines runs (cached_runs/local_smollm2_steered).

Expected numbers are recomputed here from the dataset's files with numpy and scipy (t
intervals; Vendi by its definition, exp of the entropy of the eigenvalues of K / n), not
through the page's helpers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "dashboard" / "app.py")
DATASET = REPO / "cached_runs" / "local_smollm2_steered"

pytestmark = pytest.mark.skipif(not (DATASET / "final_ids.json").exists(),
                                reason="cached_runs/local_smollm2_steered is not built")


@pytest.fixture
def steered_root(tmp_path, monkeypatch):
    root = tmp_path / "cached_runs"
    root.mkdir()
    (root / DATASET.name).symlink_to(DATASET, target_is_directory=True)
    monkeypatch.setenv("CDL_CACHED_RUNS", str(root))
    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
    return root


def vendi_by_definition(vectors: np.ndarray) -> float:
    x = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    eigenvalues = np.clip(np.linalg.eigvalsh(x @ x.T / len(x)), 0, None)
    p = eigenvalues[eigenvalues > 1e-12] / eigenvalues.sum()
    return float(np.exp(-(p * np.log(p)).sum()))


def t_interval(values):
    values = np.asarray(values, float)
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return values.mean(), values.mean() - half, values.mean() + half


@pytest.mark.slow
def test_steering_table_numbers_come_from_the_data(steered_root):
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/steering.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = {frame.proto.id if hasattr(frame, "proto") else i: frame.value for i, frame in enumerate(at.dataframe)}
    table = next(v for v in shown.values() if "vendi" in v.columns and "method" in v.columns)
    conversations = pd.read_parquet(DATASET / "conversations.parquet")
    ok = conversations[conversations["status"] == "ok"]
    ids = json.loads((DATASET / "final_ids.json").read_text())
    vectors = dict(zip(ids, np.load(DATASET / "final_embeddings.npy")))
    assert set(table["method"]) == set(ok["discussion"])
    for row in table.itertuples():
        part = ok[ok["discussion"] == row.method].sort_values("replicate", kind="stable")
        assert row.sessions == len(part)
        gc = part["global_coherence"].dropna()
        mean, low, high = t_interval(gc)
        assert (row.global_coherence, row.global_coherence_lo, row.global_coherence_hi) == \
            pytest.approx((round(mean, 4), round(low, 4), round(high, 4)), abs=1e-4)
        assert row.global_coherence_n == len(gc)
        readable = part[["novelty_raw", "usefulness_raw"]].notna().all(axis=1)
        assert row.judge_parse_rate == pytest.approx(round(readable.mean(), 4), abs=1e-4)
        groups = [part["conversation_id"].tolist()[g * 5:(g + 1) * 5] for g in range(len(part) // 5)]
        vendi = [vendi_by_definition(np.stack([vectors[c] for c in g])) for g in groups]
        assert row.groups == len(groups)
        assert row.vendi == pytest.approx(round(float(np.mean(vendi)), 4), abs=1e-4)
    assert any("Cannot:" in t.value for t in at.text)
