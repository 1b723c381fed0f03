"""Plotly figures of the dashboard, as plain functions of tables (no Streamlit here).

Each function takes a DataFrame and returns a ``plotly.graph_objects.Figure`` whose data
can be read back in tests (``fig.data[i].z``, ``.x``, ``.y``). Every figure is finished by
``dashboard.figures.style`` (legend below the plot, score axes inside the score's range, no two
series alike); categorical colours come from ``dashboard.figures.palette`` only, so a method,
discussion, model, task or source has the same colour in every chart and export. Conditions
are named by their short codes (``dashboard.figures.codes``); a chart that uses codes carries
its key in ``fig.layout.meta["condition_key"]`` (rows of code, condition in words), which the
pages show beside it and the exports print with it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.figures import codes, error_bars, palette, style
from dashboard.figures.labels import readable_term
from engine.stats import guards

SOURCE_COLOURS = palette.SOURCE
SEQUENCE = palette.SEQUENCE  # the palette's order, for levels without a fixed colour
TEMPLATE = style.TEMPLATE




def _colour(key, kind: str | None = None) -> str:
    return palette.colour(key, kind)


def _layout(fig: go.Figure, title: str, **extra) -> go.Figure:
    """The house style (``style.finish``)."""
    return style.finish(fig, title, **extra)


def _key(fig: go.Figure, labels) -> go.Figure:
    """Attach the key of the condition codes used in ``fig`` (``layout.meta``)."""
    table = codes.key_table(labels)
    meta = dict(fig.layout.meta) if isinstance(fig.layout.meta, dict) else {}
    meta["condition_key"] = table[["code", "condition"]].values.tolist()
    fig.update_layout(meta=meta)
    return fig


def condition_key(fig) -> list[list[str]]:
    """The ``[code, condition]`` rows a figure's codes stand for (empty when it uses none)."""
    meta = fig.layout.meta if hasattr(fig, "layout") else (fig.get("layout") or {}).get("meta")
    if isinstance(meta, dict):
        return [list(row) for row in meta.get("condition_key") or []]
    return []


def empty_figure(message: str) -> go.Figure:
    """A blank figure carrying a message (used when the data does not support a chart)."""
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return _layout(fig, "")


def distributions_by_group(frame: pd.DataFrame, columns: list[str], group: str = "source",
                           title: str = "Distributions by group", n_cols: int = 3) -> go.Figure:
    """One box plot per column, one box per group, the mean drawn as a dashed line; a column
    that is a score (paper A's ratings, rubric...) keeps its axis inside the score's range."""
    columns = [c for c in columns if c in frame.columns]
    if not columns or frame.empty:
        return empty_figure("no data for these columns")
    n_rows = math.ceil(len(columns) / n_cols)
    fig = make_subplots(rows=n_rows, cols=min(n_cols, len(columns)),
                        # titles on lines of 16 characters: at 1024 px a third of the chart is about
                        # 140 px, and a longer line runs over the top tick labels beside it
                        subplot_titles=[style.wrap_title(readable_term(c), 16) for c in columns],
                        vertical_spacing=0.16 if n_rows > 1 else 0.12,
                        horizontal_spacing=0.11)
    groups = sorted(frame[group].dropna().astype(str).unique())
    looks = style.series_styles(groups, group)
    for position, column in enumerate(columns):
        row, col = divmod(position, n_cols)
        for value in groups:
            values = frame.loc[frame[group].astype(str) == value, column].dropna()
            fig.add_trace(go.Box(y=values, name=style.plain_text(value), boxmean=True, legendgroup=value,
                                 marker=style.marker(looks[value]), line=dict(color=looks[value].colour),
                                 fillcolor=_fill(looks[value]), showlegend=position == 0),
                          row=row + 1, col=col + 1)
        score = style.score_of(column)
        if score is not None:
            axis = "y" if position == 0 else f"y{position + 1}"
            style.score_axis(fig, axis, score, frame[column])
            fig.update_layout({f"yaxis{position + 1 if position else ''}": dict(title_font=dict(size=11))})
    # the legend names the groups; short names are also written under their boxes
    fig.update_xaxes(showticklabels=len(groups) <= 4 and all(len(g) <= 10 for g in groups))
    _layout(fig, title, height=max(340, 290 * n_rows))
    return fig


def _fill(look: style.Style) -> str:
    """A box's fill: its colour, light (boxes of one colour are told apart by the legend)."""
    colour = look.colour.lstrip("#")
    r, g, b = (int(colour[i:i + 2], 16) for i in (0, 2, 4)) if len(colour) == 6 else (127, 127, 127)
    return f"rgba({r},{g},{b},0.35)"


def effect_size_forest(table: pd.DataFrame, title: str = "Cohen's d (95% CI)", value: str = "d",
                       x_title: str = "Cohen's d (LLM − human)", interval: str | None = None,
                       interval_short: str | None = None) -> go.Figure:
    """Forest plot of ``value`` (default ``d``) with ``ci_low``/``ci_high`` per ``feature``;
    ``interval`` (how the CIs were formed; for ``g`` by default ``guards.hedges_g``'s) in each
    hover and the meta, ``interval_short`` under the axis title. No bar for a feature with
    fewer than ``MIN_GROUPS_FOR_INTERVAL`` rows on a side (``<side>_n`` columns, when the table
    has them) or an undefined interval."""
    if table.empty:
        return empty_figure("no effect sizes")
    hedges = value == "g"
    interval = interval or (guards.METHOD_HEDGES if hedges else "95% CI as the table gives it")
    interval_short = interval_short or ("95% CI, noncentral t of Welch's t" if hedges else "95% CI")
    ordered = table.sort_values(value)
    counts = [c for c in ordered.columns if c.endswith("_n")]
    smallest = ordered[counts].min(axis=1) if counts else None
    mask = error_bars.drawn(ordered[value], ordered["ci_low"], ordered["ci_high"], smallest)
    fig = go.Figure()
    for piece, has_bar in error_bars.split(ordered.assign(_n=smallest if counts else np.nan), mask):
        spread = [f"95% CI [{lo:.2f}, {hi:.2f}]" if has_bar else
                  (error_bars.too_few(int(n), "rows") if pd.notna(n) and n < guards.MIN_GROUPS_FOR_INTERVAL
                   else "no interval") for lo, hi, n in zip(piece["ci_low"], piece["ci_high"], piece["_n"])]
        fig.add_trace(go.Scatter(
            x=piece[value], y=[readable_term(f) for f in piece["feature"]], mode="markers", name="LLM − human",
            marker=dict(color=SOURCE_COLOURS["llm"], size=9), customdata=spread,
            error_x=error_bars.asymmetric(piece[value], piece["ci_low"], piece["ci_high"]) if has_bar else None,
            hovertemplate="%{y}: %{x:.2f}, %{customdata}<br>" + style.plain_text(interval) + "<extra></extra>"))
    fig.add_vline(x=0, line_dash="dot", line_color="#888")
    error_bars.describe(fig, interval)
    fig.update_yaxes(categoryorder="array", categoryarray=[readable_term(f) for f in ordered["feature"]])
    return _layout(fig, title, xaxis_title=error_bars.axis_title(x_title, interval_short),
                   height=110 + 36 * len(ordered), showlegend=False)


def novelty_usefulness_scatter(frame: pd.DataFrame, group: str = "source") -> go.Figure:
    """Novelty against usefulness of each final idea, coloured by group."""
    if not {"novelty", "usefulness"} <= set(frame.columns):
        return empty_figure("no novelty/usefulness ratings")
    fig = go.Figure()
    data = frame.dropna(subset=["novelty", "usefulness"])
    looks = style.series_styles(sorted(data[group].dropna().astype(str).unique()), group)
    for value, part in data.groupby(data[group].astype(str)):
        fig.add_trace(go.Scatter(x=part["novelty"], y=part["usefulness"], mode="markers",
                                 name=style.plain_text(value), marker=style.marker(looks[value], size=6, opacity=0.6)))
    _layout(fig, "Novelty vs usefulness")
    style.score_axis(fig, "x", "novelty", data["novelty"])
    style.score_axis(fig, "y", "usefulness", data["usefulness"])
    return fig


def top_share_bar(table: pd.DataFrame, group: str = "group", title: str = "Share of the top 5%") -> go.Figure:
    """Bars of ``share_of_top`` per group (``engine.stats.top_share`` output, one level)."""
    if table.empty:
        return empty_figure("no ratings")
    looks = style.series_styles(table[group].astype(str), "source")
    fig = go.Figure(go.Bar(x=table[group].map(style.plain_text), y=table["share_of_top"] * 100,
                           marker_color=[looks[str(v)].colour for v in table[group]],
                           text=[f"{v:.1f}%" for v in table["share_of_top"] * 100], textposition="outside"))
    _layout(fig, title, showlegend=False)
    style.score_axis(fig, "y", "percent", [0, float((table["share_of_top"] * 100).max()) * 1.15],
                     title="% of the pooled top ideas")
    return fig


def group_means_with_ci(frame: pd.DataFrame, value: str, x: str, colour: str,
                        title: str | None = None) -> go.Figure:
    """Mean of ``value`` per ``x`` × ``colour`` (features by model × discussion, as paper A's
    design analyses), error bars its 95% interval over the cell's conversations
    (``engine.stats.guards.mean_interval``: Student-t, kept inside the score's range when
    ``value`` is a bounded score); a cell with fewer than ``MIN_GROUPS_FOR_INTERVAL`` (3)
    conversations gets no bar, its hover says why."""
    data = frame.dropna(subset=[value, x, colour])
    if data.empty:
        return empty_figure(f"no data for {value}")
    bounds = guards.score_range(style.score_of(value) or value)
    rows = []
    for (level, at), part in data.groupby([colour, x]):
        interval = guards.mean_interval(part[value], bounds, unit="conversations")
        rows.append({colour: level, x: at, "mean": interval.estimate, "low": interval.low, "high": interval.high,
                     "count": interval.n, "method": interval.method})
    stats = pd.DataFrame(rows)
    method = stats["method"].iloc[0]
    stats["with_bar"] = error_bars.drawn(stats["mean"], stats["low"], stats["high"], stats["count"])
    fig = go.Figure()
    levels = [str(v) for v in sorted(stats[colour].unique(), key=str)]
    looks = style.series_styles(levels, colour)
    for level, cells in stats.groupby(colour):
        look = looks[str(level)]
        for part, has_bar in error_bars.split(cells, cells["with_bar"]):
            spread = [f"95% interval [{lo:.3f}, {hi:.3f}]" if has_bar else
                      error_bars.too_few(int(n), "conversations") for lo, hi, n in zip(part["low"], part["high"], part["count"])]
            fig.add_trace(go.Bar(x=part[x].map(style.plain_text), y=part["mean"], name=style.plain_text(level), offsetgroup=str(level),
                                 legendgroup=str(level), showlegend=has_bar or not cells["with_bar"].any(),
                                 marker=style.bar_marker(look),
                                 error_y=error_bars.asymmetric(part["mean"], part["low"], part["high"]) if has_bar else None,
                                 customdata=np.stack([part["count"], spread], axis=1),
                                 hovertemplate="%{x}: mean %{y:.3f} (n = %{customdata[0]}), %{customdata[1]}<extra>"
                                               + style.plain_text(level) + "</extra>"))
    short = "95% t-interval" if method == guards.METHOD_T else "95% t-interval in the score's range"
    _layout(fig, title or f"{readable_term(value)} by {x} × {colour}", barmode="group",
            yaxis_title=readable_term(value), height=style.height_for_legend(440, levels),
            xaxis_title=error_bars.axis_title(x.replace("_", " "),
                                              f"{short} of the mean (n ≥ {guards.MIN_GROUPS_FOR_INTERVAL})"))
    error_bars.describe(fig, f"95% interval of the mean over the cell's conversations: {method}; not drawn below "
                             f"{guards.MIN_GROUPS_FOR_INTERVAL} conversations")
    score = style.score_of(value)
    if score is not None:
        style.score_axis(fig, "y", score, stats["mean"], stats["low"], stats["high"],
                         title=fig.layout.yaxis.title.text)
    return fig


def percent_heatmap(table: pd.DataFrame, title: str, colorscale: str = "Blues",
                    zmax: float | None = None, *, zmin: float = 0.0, colour_title: str = "R² %",
                    digits: int = 1, column_labels: dict[str, str] | None = None) -> go.Figure:
    """Heatmap of a features × specifications table given in percent, values printed.
    A diverging table (differences) passes ``zmin=-zmax`` and a diverging ``colorscale``;
    ``column_labels`` names the columns as a paper prints them; ``colour_title`` names the
    values in the hover (the cells print them, so there is no colour bar)."""
    z = table.to_numpy(dtype=float)
    top = zmax if zmax is not None else float(np.nanmax(z)) if np.isfinite(z).any() else 1
    names = column_labels or {}
    fig = go.Figure(go.Heatmap(
        z=z, x=[names.get(str(c), str(c)) for c in table.columns], y=[readable_term(str(i)) for i in table.index],
        colorscale=colorscale,
        zmin=zmin, zmax=top,
        text=[["–" if not np.isfinite(v) else f"{v:+.{digits}f}" if zmin < 0 else f"{v:.{digits}f}" for v in row]
              for row in z],
        texttemplate="%{text}", hovertemplate="%{y} / %{x}: %{z:.1f} " + colour_title + "<extra></extra>",
        showscale=False))  # every cell prints its value: no colour bar taking the columns' room
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickangle=0, tickfont=dict(size=12))
    return _layout(fig, title, height=110 + 30 * len(table), showlegend=False)


COEFFICIENT_INTERVAL = "95% CI from the fit's standard errors"


def coefficient_plot(tables: dict[str, pd.DataFrame], title: str = "Standardized coefficients (95% CI)",
                     terms: list[str] | None = None, interval: str = COEFFICIENT_INTERVAL,
                     interval_short: str = "95% CI") -> go.Figure:
    """Coefficients with CIs of two (or more) samples side by side, as Figure 3a.

    Each table has ``term, coef, ci_low, ci_high``; ``terms`` picks and orders the rows.
    ``interval`` says how the CIs were formed (the estimator's standard errors and quantile:
    ``dashboard.page_data.regression.interval_method``), in every hover and the chart's meta;
    ``interval_short`` under the axis title. A term whose interval is undefined (an SE of NaN)
    is drawn as its point alone.
    """
    fig = go.Figure()
    n = len(tables)
    looks = style.series_styles([label.lower() for label in tables], "source")
    for position, (label, table) in enumerate(tables.items()):
        part = table if terms is None else table.set_index("term").reindex(terms).reset_index()
        offset = (position - (n - 1) / 2) * 0.25
        part = part.assign(_y=np.arange(len(part)) + offset)
        mask = error_bars.drawn(part["coef"], part["ci_low"], part["ci_high"])
        for piece, has_bar in error_bars.split(part, mask):
            spread = [f"{interval_short} [{lo:.3f}, {hi:.3f}]" if has_bar else "no interval: standard error undefined"
                      for lo, hi in zip(piece["ci_low"], piece["ci_high"])]
            fig.add_trace(go.Scatter(
                x=piece["coef"], y=piece["_y"], mode="markers", name=label, legendgroup=label,
                showlegend=has_bar or not mask.any(), marker=style.marker(looks[label.lower()], size=9),
                error_x=error_bars.asymmetric(piece["coef"], piece["ci_low"], piece["ci_high"]) if has_bar else None,
                customdata=np.stack([piece["term"].astype(str).map(style.plain_text), spread], axis=1),
                hovertemplate="%{customdata[0]}: %{x:.3f}, %{customdata[1]}<br>" + style.plain_text(interval)
                              + "<extra>" + label + "</extra>"))
    labels = terms if terms is not None else (list(next(iter(tables.values()))["term"]) if tables else [])
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(labels))),
                     ticktext=[readable_term(t) for t in labels], autorange="reversed")
    fig.add_vline(x=0, line_dash="dot", line_color="#888")
    error_bars.describe(fig, interval)
    return _layout(fig, title, xaxis_title=error_bars.axis_title("coefficient", interval_short),
                   height=150 + 34 * len(labels))


LADDER_BAR_SPAN = 0.8  # of each specification's row the bars fill (the rest is the gap between rows)
LADDER_LABEL_ROOM = 0.28  # of the values' span added beyond the bars' ends for their value labels
LADDER_LABEL_SIZE = 12  # px


def ladder_label(value) -> str:
    """A ladder's value label: '34.0%', '−40.2%' (a true minus sign) or 'n/a'."""
    if value is None or pd.isna(value):
        return "n/a"
    return f"{value:.1f}%".replace("-", "−")


def r2_ladder(table: pd.DataFrame, title: str = "Variance explained by specification") -> go.Figure:
    """Horizontal grouped bars: one row per ``specification`` (top to bottom in the table's
    order), one bar per remaining column (values in %), as Table 1.

    An adjusted R² below 0 (the predictors explain less than their number costs) is drawn as a
    bar left of the zero line, the axis extended to show it. A missing value (a column that does
    not apply to a row: the mixed model has no adjusted R²) is a gap labelled "n/a" at zero, so
    it is seen, not silently absent. Each bar has its own slot (row ``i``, column ``j`` at
    ``i + (j − (m − 1)/2)·w``, ``w = 0.8/m``), and its value label sits in that slot beyond
    the bar's end (right of a positive bar, left of a negative one), in a text trace of its
    own, so no label lies on another bar or label; the axis keeps room for the labels."""
    fig = go.Figure()
    columns = [c for c in table.columns if c != "specification"]
    looks = style.series_styles([c.split(" ")[0].lower() for c in columns], "source")
    names = [style.plain_text(s) for s in table["specification"]]
    width = LADDER_BAR_SPAN / max(1, len(columns))
    numbers = table[columns].apply(pd.to_numeric, errors="coerce") if columns else pd.DataFrame()
    for j, column in enumerate(columns):
        values = numbers[column]
        y = np.arange(len(table)) + (j - (len(columns) - 1) / 2) * width
        look = looks[column.split(" ")[0].lower()]
        if "adj" in column.lower():  # a source's adjusted R² beside its R²: same colour, hatched
            look = style.Style(look.colour, look.symbol, look.dash, look.pattern or "/")
        drawn = values.notna().to_numpy()
        fig.add_trace(go.Bar(y=y[drawn], x=values[drawn], name=style.plain_text(column), orientation="h", width=width,
                             marker=style.bar_marker(look), legendgroup=column,
                             customdata=np.array(names, dtype=object)[drawn],
                             hovertemplate="%{customdata}: %{x:.1f}%<extra>" + style.plain_text(column) + "</extra>"))
        fig.add_trace(go.Scatter(
            y=y, x=values.fillna(0.0), mode="text", text=[ladder_label(v) for v in values],
            textposition=["middle left" if v < 0 else "middle right" for v in values.fillna(0.0)],
            textfont=dict(size=LADDER_LABEL_SIZE, color="#222"), cliponaxis=False, showlegend=False,
            legendgroup=column, name=f"{style.plain_text(column)} (value labels)", hoverinfo="skip"))
    finite = numbers.to_numpy(dtype=float)[np.isfinite(numbers.to_numpy(dtype=float))] if columns else np.array([])
    low = min(0.0, float(finite.min())) if len(finite) else 0.0
    high = max(0.0, float(finite.max())) if len(finite) else 100.0
    span = (high - low) or 100.0
    ceiling = 100.0  # R² and adjusted R² are at most 100%
    x_range = [low - (LADDER_LABEL_ROOM * span if low < 0 else 0.0), min(ceiling, high + LADDER_LABEL_ROOM * span)]
    _layout(fig, title, height=style.height_for_legend(130 + 30 * len(table) * max(1, len(columns)), columns),
            margin=dict(l=60, r=70, t=20, b=20))  # room right of the plot for a label near 100%
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(table))), ticktext=names, autorange=False,
                     range=[len(table) - 0.5, -0.5], zeroline=False)
    fig.update_xaxes(range=x_range, autorange=False, zeroline=True, zerolinecolor="#444", zerolinewidth=1,
                     title=dict(text=_ladder_axis_title(columns, low < 0)))
    return fig


def _ladder_axis_title(columns, negative: bool) -> str:
    adjusted = [c for c in columns if "adj" in c.lower()]
    what = ("adjusted R²" if len(adjusted) == len(columns) else "R² and adjusted R²") if adjusted else "R²"
    # short enough for a 450 px chart; the note on negatives only where adjusted R² is alone
    return f"{what} (%)" + (", < 0: worse than the mean" if negative and what == "adjusted R²" else "")


SUBPLOT_TITLE_WIDTH = 24  # characters per line of a side-by-side title (two fit side by side in the 564-px chart at 1024 px)
PROGRESS_SCALE = "Viridis"  # sequential, perceptually uniform, readable with colour-vision deficiencies
PROGRESS_TITLE = "progress<br>(first turn 0,<br>last turn 1)"


def path_progress(turns: pd.Series) -> np.ndarray:
    """Position of each turn within its own conversation, 0 (first) to 1 (last), so paths of
    different lengths share one colour scale."""
    order = np.argsort(np.argsort(turns.to_numpy(), kind="stable"), kind="stable").astype(float)
    return order / (len(order) - 1) if len(order) > 1 else np.zeros(len(order))


def shared_range(values: pd.Series, pad: float = 0.06) -> list[float]:
    low, high = float(values.min()), float(values.max())
    margin = (high - low) * pad or 1.0
    return [low - margin, high + margin]


def _path_styles(conversation_ids) -> dict[str, style.Style]:
    """One look per drawn path, in the palette's order (paths are not levels of a factor)."""
    ids = [str(c) for c in dict.fromkeys(conversation_ids)]
    colours = {cid: palette.SEQUENCE[i % len(palette.SEQUENCE)] for i, cid in enumerate(ids)}
    return style._distinct_marks(ids, colours)


# the paths chart in a 1024 px window: about this many pixels of plot area (the figure is 564 px
# wide there, less the y axis and the colour bar); the start/end texts are placed for it
PATHS_PLOT_WIDTH = 340
MARK_FONT = 13  # the figure's font size: Plotly writes a trace's text in it
MARK_OFFSET = 9  # pixels from a mark's centre to its text (half the 16-px marker, and one)


def _add_path(fig: go.Figure, path: pd.DataFrame, name: str, look: style.Style, *, show_scale: bool,
              show_marks_legend: bool, marks=None, row=None, col=None) -> None:
    where = {} if row is None else {"row": row, "col": col}
    hover = [f"turn {t} ({100 * p:.0f}% through)<br>{style.plain_text(s)}: {style.plain_text(_short(x))}" for t, p, s, x in zip(
        path["turn"], path_progress(path["turn"]), path.get("speaker", [""] * len(path)),
        path.get("text", [""] * len(path)))]
    fig.add_trace(go.Scatter(
        x=path["x"], y=path["y"], mode="lines+markers", name=style.plain_text(name), legendgroup=name,
        line=style.line(look, width=2),
        marker=dict(color=path_progress(path["turn"]), colorscale=PROGRESS_SCALE, cmin=0, cmax=1, size=9,
                    line=dict(color="#333", width=0.5), showscale=show_scale,
                    colorbar=dict(title=dict(text=PROGRESS_TITLE), x=1.02, xanchor="left", len=0.75, y=0.5)),
        text=hover, hovertemplate="%{text}<extra></extra>"), **where)
    for label, index, symbol, text, position in marks if marks is not None else _end_marks(path):
        fig.add_trace(go.Scatter(
            x=[path["x"].iloc[index]], y=[path["y"].iloc[index]], mode="markers+text",
            text=[text], textposition=position, name=label, legendgroup=label,
            showlegend=show_marks_legend, cliponaxis=False,
            marker=dict(symbol=symbol, size=16, color="#111", line=dict(width=2, color="#111")),
            hovertext=[f"{label} of {style.plain_text(name)}"], hoverinfo="text"), **where)


def _end_marks(path: pd.DataFrame) -> list[tuple[str, int, str, str, str]]:
    """``(name, row, symbol, text, text position)`` of a path's start and end marks. The higher
    of the two points has its text above it, the lower one below (their texts are then apart by
    at least the two markers, however short the path); a path whose start and end are one point
    (one turn, or a return to the first place) writes one text, "start = end", above it, where
    both marks are drawn."""
    (x0, y0), (x1, y1) = path[["x", "y"]].iloc[0], path[["x", "y"]].iloc[-1]
    if len(path) == 1 or (x0 == x1 and y0 == y1):
        return [("start", 0, "circle-open", "start = end", "top center"), ("end", -1, "x", "", "top center")]
    start_above = y0 >= y1
    return [("start", 0, "circle-open", "start", "top center" if start_above else "bottom center"),
            ("end", -1, "x", "end", "bottom center" if start_above else "top center")]


def path_marks(paths: list[pd.DataFrame], x_range, y_range, width: float = PATHS_PLOT_WIDTH,
               height: float = 400) -> list[list[tuple[str, int, str, str, str]]]:
    """``_end_marks`` of each path, with the texts of different paths kept apart: path by path,
    each text goes where ``_end_marks`` puts it, or to the other side of its mark when that
    meets a text already written (boxes estimated at ``width`` × ``height`` pixels of plot
    showing ``x_range`` × ``y_range``; a text is as wide as ``label_layout.text_box`` says);
    a text with no free side is left out: its mark keeps its symbol, which the legend names,
    and its hover. Above and below keep a text's centre over its mark, so texts apart at
    ``width`` stay apart on a wider plot."""
    from dashboard.figures.label_layout import text_box

    (x0, x1), (y0, y1) = x_range, y_range
    written: list[tuple[float, float, float, float]] = []
    out = []
    for path in paths:
        marks = []
        for label, index, symbol, text, position in _end_marks(path):
            if not text:
                marks.append((label, index, symbol, text, position))
                continue
            px = (float(path["x"].iloc[index]) - x0) / (x1 - x0) * width
            py = (y1 - float(path["y"].iloc[index])) / (y1 - y0) * height
            w, h = text_box([text], MARK_FONT)
            chosen = None
            for side in (position, "bottom center" if position == "top center" else "top center"):
                top = py - MARK_OFFSET - h if side == "top center" else py + MARK_OFFSET
                box = (px - w / 2, top, px + w / 2, top + h)
                if all(box[2] <= b[0] or b[2] <= box[0] or box[3] <= b[1] or b[3] <= box[1] for b in written):
                    chosen = side
                    written.append(box)
                    break
            marks.append((label, index, symbol, text if chosen else "", chosen or position))
        out.append(marks)
    return out


def _legend_below(fig: go.Figure) -> None:
    """Legend under the plot (``style.LEGEND_BELOW``), colour bar to the right: they never
    overlap (also in PNG exports)."""
    fig.update_layout(legend=style.LEGEND_BELOW, margin=dict(r=110))


def trajectory_paths(points: pd.DataFrame, conversation_ids: list[str], title: str = "Trajectories",
                     background: bool = True, background_points: pd.DataFrame | None = None) -> go.Figure:
    """Chosen conversations as ordered paths in a 2-D map (paper A, Figure 4).

    ``points`` has ``conversation_id, turn, x, y`` and optionally ``speaker, text``. Markers are
    coloured by progress through their own conversation (0 = first turn, 1 = last: one
    sequential scale fits every path length); start and end are marked. The grey background is
    ``background_points`` when given (the map's drawn sample), else every point; paths are
    always drawn from ``points`` in full.
    """
    fig = go.Figure()
    behind = points if background_points is None else background_points
    if background and len(behind):
        fig.add_trace(go.Scattergl(x=behind["x"], y=behind["y"], mode="markers",
                                   name="all turns" if background_points is None else "drawn turns",
                                   marker=dict(color="#d0d4dc", size=4), hoverinfo="skip"))
    looks = _path_styles(conversation_ids)
    paths = {cid: points[points["conversation_id"] == cid].sort_values("turn") for cid in conversation_ids}
    paths = {cid: path for cid, path in paths.items() if not path.empty}
    everything = pd.concat([points[["x", "y"]], behind[["x", "y"]]]) if len(points) else behind
    # fixed ranges (room above and below for the marks' texts), so the texts' places hold
    x_range, y_range = (shared_range(everything["x"]), shared_range(everything["y"], pad=0.12)) \
        if len(everything) else ([0, 1], [0, 1])
    height = style.height_for_legend(560, [_short(c, 40) for c in conversation_ids] + ["start", "end"])
    marks = path_marks(list(paths.values()), x_range, y_range, height=height - 220)
    for drawn, (cid, path) in enumerate(paths.items()):
        _add_path(fig, path, _short(cid, 40), looks[str(cid)], marks=marks[drawn],
                  show_scale=drawn == 0, show_marks_legend=drawn == 0)
    _layout(fig, title, xaxis_title="dimension 1", yaxis_title="dimension 2", height=height)
    fig.update_xaxes(range=x_range, autorange=False)
    fig.update_yaxes(range=y_range, autorange=False)
    _legend_below(fig)
    return fig


def trajectory_pair(points: pd.DataFrame, left: str, right: str, title: str = "Two conversations") -> go.Figure:
    """Two conversations side by side on the SAME axes (shared x and y ranges), one colour bar."""
    chosen = points[points["conversation_id"].isin([left, right])]
    if chosen.empty:
        return empty_figure("no turns for these conversations")
    fig = make_subplots(rows=1, cols=2, shared_xaxes=True, shared_yaxes=True, horizontal_spacing=0.05,
                        subplot_titles=[style.wrap_title(style.plain_text(_short(left, 60)), SUBPLOT_TITLE_WIDTH),
                                        style.wrap_title(style.plain_text(_short(right, 60)), SUBPLOT_TITLE_WIDTH)])
    for annotation in fig.layout.annotations:
        annotation.font = dict(size=12)
    looks = _path_styles([left, right])
    for col, cid in enumerate((left, right), start=1):
        path = points[points["conversation_id"] == cid].sort_values("turn")
        if path.empty:
            continue
        _add_path(fig, path, _short(cid, 40), looks[str(cid)], show_scale=col == 1,
                  show_marks_legend=col == 1, row=1, col=col)
    x_range, y_range = shared_range(chosen["x"]), shared_range(chosen["y"], pad=0.14)  # room for start/end
    # at most 3 ticks on each half's x axis: at 1024 px a half is about 135 px wide, and more
    # ticks are turned on their side into each other
    fig.update_xaxes(range=x_range, title="dimension 1", nticks=3)
    fig.update_yaxes(range=y_range)
    fig.update_yaxes(title="dimension 2", row=1, col=1)
    _layout(fig, title, height=560)
    _legend_below(fig)
    fig.update_layout(margin=dict(t=110))  # room for two-line subplot titles under the title
    return fig


def trajectory_with_interventions(points: pd.DataFrame, marks: pd.DataFrame, title: str = "",
                                  *, axis_label: str = "dimension", label_turns: bool = False,
                                  height: int = 460) -> go.Figure:
    """Discussion trajectories with the steered moderator's interventions marked.

    ``points``: ``conversation_id, turn, x, y`` (``turn`` 0-based within its session) and
    optionally ``speaker, text``; one path per session, coloured by session (palette order of
    first appearance). ``marks``: ``conversation_id, turn, x, y, rule`` and optionally
    ``reason``: a star at the turn after which the intervention fired, the rule in the hover.
    Every text from the data is escaped (Plotly renders a subset of HTML in labels).
    """
    fig = go.Figure()
    sessions = list(dict.fromkeys(points["conversation_id"])) if len(points) else []
    looks = _path_styles(sessions)
    for cid in sessions:
        path = points[points["conversation_id"] == cid].sort_values("turn")
        speakers = path["speaker"] if "speaker" in path else pd.Series("", index=path.index)
        texts = path["text"] if "text" in path else pd.Series("", index=path.index)
        hover = [f"{style.plain_text(_short(cid, 60))}<br>turn {int(t) + 1}" + (f" · {style.plain_text(s)}: {style.plain_text(_short(x))}"
                                                                      if s or x else "")
                 for t, s, x in zip(path["turn"], speakers.fillna(""), texts.fillna(""))]
        fig.add_trace(go.Scatter(
            x=path["x"], y=path["y"], mode="lines+markers+text" if label_turns else "lines+markers",
            name=style.plain_text(_short(cid, 40)), line=style.line(looks[str(cid)], width=1.5),
            marker=style.marker(looks[str(cid)], size=8), text=[str(int(t) + 1) for t in path["turn"]] if label_turns else None,
            textposition="top center", hovertext=hover, hoverinfo="text"))
    if len(marks):
        reasons = marks["reason"] if "reason" in marks else pd.Series("", index=marks.index)
        hover = [f"{style.plain_text(_short(cid, 60))}<br>intervention: {style.plain_text(rule)} ({style.plain_text(reason)}) "
                 f"after turn {int(turn) + 1}"
                 for cid, rule, reason, turn in zip(marks["conversation_id"], marks["rule"], reasons, marks["turn"])]
        fig.add_trace(go.Scatter(
            x=marks["x"], y=marks["y"], mode="markers", name="intervention (after this turn)",
            marker=dict(symbol="star", size=16, color=palette.BLACK, line=dict(width=1, color="#fff")),
            hovertext=hover, hoverinfo="text"))
    _layout(fig, title, height=style.height_for_legend(height, [_short(c, 40) for c in sessions]),
            xaxis_title=f"{axis_label} 1", yaxis_title=f"{axis_label} 2")
    _legend_below(fig)
    return fig


def _short(text, limit: int = 140) -> str:
    text = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_condition(levels) -> bool:
    """True when the levels are conditions (``engine.protocols.conditions`` labels) or method names:
    they are drawn by code, with a key."""
    from engine.protocols.registry import is_method

    levels = [str(v) for v in levels]
    return bool(levels) and all(codes.parse(v).team_size is not None or "[" in v or is_method(v)
                                for v in levels)


def scatter_map(points: pd.DataFrame, colour: str, title: str, hover: str = "conversation_id") -> go.Figure:
    """2-D scatter of ``x, y`` coloured by a category (conversation maps, inter-session PCA).
    Conditions (``colour="method"`` with condition labels) are named by their codes."""
    fig = go.Figure()
    levels = [str(v) for v in sorted(points[colour].astype(str).unique())] if len(points) else []
    coded = colour in ("method", "condition") and _is_condition(levels)
    if coded:
        names, looks = style.condition_styles(levels)
    else:
        names, looks = {v: v for v in levels}, style.series_styles(levels, colour)
    for level, part in points.groupby(points[colour].astype(str)):
        fig.add_trace(go.Scattergl(x=part["x"], y=part["y"], mode="markers", name=style.plain_text(names[level]),
                                   marker=style.marker(looks[level], size=7, opacity=0.75),
                                   text=part[hover].map(style.plain_text) if hover in part else None,
                                   hovertemplate="%{text}<extra>" + style.plain_text(level) + "</extra>"))
    _layout(fig, title, xaxis_title="PC 1", yaxis_title="PC 2",
            height=style.height_for_legend(480, names.values()))
    return _key(fig, levels) if coded else fig


def diversity_bars(table: pd.DataFrame, metric: str, title: str | None = None, x: str = "method") -> go.Figure:
    """``metric`` by condition or method (bars, named by code) per ``task`` (colour): the mean
    over the cell's diversity groups, error bars ±1 SD across those groups
    (``<metric>_sd``, ``engine.measures.diversity``: population SD), drawn only for cells with
    at least ``MIN_GROUPS_FOR_INTERVAL`` (3) groups (``n_groups``): below that the bar is the
    value alone and its hover says why. The axis stays inside the score's range (Vendi from 1,
    Div-BLEU 0–1)."""
    if table.empty:
        return empty_figure("no diversity values")
    fig = go.Figure()
    labels = [str(v) for v in dict.fromkeys(table[x])]
    mapping = codes.codes(labels)
    tasks = [str(t) for t in sorted(table["task"].astype(str).unique())]
    looks = style.series_styles(tasks, "task")
    order = sorted(labels, key=lambda v: mapping[v])
    sd_column = f"{metric}_sd"
    groups = table["n_groups"] if "n_groups" in table else pd.Series(np.nan, index=table.index)
    sd = table[sd_column] if sd_column in table else pd.Series(np.nan, index=table.index)
    with_sd = error_bars.drawn(table[metric], table[metric] - sd, table[metric] + sd, groups)
    for task, part in table.assign(_sd=sd, _groups=groups, _with_sd=with_sd).groupby(table["task"].astype(str)):
        for piece, has_bar in error_bars.split(part, part["_with_sd"]):
            spread = [f"±{v:.3f} (1 SD across {int(n)} groups)" if has_bar else error_bars.too_few(
                "no" if pd.isna(n) else int(n)) for v, n in zip(piece["_sd"], piece["_groups"])]
            fig.add_trace(go.Bar(
                x=piece[x].astype(str).map(mapping), y=piece[metric], name=style.plain_text(task), offsetgroup=task,
                legendgroup=task, showlegend=has_bar or not part["_with_sd"].any(),
                marker=style.bar_marker(looks[task]),
                customdata=np.stack([piece[x].astype(str).map(style.plain_text), spread], axis=1),
                hovertemplate="%{customdata[0]}<br>mean %{y:.3f}, %{customdata[1]}<extra>" + style.plain_text(task) + "</extra>",
                error_y=dict(type="data", array=piece["_sd"]) if has_bar else None))
    # the error bars' line goes under the category axis: a second line on the rotated value axis
    # would narrow the plot and crowd the condition codes
    _layout(fig, title or f"{metric} by method and task", barmode="group",
            xaxis_title=error_bars.axis_title("condition (code, see key)", error_bars.SD_SHORT),
            height=style.height_for_legend(420, tasks))
    fig.update_xaxes(categoryorder="array", categoryarray=[mapping[v] for v in order])
    score = style.score_of(metric)
    top = table[metric] + sd.where(with_sd, 0.0)
    if score is not None:
        style.score_axis(fig, "y", score, [style.SCORES[score].low or 0], top)
    error_bars.describe(fig, error_bars.SD_ACROSS_GROUPS)
    return _key(fig, labels)


METRIC_NAMES = {"vendi": "Vendi Score", "div_bleu": "Div-BLEU", "score": "rubric score"}


def rounds_lines(table: pd.DataFrame, metric: str, title: str | None = None) -> go.Figure:
    """Intra-session ``metric`` across debate rounds, one line per method or condition (mean
    over sessions), named by code."""
    if table.empty:
        return empty_figure("no per-round responses")
    means = table.groupby(["method", "round"])[metric].mean().reset_index()
    labels = [str(v) for v in sorted(means["method"].astype(str).unique())]
    names, looks = style.condition_styles(labels)
    fig = go.Figure()
    for method, part in means.groupby(means["method"].astype(str)):
        look = looks[method]
        fig.add_trace(go.Scatter(x=part["round"], y=part[metric], mode="lines+markers", name=style.plain_text(names[method]),
                                 line=style.line(look, width=2), marker=style.marker(look, size=8),
                                 hovertemplate="round %{x}: %{y:.3f}<extra>" + style.plain_text(method) + "</extra>"))
    _layout(fig, title or f"Intra-session {METRIC_NAMES.get(metric, metric)} across rounds", xaxis_title="round",
            yaxis_title=metric, height=style.height_for_legend(400, names.values()))
    fig.update_xaxes(dtick=1)
    score = style.score_of(metric)
    if score is not None:
        style.score_axis(fig, "y", score, means[metric])
    return _key(fig, labels)


def quality_diversity_scatter(summary: pd.DataFrame, diversity: str, label: str, pareto=None) -> go.Figure:
    """Paper B, section 6: each condition's rubric score (1–10) against its diversity, 95%
    intervals both ways, each point labelled by its code; ``pareto`` (a boolean Series on
    ``summary``) draws the frontier. ``summary``: ``condition``, ``rubric``, ``rubric_lo``,
    ``rubric_hi``, ``<diversity>``, ``<diversity>_lo``, ``<diversity>_hi`` (``groups`` and
    ``rubric_n``: how many groups and sessions each rests on). The intervals are
    ``engine.stats.guards.mean_interval``'s (Student-t on the logit within the score's range);
    a side without one (fewer than 3 groups or sessions) has no bar, its hover says why."""
    points = summary.dropna(subset=["rubric", diversity])
    if points.empty:
        return empty_figure("no condition has both a quality and a diversity value")
    labels = [str(v) for v in points["condition"]]
    names, looks = style.condition_styles(labels)
    score = style.score_of(diversity) or "vendi"
    x_range = style.score_range(score, points[diversity], points[f"{diversity}_lo"], points[f"{diversity}_hi"])
    alone = style.isolated(points[diversity], points["rubric"], x_span=x_range, y_span=(1.0, 10.0),
                           distance=0.12)
    fig = go.Figure()
    for (_, row), labelled in zip(points.iterrows(), alone):
        look = looks[str(row["condition"])]
        x_bar = bool(error_bars.drawn([row[diversity]], [row[f"{diversity}_lo"]], [row[f"{diversity}_hi"]])[0])
        y_bar = bool(error_bars.drawn([row["rubric"]], [row["rubric_lo"]], [row["rubric_hi"]])[0])
        spread = [_qd_spread(label, row[diversity], row[f"{diversity}_lo"], row[f"{diversity}_hi"], x_bar,
                             row.get("groups"), "groups"),
                  _qd_spread("rubric", row["rubric"], row["rubric_lo"], row["rubric_hi"], y_bar,
                             row.get("rubric_n"), "sessions")]
        fig.add_trace(go.Scatter(
            x=[row[diversity]], y=[row["rubric"]], mode="markers+text" if labelled else "markers",
            name=style.plain_text(names[str(row["condition"])]),
            text=[style.plain_text(names[str(row["condition"])])] if labelled else None, textposition="top right",
            textfont=dict(size=11),
            marker=style.marker(look, size=12, line=dict(width=1, color="#fff")),
            customdata=[[style.plain_text(row["condition"]), *spread]],
            hovertemplate="%{customdata[0]}<br>%{customdata[1]}<br>%{customdata[2]}<extra></extra>",
            error_x=dict(**error_bars.asymmetric([row[diversity]], [row[f"{diversity}_lo"]], [row[f"{diversity}_hi"]]),
                         color=look.colour, thickness=1) if x_bar else None,
            error_y=dict(**error_bars.asymmetric([row["rubric"]], [row["rubric_lo"]], [row["rubric_hi"]]),
                         color=look.colour, thickness=1) if y_bar else None))
    if pareto is not None:
        frontier = points[pareto.reindex(points.index).fillna(False).astype(bool)].sort_values(diversity)
        fig.add_trace(go.Scatter(x=frontier[diversity], y=frontier["rubric"], mode="lines",
                                 name="Pareto frontier", line=dict(color="black", dash="dot")))
    _layout(fig, f"Rubric score vs {label} (95% CIs)", height=style.height_for_legend(460, names.values()))
    short = f"95% logit-t interval (≥ {guards.MIN_GROUPS_FOR_INTERVAL})"
    style.score_axis(fig, "x", score, points[diversity], points[f"{diversity}_lo"], points[f"{diversity}_hi"],
                     title=error_bars.axis_title(f"{label} ({'≥ 1' if score == 'vendi' else '0–1'})", short + " groups"))
    style.score_axis(fig, "y", "rubric", points["rubric"],
                     title=error_bars.axis_title(style.SCORES["rubric"].axis_title, short + " sessions"))
    error_bars.describe(fig, f"95% intervals of the mean, {label} over the diversity groups and rubric over the "
                             f"sessions: {guards.METHOD_LOGIT_T}; not drawn below {guards.MIN_GROUPS_FOR_INTERVAL} "
                             "groups or sessions")
    return _key(fig, labels)


def _qd_spread(name: str, value, low, high, has_bar: bool, n, unit: str) -> str:
    """One line of a quality–diversity point's hover: the value with its interval, or why none."""
    if has_bar:
        return f"{name} {value:.3f}, 95% interval [{low:.3f}, {high:.3f}] over {int(n)} {unit}" if pd.notna(n) \
            else f"{name} {value:.3f}, 95% interval [{low:.3f}, {high:.3f}]"
    if pd.notna(n) and n < guards.MIN_GROUPS_FOR_INTERVAL:
        return f"{name} {value:.3f}, {error_bars.too_few(int(n), unit)}"
    return f"{name} {value:.3f}, no interval"

