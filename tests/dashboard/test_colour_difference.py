"""dashboard.figures.colour_difference: CIELAB, CIEDE2000, simulated colour-vision deficiency,
hue families; and the chart rule built on them (``checks.colour_problems``)."""

from __future__ import annotations

import math

import plotly.graph_objects as go
import pytest

from dashboard.figures import checks
from dashboard.figures import colour_difference as cd

# Sharma, Wu & Dalal (2005), Table 1: L1, a1, b1, L2, a2, b2, ΔE00 as published (4 decimals)
SHARMA_2005 = [
    (50.0000, 2.6772, -79.7751, 50.0000, 0.0000, -82.7485, 2.0425),
    (50.0000, 3.1571, -77.2803, 50.0000, 0.0000, -82.7485, 2.8615),
    (50.0000, 2.8361, -74.0200, 50.0000, 0.0000, -82.7485, 3.4412),
    (50.0000, -1.3802, -84.2814, 50.0000, 0.0000, -82.7485, 1.0000),
    (50.0000, -1.1848, -84.8006, 50.0000, 0.0000, -82.7485, 1.0000),
    (50.0000, -0.9009, -85.5211, 50.0000, 0.0000, -82.7485, 1.0000),
    (50.0000, 0.0000, 0.0000, 50.0000, -1.0000, 2.0000, 2.3669),
    (50.0000, -1.0000, 2.0000, 50.0000, 0.0000, 0.0000, 2.3669),
    (50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0009, 7.1792),
    (50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0010, 7.1792),
    (50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0011, 7.2195),
    (50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0012, 7.2195),
    (50.0000, -0.0010, 2.4900, 50.0000, 0.0009, -2.4900, 4.8045),
    (50.0000, -0.0010, 2.4900, 50.0000, 0.0010, -2.4900, 4.8045),
    (50.0000, -0.0010, 2.4900, 50.0000, 0.0011, -2.4900, 4.7461),
    (50.0000, 2.5000, 0.0000, 50.0000, 0.0000, -2.5000, 4.3065),
    (50.0000, 2.5000, 0.0000, 73.0000, 25.0000, -18.0000, 27.1492),
    (50.0000, 2.5000, 0.0000, 61.0000, -5.0000, 29.0000, 22.8977),
    (50.0000, 2.5000, 0.0000, 56.0000, -27.0000, -3.0000, 31.9030),
    (50.0000, 2.5000, 0.0000, 58.0000, 24.0000, 15.0000, 19.4535),
    (50.0000, 2.5000, 0.0000, 50.0000, 3.1736, 0.5854, 1.0000),
    (50.0000, 2.5000, 0.0000, 50.0000, 3.2972, 0.0000, 1.0000),
    (50.0000, 2.5000, 0.0000, 50.0000, 1.8634, 0.5757, 1.0000),
    (50.0000, 2.5000, 0.0000, 50.0000, 3.2592, 0.3350, 1.0000),
    (60.2574, -34.0099, 36.2677, 60.4626, -34.1751, 39.4387, 1.2644),
    (63.0109, -31.0961, -5.8663, 62.8187, -29.7946, -4.0864, 1.2630),
    (61.2901, 3.7196, -5.3901, 61.4292, 2.2480, -4.9620, 1.8731),
    (35.0831, -44.1164, 3.7933, 35.0232, -40.0716, 1.5901, 1.8645),
    (22.7233, 20.0904, -46.6940, 23.0331, 14.9730, -42.5619, 2.0373),
    (36.4612, 47.8580, 18.3852, 36.2715, 50.5065, 21.2231, 1.4146),
    (90.8027, -2.0831, 1.4410, 91.1528, -1.6435, 0.0447, 1.4441),
    (90.9257, -0.5406, -0.9208, 88.6381, -0.8985, -0.7239, 1.5381),
    (6.7747, -0.2908, -2.4247, 5.8714, -0.0985, -2.2286, 0.6377),
    (2.0776, 0.0795, -1.1350, 0.9033, -0.0636, -0.5514, 0.9082),
]


@pytest.mark.parametrize("pair", range(len(SHARMA_2005)))
def test_ciede2000_matches_the_34_published_pairs(pair):
    *labs, expected = SHARMA_2005[pair]
    assert len(SHARMA_2005) == 34
    found = cd.ciede2000(labs[:3], labs[3:])
    assert found == pytest.approx(expected, abs=1e-4)
    assert cd.ciede2000(labs[3:], labs[:3]) == pytest.approx(found, abs=1e-12)  # symmetric


def test_srgb_to_lab_of_white_black_and_red():
    """White is L* 100 with no colour, black L* 0; sRGB red is (53.24, 80.09, 67.20)
    (Lindbloom's calculator, D65, sRGB)."""
    assert cd.lab("#FFFFFF") == pytest.approx([100.0, 0.0, 0.0], abs=1e-6)
    assert cd.lab("#000000") == pytest.approx([0.0, 0.0, 0.0], abs=1e-6)
    assert cd.lab("#FF0000") == pytest.approx([53.24, 80.09, 67.20], abs=0.05)
    # a mid grey: linear 0.2140 (sRGB 0x80), Y = 0.2140, L* = 116·Y^(1/3) − 16 = 53.59
    assert cd.lab("#808080")[0] == pytest.approx(116 * (((128 / 255 + 0.055) / 1.055) ** 2.4) ** (1 / 3) - 16,
                                                 abs=1e-6)


def test_machado_simulation_worked_by_hand():
    """Pure red seen by a protanope at severity 1 (Machado et al. 2009, Table 1): its linear
    RGB (1, 0, 0) becomes the matrix's first column (0.152286, 0.114503, −0.003882), clipped
    at 0, encoded back to sRGB by IEC 61966-2-1's curve."""
    encode = lambda v: 1.055 * v ** (1 / 2.4) - 0.055  # noqa: E731 (above 0.0031308)
    expected = [encode(0.152286), encode(0.114503), 0.0]
    assert cd.simulated_rgb(cd.rgb("#FF0000"), "protan") == pytest.approx(expected, abs=1e-9)
    # each matrix keeps white white and greys grey (its rows sum to 1)
    for deficiency in cd.DEFICIENCIES:
        assert cd.simulate("#FFFFFF", deficiency) == "#FFFFFF"
        assert cd.simulate("#777777", deficiency) == "#777777"
    # the classic confusion: a deuteranope sees red and green far closer than normal vision does
    assert cd.delta_e("#D55E00", "#009E73", "deutan") < cd.delta_e("#D55E00", "#009E73") / 2


def test_the_reported_pinks_teals_and_blues_fail_the_rule():
    """The issue's pairs: Okabe–Ito purple and Tol rose (both pink), Okabe–Ito green and Tol
    teal (both teal), Okabe–Ito blue and sky (dark and light blue of compared datasets)."""
    assert cd.delta_e("#CC79A7", "#CC6677") == pytest.approx(12.0, abs=0.05)
    assert cd.delta_e("#009E73", "#44AA99") == pytest.approx(9.6, abs=0.05)
    assert 12.05 < cd.THRESHOLD
    assert not cd.apart("#CC79A7", "#CC6677") and not cd.apart("#009E73", "#44AA99")
    assert cd.apart("#0072B2", "#56B4E9")  # far enough apart as colours ...
    assert cd.same_hue_family("#0072B2", "#56B4E9")  # ... but one hue family
    assert cd.hue_gap("#0072B2", "#56B4E9") == pytest.approx(15, abs=1)
    assert not cd.same_hue_family("#0072B2", "#882255")  # LLM blue, human wine
    assert cd.hue_gap("#000000", "#0072B2") == 180.0  # black has no hue family


def _figure(*looks):
    fig = go.Figure()
    for name, colour, symbol in looks:
        fig.add_trace(go.Scatter(x=[1], y=[1], mode="markers", name=name, marker=dict(color=colour, symbol=symbol)))
    return fig


def test_colour_problems_names_close_pairs_and_accepts_a_shared_colour_with_other_marks():
    close = checks.colour_problems(_figure(("a", "#CC79A7", "circle"), ("b", "#CC6677", "square")))
    assert len(close) == 1 and "'a'" in close[0] and "normal ΔE00 12.0 < 15" in close[0]
    shared = _figure(("a", "#0072B2", "circle"), ("b", "#0072B2", "square"), ("c", "#E69F00", "circle"))
    assert checks.colour_problems(shared) == [] and checks.legend_problems(shared) == []
    assert checks.shared_colours(shared) == [("a", "b")]
    alike = _figure(("a", "#0072B2", "circle"), ("b", "#0072B2", "circle"))
    assert checks.colour_problems(alike) == [] and len(checks.legend_problems(alike)) == 1  # same marks: caught
    runs = _figure(("run1", "#0072B2", "circle"), ("run2", "#56B4E9", "circle"))
    assert checks.colour_problems(runs) == []  # not compared runs: only the ΔE rule
    assert "share a hue family" in checks.colour_problems(runs, compared=("run1", "run2"))[0]


def test_colour_problems_ignores_scales_hidden_traces_and_reads_translucent_colours():
    fig = go.Figure([go.Scatter(x=[1, 2], y=[1, 2], mode="markers", name="scale",
                                marker=dict(color=[0.1, 0.9], colorscale="Viridis")),
                     go.Scatter(x=[1], y=[1], name="line", mode="lines", line=dict(color="#CC6677")),
                     go.Scatter(x=[1], y=[2], name="guide", showlegend=False, line=dict(color="#CC79A7"))])
    assert checks.colour_problems(fig) == []
    # 50% black on the white page is the grey (127.5 → 128 → #808080)
    assert checks.seen_colour("rgba(0, 0, 0, 0.5)") == "#808080"
    assert checks.seen_colour("rgba(0,0,0,0)") == checks.TRANSPARENT
    bars = go.Figure(go.Bar(x=[1, 2], y=[1, 2], name="bars", marker=dict(color=["#009E73", "#44AA99"])))
    assert len(checks.colour_problems(bars)) == 1  # per-bar colours count as categories


def test_delta_e_is_symmetric_and_zero_on_itself():
    for deficiency in (None, *cd.DEFICIENCIES):
        assert cd.delta_e("#332288", "#332288", deficiency) == 0.0
        assert cd.delta_e("#332288", "#DDCC77", deficiency) == pytest.approx(
            cd.delta_e("#DDCC77", "#332288", deficiency), abs=1e-9)
    assert math.isfinite(cd.delta_e("#000000", "#FFFFFF"))


def test_ciede2000_many_matches_the_34_published_pairs():
    """The array form (the palette's generated method colours use it) on Sharma et al.'s data."""
    import numpy as np

    for *labs, expected in SHARMA_2005:
        assert cd.ciede2000_many(labs[:3], np.array([labs[3:]]))[0] == pytest.approx(expected, abs=1e-4)


def test_labs_of_rgb_is_lab_of_each_row_in_every_vision():
    import numpy as np

    rows = np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.2, 0.6, 0.9]])
    for vision in (None, *cd.DEFICIENCIES):
        many = cd.labs_of_rgb(rows, vision)
        for row, got in zip(rows, many):
            seen = row if vision is None else cd.simulated_rgb(row, vision)
            assert got == pytest.approx(cd.lab_of_rgb(seen), abs=1e-9)
    # white is L* 100, a* = b* = 0 (D65)
    assert cd.labs_of_rgb(rows[:1])[0] == pytest.approx([100.0, 0.0, 0.0], abs=1e-3)
