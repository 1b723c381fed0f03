"""Context written on the exported artefact itself: a PNG, SVG or slide shown alone, or a LaTeX
table pasted into a paper, still says whose numbers it holds and what they rest on.

``Stamp``: ours / published / ours beside published, the dataset (or the paper and table),
the sample, the N, the outcome and the filters. ``stamp_figure`` writes it above the figure's
title (two small grey lines, ``OURS`` or ``PUBLISHED`` first), and the key of a chart's
condition codes (``charts.condition_key``) in a column right of the plot, with the margin
made for both so no text runs into another. ``latex_caption`` writes the same into a table's
caption.
"""

from __future__ import annotations

import html
import re
import textwrap
from dataclasses import dataclass

import plotly.graph_objects as go

from dashboard.figures import style
from dashboard.figures.charts import condition_key

KINDS = {"ours": "OURS", "published": "PUBLISHED", "beside": "OURS BESIDE PUBLISHED"}
STAMP_SIZE = 12  # px, on a figure exported alone (a slide's sizes: ``formats.SLIDE_*_PX``)
KEY_SIZE = 11


@dataclass(frozen=True)
class Stamp:
    """What every exported figure and table says about itself."""

    kind: str  # "ours", "published" or "beside"
    source: str  # "dataset local_smollm2" / "paper A, Table 24"
    sample: str
    n: str
    outcome: str
    filters: str = ""
    published_source: str = ""  # for "beside": where the published numbers come from

    def parts(self) -> list[str]:
        parts = [KINDS.get(self.kind, self.kind.upper()), self.source]
        if self.published_source:
            parts.append(f"published: {self.published_source}")
        parts += [f"sample: {self.sample or 'not stated'}", f"N = {self.n or 'not stated'}",
                  f"outcome: {self.outcome or 'not stated'}"]
        if self.filters:
            parts.append(f"filters: {self.filters}")
        return parts

    def text(self) -> str:
        """One line: ``OURS · dataset x · sample: ... · N = ... · outcome: ...``."""
        return " · ".join(self.parts())

    def lines(self, width: int) -> list[str]:
        """The stamp wrapped on lines of at most ``width`` characters, never inside a part."""
        lines, current = [], ""
        for part in self.parts():
            candidate = f"{current} · {part}" if current else part
            if current and len(candidate) > width:
                lines.append(current)
                current = part
            else:
                current = candidate
        lines.append(current)
        out = []
        for line in lines:
            out += textwrap.wrap(line, width) or [""]
        return out


def _plain_title(fig: go.Figure) -> str:
    title = fig.layout.title.text if fig.layout.title and fig.layout.title.text else ""
    return re.sub(r"<br\s*/?>", " ", title)


def stamp_figure(fig: go.Figure, stamp: Stamp, *, width: int, height: int | None = None,
                 title: str | None = None, title_size: int | None = None, stamp_size: int = STAMP_SIZE,
                 key_size: int = KEY_SIZE) -> go.Figure:
    """A copy of ``fig`` for a file of ``width`` pixels: the stamp above the title (wrapped to
    the width), the title re-wrapped to it, the condition-code key right of the plot.
    ``title_size``, ``stamp_size`` and ``key_size`` (px): the title's, the stamp's and the key's
    font (a slide's are larger: ``formats.slide_figure``)."""
    out = go.Figure(fig)
    title_size = title_size or style.TITLE_SIZE
    characters = max(40, int(width / (stamp_size * 0.6)))
    stamp_lines = [html.escape(line, quote=False) for line in stamp.lines(characters)]
    stamp_lines[0] = stamp_lines[0].replace(html.escape(KINDS.get(stamp.kind, "")),
                                            f"<b>{html.escape(KINDS.get(stamp.kind, ''))}</b>", 1)
    heading = title if title is not None else _plain_title(out)
    heading = style.wrap_title(html.escape(heading, quote=False) if title is not None else heading,
                               max(30, int(width / (title_size * 0.62))))
    kicker = f"<span style='font-size:{stamp_size}px;color:#555'>" + "<br>".join(stamp_lines) + "</span>"
    room = subplot_title_room(out, out.layout.font.size if out.layout.font and out.layout.font.size else 13)
    out.update_layout(title=dict(text=kicker + ("<br>" + heading if heading else ""), automargin=True,
                                 font=dict(size=title_size),
                                 yref="paper", y=1, yanchor="bottom", xref="container", x=0, xanchor="left",
                                 pad=dict(l=12, b=10 + room)))
    if height is not None:
        out.update_layout(height=height)
    key = condition_key(out)
    if key:
        _add_key(out, key, width, key_size)
    return out


def subplot_title_room(fig: go.Figure, font_px: float) -> int:
    """Pixels the subplot titles of the top row take above the plot at ``font_px`` (0 without
    any): their lines at about 1.4 × the font, and a gap."""
    top = [a for a in fig.layout.annotations or () if a.yref == "paper" and a.y is not None and a.y >= 0.99
           and a.yanchor == "bottom"]
    if not top:
        return 0
    size = max((a.font.size if a.font and a.font.size else font_px) for a in top)
    lines = max(str(a.text or "").count("<br>") + 1 for a in top)
    return int(1.4 * size * lines + 6)


def _add_key(fig: go.Figure, key: list[list[str]], width: int, key_size: int = KEY_SIZE) -> None:
    """The codes' key as a column right of the plot; the right margin grows to hold it. An
    entry wraps between its comma-separated parts ("distant peers", "k = 1"), a part itself only
    when it is longer than the column."""
    column = max(24, min(60, int(0.32 * width / (key_size * 0.6))))
    lines = ["<b>key</b>"]
    for code, words in key:
        wrapped = _wrap_parts(f"{code}: {words}", column) or [code]
        lines += [html.escape(wrapped[0], quote=False)] + ["   " + html.escape(w, quote=False) for w in wrapped[1:]]
    longest = max(len(re.sub(r"<[^>]+>", "", line)) for line in lines)
    margin = int(longest * key_size * 0.6) + 40
    fig.add_annotation(text="<br>".join(lines), xref="paper", yref="paper", x=1, xanchor="left", xshift=16,
                       y=1, yanchor="top", showarrow=False, align="left", font=dict(size=key_size, color="#333"))
    fig.update_layout(margin=dict(r=margin))


def _wrap_parts(text: str, width: int) -> list[str]:
    lines, current = [], ""
    for part in text.split(", "):
        candidate = f"{current}, {part}" if current else part
        if current and len(candidate) + 1 > width:
            lines.append(current + ",")
            current = part
        else:
            current = candidate
    lines.append(current)
    return [piece for line in lines for piece in (textwrap.wrap(line, width) or [""])]


def latex_caption(title: str, stamp: Stamp) -> str:
    """A table's caption (plain text; ``formats.table_to_latex`` escapes it): its title, then
    ours / published, source, sample, N and outcome."""
    kind, *rest = stamp.parts()
    return f"{title}. {kind} -- " + "; ".join(rest) + "."
