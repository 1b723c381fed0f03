"""The figure style (dashboard/figures/style.py, codes.py, checks.py): condition codes and their
key, distinct series, score ranges, and the rule checks themselves (each shown to catch the
fault it is for on a hand-built figure)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard.figures import charts, checks, codes, style

PAPER_B_CONDITIONS = [  # the seven conditions of cached_runs/local_smollm2_paper_b
    "homo_mad [no CLA, all peers] N=3 R=1 T=1 SmolLM2-135M-Instruct.Q4_1",
    "creative_mad [CLA, distant k=1] N=3 R=1 T=1 SmolLM2-135M-Instruct.Q4_1",
    "direct N=1 T=1 SmolLM2-135M-Instruct.Q4_1",
    "creative_mad [CLA, all peers] N=3 R=1 T=1 SmolLM2-135M-Instruct.Q4_1",
    "creative_mad [no CLA, distant k=1] N=3 R=1 T=1 SmolLM2-135M-Instruct.Q4_1",
    "creative_mad [CLA, closest k=1] N=3 R=1 T=1 SmolLM2-135M-Instruct.Q4_1",
    "creative_mad [CLA, random k=1] N=3 R=1 T=1 SmolLM2-135M-Instruct.Q4_1",
]


# ------------------------------------------------------------------------------ codes
def test_code_and_words_of_the_issue_example():
    label = "creative_mad [CLA, distant k=2] N=5 R=2 T=1 Qwen3-8B"
    assert codes.code(label) == "CMAD·d2"
    assert codes.describe(label).startswith("Creative-MAD, distant peers, k = 2")
    assert codes.describe(label) == "Creative-MAD, distant peers, k = 2, 5 agents, 2 rounds, T = 1, Qwen3-8B"


def test_paper_b_conditions_get_short_distinct_codes_written_out_in_the_key():
    mapping = codes.codes(PAPER_B_CONDITIONS)
    assert mapping == {
        PAPER_B_CONDITIONS[0]: "HoMAD", PAPER_B_CONDITIONS[1]: "CMAD·d1", PAPER_B_CONDITIONS[2]: "DIR",
        PAPER_B_CONDITIONS[3]: "CMAD·a", PAPER_B_CONDITIONS[4]: "CMAD·d1·-L", PAPER_B_CONDITIONS[5]: "CMAD·c1",
        PAPER_B_CONDITIONS[6]: "CMAD·r1"}
    assert max(len(c) for c in mapping.values()) <= 12
    key = codes.key_table(PAPER_B_CONDITIONS)
    words = dict(zip(key["code"], key["condition"]))
    assert words["CMAD·d1·-L"].startswith("Creative-MAD, distant peers, k = 1, without lenses (no CLA)")
    assert words["CMAD·c1"].startswith("Creative-MAD, closest peers, k = 1")
    assert words["HoMAD"] == "Homo MAD, all peers, 3 agents, 1 round, T = 1, SmolLM2-135M-Instruct.Q4_1"


def test_a_code_does_not_depend_on_the_other_conditions_of_the_chart():
    alone = codes.codes(PAPER_B_CONDITIONS[1:2])
    together = codes.codes(PAPER_B_CONDITIONS)
    assert alone[PAPER_B_CONDITIONS[1]] == together[PAPER_B_CONDITIONS[1]] == "CMAD·d1"


def test_conditions_differing_only_in_team_size_or_model_are_told_apart():
    a = "homo_mad [no CLA, all peers] N=3 R=1 T=1 m1"
    b = "homo_mad [no CLA, all peers] N=4 R=1 T=1 m1"
    c = "homo_mad [no CLA, all peers] N=4 R=1 T=1 other-model"
    mapping = codes.codes([a, b])
    assert mapping == {a: "HoMAD·N3", b: "HoMAD·N4"}
    mapping = codes.codes([b, c])
    assert mapping == {b: "HoMAD·m1", c: "HoMAD·other-model"}


def test_an_unknown_method_is_shortened_from_its_own_name():
    assert codes.code("mad_debate N=3 R=2 T=1 m") == "MD"
    assert codes.code("brainstorm") == "BRAINS"


# ------------------------------------------------------------------------------ series
def _rgb(hex_colour):
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def test_the_two_conditions_that_shared_a_colour_now_differ():
    """Seen in the dashboard: 'creative_mad [CLA, all peers]' (colour by hash of its label)
    and homo_mad drew in one vermillion. Conditions take their method's colour now."""
    _, looks = style.condition_styles(PAPER_B_CONDITIONS)
    homo, cla_all = looks[PAPER_B_CONDITIONS[0]], looks[PAPER_B_CONDITIONS[3]]
    assert homo.colour != cla_all.colour
    pairs = {(s.colour, s.symbol) for s in looks.values()}
    assert len(pairs) == len(PAPER_B_CONDITIONS)


def test_twenty_levels_without_fixed_colours_never_look_alike():
    levels = [f"dataset_{i}" for i in range(20)]
    looks = style.series_styles(levels)
    assert len({(s.colour, s.symbol) for s in looks.values()}) == 20
    assert len({(s.colour, s.dash) for s in looks.values()}) == 20
    assert len({(s.colour, s.pattern) for s in looks.values()}) == 20
    # the palette's twelve colours are used before any repeats
    assert len({looks[f"dataset_{i}"].colour for i in range(12)}) == 12


def test_two_hash_colliding_levels_get_different_colours():
    from dashboard.figures import palette

    names = [f"run{i}" for i in range(200)]
    first = names[0]
    twin = next(n for n in names[1:] if palette.colour(n) == palette.colour(first))
    looks = style.series_styles([first, twin])
    assert looks[first].colour == palette.colour(first)  # the first keeps its own colour
    assert looks[twin].colour != looks[first].colour


def test_known_levels_keep_their_fixed_colour():
    from dashboard.figures import palette

    looks = style.series_styles(["homo_mad", "creative_mad"], "method")
    assert looks["homo_mad"].colour == palette.METHOD["homo_mad"]
    assert looks["creative_mad"].colour == palette.METHOD["creative_mad"]


# ------------------------------------------------------------------------------ scores
def test_vendi_range_starts_at_one_even_when_an_interval_dips_below():
    low, high = style.score_range("vendi", [1.2, 2.0], [0.7, 1.5], [2.4])
    assert low == 1.0
    assert high == pytest.approx(2.4 + 0.06 * (2.4 - 0.7))


def test_rubric_axis_is_the_whole_one_to_ten_scale():
    assert style.score_range("rubric", [3.2, 4.1, 11.0]) == [1.0, 10.0]


def test_bounded_score_range_is_clipped_at_both_ends():
    low, high = style.score_range("div_bleu", [0.02, 0.98])
    assert (low, high) == (0.0, 1.0)
    low, high = style.score_range("div_bleu", [0.40, 0.50])
    assert low == pytest.approx(0.40 - 0.006) and high == pytest.approx(0.50 + 0.006)


# ------------------------------------------------------------------------------ checks
def _two_traces(**legend):
    fig = go.Figure([go.Scatter(x=[1], y=[1], name="a", mode="markers", marker=dict(color="#000000")),
                     go.Scatter(x=[2], y=[2], name="b", mode="markers", marker=dict(color="#0072B2"))])
    fig.update_layout(legend=legend)
    return fig


def test_check_finds_a_legend_over_the_plot():
    assert checks.legend_problems(_two_traces(x=0.8, y=0.9)) != []
    assert checks.legend_problems(_two_traces(orientation="h", x=0, y=-0.2, yanchor="top")) == []
    assert checks.legend_problems(_two_traces()) == []  # Plotly's default: right of the plot


def test_check_finds_two_series_alike_and_accepts_a_symbol_apart():
    fig = go.Figure([go.Scatter(x=[1], y=[1], name="a", mode="markers", marker=dict(color="#D55E00")),
                     go.Scatter(x=[2], y=[2], name="b", mode="markers", marker=dict(color="#d55e00"))])
    assert any("look alike" in p for p in checks.legend_problems(fig))
    fig.data[1].marker.symbol = "square"
    assert checks.legend_problems(fig) == []


def test_check_finds_long_names_in_a_vertical_legend():
    fig = go.Figure([go.Scatter(x=[1], y=[1], name=PAPER_B_CONDITIONS[i], mode="markers",
                                marker=dict(color=c)) for i, c in ((0, "#000000"), (1, "#0072B2"))])
    assert any("longer than" in p for p in checks.legend_problems(fig))
    fig.update_layout(legend=style.LEGEND_BELOW)
    assert checks.legend_problems(fig) == []


def test_check_finds_score_axes_outside_their_range_or_left_to_autorange():
    fig = go.Figure(go.Scatter(x=[1.5, 2.5], y=[4, 6]))
    fig.update_layout(xaxis_title="Vendi Score", yaxis_title="rubric score (1–10)")
    assert len(checks.axis_problems(fig)) == 2  # both on autorange
    fig.update_layout(xaxis_range=[0.5, 3], yaxis_range=[0, 10])
    found = checks.axis_problems(fig)
    assert any("below the score's 1" in p and "xaxis" in p for p in found)
    assert any("below the score's 1" in p and "yaxis" in p for p in found)
    fig.update_layout(xaxis_range=[1, 3], yaxis_range=[1, 10])
    assert checks.axis_problems(fig) == []


# ------------------------------------------------------------------------------ charts
def _summary():
    rng = np.random.default_rng(3)
    rows = []
    for label in PAPER_B_CONDITIONS:
        vendi, rubric = 1.3 + rng.random(), 2 + 6 * rng.random()
        rows.append({"condition": label, "vendi": vendi, "vendi_lo": vendi - 0.6, "vendi_hi": vendi + 0.3,
                     "div_bleu": 0.5, "div_bleu_lo": 0.4, "div_bleu_hi": 0.6,
                     "rubric": rubric, "rubric_lo": rubric - 1, "rubric_hi": rubric + 1})
    return pd.DataFrame(rows)


def test_quality_diversity_scatter_is_coded_keyed_and_inside_the_scores():
    summary = _summary()
    fig = charts.quality_diversity_scatter(summary, "vendi", "Vendi Score")
    assert checks.problems(fig) == []
    names = [t.name for t in fig.data]
    assert set(names) == set(codes.codes(PAPER_B_CONDITIONS).values())
    assert fig.layout.xaxis.range[0] == 1.0  # an interval reaches 0.7: the axis still starts at 1
    assert list(fig.layout.yaxis.range) == [1.0, 10.0]
    key = dict(charts.condition_key(fig))
    assert key["CMAD·d1"].startswith("Creative-MAD, distant peers, k = 1")


def test_diversity_bars_name_conditions_by_code_and_start_vendi_at_one():
    table = pd.DataFrame({"method": PAPER_B_CONDITIONS[:3] * 2, "task": ["plastic_waste"] * 3 + ["singing_shower"] * 3,
                          "vendi": [1.5, 2.0, 1.2, 1.8, 2.2, 1.1], "vendi_sd": [0.8, 0.1, 0.1, 0.1, 0.1, 0.1],
                          "n_groups": [3] * 6})  # 3 groups a cell: each SD is drawn
    fig = charts.diversity_bars(table, "vendi", "Vendi")
    assert checks.problems(fig) == []
    assert set(fig.data[0].x) == {"HoMAD", "CMAD·d1", "DIR"}
    assert fig.layout.yaxis.range[0] == 1.0
    assert fig.layout.yaxis.range[1] == pytest.approx(2.3 + 0.06 * (2.3 - 1.0))


def test_rounds_lines_of_conditions_never_share_colour_and_symbol():
    table = pd.DataFrame({"method": [c for c in PAPER_B_CONDITIONS for _ in range(2)],
                          "round": [0, 1] * len(PAPER_B_CONDITIONS), "vendi": np.linspace(1.1, 2.5, 14)})
    fig = charts.rounds_lines(table, "vendi", "Across rounds")
    assert checks.problems(fig) == []
    assert all(len(t.name) <= 12 for t in fig.data)


def test_finished_figures_carry_the_house_template_however_they_were_made():
    """Figures are created in plotly_white (the default the style module sets); one made under
    another default is re-templated by ``finish``. Compared with Plotly's own template."""
    import plotly.graph_objects as go
    import plotly.io as pio

    from dashboard.figures import style

    house = pio.templates["plotly_white"].to_plotly_json()
    assert style.finish(go.Figure(), "born in the default").to_dict()["layout"]["template"] == house
    before = pio.templates.default
    pio.templates.default = "plotly"
    try:
        made_elsewhere = go.Figure()
    finally:
        pio.templates.default = before
    assert made_elsewhere.to_dict()["layout"]["template"] != house
    assert style.finish(made_elsewhere, "re-templated").to_dict()["layout"]["template"] == house
