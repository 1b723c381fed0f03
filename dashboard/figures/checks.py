"""Rules every chart of the tool meets, as functions of a figure's JSON (what Streamlit sends
to the browser, ``fig.to_plotly_json()``): each returns the problems it finds, empty when the
figure is fine. The tests run them on every chart of every page over every cached dataset.

* ``legend_problems``: no two legend entries look alike (same colour *and* same symbol /
  dash / bar pattern); the legend sits outside the plotting area; names longer than
  ``SHORT_NAME`` characters only in a horizontal legend above or below the plot.
* ``axis_problems``: an axis titled with a score (Vendi, Div-BLEU, rubric, win rate, paper A's
  scaled ratings, percent, percentile) has an explicit range inside what that score can be
  (Vendi from 1, rubric 1–10, the others 0–1 or 0–100).
"""

from __future__ import annotations

import re

SHORT_NAME = 24
# what an axis title says -> (low, high) the score can take (None = unbounded)
SCORE_TITLES = (
    (re.compile(r"vendi", re.I), (1.0, None)),
    (re.compile(r"div[-_ ]?bleu", re.I), (0.0, 1.0)),
    (re.compile(r"rubric", re.I), (1.0, 10.0)),
    (re.compile(r"win rate", re.I), (0.0, 1.0)),
    (re.compile(r"^(novelty|usefulness|creativity)\b", re.I), (0.0, 1.0)),
    (re.compile(r"percentile", re.I), (0.0, 100.0)),
    (re.compile(r"adjusted R²", re.I), (None, 100.0)),  # below 0 when a fit explains less than its k costs
    (re.compile(r"R² \(%\)|R2 \(%\)|^%|\(%\)|% of", re.I), (0.0, 100.0)),
)


def _as_json(fig) -> dict:
    if hasattr(fig, "to_plotly_json"):
        fig = fig.to_plotly_json()
    return {"data": list(fig.get("data") or []), "layout": dict(fig.get("layout") or {})}


def _plain(value):
    """A colour, symbol or dash as a comparable scalar (arrays of one value count as it)."""
    if isinstance(value, (list, tuple)):
        distinct = {str(v).lower() for v in value}
        return distinct.pop() if len(distinct) == 1 else "per-point"
    if isinstance(value, dict):  # a typed array
        return "per-point"
    return None if value is None else str(value).lower().replace(" ", "")


def _text(value) -> str:
    if isinstance(value, dict):
        value = value.get("text")
    return "" if value is None else re.sub(r"<[^>]+>", " ", str(value))


def appearance(trace: dict) -> tuple:
    """What tells a trace apart in its legend entry: kind, colours and marks."""
    kind = trace.get("type", "scatter")
    marker = trace.get("marker") or {}
    line = trace.get("line") or {}
    pattern = (marker.get("pattern") or {}).get("shape")
    mode = trace.get("mode") or ("lines+markers" if kind.startswith("scatter") else "")
    markers = "markers" in mode or "text" in mode
    lines = "lines" in mode
    colour = _plain(marker.get("color")) if markers or not lines else None
    line_colour = _plain(line.get("color")) if lines or kind in ("box", "violin") else None
    fill = _plain(trace.get("fillcolor"))
    symbol = _plain(marker.get("symbol") or ("circle" if markers else None))
    dash = _plain(line.get("dash") or ("solid" if lines else None))
    return (kind.replace("gl", ""), colour, line_colour, fill, symbol if markers else None,
            dash if lines else None, _plain(pattern or ""))


def legend_entries(fig) -> list[dict]:
    """The traces that show up in the legend (Plotly's rules: a named trace with
    ``showlegend`` not false; a layout ``showlegend: false`` hides them all; a lone trace
    shows no legend unless asked)."""
    fig = _as_json(fig)
    if fig["layout"].get("showlegend") is False:
        return []
    candidates = [t for t in fig["data"] if t.get("showlegend") is not False and t.get("name") not in (None, "")
                  and t.get("type") not in ("heatmap", "histogram2d", "contour", "surface")
                  and t.get("visible", True) is not False]
    if len(candidates) < 2 and fig["layout"].get("showlegend") is not True:
        return []
    return candidates


def legend_problems(fig) -> list[str]:
    fig = _as_json(fig)
    entries = legend_entries(fig)
    problems = []
    seen: dict[tuple, str] = {}
    for trace in entries:
        name = _text(trace.get("name"))
        look = appearance(trace)
        if look in seen and seen[look] != name:
            problems.append(f"legend entries {seen[look]!r} and {name!r} look alike {look}")
        seen.setdefault(look, name)
    if not entries:
        return problems
    legend = fig["layout"].get("legend") or {}
    orientation = legend.get("orientation", "v")
    x = legend.get("x", 1.02)
    y = legend.get("y", 1.0)
    x_anchor = legend.get("xanchor", "left" if x >= 1 else "auto")
    y_anchor = legend.get("yanchor", "auto")
    # a legend placed on the figure (``yref: container``) at its bottom or top edge sits in the
    # margin Plotly makes for it, outside the plot
    container = legend.get("yref") == "container" and (
        (y <= 0.05 and y_anchor in ("bottom", "auto")) or (y >= 0.95 and y_anchor in ("top", "auto")))
    below = y < 0 and y_anchor in ("top", "auto") or (y <= 0 and y_anchor == "top")
    above = y > 1 and y_anchor in ("bottom", "auto") or (y >= 1 and y_anchor == "bottom")
    right = x >= 1 and x_anchor in ("left", "auto")
    left = x <= 0 and x_anchor == "right"
    if not (container or below or above or right or left):
        problems.append(f"legend inside the plotting area (x={x}, y={y}, anchors {x_anchor}/{y_anchor})")
    long = [_text(t.get("name")) for t in entries if len(_text(t.get("name"))) > SHORT_NAME]
    if long and not (orientation == "h" and (below or above or container)):
        problems.append(f"{len(long)} legend name(s) longer than {SHORT_NAME} characters in a vertical legend "
                        f"(e.g. {long[0]!r}): use codes with a key, or a horizontal legend outside the plot")
    return problems


def _axes(layout: dict):
    for key, value in layout.items():
        if re.fullmatch(r"[xy]axis\d*", key) and isinstance(value, dict):
            yield key, value


def score_bounds(title: str) -> tuple[float | None, float | None] | None:
    for pattern, bounds in SCORE_TITLES:
        if pattern.search(title):
            return bounds
    return None


def axis_problems(fig) -> list[str]:
    fig = _as_json(fig)
    problems = []
    for key, axis in _axes(fig["layout"]):
        title = _text(axis.get("title")).strip()
        bounds = score_bounds(title) if title else None
        if bounds is None or axis.get("visible") is False:
            continue
        low, high = bounds
        shown = axis.get("range")
        if not shown or axis.get("autorange") not in (None, False) or any(v is None for v in shown):
            problems.append(f"{key} {title!r}: no explicit range (autorange can leave the score's range)")
            continue
        a, b = sorted(float(v) for v in shown)
        if low is not None and a < low - 1e-9:
            problems.append(f"{key} {title!r}: range starts at {a:g}, below the score's {low:g}")
        if high is not None and b > high + 1e-9:
            problems.append(f"{key} {title!r}: range ends at {b:g}, above the score's {high:g}")
    return problems


def problems(fig) -> list[str]:
    """Every rule at once."""
    return legend_problems(fig) + axis_problems(fig)
