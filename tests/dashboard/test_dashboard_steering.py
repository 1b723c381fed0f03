"""The Steering page on the cached steered-vs-baselines runs (cached_runs/local_smollm2_steered).

Expected numbers are recomputed here from the dataset's files with numpy and scipy (t
intervals, on the logit scale for bounded scores; Vendi by its definition, exp of the entropy of the eigenvalues of K / n), not
through the page's helpers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
DATASET = REPO / "cached_runs" / "local_smollm2_steered"

pytestmark = pytest.mark.skipif(not (DATASET / "final_ids.json").exists(),
                                reason="cached_runs/local_smollm2_steered is not built")


@pytest.fixture
def steered_root(cached_runs_of):
    return cached_runs_of(DATASET.name)


def vendi_by_definition(vectors: np.ndarray) -> float:
    x = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    eigenvalues = np.clip(np.linalg.eigvalsh(x @ x.T / len(x)), 0, None)
    p = eigenvalues[eigenvalues > 1e-12] / eigenvalues.sum()
    return float(np.exp(-(p * np.log(p)).sum()))


def t_interval(values, low_bound=None, high_bound=None):
    """95% Student-t interval; inside (low_bound, high_bound) it is taken on the logit of the
    mean's position in the range (delta method: se / (m (1 - m)) on that scale) and mapped back.
    Fewer than 3 values: no interval (NaN bounds), the pages' minimum; every value at one
    bound: the interval is the point."""
    values = np.asarray(values, float)
    n = len(values)
    if n < 3:
        return values.mean(), float("nan"), float("nan")
    q = stats.t.ppf(0.975, n - 1)
    se = values.std(ddof=1) / np.sqrt(n)
    if low_bound is None:
        return values.mean(), values.mean() - q * se, values.mean() + q * se
    width = high_bound - low_bound
    m = (values.mean() - low_bound) / width
    if m <= 0 or m >= 1 or se == 0:  # all at a bound or no spread: nothing to widen
        return values.mean(), values.mean(), values.mean()
    centre, half = np.log(m / (1 - m)), q * (se / width) / (m * (1 - m))
    expit = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    return values.mean(), low_bound + width * expit(centre - half), low_bound + width * expit(centre + half)


@pytest.mark.slow
def test_steering_table_numbers_come_from_the_data(steered_root):
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/steering.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(f.value for f in at.dataframe if {"vendi", "method"} <= set(f.value.columns))
    conversations = pd.read_parquet(DATASET / "conversations.parquet")
    ok = conversations[conversations["status"] == "ok"]
    ids = json.loads((DATASET / "final_ids.json").read_text())
    vectors = dict(zip(ids, np.load(DATASET / "final_embeddings.npy")))
    assert set(table["method"]) == set(ok["discussion"])
    for row in table.itertuples():
        part = ok[ok["discussion"] == row.method].sort_values("replicate", kind="stable")
        assert row.sessions == len(part)
        gc = part["global_coherence"].dropna()
        assert row.global_coherence_n == len(gc)
        if len(gc):
            mean, low, high = t_interval(gc)
            assert (row.global_coherence, row.global_coherence_lo, row.global_coherence_hi) == \
                pytest.approx((round(mean, 4), round(low, 4), round(high, 4)), abs=1e-4, nan_ok=True)
        readable = part[["novelty_raw", "usefulness_raw"]].notna().all(axis=1)
        assert row.judge_parse_rate == pytest.approx(round(readable.mean(), 4), abs=1e-4)
        for name in ("creativity", "rubric_score"):
            scores = part[name].dropna() if name in part else pd.Series(dtype=float)
            assert getattr(row, f"{name}_n") == len(scores)
            if len(scores):
                bounds = (1.0, 10.0) if name == "rubric_score" else (0.0, 1.0)
                mean, low, high = t_interval(scores, *bounds)
                assert (getattr(row, name), getattr(row, f"{name}_lo"), getattr(row, f"{name}_hi")) == \
                    pytest.approx((round(mean, 4), round(low, 4), round(high, 4)), abs=1e-4, nan_ok=True)
        if "rubric_score" in part:
            assert row.rubric_parse_rate == pytest.approx(round(part["rubric_score"].notna().mean(), 4), abs=1e-4)
        groups = [part["conversation_id"].tolist()[g * 5:(g + 1) * 5] for g in range(len(part) // 5)]
        vendi = [vendi_by_definition(np.stack([vectors[c] for c in g])) for g in groups]
        assert row.groups == len(groups)
        if groups:
            assert row.vendi == pytest.approx(round(float(np.mean(vendi)), 4), abs=1e-4)
        else:
            assert np.isnan(row.vendi)
    differences = next(f.value for f in at.dataframe if "steered_minus_baseline" in f.value.columns)
    for row in differences.itertuples():
        a = ok.loc[ok["discussion"] == "steered", row.outcome].dropna()
        b = ok.loc[ok["discussion"] == row.baseline, row.outcome].dropna()
        welch = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
        assert (row.steered_minus_baseline, row.lo, row.hi) == pytest.approx(
            (round(a.mean() - b.mean(), 4), round(welch.low, 4), round(welch.high, 4)), abs=1e-4)
        assert (row.n_steered, row.n_baseline) == (len(a), len(b))
    assert any("Cannot:" in t.value for t in at.text)
