"""Rules every chart of the tool meets, as functions of a figure's JSON (what Streamlit sends
to the browser, ``fig.to_plotly_json()``): each returns the problems it finds, empty when the
figure is fine. The tests run them on every chart of every page over every cached dataset.

* ``legend_problems``: no two legend entries look alike (same colour *and* same symbol /
  dash / bar pattern); the legend sits outside the plotting area; names longer than
  ``SHORT_NAME`` characters only in a horizontal legend above or below the plot.
* ``axis_problems``: an axis titled with a score (Vendi, Div-BLEU, rubric, win rate, paper A's
  scaled ratings, percent, percentile) has an explicit range inside what that score can be
  (Vendi from 1, rubric 1–10, the others 0–1 or 0–100).
* ``colour_problems``: any two distinct categorical colours of one chart differ by at least
  ``colour_difference.THRESHOLD`` (CIEDE2000) in normal vision and by at least
  ``colour_difference.CVD_THRESHOLD`` under simulated protanopia, deuteranopia and tritanopia;
  the legend entries named in ``compared`` (runs or datasets drawn side by side) never share a
  hue family (``colour_difference.HUE_FAMILY``). The categorical colours of a chart are the one
  colour of each legend entry (its marker's, else its line's, else its fill's) and the distinct
  colours of any per-point list of colour strings (bars coloured one by one). Not counted:
  continuous colour scales (numbers mapped through a colour scale), traces that are not in the
  legend (reference lines, density images, backgrounds, highlights), and fully transparent
  colours. A colour with transparency is taken as seen on the white page. Two entries with the
  *same* colour are no colour problem: they are told apart by their marks, which
  ``legend_problems`` checks (and ``shared_colours`` counts them).
"""

from __future__ import annotations

import re
from itertools import combinations

from dashboard.figures import colour_difference

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


# the CSS colour names Plotly figures of the tool use, as hex
CSS_NAMES = {"black": "#000000", "white": "#FFFFFF", "grey": "#808080", "gray": "#808080", "red": "#FF0000",
             "green": "#008000", "blue": "#0000FF", "orange": "#FFA500", "purple": "#800080",
             "lightgrey": "#D3D3D3", "lightgray": "#D3D3D3", "darkgrey": "#A9A9A9", "darkgray": "#A9A9A9",
             "silver": "#C0C0C0", "dimgrey": "#696969", "dimgray": "#696969"}
RGB_FUNCTION = re.compile(r"^rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*(?:,\s*([\d.]+)\s*)?\)$")
HEX_COLOUR = re.compile(r"^#([0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$")
TRANSPARENT = "transparent"


def seen_colour(value) -> str | None:
    """A Plotly colour string as the ``#RRGGBB`` seen on the white page (a translucent colour
    mixed with white); ``TRANSPARENT`` for an invisible one; None for what is not a colour."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower().replace(" ", "")
    text = CSS_NAMES.get(text, text)
    alpha = 1.0
    if HEX_COLOUR.match(text):
        digits = text[1:]
        if len(digits) == 3:
            digits = "".join(c * 2 for c in digits)
        if len(digits) == 8:
            alpha = int(digits[6:], 16) / 255
        rgb = [int(digits[i:i + 2], 16) for i in (0, 2, 4)]
    elif (found := RGB_FUNCTION.match(text)):
        rgb = [float(found.group(i)) for i in (1, 2, 3)]
        alpha = float(found.group(4)) if found.group(4) is not None else 1.0
    elif text == TRANSPARENT:
        return TRANSPARENT
    else:
        return None
    if alpha <= 0:
        return TRANSPARENT
    mixed = [alpha * c + (1 - alpha) * 255 for c in rgb]
    return "#" + "".join(f"{int(round(min(255.0, max(0.0, c)))):02X}" for c in mixed)


def _entry_colour(trace: dict):
    """The one colour a legend entry shows: its marker's, else its line's, else its fill's
    (a colour string), or None when none is a single colour."""
    for value in ((trace.get("marker") or {}).get("color"), (trace.get("line") or {}).get("color"),
                  trace.get("fillcolor")):
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value) \
                and len({v.lower() for v in value}) == 1:
            value = value[0]
        if isinstance(value, str):
            return value
    return None


def categorical_colours(fig) -> tuple[dict[str, str], list[str]]:
    """``({seen colour: the entry or trace it belongs to}, [colour strings not understood])``
    of one figure (see the module docstring for what counts)."""
    fig = _as_json(fig)
    found: dict[str, str] = {}
    unread: list[str] = []

    def add(value, owner: str):
        seen = seen_colour(value)
        if seen is None:
            unread.append(f"{owner}: {value!r}")
        elif seen != TRANSPARENT:
            found.setdefault(seen, owner)

    for trace in legend_entries(fig):
        value = _entry_colour(trace)
        if value is not None:
            add(value, _text(trace.get("name")))
    for trace in fig["data"]:
        value = (trace.get("marker") or {}).get("color")
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
            for each in dict.fromkeys(value):
                add(each, f"{_text(trace.get('name')) or trace.get('type', 'trace')} ({each})")
    return found, unread


def _legend_colours(fig) -> dict[str, str]:
    out = {}
    for trace in legend_entries(fig):
        value = _entry_colour(trace)
        seen = seen_colour(value) if value is not None else None
        if seen not in (None, TRANSPARENT):
            out.setdefault(_text(trace.get("name")), seen)
    return out


def colour_problems(fig, compared=()) -> list[str]:
    """Pairs of a chart's categorical colours too close to tell apart, and compared runs in one
    hue family (``compared``: the legend names that are runs or datasets)."""
    found, unread = categorical_colours(fig)
    problems = [f"colour not understood: {text}" for text in unread]
    for (a, owner_a), (b, owner_b) in combinations(found.items(), 2):
        seen = colour_difference.worst_delta_e(a, b)
        close = [f"{vision} ΔE00 {value:.1f} < {limit:g}" for vision, value in seen.items()
                 if value < (limit := colour_difference.THRESHOLD if vision == "normal"
                             else colour_difference.CVD_THRESHOLD)]
        if close:
            problems.append(f"colours of {owner_a!r} ({a}) and {owner_b!r} ({b}) too close: " + ", ".join(close))
    runs = {name: colour for name, colour in _legend_colours(fig).items() if name in set(map(str, compared))}
    for (name_a, a), (name_b, b) in combinations(runs.items(), 2):
        if a != b and colour_difference.same_hue_family(a, b):
            problems.append(f"compared {name_a!r} ({a}) and {name_b!r} ({b}) share a hue family: hue angles "
                            f"{colour_difference.hue_gap(a, b):.0f}° apart (< {colour_difference.HUE_FAMILY:g}°)")
    return problems


def shared_colours(fig) -> list[tuple[str, str]]:
    """Pairs of legend entries drawn in the same colour (told apart by their marks only)."""
    colours = _legend_colours(fig)
    return [(a, b) for a, b in combinations(colours, 2) if colours[a] == colours[b]]


def problems(fig, compared=()) -> list[str]:
    """Every rule at once (``compared``: legend names of runs or datasets, see ``colour_problems``)."""
    return legend_problems(fig) + axis_problems(fig) + colour_problems(fig, compared)
