"""Dashboard figures (dashboard/figures/charts.py): the plotted numbers equal numbers worked out here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.figures import charts
from engine.stats import guards


@pytest.fixture
def groups_frame():
    return pd.DataFrame({
        "source": ["llm", "llm", "llm", "human", "human"],
        "global_coherence": [0.1, 0.2, 0.6, 0.4, 0.5],
        "path_length": [1.0, 2.0, 3.0, np.nan, 5.0],
    })


def test_distributions_plot_each_group_values_with_means(groups_frame):
    fig = charts.distributions_by_group(groups_frame, ["global_coherence", "path_length"])
    assert len(fig.data) == 4  # 2 columns x 2 groups
    by_name = {(t.name, t.xaxis): t for t in fig.data}
    human_gc = by_name[("human", "x")]
    assert list(human_gc.y) == [0.4, 0.5]
    assert human_gc.boxmean is True
    human_path = by_name[("human", "x2")]
    assert list(human_path.y) == [5.0]  # the NaN is dropped, not plotted as 0
    assert [a.text for a in fig.layout.annotations] == ["Global Coherence", "Path Length"]


def test_distributions_without_columns_say_so():
    fig = charts.distributions_by_group(pd.DataFrame({"source": ["llm"]}), ["novelty"])
    assert fig.layout.annotations[0].text == "no data for these columns"


def test_group_means_with_ci_match_hand_values():
    frame = pd.DataFrame({"discussion": ["open", "open", "open", "iterative", "iterative"],
                          "model": ["gpt", "gpt", "gpt", "gpt", "gpt"],
                          "max_distance": [1.0, 2.0, 3.0, 4.0, 6.0]})
    fig = charts.group_means_with_ci(frame, "max_distance", "discussion", "model")
    with_bar, without = fig.data  # one look, one legend entry: the cell of 2 has no interval
    assert (with_bar.offsetgroup, with_bar.legendgroup) == (without.offsetgroup, without.legendgroup)
    assert without.showlegend is False and without.error_y.array is None
    means = {**dict(zip(with_bar.x, with_bar.y)), **dict(zip(without.x, without.y))}
    assert means == {"iterative": 5.0, "open": 2.0}
    # open: sd = 1, n = 3 -> Student-t: t(0.975, 2) = 4.302653 / sqrt(3) either way
    assert list(with_bar.x) == ["open"]
    assert with_bar.error_y.array[0] == pytest.approx(4.302653 / np.sqrt(3), rel=1e-6)
    assert with_bar.error_y.arrayminus[0] == pytest.approx(4.302653 / np.sqrt(3), rel=1e-6)
    # iterative: n = 2 < 3 -> the value only, and the hover says why
    assert list(without.x) == ["iterative"]
    assert without.customdata[0][1] == "no error bar: 2 conversations (fewer than 3)"
    assert "Student-t" in fig.layout.meta["error_bars"] and "not drawn below 3" in fig.layout.meta["error_bars"]
    assert "error bars: 95% t-interval" in fig.layout.xaxis.title.text


def test_percent_heatmap_carries_the_table():
    table = pd.DataFrame({"task": [5.9, 6.4], "interaction": [52.6, 51.7]},
                         index=["global_coherence", "max_distance"])
    fig = charts.percent_heatmap(table, "t")
    heat = fig.data[0]
    assert np.asarray(heat.z).tolist() == [[5.9, 52.6], [6.4, 51.7]]
    assert list(heat.y) == ["Global Coherence", "Max Distance"]
    assert heat.text[0][1] == "52.6"


def test_coefficient_plot_error_bars_reach_the_interval():
    llm = pd.DataFrame({"term": ["a", "b"], "coef": [0.5, -0.2], "ci_low": [0.3, -0.5], "ci_high": [0.9, 0.0]})
    human = pd.DataFrame({"term": ["b", "a"], "coef": [0.1, 0.2], "ci_low": [0.0, 0.1], "ci_high": [0.2, 0.4]})
    fig = charts.coefficient_plot({"LLM": llm, "Human": human}, terms=["a", "b"])
    first, second = fig.data
    assert list(first.x) == [0.5, -0.2]
    assert list(first.error_x.array) == pytest.approx([0.4, 0.2])
    assert list(first.error_x.arrayminus) == pytest.approx([0.2, 0.3])
    assert list(second.x) == [0.2, 0.1]  # reordered to the requested terms
    assert [row[0] for row in second.customdata] == ["a", "b"]
    assert [row[1] for row in second.customdata] == ["95% CI [0.100, 0.400]", "95% CI [0.000, 0.200]"]
    assert first.marker.color == charts.SOURCE_COLOURS["llm"]


def test_coefficient_plot_says_how_its_intervals_were_formed_and_skips_undefined_ones():
    table = pd.DataFrame({"term": ["a", "b"], "coef": [0.5, -0.2], "ci_low": [0.3, np.nan], "ci_high": [0.9, np.nan]})
    method = "95% CI: coefficient ± 1.96 · HC3 robust standard error (normal quantile)"
    fig = charts.coefficient_plot({"LLM": table}, terms=["a", "b"], interval=method, interval_short="95% CI, HC3 SEs")
    with_bar, without = fig.data
    assert list(with_bar.x) == [0.5] and list(without.x) == [-0.2] and without.error_x.array is None
    assert without.showlegend is False and without.legendgroup == with_bar.legendgroup == "LLM"
    assert [row[1] for row in without.customdata] == ["no interval: standard error undefined"]
    assert method in with_bar.hovertemplate and fig.layout.meta["error_bars"] == method
    assert "error bars: 95% CI, HC3 SEs" in fig.layout.xaxis.title.text


def test_trajectory_paths_follow_turn_order_and_colour_by_turn():
    points = pd.DataFrame({"conversation_id": ["c1", "c1", "c1", "c2"], "turn": [2, 0, 1, 0],
                           "x": [3.0, 1.0, 2.0, 9.0], "y": [30.0, 10.0, 20.0, 90.0],
                           "speaker": ["A", "B", "C", "D"], "text": ["third", "first", "second", "x"]})
    fig = charts.trajectory_paths(points, ["c1"])
    background, path, start, end = fig.data
    assert len(background.x) == 4
    assert list(path.x) == [1.0, 2.0, 3.0]
    # colour = progress through the conversation's own turns: first 0, middle 0.5, last 1
    assert list(path.marker.color) == [0, 0.5, 1]
    assert "B: first" in path.text[0]
    assert (start.x[0], start.y[0], start.text[0]) == (1.0, 10.0, "start")
    assert (end.x[0], end.y[0], end.text[0]) == (3.0, 30.0, "end")


def test_paths_of_different_lengths_share_one_sequential_scale():
    """A 3-turn and a 5-turn path both run 0 -> 1 on one sequential (not diverging) scale."""
    points = pd.DataFrame({"conversation_id": ["a"] * 3 + ["b"] * 5, "turn": [0, 1, 2, 0, 1, 2, 3, 4],
                           "x": np.arange(8.0), "y": np.arange(8.0)})
    fig = charts.trajectory_paths(points, ["a", "b"], background=False)
    paths = [t for t in fig.data if t.mode == "lines+markers"]
    assert [list(p.marker.color) for p in paths] == [[0, 0.5, 1], [0, 0.25, 0.5, 0.75, 1]]
    assert all(p.marker.cmin == 0 and p.marker.cmax == 1 for p in paths)
    scale = [c for _, c in paths[0].marker.colorscale]
    assert scale[0] != scale[-1] and "#ffffff" not in [c.lower() for c in scale]  # no white middle
    assert sum(bool(p.marker.showscale) for p in paths) == 1  # one colour bar


def test_colour_bar_and_legend_do_not_overlap():
    points = pd.DataFrame({"conversation_id": ["a"] * 3, "turn": [0, 1, 2], "x": [0.0, 1, 2], "y": [0.0, 1, 2]})
    fig = charts.trajectory_paths(points, ["a"])
    bar = next(t for t in fig.data if t.marker.showscale).marker.colorbar
    legend = fig.layout.legend
    # colour bar right of the plot area (x >= 1), legend at the figure's bottom edge, under the
    # plot and its axis title (y = 0 of the container, anchored by its bottom): disjoint regions
    assert bar.x >= 1 and legend.orientation == "h" and legend.yref == "container"
    assert legend.y == 0 and legend.yanchor == "bottom"


def test_figure_4_pair_shares_axes():
    points = pd.DataFrame({"conversation_id": ["a", "a", "b", "b"], "turn": [0, 1, 0, 1],
                           "x": [0.0, 1.0, 10.0, 20.0], "y": [0.0, 2.0, -5.0, 5.0]})
    fig = charts.trajectory_pair(points, "a", "b")
    assert fig.layout.xaxis.range == fig.layout.xaxis2.range
    assert fig.layout.yaxis.range == fig.layout.yaxis2.range
    low, high = fig.layout.xaxis.range
    assert low < 0 and high > 20  # both paths inside the one range


def test_top_share_bar_in_percent():
    table = pd.DataFrame({"group": ["human", "llm"], "share_of_top": [0.25, 0.75]})
    fig = charts.top_share_bar(table)
    assert list(fig.data[0].y) == [25.0, 75.0]


def test_rounds_lines_average_sessions():
    table = pd.DataFrame({"method": ["homo_mad"] * 4, "round": [0, 1, 0, 1],
                          "vendi": [3.0, 2.0, 4.0, 1.0]})
    fig = charts.rounds_lines(table, "vendi")
    assert list(fig.data[0].x) == [0, 1]
    assert list(fig.data[0].y) == [3.5, 1.5]


def test_effect_size_forest_sorted_by_d():
    table = pd.DataFrame({"feature": ["a", "b"], "d": [0.5, -0.1], "ci_low": [0.4, -0.3], "ci_high": [0.6, 0.1]})
    fig = charts.effect_size_forest(table)
    assert list(fig.data[0].x) == [-0.1, 0.5]
    assert list(fig.data[0].error_x.array) == pytest.approx([0.2, 0.1])
    assert list(fig.data[0].error_x.arrayminus) == pytest.approx([0.2, 0.1])


def test_effect_size_forest_names_its_interval_and_drops_it_below_three_rows():
    table = pd.DataFrame({"feature": ["a", "b"], "g": [0.5, -0.1], "ci_low": [0.4, -0.3], "ci_high": [0.6, 0.1],
                          "llm_n": [12, 2], "human_n": [9, 30]})
    fig = charts.effect_size_forest(table, value="g", x_title="Hedges' g (LLM − human)")
    with_bar, without = fig.data
    assert list(with_bar.x) == [0.5] and list(without.x) == [-0.1] and without.error_x.array is None
    assert list(without.customdata) == ["no error bar: 2 rows (fewer than 3)"]
    assert fig.layout.meta["error_bars"] == guards.METHOD_HEDGES
    assert "noncentral t of Welch" in fig.layout.xaxis.title.text
    assert guards.METHOD_HEDGES in with_bar.hovertemplate


def test_contrasting_pair_prefers_conversations_with_a_path():
    import pandas as pd

    from dashboard.page_data.trajectories import contrasting_pair

    frame = pd.DataFrame({"conversation_id": ["one_turn", "long_low", "long_high", "short_high"],
                          "n_turns": [1, 9, 8, 2], "creativity": [0.9, 0.1, 0.5, 0.95]})
    # one-turn and two-turn sessions have no path to draw: the best and worst of the rest
    assert contrasting_pair(frame) == ("long_high", "long_low")
    assert contrasting_pair(frame.iloc[[0, 3]]) == ("short_high", "one_turn")
