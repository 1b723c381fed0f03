"""A mixed model's R² is a headline only when N per parameter and the number of task groups can
carry it (``engine.stats.guards.mixed_r2_guard``): thresholds checked at their edges, on fits of
hand-made frames (k and the group count worked out by hand) and on the cached local dataset."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.stats import RegressionSpec, fit
from engine.stats import guards

REPO = Path(__file__).resolve().parents[3]
LOCAL = REPO / "cached_runs" / "local_smollm2"


@pytest.mark.parametrize("n, k, groups, rows_ok, groups_ok", [
    (110, 11, 6, True, True),    # N = 10·k exactly, 6 groups: a headline
    (109, 11, 6, False, True),   # one row short
    (24, 11, 6, False, True),    # the Regression page's example: N 24, k 11
    (500, 4, 5, True, True),     # 5 groups: the floor
    (500, 4, 4, True, False),    # 4 groups: below it
    (20, 4, 2, False, False),    # both rules fail
])
def test_mixed_r2_guard_edges(n, k, groups, rows_ok, groups_ok):
    guard = guards.mixed_r2_guard(n, k, groups)
    assert guards.ROWS_PER_COEFFICIENT == 10 and guards.MIN_GROUPS_FOR_GROUP_VARIANCE == 5
    assert guard.enough_rows is rows_ok and guard.enough_groups is groups_ok
    assert guard.headline is (rows_ok and groups_ok)
    if guard.headline:
        assert guard.reason == "" and guard.warning is None
        return
    assert guard.reason.startswith("not a headline at this N: ")
    assert guard.warning.startswith("warning: ")
    if not rows_ok:
        assert f"N = {n} rows for k = {k} estimated parameters" in guard.reason
        assert f"({10 * k} needed)" in guard.reason
    if not groups_ok:
        assert f"{groups} groups for the random-intercept variance, fewer than 5" in guard.reason
    assert len(guard.reasons) == (not rows_ok) + (not groups_ok)


def test_unknown_group_count_is_no_headline():
    guard = guards.mixed_r2_guard(1000, 3, None)
    assert not guard.headline and "an unknown number of groups" in guard.reason


def test_r2_headline_of_a_mixed_summary():
    small = {"r2": None, "n": 24, "k": 11, "n_groups": 6, "conditional_r2": 0.989, "marginal_r2": 0.512}
    head = guards.r2_headline(small)
    assert (head.label, head.value, head.beside, head.headline) == ("conditional R²", 0.989, "marginal R² 0.512", False)
    assert head.text() == "98.9%" and "110 needed" in head.reason
    assert guards.headline_r2(small) == ("conditional R² (not a headline at this N)", 0.989, "marginal R² 0.512")
    large = dict(small, n=110)
    assert guards.r2_headline(large).headline and guards.headline_r2(large)[0] == "conditional R²"
    # OLS keeps its rule: adjusted R² leads a small sample, and is a headline
    ols = guards.r2_headline({"r2": 0.944, "adj_r2": 0.527, "small_sample": True})
    assert (ols.label, ols.value, ols.headline) == ("adjusted R²", 0.527, True)


def _grouped(n_groups: int, per_group: int, seed: int = 0) -> pd.DataFrame:
    """y = x1 + 0.5 x2 + a task intercept (SD 1) + noise, ``per_group`` rows in each group."""
    rng = np.random.default_rng(seed)
    task = np.repeat([f"t{i}" for i in range(n_groups)], per_group)
    intercepts = dict(zip(np.unique(task), rng.normal(size=n_groups)))
    frame = pd.DataFrame({"x1": rng.normal(size=len(task)), "x2": rng.normal(size=len(task)), "task": task})
    return frame.assign(y=frame["x1"] + 0.5 * frame["x2"] + frame["task"].map(intercepts)
                        + 0.5 * rng.normal(size=len(task)))


@pytest.mark.parametrize("n_groups, per_group, headline", [
    (6, 4, False),    # N 24 < 10·4
    (6, 7, True),     # N 42 >= 40, 6 groups
    (4, 15, False),   # N 60 is enough, 4 groups is not
])
def test_mixed_fit_summary_carries_the_headline_rule(n_groups, per_group, headline):
    spec = RegressionSpec(name="m", outcome="y", blocks=["x1", "x2"], estimator="mixedlm", group="task",
                          zscore=False)
    s = fit(spec, _grouped(n_groups, per_group), allow_nonconvergence=True).summary
    k = 1 + 2 + 1  # intercept, x1, x2 and the task variance
    n = n_groups * per_group
    assert (s["n"], s["k"], s["n_groups"]) == (n, k, n_groups)
    assert s["r2_headline"] is headline is (n >= 10 * k and n_groups >= 5)
    assert (s["sample_warning"] is None) is headline
    if not headline:
        assert s["r2_headline_reason"].startswith("not a headline at this N")
        assert "adjusted R²" not in s["sample_warning"]  # a mixed model has none to read instead


@pytest.mark.skipif(not (LOCAL / "manifest.json").exists(), reason="cached_runs/local_smollm2 is not built")
def test_local_dataset_mixed_r2_is_no_headline_at_its_n():
    from dashboard.page_data.datasets import availability
    from dashboard.page_data.regression import regression_page_data
    from engine import samples
    from engine.datasets import Dataset
    from engine.measures.trajectory import PAPER_A_FEATURES

    dataset = Dataset.load(LOCAL, with_corpus=False)
    have = availability(dataset)
    frame = samples.select(dataset.conversations, "trajectory")
    outcome = "forward_flow"
    data = regression_page_data(frame, outcome, ["llm"], "mixedlm", features=have.features, ratings=have.ratings)
    team = data.teams[0]
    # by hand: the LLM rows with the outcome and every predictor of paper A's nine present
    llm = frame[frame["source"] == "llm"]
    predictors = [f for f in PAPER_A_FEATURES if f != outcome and f in have.features]
    used = llm.dropna(subset=[outcome, *predictors])
    n, n_groups = len(used), used["task"].nunique()
    k = 1 + len(predictors) + 1
    s = team.fit["summary"]
    assert (s["n"], s["k"], s["n_groups"]) == (n, k, n_groups)
    assert n < 10 * k  # 24 rows for 11 parameters on this dataset
    head = team.r2
    assert head.label == "conditional R²" and not head.headline
    assert head.reason == (f"not a headline at this N: N = {n} rows for k = {k} estimated parameters (fixed "
                           f"effects and the group variance), fewer than 10 per parameter ({10 * k} needed)")
    assert math.isclose(head.value, s["conditional_r2"])


@pytest.mark.skipif(not (LOCAL / "manifest.json").exists(), reason="cached_runs/local_smollm2 is not built")
def test_local_ladder_says_its_mixed_rung_r2_is_no_headline():
    from dashboard.page_data.datasets import availability
    from dashboard.page_data.regression import regression_page_data
    from engine import samples
    from engine.datasets import Dataset

    dataset = Dataset.load(LOCAL, with_corpus=False)
    have = availability(dataset)
    frame = samples.select(dataset.conversations, "trajectory")
    data = regression_page_data(frame, "creativity", ["llm"], "ols_hc3", features=have.features, ratings=have.ratings)
    rung = data.ladder_n[data.ladder_n["specification"].str.startswith("mixed")].iloc[0]
    n, k = int(rung["LLM N"]), int(rung["LLM k"])
    assert n < 10 * k  # 18 rows for 12 parameters
    lines = [line for line in data.ladder_warnings if "conditional R² not a headline at this N" in line]
    assert lines == [f"LLM / {rung['specification']}: conditional R² not a headline at this N: N = {n} rows for "
                     f"k = {k} estimated parameters (fixed effects and the group variance), fewer than 10 per "
                     f"parameter ({10 * k} needed)"]
