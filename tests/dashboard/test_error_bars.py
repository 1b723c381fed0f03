"""Error bars say what they are on every chart that draws them (hover, a line under the value
axis, ``layout.meta["error_bars"]``), and none is drawn below the guards' minimum of groups
(``engine.stats.guards.MIN_GROUPS_FOR_INTERVAL``) or for an undefined interval. Values are
worked out here: SDs of the group values by hand, Student-t and normal quantiles from scipy, on
hand-made frames and on the cached paper-B dataset."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from dashboard.figures import charts, checks, compare_runs, error_bars, mode_forest
from engine.stats import guards

REPO = Path(__file__).resolve().parents[2]
PAPER_B = REPO / "cached_runs" / "local_smollm2_paper_b"
needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")


def test_the_guard_is_three_groups():
    assert guards.MIN_GROUPS_FOR_INTERVAL == 3
    assert error_bars.too_few(2) == "no error bar: 2 groups (fewer than 3)"


def _diversity_table():
    """Two conditions on one task: A with 3 groups, B with 2 (its SD must not be drawn)."""
    groups = {"A": [1.8, 2.4, 2.1], "B": [1.5, 1.9]}
    return pd.DataFrame({"method": list(groups), "task": ["plastic_waste"] * 2,
                         "vendi": [np.mean(v) for v in groups.values()],
                         "vendi_sd": [np.std(v) for v in groups.values()],
                         "n_groups": [len(v) for v in groups.values()]}), groups


def test_diversity_bars_draw_sd_only_from_three_groups():
    table, groups = _diversity_table()
    fig = charts.diversity_bars(table, "vendi", "Vendi")
    with_sd, without = fig.data
    # A: population SD of 1.8, 2.4, 2.1 by hand: mean 2.1, deviations ±0.3, 0 -> sqrt(0.18 / 3)
    assert list(with_sd.error_y.array) == pytest.approx([np.sqrt(0.18 / 3)])
    assert without.error_y.array is None and list(without.y) == pytest.approx([1.7])
    assert (with_sd.offsetgroup, with_sd.legendgroup) == (without.offsetgroup, without.legendgroup) == ("plastic_waste",) * 2
    assert without.showlegend is False and checks.problems(fig) == []
    assert without.customdata[0][1] == "no error bar: 2 groups (fewer than 3)"
    assert with_sd.customdata[0][1] == f"±{np.sqrt(0.18 / 3):.3f} (1 SD across 3 groups)"
    assert "error bars: ±1 SD across groups (≥ 3 groups)" in fig.layout.xaxis.title.text
    assert error_bars.described(fig) == error_bars.SD_ACROSS_GROUPS and "population SD" in error_bars.described(fig)
    # the axis reaches A's mean + SD, and not B's (undrawn) SD
    assert fig.layout.yaxis.range[1] >= 2.1 + np.sqrt(0.18 / 3)


def test_diversity_bars_of_a_table_without_group_counts_draw_no_sd():
    table, _ = _diversity_table()
    fig = charts.diversity_bars(table.drop(columns="n_groups"), "vendi", "Vendi")
    assert [t.error_y.array for t in fig.data] == [None]  # the count unknown: nothing to carry an SD
    assert fig.data[0].showlegend is True


@needs_chromium
def test_rendered_diversity_bars_have_one_error_bar_not_a_cap_on_the_two_group_cell():
    from dashboard.exports.formats import figure_to_image

    table, _ = _diversity_table()
    svg = figure_to_image(charts.diversity_bars(table, "vendi", "Vendi"), "svg", width=600).decode()
    paths = re.findall(r'<path class="yerror" d="([^"]+)"', svg)
    assert len(paths) == 1  # A's bar; B has none (a NaN or 0 would have drawn a cap)
    top, bottom = map(float, re.search(r"M[-\d.]+,([-\d.]+)h[-\d.]+m[-\d.]+,0V([-\d.]+)", paths[0]).groups())
    assert bottom - top > 5  # a real bar, not a zero-length cap


def test_group_means_keep_a_bounded_score_inside_its_range():
    frame = pd.DataFrame({"model": ["m"] * 4, "discussion": ["open"] * 4, "novelty": [0.9, 0.95, 1.0, 0.85]})
    fig = charts.group_means_with_ci(frame, "novelty", "discussion", "model")
    (bar,) = fig.data
    expected = guards.mean_interval(frame["novelty"], (0.0, 1.0))
    assert expected.method == guards.METHOD_LOGIT_T
    assert bar.y[0] + bar.error_y.array[0] == pytest.approx(expected.high) and expected.high <= 1.0
    assert bar.y[0] - bar.error_y.arrayminus[0] == pytest.approx(expected.low)
    assert guards.METHOD_LOGIT_T in error_bars.described(fig)
    assert "in the score's range" in fig.layout.xaxis.title.text


def test_forests_of_hedges_g_name_their_interval():
    fidelity = pd.DataFrame({"structure": ["open", "open"], "feature": ["path_length", "max_distance"],
                             "g": [0.4, -0.2], "g_low": [0.1, -0.6], "g_high": [0.7, 0.2],
                             "n_paper": [12, 12], "n_release": [10, 10]})
    fig = mode_forest.mode_difference_forest(fidelity, "Release − paper")
    assert guards.METHOD_HEDGES in error_bars.described(fig) and guards.METHOD_HEDGES in fig.data[0].hovertemplate
    assert "95% CI, noncentral t of Welch's t" in fig.layout.xaxis.title.text
    assert list(fig.data[0].error_x.array) == pytest.approx([0.3, 0.4])
    runs = pd.DataFrame({"reference": ["base"] * 2, "run": ["new"] * 2, "column": ["path_length", "novelty"],
                         "g": [0.5, np.nan], "g_low": [0.2, np.nan], "g_high": [0.8, np.nan],
                         "difference": [0.1, 0.02], "p": [0.01, np.nan],
                         "note": ["", "too few sessions for an interval (n = 2)"]})
    fig = compare_runs.difference_forest(runs, "Runs")
    with_bar, without = fig.data
    assert list(with_bar.error_x.array) == pytest.approx([0.3]) and without.error_x.array is None
    assert without.customdata[0][3] == "too few sessions for an interval (n = 2)"
    assert guards.METHOD_HEDGES in error_bars.described(fig)


def test_quality_diversity_scatter_draws_no_bar_where_the_summary_has_no_interval():
    summary = pd.DataFrame({"condition": ["homo_mad", "creative_mad"], "vendi": [2.0, 2.5],
                            "vendi_lo": [1.6, np.nan], "vendi_hi": [2.4, np.nan], "groups": [3, 2],
                            "rubric": [6.0, 7.0], "rubric_lo": [5.0, 6.2], "rubric_hi": [6.8, 7.7], "rubric_n": [9, 6]})
    fig = charts.quality_diversity_scatter(summary, "vendi", "Vendi Score")
    first, second = fig.data
    assert list(first.error_x.array) == pytest.approx([0.4]) and second.error_x.array is None
    assert list(second.error_y.array) == pytest.approx([0.7])  # its rubric interval stays
    assert second.customdata[0][1] == "Vendi Score 2.500, no error bar: 2 groups (fewer than 3)"
    assert guards.METHOD_LOGIT_T in error_bars.described(fig)
    assert "error bars:" in fig.layout.xaxis.title.text and "error bars:" in fig.layout.yaxis.title.text
    assert checks.axis_problems(fig) == []


def test_regression_interval_methods_match_the_fits():
    """The words say 1.96 · SE for HC3 and the mixed model: the fitted intervals' half-width
    over the SE is the normal quantile scipy gives."""
    from dashboard.page_data.regression import interval_method
    from engine.stats import RegressionSpec, fit

    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": rng.normal(size=60), "task": np.repeat(list("abcdef"), 10)})
    frame["y"] = frame["x"] + frame["task"].map(dict(zip("abcdef", rng.normal(size=6)))) + rng.normal(size=60)
    z = scipy_stats.norm.ppf(0.975)
    for estimator in ("ols_hc3", "mixedlm"):
        spec = RegressionSpec(name="y", outcome="y", blocks=["x"], estimator=estimator, group="task", zscore=False)
        table = fit(spec, frame, allow_nonconvergence=True).table.set_index("term").loc[["Intercept", "x"]]
        assert ((table["ci_high"] - table["coef"]) / table["se"]).to_numpy() == pytest.approx([z, z])
        full, short = interval_method(estimator)
        assert "1.96" in full and "normal quantile" in full and "(normal)" in short
    t = scipy_stats.t.ppf(0.975, 60 - 2)
    assert t > z and "Student-t" in interval_method("ols")[0]


@pytest.mark.skipif(not (PAPER_B / "manifest.json").exists(), reason="cached_runs/local_smollm2_paper_b is not built")
def test_paper_b_diversity_page_draws_sd_only_from_three_groups():
    """The Diversity page's bars on the cached paper-B dataset: Div-BLEU needs no embedder, so
    its SDs are checked by hand from the per-group values (np.std, divisor n)."""
    from dashboard.page_data import diversity
    from dashboard.page_data.datasets import availability
    from engine.datasets import Dataset
    from tests.support.hash_embedder import HashEmbedder

    dataset = Dataset.load(PAPER_B)
    have = availability(dataset)
    data = diversity.diversity_page_data(dataset, dataset.conversations, have.paper_b_methods,
                                         HashEmbedder().encode, turns=False)
    inter = data.inter.dropna(subset=["div_bleu"])
    few = inter[inter["n_groups"] < 3]
    many = inter[inter["n_groups"] >= 3]
    assert len(few) and len(many)  # the dataset has cells of 2 groups and of 3
    fig = charts.diversity_bars(data.by_condition, "div_bleu", "Div-BLEU")
    drawn = {}
    for trace in fig.data:
        if trace.error_y.array is not None:
            for code, sd in zip(trace.x, trace.error_y.array):
                drawn[(code, trace.name)] = sd
    assert len(drawn) == len(many)  # one SD per cell with 3+ groups, none for the 2-group cells
    by_hand = sorted(float(np.std(np.asarray(v, dtype=float))) for v in many["div_bleu_per_group"])
    assert sorted(drawn.values()) == pytest.approx(by_hand)
    note = data.spread_note()
    assert f"{len(few)} of {len(inter)} condition/task cells have fewer" in note
    assert "2 groups: " + str(int((few["n_groups"] == 2).sum())) in note
    assert len(data.without_spread) == len(few)
