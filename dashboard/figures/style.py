"""The one figure style of the tool: every chart of the pages and exports is finished here.

* ``finish(fig, title, ...)``: template, fonts, margins, a wrapped title, the legend
  horizontal *below* the plotting area (never over the data, never squeezing it), and score
  axes set to their range.
* ``series_styles(levels, kind)``: colour, marker symbol, line dash and bar pattern of each
  series of a chart, so that no two series look alike. Colours come from
  ``dashboard.figures.palette`` (a known level keeps its colour everywhere); a level without a
  fixed colour keeps its hashed colour when it stays apart from the chart's other colours
  (CIEDE2000, ``dashboard.figures.colour_difference``), else the colour farthest from them
  (``chart_colours``); compared runs and sources never share a hue family; when colours
  repeat (conditions of one method, or more levels than colours kept apart) symbols, dashes
  and patterns take over.
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
from dashboard.figures import colour_difference, palette

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
# kinds of level that are runs or samples compared side by side: never two of one hue family
COMPARED_KINDS = ("dataset", "run", "source")
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
    """A distinct look for each level of one chart (see the module docstring and
    ``chart_colours``)."""
    levels = [str(v) for v in dict.fromkeys(levels)]
    return _distinct_marks(levels, chart_colours(levels, kind))


def chart_colours(levels, kind: str | None = None) -> dict[str, str]:
    """``{level: colour}`` of one chart's levels, any two distinct colours apart by the
    thresholds of ``dashboard.figures.colour_difference`` (CIEDE2000 ≥ ``THRESHOLD`` in normal
    vision, ≥ ``CVD_THRESHOLD`` under each simulated deficiency); for compared runs and sources
    (``kind`` in ``COMPARED_KINDS``) also in distinct hue families (``HUE_FAMILY``).

    1. Levels with a fixed colour (``palette.has_fixed_colour``) keep it, in the chart's order,
       unless it is too close to an earlier level's different colour (a plugin's method naming
       a colour near a built-in one's): that level is placed as in step 2.
    2. Any other level keeps its hashed colour (``palette.colour``) when that colour fits;
       otherwise it takes, of the colours of ``palette.DISTINCT`` that fit, the one farthest
       from the chart's colours so far (the largest smallest ΔE00; the first in the palette's
       order on a tie): greedy max–min.
    3. When no colour fits (more levels than the palette keeps apart: about twelve, six for
       compared runs) the level *shares* the colour used by the fewest levels so far (the
       first of them on a tie; never the missing grey), and ``_distinct_marks`` gives it its
       own symbol, dash and pattern: the chart then shows a colour twice, never two colours
       closer than the threshold. ``dashboard.figures.checks.shared_colours`` counts them.
    """
    levels = [str(v) for v in dict.fromkeys(levels)]
    compared = kind in COMPARED_KINDS
    colours: dict[str, str] = {}
    for level in levels:
        if palette.has_fixed_colour(level, kind):
            fixed = palette.colour(level, kind)
            if fixed.upper() in _used(colours) or _fits(fixed, _used(colours), compared):
                colours[level] = fixed
    for level in levels:
        if level in colours:
            continue
        used = _used(colours)
        preferred = palette.colour(level, kind)
        if _fits(preferred, used, compared):
            colours[level] = preferred
            continue
        free = [c for c in palette.DISTINCT if _fits(c, used, compared)]
        if free:
            colours[level] = max(free, key=lambda c: min((colour_difference.delta_e(c, u) for u in used),
                                                         default=math.inf))
        else:
            counts = {c: sum(1 for v in colours.values() if v.upper() == c) for c in used
                      if c != palette.MISSING.upper()}
            colours[level] = min(counts, key=counts.get) if counts else preferred
    return {level: colours[level] for level in levels}


def _used(colours: dict[str, str]) -> list[str]:
    return list(dict.fromkeys(c.upper() for c in colours.values()))


def _fits(candidate: str, used: list[str], compared: bool) -> bool:
    """True when ``candidate`` is new to the chart and apart from every colour in it."""
    candidate = candidate.upper()
    if candidate in used:
        return False
    if not all(colour_difference.apart(candidate, u) for u in used):
        return False
    return not compared or not any(colour_difference.same_hue_family(candidate, u) for u in used)


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
