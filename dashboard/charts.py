"""Plotly figures of the dashboard, as plain functions of tables (no Streamlit here).

Each function takes a DataFrame and returns a ``plotly.graph_objects.Figure`` whose data
can be read back in tests (``fig.data[i].z``, ``.x``, ``.y``). Colours: LLM blue and human
purple as in paper A's Figure 3a.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.published import FEATURE_LABELS

SOURCE_COLOURS = {"llm": "#3b5ba5", "human": "#8e44ad"}
SEQUENCE = ("#3b5ba5", "#8e44ad", "#e07b39", "#2a9d8f", "#c0392b", "#7f8c8d", "#f1c40f")
TEMPLATE = "plotly_white"


def _label(name: str) -> str:
    return FEATURE_LABELS.get(name, name.replace("_", " ").capitalize())


def _plain(value) -> str:
    """Data text (a model's reply, a task or model name) for a Plotly label or hover:
    Plotly renders a subset of HTML there (links included), so ``<``, ``>`` and ``&`` are
    written as entities, which it shows as the characters themselves."""
    return html.escape(str(value), quote=False)


def _colour(key, position: int) -> str:
    return SOURCE_COLOURS.get(str(key), SEQUENCE[position % len(SEQUENCE)])


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
                                 marker_color=_colour(value, g_index), showlegend=position == 0),
                          row=row + 1, col=col + 1)
    return _layout(fig, title, height=max(320, 280 * n_rows))


def effect_size_forest(table: pd.DataFrame, title: str = "Cohen's d (95% CI)") -> go.Figure:
    """Forest plot of ``d`` with ``ci_low``/``ci_high`` per ``feature``."""
    if table.empty:
        return empty_figure("no effect sizes")
    ordered = table.sort_values("d")
    fig = go.Figure(go.Scatter(
        x=ordered["d"], y=[_label(f) for f in ordered["feature"]], mode="markers",
        marker=dict(color=SOURCE_COLOURS["llm"], size=9),
        error_x=dict(type="data", symmetric=False, array=ordered["ci_high"] - ordered["d"],
                     arrayminus=ordered["d"] - ordered["ci_low"])))
    fig.add_vline(x=0, line_dash="dot", line_color="#888")
    return _layout(fig, title, xaxis_title="Cohen's d", height=60 + 36 * len(ordered))


def novelty_usefulness_scatter(frame: pd.DataFrame, group: str = "source") -> go.Figure:
    """Novelty against usefulness of each final idea, coloured by group."""
    if not {"novelty", "usefulness"} <= set(frame.columns):
        return empty_figure("no novelty/usefulness ratings")
    fig = go.Figure()
    for position, (value, part) in enumerate(frame.dropna(subset=["novelty", "usefulness"]).groupby(group)):
        fig.add_trace(go.Scatter(x=part["novelty"], y=part["usefulness"], mode="markers",
                                 name=_plain(value), marker=dict(color=_colour(value, position),
                                                              size=6, opacity=0.6)))
    return _layout(fig, "Novelty vs usefulness", xaxis_title="novelty", yaxis_title="usefulness")


def top_share_bar(table: pd.DataFrame, group: str = "group", title: str = "Share of the top 5%") -> go.Figure:
    """Bars of ``share_of_top`` per group (``engine.stats.top_share`` output, one level)."""
    if table.empty:
        return empty_figure("no ratings")
    fig = go.Figure(go.Bar(x=table[group].map(_plain), y=table["share_of_top"] * 100,
                           marker_color=[_colour(v, i) for i, v in enumerate(table[group])],
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
                             marker_color=_colour(level, position),
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
            marker=dict(size=9, color=_colour(label.lower(), position)),
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
                             marker_color=_colour(column.split(" ")[0].lower(), position),
                             text=[None if pd.isna(v) else f"{v:.1f}%" for v in table[column]]))
    return _layout(fig, title, barmode="group", yaxis_title="R² (%)")


def trajectory_paths(points: pd.DataFrame, conversation_ids: list[str], title: str = "Trajectories",
                     background: bool = True) -> go.Figure:
    """Chosen conversations as ordered paths in a 2-D map, markers coloured by turn.

    ``points`` has ``conversation_id, turn, x, y`` and optionally ``speaker, text``.
    """
    fig = go.Figure()
    if background and len(points):
        fig.add_trace(go.Scattergl(x=points["x"], y=points["y"], mode="markers", name="all turns",
                                   marker=dict(color="#d0d4dc", size=4), hoverinfo="skip"))
    for position, cid in enumerate(conversation_ids):
        path = points[points["conversation_id"] == cid].sort_values("turn")
        if path.empty:
            continue
        hover = [f"turn {t}<br>{_plain(s)}: {_plain(_short(x))}" for t, s, x in zip(
            path["turn"], path.get("speaker", [""] * len(path)), path.get("text", [""] * len(path)))]
        fig.add_trace(go.Scatter(
            x=path["x"], y=path["y"], mode="lines+markers", name=_plain(_short(cid, 40)),
            line=dict(color=SEQUENCE[position % len(SEQUENCE)], width=1),
            marker=dict(color=path["turn"], colorscale="RdBu_r", size=9, showscale=position == 0,
                        colorbar=dict(title="turn")),
            text=hover, hovertemplate="%{text}<extra></extra>"))
    return _layout(fig, title, xaxis_title="dimension 1", yaxis_title="dimension 2")


def _short(text, limit: int = 140) -> str:
    text = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def scatter_map(points: pd.DataFrame, colour: str, title: str, hover: str = "conversation_id") -> go.Figure:
    """2-D scatter of ``x, y`` coloured by a category (conversation maps, inter-session PCA)."""
    fig = go.Figure()
    for position, (level, part) in enumerate(points.groupby(colour)):
        fig.add_trace(go.Scattergl(x=part["x"], y=part["y"], mode="markers", name=_plain(level),
                                   marker=dict(color=_colour(level, position), size=6, opacity=0.7),
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
                             marker_color=SEQUENCE[position % len(SEQUENCE)],
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
                                 line=dict(color=SEQUENCE[position % len(SEQUENCE)])))
    return _layout(fig, title or f"Intra-session {metric} across rounds", xaxis_title="round",
                   yaxis_title=metric)
