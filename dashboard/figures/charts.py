"""Plotly figures of the dashboard, as plain functions of tables (no Streamlit here).

Each function takes a DataFrame and returns a ``plotly.graph_objects.Figure`` whose data
can be read back in tests (``fig.data[i].z``, ``.x``, ``.y``). Categorical colours come from
``dashboard.figures.palette`` only, so a method, discussion, model, task or source has the same colour
in every chart and export.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.figures import palette
from engine.stats.published_a import FEATURE_LABELS

SOURCE_COLOURS = palette.SOURCE
SEQUENCE = palette.SEQUENCE  # the palette's order, for levels without a fixed colour
TEMPLATE = "plotly_white"


def _label(name: str) -> str:
    from dashboard.figures.labels import readable_term

    return FEATURE_LABELS.get(name) or readable_term(name)


def _plain(value) -> str:
    """Data text (a model's reply, a task or model name) for a Plotly label or hover:
    Plotly renders a subset of HTML there (links included), so ``<``, ``>`` and ``&`` are
    written as entities, which it shows as the characters themselves."""
    return html.escape(str(value), quote=False)


def _colour(key, kind: str | None = None) -> str:
    return palette.colour(key, kind)


def _layout(fig: go.Figure, title: str, **extra) -> go.Figure:
    fig.update_layout(title=title, template=TEMPLATE, margin=dict(l=60, r=20, t=60, b=50), **extra)
    return fig


def empty_figure(message: str) -> go.Figure:
    """A blank figure carrying a message (used when the data does not support a chart)."""
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return _layout(fig, "")


def distributions_by_group(frame: pd.DataFrame, columns: list[str], group: str = "source",
                           title: str = "Distributions by group", n_cols: int = 3) -> go.Figure:
    """One box plot per column, one box per group, the mean drawn as a dashed line."""
    columns = [c for c in columns if c in frame.columns]
    if not columns or frame.empty:
        return empty_figure("no data for these columns")
    n_rows = math.ceil(len(columns) / n_cols)
    fig = make_subplots(rows=n_rows, cols=min(n_cols, len(columns)),
                        subplot_titles=[_label(c) for c in columns], vertical_spacing=0.12)
    groups = sorted(frame[group].dropna().astype(str).unique())
    for position, column in enumerate(columns):
        row, col = divmod(position, n_cols)
        for g_index, value in enumerate(groups):
            values = frame.loc[frame[group].astype(str) == value, column].dropna()
            fig.add_trace(go.Box(y=values, name=_plain(value), boxmean=True, legendgroup=value,
                                 marker_color=_colour(value, group), showlegend=position == 0),
                          row=row + 1, col=col + 1)
    return _layout(fig, title, height=max(320, 280 * n_rows))


def effect_size_forest(table: pd.DataFrame, title: str = "Cohen's d (95% CI)", value: str = "d",
                       x_title: str = "Cohen's d") -> go.Figure:
    """Forest plot of ``value`` (default ``d``) with ``ci_low``/``ci_high`` per ``feature``."""
    if table.empty:
        return empty_figure("no effect sizes")
    ordered = table.sort_values(value)
    fig = go.Figure(go.Scatter(
        x=ordered[value], y=[_label(f) for f in ordered["feature"]], mode="markers",
        marker=dict(color=SOURCE_COLOURS["llm"], size=9),
        error_x=dict(type="data", symmetric=False, array=ordered["ci_high"] - ordered[value],
                     arrayminus=ordered[value] - ordered["ci_low"])))
    fig.add_vline(x=0, line_dash="dot", line_color="#888")
    return _layout(fig, title, xaxis_title=x_title, height=60 + 36 * len(ordered))


def novelty_usefulness_scatter(frame: pd.DataFrame, group: str = "source") -> go.Figure:
    """Novelty against usefulness of each final idea, coloured by group."""
    if not {"novelty", "usefulness"} <= set(frame.columns):
        return empty_figure("no novelty/usefulness ratings")
    fig = go.Figure()
    for position, (value, part) in enumerate(frame.dropna(subset=["novelty", "usefulness"]).groupby(group)):
        fig.add_trace(go.Scatter(x=part["novelty"], y=part["usefulness"], mode="markers",
                                 name=_plain(value), marker=dict(color=_colour(value, group),
                                                              size=6, opacity=0.6)))
    return _layout(fig, "Novelty vs usefulness", xaxis_title="novelty", yaxis_title="usefulness")


def top_share_bar(table: pd.DataFrame, group: str = "group", title: str = "Share of the top 5%") -> go.Figure:
    """Bars of ``share_of_top`` per group (``engine.stats.top_share`` output, one level)."""
    if table.empty:
        return empty_figure("no ratings")
    fig = go.Figure(go.Bar(x=table[group].map(_plain), y=table["share_of_top"] * 100,
                           marker_color=[_colour(v) for v in table[group]],
                           text=[f"{v:.1f}%" for v in table["share_of_top"] * 100]))
    return _layout(fig, title, yaxis_title="% of the pooled top ideas")


def group_means_with_ci(frame: pd.DataFrame, value: str, x: str, colour: str,
                        title: str | None = None) -> go.Figure:
    """Mean of ``value`` per ``x`` × ``colour`` with 95% normal CIs (features by model ×
    discussion, as paper A's design analyses)."""
    data = frame.dropna(subset=[value, x, colour])
    if data.empty:
        return empty_figure(f"no data for {value}")
    stats = data.groupby([colour, x])[value].agg(["mean", "std", "count"]).reset_index()
    stats["half"] = 1.96 * stats["std"].fillna(0) / np.sqrt(stats["count"])
    fig = go.Figure()
    for position, (level, part) in enumerate(stats.groupby(colour)):
        fig.add_trace(go.Bar(x=part[x].map(_plain), y=part["mean"], name=_plain(level),
                             marker_color=_colour(level, colour),
                             error_y=dict(type="data", array=part["half"]),
                             customdata=part["count"],
                             hovertemplate="%{x}: %{y:.3f} (n=%{customdata})<extra>" + _plain(level) + "</extra>"))
    return _layout(fig, title or f"{_label(value)} by {x} × {colour}", barmode="group",
                   yaxis_title=_label(value), xaxis_title=x)


def percent_heatmap(table: pd.DataFrame, title: str, colorscale: str = "Blues",
                    zmax: float | None = None) -> go.Figure:
    """Heatmap of a features × specifications table given in percent, values printed."""
    z = table.to_numpy(dtype=float)
    fig = go.Figure(go.Heatmap(
        z=z, x=list(table.columns), y=[_label(str(i)) for i in table.index], colorscale=colorscale,
        zmin=0, zmax=zmax if zmax is not None else float(np.nanmax(z)) if np.isfinite(z).any() else 1,
        text=[[f"{v:.1f}" for v in row] for row in z], texttemplate="%{text}",
        hovertemplate="%{y} / %{x}: %{z:.1f}%<extra></extra>", colorbar=dict(title="R² %")))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, title, height=80 + 34 * len(table))


def coefficient_plot(tables: dict[str, pd.DataFrame], title: str = "Standardized coefficients (95% CI)",
                     terms: list[str] | None = None) -> go.Figure:
    """Coefficients with CIs of two (or more) samples side by side, as Figure 3a.

    Each table has ``term, coef, ci_low, ci_high``; ``terms`` picks and orders the rows.
    """
    fig = go.Figure()
    n = len(tables)
    for position, (label, table) in enumerate(tables.items()):
        part = table if terms is None else table.set_index("term").reindex(terms).reset_index()
        offset = (position - (n - 1) / 2) * 0.25
        y = np.arange(len(part)) + offset
        fig.add_trace(go.Scatter(
            x=part["coef"], y=y, mode="markers", name=label,
            marker=dict(size=9, color=_colour(label.lower(), "source")),
            error_x=dict(type="data", symmetric=False, array=part["ci_high"] - part["coef"],
                         arrayminus=part["coef"] - part["ci_low"]),
            customdata=part["term"], hovertemplate="%{customdata}: %{x:.3f}<extra>" + label + "</extra>"))
    labels = terms if terms is not None else (list(next(iter(tables.values()))["term"]) if tables else [])
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(labels))),
                     ticktext=[_label(t) for t in labels], autorange="reversed")
    fig.add_vline(x=0, line_dash="dot", line_color="#888")
    return _layout(fig, title, xaxis_title="coefficient", height=120 + 34 * len(labels))


def r2_ladder(table: pd.DataFrame, title: str = "Variance explained by specification") -> go.Figure:
    """Grouped bars: ``specification`` rows, one bar per remaining column (values in %)."""
    fig = go.Figure()
    for position, column in enumerate(c for c in table.columns if c != "specification"):
        fig.add_trace(go.Bar(x=table["specification"], y=table[column], name=column,
                             marker_color=_colour(column.split(" ")[0].lower(), "source"),
                             text=[None if pd.isna(v) else f"{v:.1f}%" for v in table[column]]))
    return _layout(fig, title, barmode="group", yaxis_title="R² (%)")


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


def _add_path(fig: go.Figure, path: pd.DataFrame, name: str, line_colour: str, *, show_scale: bool,
              show_marks_legend: bool, row=None, col=None) -> None:
    where = {} if row is None else {"row": row, "col": col}
    hover = [f"turn {t} ({100 * p:.0f}% through)<br>{_plain(s)}: {_plain(_short(x))}" for t, p, s, x in zip(
        path["turn"], path_progress(path["turn"]), path.get("speaker", [""] * len(path)),
        path.get("text", [""] * len(path)))]
    fig.add_trace(go.Scatter(
        x=path["x"], y=path["y"], mode="lines+markers", name=_plain(name), legendgroup=name,
        line=dict(color=line_colour, width=1.5),
        marker=dict(color=path_progress(path["turn"]), colorscale=PROGRESS_SCALE, cmin=0, cmax=1, size=9,
                    line=dict(color="#333", width=0.5), showscale=show_scale,
                    colorbar=dict(title=dict(text=PROGRESS_TITLE), x=1.02, xanchor="left", len=0.75, y=0.5)),
        text=hover, hovertemplate="%{text}<extra></extra>"), **where)
    for label, index, symbol in (("start", 0, "circle-open"), ("end", -1, "x")):
        fig.add_trace(go.Scatter(
            x=[path["x"].iloc[index]], y=[path["y"].iloc[index]], mode="markers+text",
            text=[label], textposition="top center", name=label, legendgroup=label,
            showlegend=show_marks_legend,
            marker=dict(symbol=symbol, size=16, color="#111", line=dict(width=2, color="#111")),
            hoverinfo="skip"), **where)


def _legend_below(fig: go.Figure) -> None:
    """Legend under the plot, colour bar to the right: they never overlap (also in PNG exports)."""
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.18, xanchor="left", x=0),
                      margin=dict(l=60, r=110, t=70, b=110))


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
    drawn = 0
    for position, cid in enumerate(conversation_ids):
        path = points[points["conversation_id"] == cid].sort_values("turn")
        if path.empty:
            continue
        _add_path(fig, path, _short(cid, 40), palette.SEQUENCE[position % len(palette.SEQUENCE)],
                  show_scale=drawn == 0, show_marks_legend=drawn == 0)
        drawn += 1
    _layout(fig, title, xaxis_title="dimension 1", yaxis_title="dimension 2")
    _legend_below(fig)
    return fig


def trajectory_pair(points: pd.DataFrame, left: str, right: str, title: str = "Two conversations") -> go.Figure:
    """Two conversations side by side on the SAME axes (shared x and y ranges), one colour bar."""
    chosen = points[points["conversation_id"].isin([left, right])]
    if chosen.empty:
        return empty_figure("no turns for these conversations")
    fig = make_subplots(rows=1, cols=2, shared_xaxes=True, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[_plain(_short(left, 50)), _plain(_short(right, 50))])
    for col, cid in enumerate((left, right), start=1):
        path = points[points["conversation_id"] == cid].sort_values("turn")
        if path.empty:
            continue
        _add_path(fig, path, _short(cid, 40), palette.SEQUENCE[col - 1], show_scale=col == 1,
                  show_marks_legend=col == 1, row=1, col=col)
    x_range, y_range = shared_range(chosen["x"]), shared_range(chosen["y"])
    fig.update_xaxes(range=x_range, title="dimension 1")
    fig.update_yaxes(range=y_range)
    fig.update_yaxes(title="dimension 2", row=1, col=1)
    _layout(fig, title, height=520)
    _legend_below(fig)
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
    for position, cid in enumerate(sessions):
        path = points[points["conversation_id"] == cid].sort_values("turn")
        speakers = path["speaker"] if "speaker" in path else pd.Series("", index=path.index)
        texts = path["text"] if "text" in path else pd.Series("", index=path.index)
        hover = [f"{_plain(_short(cid, 60))}<br>turn {int(t) + 1}" + (f" · {_plain(s)}: {_plain(_short(x))}"
                                                                      if s or x else "")
                 for t, s, x in zip(path["turn"], speakers.fillna(""), texts.fillna(""))]
        fig.add_trace(go.Scatter(
            x=path["x"], y=path["y"], mode="lines+markers+text" if label_turns else "lines+markers",
            name=_plain(_short(cid, 40)), line=dict(color=SEQUENCE[position % len(SEQUENCE)], width=1.5),
            marker=dict(size=8), text=[str(int(t) + 1) for t in path["turn"]] if label_turns else None,
            textposition="top center", hovertext=hover, hoverinfo="text"))
    if len(marks):
        reasons = marks["reason"] if "reason" in marks else pd.Series("", index=marks.index)
        hover = [f"{_plain(_short(cid, 60))}<br>intervention: {_plain(rule)} ({_plain(reason)}) "
                 f"after turn {int(turn) + 1}"
                 for cid, rule, reason, turn in zip(marks["conversation_id"], marks["rule"], reasons, marks["turn"])]
        fig.add_trace(go.Scatter(
            x=marks["x"], y=marks["y"], mode="markers", name="intervention (after this turn)",
            marker=dict(symbol="star", size=16, color=palette.BLACK, line=dict(width=1, color="#fff")),
            hovertext=hover, hoverinfo="text"))
    _layout(fig, title, height=height, xaxis_title=f"{axis_label} 1", yaxis_title=f"{axis_label} 2")
    _legend_below(fig)
    return fig


def _short(text, limit: int = 140) -> str:
    text = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def scatter_map(points: pd.DataFrame, colour: str, title: str, hover: str = "conversation_id") -> go.Figure:
    """2-D scatter of ``x, y`` coloured by a category (conversation maps, inter-session PCA)."""
    fig = go.Figure()
    for position, (level, part) in enumerate(points.groupby(colour)):
        fig.add_trace(go.Scattergl(x=part["x"], y=part["y"], mode="markers", name=_plain(level),
                                   marker=dict(color=_colour(level, colour), size=6, opacity=0.7),
                                   text=part[hover].map(_plain) if hover in part else None,
                                   hovertemplate="%{text}<extra>" + _plain(level) + "</extra>"))
    return _layout(fig, title, xaxis_title="PC 1", yaxis_title="PC 2")


def diversity_bars(table: pd.DataFrame, metric: str, title: str | None = None) -> go.Figure:
    """``metric`` by ``method`` (bars) per ``task`` (colour), error bars = SD across groups."""
    if table.empty:
        return empty_figure("no diversity values")
    fig = go.Figure()
    for position, (task, part) in enumerate(table.groupby("task")):
        sd = part.get(f"{metric}_sd")
        fig.add_trace(go.Bar(x=part["method"].map(_plain), y=part[metric], name=_plain(task),
                             marker_color=_colour(task, "task"),
                             error_y=None if sd is None else dict(type="data", array=sd.fillna(0))))
    return _layout(fig, title or f"{metric} by method and task", barmode="group", yaxis_title=metric)


def rounds_lines(table: pd.DataFrame, metric: str, title: str | None = None) -> go.Figure:
    """Intra-session ``metric`` across debate rounds, one line per method (mean over sessions)."""
    if table.empty:
        return empty_figure("no per-round responses")
    means = table.groupby(["method", "round"])[metric].mean().reset_index()
    fig = go.Figure()
    for position, (method, part) in enumerate(means.groupby("method")):
        fig.add_trace(go.Scatter(x=part["round"], y=part[metric], mode="lines+markers", name=_plain(method),
                                 line=dict(color=_colour(method, "method"))))
    return _layout(fig, title or f"Intra-session {metric} across rounds", xaxis_title="round",
                   yaxis_title=metric)


def diagnosis_positions(evidence: pd.DataFrame, title: str = "Where the pilot sits in the reference") -> go.Figure:
    """Each feature's pilot position as a percentile rank within the reference distribution.

    ``evidence`` is ``engine.diagnose``'s table (``feature, percentile, pilot_mean,
    reference_p10/p50/p90, flag, creativity_direction``). Bands: the reference's 10th-90th
    and 25th-75th percentiles; tick: its median; dot: the pilot's mean percentile rank.
    """
    if evidence.empty:
        return empty_figure("no feature could be placed")
    labels = [_label(f) for f in evidence["feature"]]
    fig = go.Figure()
    fig.add_trace(go.Bar(y=labels, x=[80] * len(labels), base=[10] * len(labels), orientation="h",
                         marker_color="#e3e7ee", name="reference 10th-90th pct", hoverinfo="skip"))
    fig.add_trace(go.Bar(y=labels, x=[50] * len(labels), base=[25] * len(labels), orientation="h",
                         marker_color="#c3cad6", name="reference 25th-75th pct", hoverinfo="skip"))
    fig.add_trace(go.Scatter(y=labels, x=[50] * len(labels), mode="markers", name="reference median",
                             marker=dict(symbol="line-ns-open", size=18, color="#555"),
                             customdata=evidence["reference_p50"],
                             hovertemplate="reference median %{customdata:.3f}<extra></extra>"))
    direction = evidence.get("creativity_direction", pd.Series(0, index=evidence.index))
    wanted = direction.map({1: "higher goes with creativity (Table 23)", -1: "lower goes with creativity (Table 23)"}
                           ).fillna("no significant Table 23 coefficient")
    flagged = evidence["flag"].astype(str).isin(["low", "high"])  # not "typical", "not compared", "not assessed"
    fig.add_trace(go.Scatter(
        y=labels, x=evidence["percentile"], mode="markers", name="pilot (mean percentile rank)",
        marker=dict(size=13, color=np.where(flagged, "#d55e00", "#0072b2"), line=dict(color="white", width=1)),
        customdata=np.stack([evidence["pilot_mean"], evidence["flag"].astype(str), wanted], axis=1),
        hovertemplate="pilot mean %{customdata[0]:.3f}, percentile %{x:.0f} (%{customdata[1]})"
                      "<br>%{customdata[2]}<extra></extra>"))
    fig.update_xaxes(range=[0, 100], title="percentile rank within the reference", dtick=10)
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, title, barmode="overlay", height=120 + 36 * len(labels),
                   legend=dict(orientation="h", y=-0.25))


def _wrap(text, width: int = 90, limit: int = 4000) -> str:
    """Full turn text for a hover box: escaped, wrapped every ``width`` characters."""
    import textwrap

    text = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return "<br>".join(_plain(line) for line in textwrap.wrap(text, width) or [""])


def turn_map(points: pd.DataFrame, colour: str, title: str, *, hits: pd.Series | None = None) -> go.Figure:
    """Every turn as a point of the 2-D map, coloured by ``colour`` (a category: one trace per
    level in the palette's colours; a number: one sequential colour scale), the full turn text
    on hover, search hits ringed. ``customdata`` is each point's ``point_id`` so a selection
    event maps back to its rows. Lasso is the default drag."""
    fig = go.Figure()
    hover = [f"<b>{_plain(c)}</b> · turn {t} · {_plain(s)}<br>{_wrap(x)}" for c, t, s, x in zip(
        points["conversation_id"], points["turn"], points.get("speaker", [""] * len(points)),
        points.get("text", [""] * len(points)))]
    points = points.assign(_hover=hover)
    numeric = colour in points and pd.api.types.is_numeric_dtype(points[colour])
    if numeric:
        fig.add_trace(go.Scattergl(
            x=points["x"], y=points["y"], mode="markers", name=_label(colour), customdata=points["point_id"],
            marker=dict(color=points[colour], colorscale=PROGRESS_SCALE, size=6, opacity=0.8, showscale=True,
                        colorbar=dict(title=dict(text=_label(colour)), x=1.02, xanchor="left")),
            text=points["_hover"], hovertemplate="%{text}<extra></extra>"))
    else:
        values = points[colour].astype(object).where(points[colour].notna(), "(none)").astype(str)
        for level in sorted(values.unique()):
            part = points[values == level]
            fig.add_trace(go.Scattergl(
                x=part["x"], y=part["y"], mode="markers", name=_plain(level), customdata=part["point_id"],
                marker=dict(color=_colour(level, colour), size=6, opacity=0.8),
                text=part["_hover"], hovertemplate="%{text}<extra></extra>"))
    if hits is not None and hits.any():
        found = points[hits.to_numpy()]
        fig.add_trace(go.Scattergl(
            x=found["x"], y=found["y"], mode="markers", name=f"search hits ({len(found):,})",
            customdata=found["point_id"], marker=dict(size=12, color="rgba(0,0,0,0)",
                                                      line=dict(color="#d55e00", width=2)),
            text=found["_hover"], hovertemplate="%{text}<extra></extra>"))
    _layout(fig, title, xaxis_title="dimension 1", yaxis_title="dimension 2", height=620, dragmode="lasso",
            hoverlabel=dict(align="left"))
    _legend_below(fig)
    return fig
