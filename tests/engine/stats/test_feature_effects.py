"""``engine.stats.feature_effects``: one row per column, LLM − human, checked against scipy's
Welch test and Hedges' g written here from its definition (pooled SD, Hedges' exact
small-sample factor J = Γ(ν/2) / (√(ν/2) Γ((ν − 1)/2)), ν = n1 + n2 − 2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import special
from scipy import stats as scipy_stats

from engine.stats.feature_effects import feature_effects


def frame() -> pd.DataFrame:
    return pd.DataFrame({"source": ["llm"] * 4 + ["human"] * 3,
                         "a": [1.0, 2.0, 3.0, 4.0, 2.0, 4.0, 6.0],
                         "b": [0.5, 0.7, 0.2, 0.9, np.nan, np.nan, np.nan]})  # no human value of b


def test_one_row_per_column_with_welch_and_hedges_g_worked_out_here():
    table = feature_effects(frame(), ["a", "b"])
    assert table["feature"].tolist() == ["a"]  # b has no human value: left out
    row = table.iloc[0]
    llm, human = np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 4.0, 6.0])
    assert (row["llm_n"], row["human_n"]) == (4, 3)
    assert row["llm_mean"] == pytest.approx(2.5) and row["human_mean"] == pytest.approx(4.0)
    assert row["diff"] == pytest.approx(-1.5)
    assert row["welch_p"] == pytest.approx(scipy_stats.ttest_ind(llm, human, equal_var=False).pvalue, rel=1e-9)
    pooled = np.sqrt(((4 - 1) * llm.var(ddof=1) + (3 - 1) * human.var(ddof=1)) / (4 + 3 - 2))
    nu = 4 + 3 - 2
    g = -1.5 / pooled * special.gamma(nu / 2) / (np.sqrt(nu / 2) * special.gamma((nu - 1) / 2))
    assert row["g"] == pytest.approx(g, rel=1e-9)
    assert row["ci_low"] < row["g"] < row["ci_high"]
    assert row["diff_ci_low"] < -1.5 < row["diff_ci_high"]
    assert isinstance(row["welch_p"], float)  # a number, not "<0.001"
    assert list(table.columns) == ["feature", "llm_n", "llm_mean", "human_n", "human_mean", "diff", "diff_ci_low",
                                   "diff_ci_high", "welch_p", "g", "ci_low", "ci_high"]


def test_no_column_compared_gives_an_empty_table():
    assert feature_effects(frame(), ["b"]).empty
