"""The R² ladder chart (``dashboard.figures.charts.r2_ladder``): a negative adjusted R² is a bar
below (left of) zero, a missing value a gap labelled "n/a", and no value label on another.
Checked on the figure's data, on text extents worked out here, on the rendered SVG (Chromium:
tick positions, bar ends, text boxes) and on the cached local dataset's ladder."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.figures import charts, checks

REPO = Path(__file__).resolve().parents[2]
needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")

# the local dataset's small-sample ladder as the page drew it: adjusted R² only
LOCAL_LADDER = pd.DataFrame({"specification": ["trajectory", "mixed effects (model dropped)"],
                             "LLM adj.": [-40.161218, np.nan]})
MIXED = pd.DataFrame({"specification": ["trajectory", "+task", "+model", "interaction", "mixed effects"],
                      "LLM": [34.0, 50.2, 60.1, 98.9, 77.9], "LLM adj.": [-40.2, 2.1, 30.0, 95.5, np.nan],
                      "Human": [20.0, 25.0, np.nan, 30.0, 31.0], "Human adj.": [10.0, -5.0, np.nan, 12.0, np.nan]})


def bars_and_labels(fig):
    bars = [t for t in fig.data if t.type == "bar"]
    labels = [t for t in fig.data if t.type == "scatter" and t.mode == "text"]
    return bars, labels


def test_negative_value_is_a_bar_below_zero_and_nan_a_labelled_gap():
    fig = charts.r2_ladder(LOCAL_LADDER)
    (bar,), (label,) = bars_and_labels(fig)
    assert list(bar.x) == pytest.approx([-40.161218])  # drawn, not replaced by 0
    assert list(bar.y) == [0.0]  # one column: the bar is centred on its row; the n/a row has none
    assert list(label.text) == ["−40.2%", "n/a"]
    assert list(label.x) == pytest.approx([-40.161218, 0.0]) and list(label.y) == [0.0, 1.0]
    assert list(label.textposition) == ["middle left", "middle right"]  # beyond each bar's end
    low, high = fig.layout.xaxis.range
    span = 40.161218  # from -40.16 to 0
    assert low == pytest.approx(-40.161218 - charts.LADDER_LABEL_ROOM * span) and low < -40.161218
    assert high == pytest.approx(charts.LADDER_LABEL_ROOM * span)
    assert fig.layout.xaxis.title.text.startswith("adjusted R² (%)")
    assert checks.problems(fig) == []  # adjusted R² may go below 0, not above 100


def test_every_bar_has_its_own_slot():
    fig = charts.r2_ladder(MIXED)
    bars, labels = bars_and_labels(fig)
    width = 0.8 / 4  # four columns share 80% of a row
    expected = {name: np.arange(5) + (j - 1.5) * width for j, name in enumerate(["LLM", "LLM adj.", "Human", "Human adj."])}
    for bar, label in zip(bars, labels):
        values = MIXED[bar.name]
        assert bar.width == pytest.approx(width)
        assert list(bar.x) == pytest.approx(list(values.dropna()))  # NaN: no bar
        assert list(bar.y) == pytest.approx(list(expected[bar.name][values.notna().to_numpy()]))
        assert list(label.y) == pytest.approx(list(expected[bar.name]))
        assert [t == "n/a" for t in label.text] == list(values.isna())
    slots = sorted(y for label in labels for y in label.y)
    assert min(np.diff(slots)) == pytest.approx(width)  # no two labels in one slot
    # the slot is taller than a label: plot height / rows · slot width >= 1.2 · font size
    plot_px = fig.layout.height - 200  # at most 200 px of title, axis title and legend
    assert plot_px / 5 * width >= 1.2 * charts.LADDER_LABEL_SIZE
    # the hatched adjusted bars are told apart from their source's R² bars
    assert checks.legend_problems(fig) == []
    assert {b.name: bool(b.marker.pattern.shape) for b in bars} == {"LLM": False, "LLM adj.": True,
                                                                     "Human": False, "Human adj.": True}


def test_labels_fit_inside_the_axis_at_450_px():
    """Text extents worked out here: a label of c characters is about 0.6 · 12 px · c wide;
    at a plot width of 450 px less margins and the longest tick label, every label beyond a
    bar's end stays within the axis range (a negative one left of its bar, within the plot)."""
    fig = charts.r2_ladder(MIXED)
    _, labels = bars_and_labels(fig)
    low, high = fig.layout.xaxis.range
    ticks = max(len(s) for s in MIXED["specification"]) * 0.6 * 13
    plot_px = 450 - fig.layout.margin.l - fig.layout.margin.r - ticks
    per_px = (high - low) / plot_px
    for label in labels:
        for x, text, where in zip(label.x, label.text, label.textposition):
            extent = (len(text) * 0.6 * charts.LADDER_LABEL_SIZE + 3) * per_px
            if where == "middle left":
                assert x - extent >= low, (text, x - extent, low)
            else:  # to the right: inside the range, or within the 70 px right margin when near 100%
                assert x + extent <= high + fig.layout.margin.r * per_px, (text, x + extent, high)


def _svg(fig, width):
    from dashboard.exports.formats import figure_to_image

    return figure_to_image(fig, "svg", width=width).decode()


def _ticks(svg: str) -> dict[float, float]:
    """{tick value: x pixel} of the x axis in the rendered SVG."""
    out = {}
    for group in re.findall(r'<g class="xtick">(.*?)</g>', svg):
        x = float(re.search(r"translate\(([-\d.]+),", group).group(1))
        value = re.search(r">([^<]+)</text>", group).group(1).replace("−", "-")
        out[float(value)] = x
    return out


@needs_chromium
@pytest.mark.parametrize("table, width", [(LOCAL_LADDER, 700), (MIXED, 450), (MIXED, 700)])
def test_rendered_ladder_has_no_text_on_text_and_bars_below_zero(table, width):
    from devtools.text_overlaps import svg_overlaps

    fig = charts.r2_ladder(table)
    svg = _svg(fig, width)
    measured = svg_overlaps(svg, width=width, height=int(fig.layout.height))
    assert measured["texts"] >= len(table) * 2 and measured["overlaps"] == [] and measured["outside"] == []
    ticks = _ticks(svg)
    (zero_px,) = [x for v, x in ticks.items() if v == 0]
    scale = (max(ticks.values()) - min(ticks.values())) / (max(ticks) - min(ticks))  # px per percent
    plot_x = float(re.search(r'<g class="xy" transform="translate\(([-\d.]+),', svg).group(1))
    drawn = [list(map(float, re.match(r"M([-\d.]+),[-\d.]+V[-\d.]+H([-\d.]+)", d).groups()))
             for d in re.findall(r'<g class="point"><path d="([^"]+)"', svg)]
    values = [v for c in table.columns if c != "specification" for v in table[c] if pd.notna(v)]
    assert len(drawn) == len(values)  # a bar for each value, none for n/a
    for value, (x0, x1) in zip(values, drawn):
        left, right = sorted((x0 + plot_x, x1 + plot_x))
        if value < 0:  # the bar runs from its value up to the zero line
            assert right == pytest.approx(zero_px, abs=1.5) and left == pytest.approx(zero_px + value * scale, abs=1.5)
        else:
            assert left == pytest.approx(zero_px, abs=1.5) and right == pytest.approx(zero_px + value * scale, abs=1.5)
    texts = re.findall(r'class="textpoint"[^>]*><text x="([-\d.]+)"[^>]*>([^<]+)</text>', svg)
    assert sum(t == "n/a" for _, t in texts) == int(table.drop(columns="specification").isna().sum().sum())
    for x, text in texts:
        if text == "n/a":  # the gap's label starts at the zero line
            assert float(x) + plot_x == pytest.approx(zero_px, abs=1.5)


@pytest.mark.skipif(not (REPO / "cached_runs" / "local_smollm2" / "manifest.json").exists(),
                    reason="cached_runs/local_smollm2 is not built")
def test_local_dataset_ladder_draws_its_negative_adjusted_r2():
    """The page's ladder on local_smollm2 (trajectory sample, creativity): the trajectory rung's
    adjusted R² is 1 − (1 − R²)(N − 1)/(N − k), by hand from its R², N and k, and below 0."""
    from dashboard.page_data import analyses
    from engine import samples
    from engine.datasets import Dataset

    frame = samples.select(Dataset.load(REPO / "cached_runs" / "local_smollm2", with_corpus=False).conversations,
                           "trajectory")
    ladder, _, fits = analyses.regression_ladder(frame, "creativity")
    row = ladder.set_index("specification").loc["trajectory"]
    n_row = fits.set_index("specification").loc["trajectory"]
    n, k = int(n_row["LLM N"]), int(n_row["LLM k"])
    adjusted = 100 * (1 - (1 - row["LLM"] / 100) * (n - 1) / (n - k))
    assert row["LLM adj."] == pytest.approx(adjusted) and adjusted < 0
    shown = ladder[["specification", "LLM adj."]]
    fig = charts.r2_ladder(shown)
    (bar,), (label,) = bars_and_labels(fig)
    assert bar.x[0] == pytest.approx(adjusted) and fig.layout.xaxis.range[0] < adjusted
    assert label.text[0] == f"{adjusted:.1f}%".replace("-", "−")
    missing = shown["LLM adj."].isna().to_numpy()
    assert [t == "n/a" for t in label.text] == list(missing) and missing.any()  # the mixed rung: no adjusted R²
