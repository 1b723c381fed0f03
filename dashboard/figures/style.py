"""The one figure style of the tool: every chart of the pages and exports is finished here.

* ``finish(fig, title, ...)``: template, fonts, margins, a wrapped title, the legend
  horizontal *below* the plotting area (never over the data, never squeezing it), and score
  axes set to their range.
* ``series_styles(levels, kind)``: colour, marker symbol, line dash and bar pattern of each
  series of a chart, so that no two series look alike. Colours come from
  ``dashboard.figures.palette`` (a known level keeps its colour everywhere); a level without a
  fixed colour takes the first colour not yet used in the chart; when colours repeat
  (conditions of one method, or more levels than colours) symbols, dashes and patterns
  take over.
* ``SCORES`` / ``score_range`` / ``score_axis``: what each score can be (Vendi Score from 1,
  paper B, section 3.2; rubric 1–10, paper B's judge; Div-BLEU, win rate and paper A's
  scaled ratings 0–1; percent 0–100) and an axis range that fits the data inside it.
* ``condition_styles(labels)``: conditions (``dashboard.figures.codes``) coloured by their
  method, told apart by symbol, named by their short code.

Rules a finished figure meets are checked by ``dashboard.figures.checks``.
"""

from __future__ import annotations

import html

import math
import textwrap
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from dashboard.figures import codes as condition_codes
from dashboard.figures import palette

TEMPLATE = "plotly_white"
# every figure is born in the house template: setting it on a finished figure costs about
# 75 ms a chart (Plotly validates and copies the whole template), creating one in it about 3 ms
pio.templates.default = TEMPLATE
FONT = dict(family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif", size=13, color="#222")
TITLE_SIZE = 15
TITLE_WIDTH = 42  # characters per title line: fits a three-quarter-width chart at 1024 px (about 415 px)
SHORT_NAME = 24  # a legend name longer than this is a sign the chart needs codes and a key
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "triangle-down", "star", "hexagon",
           "pentagon")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
PATTERNS = ("", "/", "\\", "x", ".", "-", "|", "+")
# the legend at the bottom of the figure, under the x-axis title (``yref="container"``: the plot's
# automatic margins make room for it, so it never overlaps tick labels, titles or data)
LEGEND_BELOW = dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0,
                    bgcolor="rgba(255,255,255,0)", font=dict(size=12), itemsizing="constant", title=dict(text=""))


def plain_text(value) -> str:
    """Data text (a model's reply, a task, file or model name) for a Plotly label, title or hover:
    Plotly renders a subset of HTML there (links included), so ``<``, ``>`` and ``&`` are written
    as entities, which it shows as the characters themselves."""
    return html.escape(str(value), quote=False)


@dataclass(frozen=True)
class Score:
    """What a score can be: ``low`` and ``high`` (None = unbounded on that side)."""

    name: str
    low: float | None
    high: float | None
    axis_title: str


SCORES = {
    "vendi": Score("vendi", 1.0, None, "Vendi Score (≥ 1)"),
    "div_bleu": Score("div_bleu", 0.0, 1.0, "Div-BLEU (0–1)"),
    "rubric": Score("rubric", 1.0, 10.0, "rubric score (1–10)"),
    "win_rate": Score("win_rate", 0.0, 1.0, "win rate (0–1)"),
    "novelty": Score("novelty", 0.0, 1.0, "novelty (0–1)"),
    "usefulness": Score("usefulness", 0.0, 1.0, "usefulness (0–1)"),
    "creativity": Score("creativity", 0.0, 1.0, "creativity (0–1)"),
    "percent": Score("percent", 0.0, 100.0, "%"),
    "percentile": Score("percentile", 0.0, 100.0, "percentile rank (0–100)"),
}
# column names of the tables that are one of the scores above
SCORE_OF_COLUMN = {"vendi": "vendi", "div_bleu": "div_bleu", "rubric": "rubric", "rubric_score": "rubric",
                   "score": "rubric", "win_rate": "win_rate", "novelty": "novelty", "usefulness": "usefulness",
                   "creativity": "creativity"}


@dataclass(frozen=True)
class Style:
    colour: str
    symbol: str = "circle"
    dash: str = "solid"
    pattern: str = ""


# ------------------------------------------------------------------------------ series
def series_styles(levels, kind: str | None = None) -> dict[str, Style]:
    """A distinct look for each level of one chart (see the module docstring)."""
    levels = [str(v) for v in dict.fromkeys(levels)]
    used_colours: list[str] = []
    colours: dict[str, str] = {}
    for level in levels:  # fixed colours first: they never move
        if palette.has_fixed_colour(level, kind):
            colours[level] = palette.colour(level, kind)
            used_colours.append(colours[level].lower())
    for level in levels:
        if level in colours:
            continue
        preferred = palette.colour(level, kind)
        if preferred.lower() not in used_colours or preferred == palette.MISSING:
            colours[level] = preferred
        else:
            start = palette.SEQUENCE.index(preferred) if preferred in palette.SEQUENCE else 0
            free = [palette.SEQUENCE[(start + i) % len(palette.SEQUENCE)] for i in range(len(palette.SEQUENCE))]
            free = [c for c in free if c.lower() not in used_colours]
            colours[level] = free[0] if free else preferred
        used_colours.append(colours[level].lower())
    return _distinct_marks(levels, colours)


def _distinct_marks(levels: list[str], colours: dict[str, str]) -> dict[str, Style]:
    """Symbols, dashes and patterns told apart among levels that share a colour."""
    seen: dict[str, int] = {}
    out = {}
    for level in levels:
        colour = colours[level]
        n = seen.get(colour.lower(), 0)
        seen[colour.lower()] = n + 1
        out[level] = Style(colour, SYMBOLS[n % len(SYMBOLS)], DASHES[n % len(DASHES)], PATTERNS[n % len(PATTERNS)])
    return out


def condition_styles(labels) -> tuple[dict[str, str], dict[str, Style]]:
    """``({label: code}, {label: Style})`` of conditions: colour by method (the palette's),
    a symbol per design within the method, each named by its code."""
    labels = [str(x) for x in dict.fromkeys(labels)]
    mapping = condition_codes.codes(labels)
    methods = {label: condition_codes.parse(label).method for label in labels}
    method_styles = series_styles(dict.fromkeys(methods.values()), "method")
    colours = {label: method_styles[methods[label]].colour for label in labels}
    ordered = sorted(labels, key=lambda label: mapping[label])
    styles = _distinct_marks(ordered, colours)
    return mapping, {label: styles[label] for label in labels}


def marker(style: Style, **extra) -> dict:
    return dict(color=style.colour, symbol=style.symbol, **extra)


def line(style: Style, **extra) -> dict:
    return dict(color=style.colour, dash=style.dash, **extra)


def bar_marker(style: Style, **extra) -> dict:
    out = dict(color=style.colour, **extra)
    if style.pattern:
        out["pattern"] = dict(shape=style.pattern, fgcolor="#ffffff", fgopacity=0.7, size=7)
    return out


# ------------------------------------------------------------------------------ scores
def score_of(column: str) -> str | None:
    """The score a table column holds (``rubric_score`` -> ``rubric``), or None."""
    return SCORE_OF_COLUMN.get(str(column))


def score_range(score: str, *values, pad: float = 0.06) -> list[float]:
    """An axis range that shows ``values`` (arrays, NaN ignored) and stays inside the score's
    own range. A score with both bounds and no finite value shows its whole range."""
    s = SCORES[score]
    data = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in values]) if values else np.array([])
    data = data[np.isfinite(data)]
    if s.low is not None and s.high is not None and (not len(data) or score == "rubric"):
        return [s.low, s.high]  # rubric: always the judge's whole 1–10 scale
    if not len(data):
        low, high = (s.low if s.low is not None else 0.0), (s.high if s.high is not None else 1.0)
        return [low, high if high > low else low + 1]
    low, high = float(data.min()), float(data.max())
    span = max(high - low, abs(high) * 0.05, 1e-9)
    low, high = low - pad * span, high + pad * span
    if s.low is not None:
        low = max(low, s.low) if low > s.low else s.low
    if s.high is not None:
        high = min(high, s.high)
    if high <= low:
        high = low + (s.high - low if s.high is not None and s.high > low else 1.0)
    return [low, high]


def score_axis(fig: go.Figure, axis: str, score: str, *values, title: str | None = None) -> go.Figure:
    """Set ``axis`` (``"x"``, ``"y"``, ``"y2"``...) to the score's title and a range that fits."""
    name = f"{axis[0]}axis{axis[1:]}"
    fig.update_layout({name: dict(range=score_range(score, *values), autorange=False,
                                  title=dict(text=title or SCORES[score].axis_title))})
    return fig


# ------------------------------------------------------------------------------ layout
def wrap_title(text: str, width: int = TITLE_WIDTH) -> str:
    """A title on lines of at most ``width`` characters (Plotly does not wrap titles)."""
    text = str(text or "")
    if "<br>" in text or len(text) <= width:
        return text
    return "<br>".join(textwrap.wrap(text, width))


def finish(fig: go.Figure, title: str = "", *, height: int | None = None, legend: bool = True,
           **layout) -> go.Figure:
    """The house style: template, font, wrapped title, legend below the plot, margins that
    grow with what is outside the plot (automargin)."""
    title = wrap_title(title)
    # the title sits on the plot's top edge and grows upwards (Plotly cuts the first line of a
    # multi-line title anchored to the figure's top); automargin makes room for it, and for the
    # subplot titles under it when there are some
    if fig.layout.template.layout.plot_bgcolor != pio.templates[TEMPLATE].layout.plot_bgcolor:
        fig.update_layout(template=TEMPLATE)  # a figure made before this module set the default
    fig.update_layout(
        font=FONT,
        title=dict(text=title, font=dict(size=TITLE_SIZE), x=0, xanchor="left", xref="container", y=1,
                   yanchor="bottom", yref="paper", pad=dict(t=0, l=12, b=10 + _subplot_title_room(fig)),
                   automargin=True),
        margin=dict(l=60, r=30, t=20, b=20), hoverlabel=dict(align="left"),
        legend=LEGEND_BELOW if legend else None, showlegend=None if legend else False)
    if height is not None:
        fig.update_layout(height=height)
    if layout:
        fig.update_layout(**layout)
    # tick labels a few pixels off their axes: the first labels of two axes that both start at
    # a score's floor (Vendi 1, rubric 1) do not meet in the corner
    fig.update_xaxes(automargin=True, title_standoff=8, ticklabelstandoff=3)
    fig.update_yaxes(automargin=True, title_standoff=8, ticklabelstandoff=5)
    return fig


def _subplot_title_room(fig: go.Figure) -> int:
    """Pixels the subplot titles of the top row take above the plot (0 without any)."""
    top = [a for a in fig.layout.annotations or () if a.yref == "paper" and a.y is not None and a.y >= 0.99
           and a.yanchor == "bottom"]
    if not top:
        return 0
    lines = max(str(a.text or "").count("<br>") + 1 for a in top)
    return 18 * lines + 6


def legend_right(fig: go.Figure) -> go.Figure:
    """A vertical legend right of the plot, for charts whose names are all short codes."""
    fig.update_layout(legend=dict(orientation="v", yanchor="top", y=1, xanchor="left", x=1.02, title=dict(text="")))
    return fig


LEGEND_CHAR = 0.62  # a legend character's width in font sizes (generous for a sans-serif)
LEGEND_ENTRY = 40  # pixels of an entry besides its text: the symbol and the gaps around it
LEGEND_GAP = 5  # pixels between two entries
LEGEND_ROW = 22  # pixels a row of 12-px entries takes (Plotly draws about 19)
LEGEND_PAD = 12  # pixels above and below the rows


def n_legend_rows(names, width_px: int = 450, font_px: int = 12) -> int:
    """How many rows a horizontal legend of ``names`` takes in a plot ``width_px`` wide, laid out
    as Plotly lays it out: one row when every entry fits side by side, else a grid whose
    columns are all as wide as the widest entry."""
    widths = [LEGEND_ENTRY + LEGEND_CHAR * font_px * len(str(n)) for n in names]
    if not widths:
        return 0
    if sum(widths) + LEGEND_GAP * (len(widths) - 1) < width_px:
        return 1
    per_row = max(1, math.ceil((width_px + LEGEND_GAP) / (max(widths) + LEGEND_GAP)) - 1)
    return math.ceil(len(widths) / per_row)


def legend_height(names, width_px: int = 450, font_px: int = 12) -> int:
    """Pixels a horizontal legend of ``names`` takes in a plot ``width_px`` wide (0 without names)."""
    rows = n_legend_rows(names, width_px, font_px)
    return LEGEND_ROW * rows + LEGEND_PAD if rows else 0


def height_for_legend(base: int, names, width_px: int = 450) -> int:
    """``base`` plus room for the legend rows below the plot."""
    return int(base + LEGEND_ROW * max(0, n_legend_rows(names, width_px) - 1))


def finite(values) -> list[float]:
    return [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]


def isolated(x, y, *, x_span=None, y_span=None, distance: float = 0.09) -> list[bool]:
    """For each point, True when no other point lies within ``distance`` (in fractions of the
    axes' spans): those can carry a text label without it running into another one."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)

    def scaled(values, span):
        low, high = span if span is not None else (np.nanmin(values), np.nanmax(values))
        width = (high - low) or 1.0
        return (values - low) / width

    if len(xs) < 2:
        return [True] * len(xs)
    points = np.stack([scaled(xs, x_span), scaled(ys, y_span)], axis=1)
    gaps = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=2))
    np.fill_diagonal(gaps, np.inf)
    return list(gaps.min(axis=1) > distance)
