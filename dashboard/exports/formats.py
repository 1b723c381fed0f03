"""Figures and tables out of the dashboard: PNG/SVG, interactive HTML, CSV, LaTeX, and a
one-file HTML report of the current selection (no Streamlit here).

Static images go through kaleido, which drives the system Chromium; the report embeds
plotly.js once so it opens offline, with every figure still interactive.
"""

from __future__ import annotations

import html
import io
import re
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

IMAGE_FORMATS = ("png", "svg")
REPORT_MAX_ROWS = 30  # a report shows what a page shows, not a data dump
# context entries that are caveats about the data (a dataset's manifest note, its licence):
# the report lists them apart, above every block, so none is lost
CAVEAT_KEYS = ("note", "licence")


@dataclass
class ReportItem:
    """One figure or table of a report, with where its numbers come from.

    ``provenance``: for our numbers, the dataset, sample, N and filters they were computed
    on; for published ones (``published=True``), the paper and table they were copied from.
    """

    title: str
    figure: go.Figure | None = None
    table: pd.DataFrame | None = None
    caption: str = ""
    published: bool = False
    slug: str = field(default="")
    provenance: str = ""
    # what the stamp on the artefact says (``dashboard.exports.stamp``): the sample, the N and
    # the outcome; ``beside``: where the published numbers of an ours-beside-published block
    # come from; ``caveats``: what the page said about these numbers
    sample: str = ""
    n: str = ""
    outcome: str = ""
    beside: str = ""
    caveats: list[str] = field(default_factory=list)

    def __post_init__(self):
        if not self.slug:
            self.slug = slugify(self.title)

    def stamp(self, context: dict[str, str] | None = None):
        """The ``Stamp`` of this item: published ones name their paper and table; ours the
        dataset (from ``provenance`` or the report's ``context``), sample, N and filters."""
        from dashboard.exports.stamp import Stamp

        context = context or {}
        if self.published:
            source = self.provenance or self.title
            n = self.n or _n_in(source) or _n_in(self.title) or "as printed"
            return Stamp("published", source, self.sample or "the paper's", n, self.outcome or _outcome_in(self.title))
        dataset = _dataset_in(self.provenance) or context.get("dataset", "")
        n = self.n or _n_in(self.provenance) or _selected_in(self.provenance) or context.get("conversations", "")
        filters = ", ".join(f"{k.split(': ', 1)[1]} = {v}" for k, v in context.items() if k.startswith("filter: ")) \
            if not self.provenance else _filters_in(self.provenance)
        return Stamp("beside" if self.beside else "ours", f"dataset {dataset}" if dataset else "this session",
                     self.sample or "every selected conversation", n,
                     self.outcome or _outcome_in(self.title), filters, self.beside)

    def provenance_label(self, context: dict[str, str] | None = None) -> str:
        """The one line every block of a report carries: "published: ..." or "ours: ..."."""
        if self.published:
            return f"published: {self.provenance or self.title}"
        if self.provenance:
            return f"ours: {self.provenance}"
        context = context or {}
        parts = [f"dataset {context['dataset']}" if context.get("dataset") else "",
                 f"N = {context['conversations']} conversations" if context.get("conversations") else ""]
        parts += [f"{k.split(': ', 1)[1]} = {v}" for k, v in context.items() if k.startswith("filter: ")]
        return "ours: " + (", ".join(p for p in parts if p) or "computed in this session")


def _n_in(text: str) -> str:
    found = re.search(r"\bN = ([\d,]+(?: [a-zA-Z][\w ]*?)?)(?:[;),]|$)", str(text))
    return found.group(1).strip() if found else ""


def _selected_in(text: str) -> str:
    found = re.search(r"([\d,]+ of [\d,]+) conversations selected", str(text))
    return f"{found.group(1)} conversations" if found else ""


def _dataset_in(text: str) -> str:
    found = re.search(r"\bdataset ([^\s,;]+)", str(text))
    return found.group(1) if found else ""


def _filters_in(text: str) -> str:
    return ", ".join(re.findall(r"\b(\w+ = [^;]+?)(?=, \w+ = |;|$)", str(text)))


def _outcome_in(title: str) -> str:
    """The outcome a title names (``... on creativity``, ``Vendi Score ...``), else the title."""
    found = re.search(r"\bon ([\w_ -]+?)(?: \(|$)", str(title))
    return found.group(1) if found else str(title)


def slugify(text: str) -> str:
    out = "".join(c.lower() if c.isalnum() else "_" for c in text)
    while "__" in out:
        out = out.replace("__", "_")
    return out.strip("_")[:60] or "item"


def figure_to_html(fig: go.Figure, *, full_html: bool = True) -> str:
    """Interactive HTML of one figure, plotly.js inlined (opens offline)."""
    return pio.to_html(fig, include_plotlyjs=True, full_html=full_html)


def figure_to_image(fig: go.Figure, fmt: str = "png", *, width: int = 1000, height: int | None = None,
                    scale: float = 2.0, stamp=None) -> bytes:
    """PNG or SVG bytes through kaleido (needs Chromium; raises RuntimeError without it).
    ``stamp`` (``dashboard.exports.stamp.Stamp``) is written on the image (every export of
    the dashboard passes one; ``item_image`` does it from a ``ReportItem``)."""
    if fmt not in IMAGE_FORMATS:
        raise ValueError(f"image format must be one of {IMAGE_FORMATS}, got {fmt!r}")
    height = height or int(fig.layout.height or 600)
    if stamp is not None:
        from dashboard.exports.stamp import stamp_figure

        height += 40 + 16 * len(stamp.lines(max(40, int(width / 7.2))))
        fig = stamp_figure(fig, stamp, width=width, height=height)
    failure = None
    for _ in range(2):  # once more: kaleido's browser page sometimes is not ready on a loaded machine
        try:
            return pio.to_image(fig, format=fmt, width=width, height=height, scale=scale if fmt == "png" else 1)
        except Exception as error:  # kaleido reports a missing browser in several ways
            failure = error
            if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
                break
    raise RuntimeError(f"static export failed ({type(failure).__name__}: {failure}); PNG/SVG need "
                       "Chromium (`make browser`). HTML export works without it.") from None


def item_image(item: "ReportItem", fmt: str = "png", context: dict[str, str] | None = None, **kwargs) -> bytes:
    """The item's figure as PNG/SVG with its stamp on the image."""
    return figure_to_image(item.figure, fmt, stamp=item.stamp(context), **kwargs)


def item_latex(item: "ReportItem", context: dict[str, str] | None = None, digits: int = 3) -> str:
    """The item's table as LaTeX, captioned with its title and stamp (ours/published, source,
    sample, N, outcome)."""
    from dashboard.exports.stamp import latex_caption

    return table_to_latex(item.table, caption=latex_caption(item.title, item.stamp(context)),
                          label=f"tab:{item.slug}", digits=digits)


def table_to_csv(table: pd.DataFrame) -> bytes:
    """UTF-8 CSV of a table; a cell a spreadsheet would evaluate as a formula (``=``, ``+``,
    ``-``, ``@``, tab, CR first) is escaped with a leading quote (``engine.storage.csv_cells``)."""
    from engine.storage.csv_cells import safe_csv

    return safe_csv(table, index=_keeps_index(table)).encode("utf-8")


def table_to_latex(table: pd.DataFrame, *, caption: str = "", label: str = "", digits: int = 3) -> str:
    """A booktabs LaTeX table that pdflatex compiles as it is: every text that reaches it
    (index and column names, cells, caption) is written by ``latex_escape`` (special characters
    escaped, only ASCII out); numbers rounded to ``digits`` with a math minus; p-values as the
    pages print them (``engine.stats.p_format.format_p``: ``<0.001`` below a thousandth);
    the label keeps only the characters a ``\\label`` takes."""
    frame = table.reset_index(allow_duplicates=True) if _keeps_index(table) else table.reset_index(drop=True)
    names = [" / ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in frame.columns]
    p_columns = {i for i, name in enumerate(names) if _is_p_column(name)}
    numeric = [pd.api.types.is_numeric_dtype(frame.iloc[:, i]) and not pd.api.types.is_bool_dtype(frame.iloc[:, i])
               for i in range(len(names))]
    lines = ["\\begin{table}", "\\centering"]
    if caption:
        lines.append(f"\\caption{{{latex_escape(caption)}}}")
    safe_label = re.sub(r"[^A-Za-z0-9:._-]", "", str(label or ""))
    if safe_label:
        lines.append(f"\\label{{{safe_label}}}")
    lines.append("\\begin{tabular}{" + "".join("r" if n else "l" for n in numeric) + "}")
    lines += ["\\toprule", " & ".join(latex_escape(n) for n in names) + " \\\\", "\\midrule"]
    for row in frame.itertuples(index=False, name=None):
        cells = [_latex_cell(value, digits, as_p=i in p_columns) for i, value in enumerate(row)]
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def _is_p_column(name: str) -> bool:
    """A column of p-values: ``p``, ``p (Holm)``, ``welch_p``, ``p_holm``, ``P>|z|``."""
    low = name.strip().lower()
    if low in ("top_p", "min_p"):  # a model's sampling options, not p-values
        return False
    return low == "p" or low.startswith(("p ", "p_", "p>", "p-")) or low.endswith(("_p", " p"))


def _latex_cell(value, digits: int, *, as_p: bool = False) -> str:
    import math
    import numbers

    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA or value is pd.NaT:
        return "--"
    if as_p and isinstance(value, numbers.Real) and not isinstance(value, bool):
        from engine.stats.p_format import format_p

        return latex_escape(format_p(float(value)))
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return latex_escape(value)
    number = float(value)
    if math.isinf(number):
        return "$\\infty$" if number > 0 else "$-\\infty$"
    text = str(int(value)) if isinstance(value, numbers.Integral) else f"{number:.{digits}f}"
    return "$-$" + text[1:] if text.startswith("-") else text  # a minus sign, not a hyphen


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  # OT1 text mode prints < > | as other glyphs (¡ ¿ —): math mode has them
                  "<": "$<$", ">": "$>$", "|": "$|$",
                  "\n": " ", "\r": " ", "\t": " "}
# characters beyond ASCII the project's texts carry, as pdflatex's own commands (no package)
_LATEX_UNICODE = {"\u2212": "$-$", "\u2013": "--", "\u2014": "---", "\u00d7": r"$\times$", "\u00b1": r"$\pm$",
                  "\u00b2": r"$^{2}$", "\u00b3": r"$^{3}$", "\u00b9": r"$^{1}$", "\u2264": r"$\leq$", "\u2265": r"$\geq$",
                  "\u2248": r"$\approx$", "\u2260": r"$\neq$", "\u2192": r"$\rightarrow$", "\u00b7": r"$\cdot$",
                  "\u2022": r"$\bullet$", "\u2026": r"\ldots{}", "\u00b0": r"$^{\circ}$", "\u00a0": "~",
                  "\u2018": "`", "\u2019": "'", "\u201c": "``", "\u201d": "''", "\u00df": r"{\ss}",
                  "\u0394": r"$\Delta$", "\u03b1": r"$\alpha$", "\u03b2": r"$\beta$", "\u03b7": r"$\eta$",
                  "\u03ba": r"$\kappa$", "\u03bc": r"$\mu$", "\u03c1": r"$\rho$", "\u03c3": r"$\sigma$",
                  "\u03c7": r"$\chi$", "\u03c9": r"$\omega$", "\u03c4": r"$\tau$", "\u03b5": r"$\varepsilon$"}
# combining accents a Latin letter may carry, as LaTeX's accent commands
_LATEX_ACCENTS = {"\u0301": "'", "\u0300": "`", "\u0302": "^", "\u0308": '"', "\u0303": "~", "\u0327": "c",
                  "\u030c": "v", "\u0304": "=", "\u0306": "u", "\u030a": "r", "\u0307": "."}


def latex_escape(text) -> str:
    """Plain text as LaTeX source pdflatex takes without a package: its special characters
    escaped, ``<``/``>``/``|`` as their text commands, a minus sign, dashes, Greek letters and
    accented letters as LaTeX's commands; any other character beyond ASCII is written visibly
    as ``[U+XXXX]`` (never dropped)."""
    import unicodedata

    out = []
    for char in str("" if text is None else text):
        if char in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[char])
        elif " " <= char <= "~":
            out.append(char)
        elif char in _LATEX_UNICODE:
            out.append(_LATEX_UNICODE[char])
        elif ord(char) < 32 or 0x7f <= ord(char) < 0xa0:
            out.append(" ")  # a control character: nothing pdflatex could print
        else:
            base, *marks = unicodedata.normalize("NFD", char)
            if base.isascii() and base.isalpha() and marks and all(m in _LATEX_ACCENTS for m in marks):
                letter = {"i": r"\i{}", "j": r"\j{}"}.get(base, base)
                for mark in marks:
                    letter = f"\\{_LATEX_ACCENTS[mark]}{{{letter}}}"
                out.append(letter)
            else:
                out.append(f"[U+{ord(char):04X}]")
    return "".join(out)


def _keeps_index(table: pd.DataFrame) -> bool:
    return not isinstance(table.index, pd.RangeIndex)


def html_report(title: str, items: list[ReportItem], *, context: dict[str, str] | None = None) -> str:
    """One self-contained HTML page: a header with the selection, then each item in order.

    Every block carries its provenance line: published numbers name the paper and table
    they come from; ours the dataset, sample, N and filters.
    """
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>",
             f"<p class='meta'>Generated {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC} by the "
             "Creativity Dynamics Lab dashboard.</p>"]
    if context:
        parts.append("<table class='context'>")
        parts += [f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>" for k, v in context.items()
                  if k not in CAVEAT_KEYS]
        parts.append("</table>")
    caveats = [str(context[k]) for k in CAVEAT_KEYS if context and context.get(k)]
    caveats += list(dict.fromkeys(c for item in items for c in item.caveats if c))
    if caveats:
        parts.append("<div class='caveats'><h3>Read these numbers with</h3><ul>")
        parts += [f"<li>{_text_html(c)}</li>" for c in caveats]
        parts.append("</ul></div>")
    plotly_included = False
    for item in items:
        badge = "<span class='badge pub'>published</span>" if item.published else \
            "<span class='badge ours'>ours</span>"
        if item.beside:
            badge += " <span class='badge pub'>beside published</span>"
        parts.append(f"<section id='{html.escape(item.slug)}'><h2>{html.escape(item.title)} {badge}</h2>")
        parts.append(f"<p class='provenance'>{_text_html(item.provenance_label(context))}</p>")
        parts.append(f"<p class='stamp'>{_text_html(item.stamp(context).text())}</p>")
        if item.caption:
            parts.append(f"<p class='caption'>{_text_html(item.caption)}</p>")
        for caveat in item.caveats:
            if caveat not in item.caption:
                parts.append(f"<p class='caveat'>{_text_html(caveat)}</p>")
        if item.figure is not None:
            from dashboard.exports.stamp import stamp_figure

            figure = stamp_figure(item.figure, item.stamp(context), width=1000)
            parts.append(pio.to_html(figure, full_html=False, include_plotlyjs=not plotly_included,
                                     default_width="100%", config={"responsive": True}))
            plotly_included = True
        if item.table is not None:
            parts.append(_table_html(item.table))
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _text_html(text: str) -> str:
    """Escaped text with its line breaks kept (never a literal backslash-n)."""
    return html.escape(str(text).replace("\\n", "\n")).replace("\n", "<br>")


def _table_html(table: pd.DataFrame, max_rows: int = REPORT_MAX_ROWS) -> str:
    shown = table.head(max_rows).copy()
    from engine.stats.p_format import format_p

    for column in [c for c in shown.columns if _is_p_column(str(c)) and pd.api.types.is_numeric_dtype(shown[c])]:
        shown[column] = shown[column].map(format_p)  # as the pages and the LaTeX print p
    buffer = io.StringIO()
    shown.to_html(buffer, index=_keeps_index(shown), float_format=lambda v: f"{v:.4g}",
                  classes="data", border=0, na_rep="–")
    note = (f"<p class='meta'>First {max_rows} of {len(table):,} rows; the whole table is in the "
            "CSV export.</p>") if len(table) > max_rows else ""
    return "<div class='scroll'>" + buffer.getvalue() + "</div>" + note


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;color:#222;padding:0 1em}
h1{color:#3b5ba5} h2{font-size:1.2em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
.meta{color:#777;font-size:.9em} table.data,table.context{border-collapse:collapse;font-size:.85em}
table.data td,table.data th,table.context td,table.context th{padding:3px 8px;border-bottom:1px solid #eee;text-align:right}
table.context th{text-align:left;color:#555}
.provenance{color:#555;font-size:.85em;margin:.2em 0} .caption{font-size:.9em}
.scroll{overflow-x:auto;max-width:100%}
@media print{body{max-width:none;margin:0} section{break-inside:avoid} .scroll{overflow:visible}}
.badge{font-size:.7em;padding:2px 6px;border-radius:8px;vertical-align:middle}
.pub{background:#fde8d4;color:#a05a14}.ours{background:#dde6f6;color:#2d4a8a}
.stamp{color:#555;font-size:.8em;margin:.1em 0} .caveat{color:#8a5a00;font-size:.85em}
.caveats{border-left:4px solid #e0a030;background:#fff8ec;padding:.3em 1em;margin:1em 0}
"""


SLIDE_SIZE = (1600, 900)
# Text sizes on a 1600 × 900 slide, for a hall: a slide shown on a screen about 3 m wide puts
# 1 px at about 2 mm, so 18 px letters are about 3.5 cm tall, read from some 15 m (the common
# rule of a 1/200 letter height for the back row); the title larger still.
SLIDE_TITLE_PX = 32  # the slide's title
SLIDE_TEXT_PX = 20  # axis titles, tick labels, legend, colour bar, annotations, data labels
SLIDE_STAMP_PX = 18  # the provenance stamp above the title and the codes' key right of the plot
SLIDE_MIN_PX = min(SLIDE_TEXT_PX, SLIDE_STAMP_PX)  # no text of a slide is smaller


def slide_figure(item: ReportItem, context: dict[str, str] | None = None) -> go.Figure:
    """A copy of the item's figure sized for a 16:9 slide, its stamp (ours / published,
    source, sample, N, outcome) written above the title and its code key right of the plot:
    a slide shown alone still says where its numbers come from. Nothing is written under the
    plot, where axis titles and the legend are. Text sizes: ``SLIDE_TITLE_PX`` for the title,
    ``SLIDE_STAMP_PX`` for the stamp and the key, at least ``SLIDE_TEXT_PX`` for every other
    text (a size the figure sets smaller, a data label's or a note's, is raised to it)."""
    from dashboard.exports.stamp import stamp_figure

    width, height = SLIDE_SIZE
    base = go.Figure(item.figure)
    base.update_layout(font=dict(size=SLIDE_TEXT_PX), legend=dict(font=dict(size=SLIDE_TEXT_PX)))
    base = at_least(base, SLIDE_TEXT_PX)
    _ticks_that_fit(base, width, height, SLIDE_TEXT_PX)
    slide = stamp_figure(base, item.stamp(context), width=width, height=height, title=item.title,
                         title_size=SLIDE_TITLE_PX, stamp_size=SLIDE_STAMP_PX, key_size=SLIDE_STAMP_PX)
    _room_for_a_slide(slide, SLIDE_TEXT_PX)
    return slide


def at_least(fig: go.Figure, px: float) -> go.Figure:
    """A copy of ``fig`` whose every font size set below ``px`` (layout, axes, legend,
    annotations, traces' text, colour bars; one size or one per point; and a
    ``<span style='font-size:...px'>`` inside a text) is ``px``."""

    def raise_sizes(node):
        if isinstance(node, str):
            return INLINE_SIZE.sub(lambda m: f"{m.group(1)}{max(float(m.group(2)), px):g}px", node)
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key.endswith("font") and isinstance(value, dict) and "size" in value:
                    value = {**value, "size": _raised(value["size"], px)}
                out[key] = raise_sizes(value)
            return out
        if isinstance(node, (list, tuple)):
            return [raise_sizes(v) for v in node]
        return node

    shape = fig.to_dict()
    return go.Figure({"data": raise_sizes(shape.get("data", [])), "layout": raise_sizes(shape.get("layout", {}))})


# of a slide's height and width, about how much the plotting area keeps (the rest: stamp, title,
# legend, axis titles, the codes' key)
PLOT_SHARE = (0.7, 0.8)


def _ticks_that_fit(fig: go.Figure, width: int, height: int, px: float) -> None:
    """At most as many automatic ticks on each axis as labels of ``px`` fit along it (a y
    label about 1.4 × its size tall with its gap, at least 3, an x label about 6 of its sizes
    wide), the plot's height less the rows of a horizontal legend: the small panels of a grid
    of charts otherwise stack their larger tick labels into each other."""
    from dashboard.figures import style

    layout = fig.to_dict().get("layout", {})
    legend = layout.get("legend") or {}
    names = [t.name for t in fig.data if t.name and t.showlegend is not False]
    rows = style.n_legend_rows(names, width_px=width, font_px=int(px)) \
        if legend.get("orientation") == "h" and layout.get("showlegend") is not False and len(names) > 1 else 0
    plot_height = max(height * PLOT_SHARE[0] - 1.5 * px * rows, 4 * px)
    for name, axis in layout.items():
        if not re.fullmatch(r"[xy]axis\d*", name) or not isinstance(axis, dict) or axis.get("tickvals") is not None:
            continue
        low, high = axis.get("domain") or (0.0, 1.0)
        vertical = name.startswith("y")
        length = (high - low) * (plot_height if vertical else width * PLOT_SHARE[1])
        fits = max(3, int(length // (1.4 * px if vertical else 6 * px)))
        if axis.get("nticks") in (None, 0) or axis["nticks"] > fits:
            fig.update_layout({name: dict(nticks=fits)})


def _room_for_a_slide(fig: go.Figure, px: float) -> None:
    """What a figure fixed for the browser, loosened for a static slide: margins that grow with
    the larger text (a map fixes them, as automargin redraws every point in the browser), tick
    labels farther from their axes (the first labels of x and y do not meet in the corner), colour
    bars titled at their side (a title on top runs into the top tick label), and room above the
    plot for data labels drawn outside bars (a bar near 100% carries its label above the plot)."""
    fig.update_xaxes(automargin=True, ticklabelstandoff=int(0.4 * px))
    fig.update_yaxes(automargin=True, ticklabelstandoff=int(0.5 * px))  # corner labels apart
    for trace in fig.data:
        for holder in (trace, getattr(trace, "marker", None)):
            bar = getattr(holder, "colorbar", None) if holder is not None else None
            if bar is not None and bar.title is not None and bar.title.text:
                bar.title.side = "right"
    outside = any(str(getattr(t, "textposition", "") or "").startswith(("outside", "top")) for t in fig.data
                  if getattr(t, "text", None) is not None)
    if outside:
        pad = fig.layout.title.pad.b if fig.layout.title and fig.layout.title.pad and fig.layout.title.pad.b else 10
        fig.update_layout(title=dict(pad=dict(b=pad + int(1.5 * px))))


INLINE_SIZE = re.compile(r"(font-size:\s*)(\d+(?:\.\d+)?)px")


def _raised(size, px: float):
    if isinstance(size, (list, tuple)):
        return [_raised(s, px) for s in size]
    if hasattr(size, "tolist"):
        return _raised(size.tolist(), px)
    try:
        return max(float(size), px)
    except (TypeError, ValueError):
        return px


# The slide deck renders every figure in one browser session (kaleido), each slide within
# SLIDE_LIMIT_S and the whole deck within DECK_LIMIT_S: a slide that fails or takes longer is
# named in slides.txt and on the page, never waited for without end.
SLIDE_LIMIT_S = 60.0
DECK_LIMIT_S = 300.0


@dataclass
class SlideDeck:
    """The zip (``data``), the slides made and the ones that could not be (name, reason)."""

    data: bytes
    made: list[str]
    failed: list[tuple[str, str]]


def slide_deck(items: list[ReportItem], context: dict[str, str] | None = None, **limits) -> bytes:
    """A zip of every figure as a slide-sized PNG (1600 x 900) plus ``slides.txt`` with each
    slide's title, provenance and caption (``make_slide_deck`` says which slides failed)."""
    return make_slide_deck(items, context, **limits).data


def make_slide_deck(items: list[ReportItem], context: dict[str, str] | None = None, *,
                    slide_limit: float = SLIDE_LIMIT_S, deck_limit: float = DECK_LIMIT_S,
                    render=None) -> SlideDeck:
    """Every figure of ``items`` as a slide, rendered in one kaleido session (``render_pngs``);
    a slide that failed is listed in ``slides.txt`` with its reason. RuntimeError, naming the
    reason, when no slide could be made at all."""
    import zipfile

    figured = [item for item in items if item.figure is not None]
    names = [f"{number:02d}_{item.slug}.png" for number, item in enumerate(figured, start=1)]
    width, height = SLIDE_SIZE
    render = render or render_pngs
    pngs = render([slide_figure(item, context) for item in figured], width=width, height=height,
                  slide_limit=slide_limit, deck_limit=deck_limit)
    buffer = io.BytesIO()
    lines, made, failed = [], [], []
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, item, png in zip(names, figured, pngs):
            if isinstance(png, bytes):
                archive.writestr(name, png)
                made.append(name)
                lines.append(f"{name}: {item.title}")
            else:
                failed.append((name, str(png)))
                lines.append(f"{name} NOT MADE ({png}): {item.title}")
            lines += [f"  {item.provenance_label(context)}", f"  {item.stamp(context).text()}"]
            if item.caption:
                lines.append(f"  {item.caption}")
        archive.writestr("slides.txt", "\n".join(lines) + "\n")
    if figured and not made:
        raise RuntimeError(f"no slide could be made ({failed[0][1]}); PNG export needs Chromium "
                           "(`make browser`). The HTML report works without it.")
    return SlideDeck(buffer.getvalue(), made, failed)


def render_pngs(figures: list[go.Figure], *, width: int, height: int, slide_limit: float = SLIDE_LIMIT_S,
                deck_limit: float = DECK_LIMIT_S, fmt: str = "png") -> list:
    """PNG bytes of each figure, or the reason it has none (a string), all rendered by one
    kaleido browser session in a thread of its own: each within ``slide_limit`` seconds, all
    within ``deck_limit`` (what is not done by then says so). Opening one browser per figure,
    as ``pio.to_image`` does, took minutes for a session's figures on a loaded machine.
    ``fmt="svg"`` gives each slide's SVG (text as text, for measuring it)."""
    import asyncio
    import threading

    results: list = ["not rendered: the deck's time limit of "
                     f"{deck_limit:.0f} s was reached first"] * len(figures)
    failure: list[str] = []

    async def work():
        import kaleido

        defaults = pio.defaults
        options = {key: getattr(defaults, key) for key in ("plotlyjs", "mathjax") if getattr(defaults, key, None)}
        async with kaleido.Kaleido(n=1, timeout=slide_limit, **options) as session:
            for position, figure in enumerate(figures):
                try:
                    results[position] = await asyncio.wait_for(session.calc_fig(
                        figure.to_dict(), opts=dict(format=fmt, width=width, height=height, scale=1)),
                        slide_limit)
                except asyncio.TimeoutError:
                    results[position] = f"not rendered within {slide_limit:.0f} s"
                except Exception as error:  # kaleido and its browser fail in several ways
                    results[position] = f"{type(error).__name__}: {error}"

    def run():
        import time

        started = time.monotonic()
        try:
            asyncio.run(asyncio.wait_for(work(), deck_limit))
        except asyncio.TimeoutError:
            pass
        except Exception as error:  # no browser, or it could not start
            if time.monotonic() - started < deck_limit:  # (cut at the limit, the browser fails in its own words)
                failure.append(f"{type(error).__name__}: {error}")

    if not figures:
        return []
    worker = threading.Thread(target=run, name="slide-deck", daemon=True)
    worker.start()
    worker.join(deck_limit + 30)  # the session's own close is given 30 s beyond the limit
    if failure:
        return [r if isinstance(r, bytes) else f"the browser session failed ({failure[0]})" for r in results]
    return list(results)
