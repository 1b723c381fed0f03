"""The Trajectories page's exploration map, drawn the way corpus maps are explored in Nomic
Atlas, BERTopic's document map and Apple's Embedding Atlas: click a point to read it, lasso or
box to select many, cluster names written on the map where the clusters are, one distinct
look per category (``dashboard.figures.style``).

* ``turn_map``: every drawn turn as a point; ``customdata`` is its ``point_id`` (a selection
  maps back to its rows); a short excerpt on hover (the reader shows the whole turn); cluster
  labels as text at each cluster's median position; search hits ringed. Drag pans and the
  wheel zooms, so a click selects one point (Streamlit turns clicks into selections only
  outside the lasso and box modes, which stay one click away in the toolbar).
* ``paths_on_density``: chosen conversations as paths (``charts.trajectory_paths``) over a
  grey density image of the drawn turns (one heatmap of ``DENSITY_BINS``², whatever the
  number of turns) instead of a second scatter of every turn.

Up to ``SVG_LIMIT`` points are drawn as SVG; WebGL (``Scattergl``) only above, since every
WebGL plot costs a context of its own, slow to make in software rendering. A map of more turns
than the page draws (``aggregate``: every turn) puts them all in one image under the drawn
points (``dashboard.figures.raster``, shaded by the same colour), so millions of turns cost the
browser one picture.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd
import plotly.colors as pc
import plotly.graph_objects as go

from dashboard.figures import raster, style

SVG_LIMIT = 5_000
HOVER_CHARS = 280  # characters of a turn on hover; the reader has the whole text
DENSITY_BINS = 60
PROGRESS_SCALE = "Viridis"
MAP_HEIGHT = 620
UI_REVISION = "trajectories-map"  # keeps the user's zoom and pan across reruns




def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def excerpt(text, limit: int = HOVER_CHARS, width: int = 80) -> str:
    """The first ``limit`` characters of a turn, escaped and wrapped every ``width`` characters,
    with "… (click to read it all)" when cut."""
    text = "" if _missing(text) else " ".join(str(text).split())
    cut = len(text) > limit
    text = text[: limit - 1] + "…" if cut else text
    lines = [style.plain_text(line) for line in textwrap.wrap(text, width)] or [""]
    if cut:
        lines.append("<i>(click to read it all)</i>")
    return "<br>".join(lines)


def hover_texts(points: pd.DataFrame) -> list[str]:
    """``<b>conversation</b> · turn t · speaker`` and an excerpt, one per point."""
    speakers = points["speaker"] if "speaker" in points else pd.Series("", index=points.index)
    texts = points["text"] if "text" in points else pd.Series("", index=points.index)
    return [f"<b>{style.plain_text(c)}</b> · turn {t} · {style.plain_text('' if _missing(s) else s)}<br>{excerpt(x)}"
            for c, t, s, x in zip(points["conversation_id"], points["turn"], speakers, texts)]


def _scatter(n_points: int):
    return go.Scatter if n_points <= SVG_LIMIT else go.Scattergl


def cluster_centres(points: pd.DataFrame, column: str = "cluster") -> pd.DataFrame:
    """``label, x, y, n`` per cluster: the median position of its drawn points (a label sits
    inside its cluster even when the cluster is not round), largest cluster first."""
    rows = points.dropna(subset=[column]).groupby(column).agg(x=("x", "median"), y=("y", "median"),
                                                              n=("x", "size"))
    return rows.reset_index().rename(columns={column: "label"}).sort_values("n", ascending=False,
                                                                               kind="stable")


def _label_text(label: str, width: int = 28) -> str:
    return "<br>".join(style.plain_text(line) for line in textwrap.wrap(str(label), width)[:3])


def _levels(frame: pd.DataFrame, colour: str) -> pd.Series:
    return frame[colour].astype(object).where(frame[colour].notna(), "(none)").astype(str)


def _level_codes(frame: pd.DataFrame, colour: str) -> tuple[np.ndarray, list[str]]:
    """``(codes, levels)``: the sorted level names ``_levels`` gives and each row's index into
    them, by one factorisation (``_levels`` on millions of rows takes seconds)."""
    codes, uniques = pd.factorize(frame[colour], use_na_sentinel=True)
    names = [str(u) for u in uniques] + ["(none)"]
    levels = sorted(set(names[i] for i in np.unique(np.where(codes < 0, len(uniques), codes))))
    position = {level: i for i, level in enumerate(levels)}
    lookup = np.array([position.get(name, -1) for name in names])
    return lookup[np.where(codes < 0, len(uniques), codes)], levels


def image_of(aggregate: pd.DataFrame, colour: str, coded: tuple[np.ndarray, list[str]] | None = None) -> raster.Raster:
    """Every turn of ``aggregate`` shaded by ``colour`` as ``turn_map`` colours its points:
    the mean on ``PROGRESS_SCALE`` for a number, the categories' colours mixed otherwise
    (``coded``: ``_level_codes`` of ``aggregate`` when the caller has it already)."""
    x, y = aggregate["x"].to_numpy(float), aggregate["y"].to_numpy(float)
    if pd.api.types.is_numeric_dtype(aggregate[colour]):
        values = aggregate[colour].to_numpy(float)
        finite = values[np.isfinite(values)]
        span = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
        return raster.shade_values(x, y, values, list(getattr(pc.sequential, PROGRESS_SCALE)), span)
    codes, levels = coded if coded is not None else _level_codes(aggregate, colour)
    looks = style.series_styles(levels, colour)
    return raster.shade_categories(x, y, codes, [looks[level].colour for level in levels])


def turn_map(points: pd.DataFrame, colour: str, title: str, *, hits: pd.Series | None = None,
             cluster_column: str | None = None, height: int = MAP_HEIGHT,
             aggregate: pd.DataFrame | None = None) -> go.Figure:
    """The map (see the module docstring). ``points`` (the drawn turns) has ``conversation_id,
    turn, x, y, point_id`` and optionally ``speaker, text`` and the ``colour`` column;
    ``cluster_column`` names the cluster labels to write on the map; ``aggregate`` (every
    turn, when more than the drawn ones) goes into an image under the points, and then the
    colours, the colour bar's range and the cluster labels' places come from every turn."""
    fig = go.Figure()
    trace = _scatter(len(points))
    points = points.assign(_hover=hover_texts(points))
    every = aggregate if aggregate is not None and len(aggregate) > len(points) else None
    whole = points if every is None else every
    numeric = colour in points and pd.api.types.is_numeric_dtype(points[colour])
    coded = None  # the categories of every turn, for the legend and the image alike
    if numeric:
        from dashboard.figures.labels import readable_term

        span = {}
        if every is not None and every[colour].notna().any():
            span = dict(cmin=float(every[colour].min()), cmax=float(every[colour].max()))
        fig.add_trace(trace(
            x=points["x"], y=points["y"], mode="markers", name=readable_term(colour), customdata=points["point_id"],
            marker=dict(color=points[colour], colorscale=PROGRESS_SCALE, size=7, opacity=0.85, showscale=True,
                        colorbar=dict(title=dict(text=readable_term(colour)), x=1.02, xanchor="left"), **span),
            text=points["_hover"], hovertemplate="%{text}<extra></extra>", showlegend=False))
    else:
        values = _levels(points, colour)
        coded = _level_codes(whole, colour)
        levels = coded[1]  # a level only in the image keeps its legend entry
        looks = style.series_styles(levels, colour)
        for level in levels:
            part = points[values == level]
            fig.add_trace(trace(
                x=part["x"] if len(part) else [None], y=part["y"] if len(part) else [None], mode="markers",
                name=style.plain_text(level), customdata=part["point_id"], marker=style.marker(looks[level], size=7, opacity=0.85),
                text=part["_hover"], hovertemplate="%{text}<extra></extra>"))
    if hits is not None and hits.any():
        found = points[hits.to_numpy()]
        fig.add_trace(_scatter(len(found))(
            x=found["x"], y=found["y"], mode="markers", name=f"search hits ({len(found):,})",
            customdata=found["point_id"], marker=dict(size=13, color="rgba(0,0,0,0)", symbol="circle-open",
                                                      line=dict(color="#d55e00", width=2)),
            text=found["_hover"], hovertemplate="%{text}<extra></extra>"))
    if cluster_column and cluster_column in whole:
        for row in cluster_centres(whole, cluster_column).itertuples():
            fig.add_annotation(x=row.x, y=row.y, text=_label_text(row.label), showarrow=False,
                               font=dict(size=12, color="#111"), bgcolor="rgba(255,255,255,0.78)",
                               bordercolor="#555", borderwidth=1, borderpad=3, name="cluster label")
    style.finish(fig, title, height=height, xaxis_title="dimension 1", yaxis_title="dimension 2",
                 dragmode="pan", clickmode="event+select", hovermode="closest", uirevision=UI_REVISION)
    if every is not None:
        image = image_of(every, colour, coded)
        fig.add_layout_image(image.layout_image())
        fig.update_xaxes(range=list(image.x_range))
        fig.update_yaxes(range=list(image.y_range))
    # fixed margins: with automargin Plotly draws every point again for each margin it grows
    fig.update_xaxes(automargin=False)
    fig.update_yaxes(automargin=False)
    fig.update_layout(legend=style.LEGEND_BELOW, title_automargin=False,
                      margin=dict(l=70, r=120, t=60, b=70 + 22 * min(6, style.n_legend_rows(
                          [t.name for t in fig.data if t.showlegend is not False], 900))))
    return fig


def density(points: pd.DataFrame, bins: int = DENSITY_BINS, name: str = "drawn turns (density)") -> go.Heatmap:
    """A grey image of how many turns fall in each of ``bins`` x ``bins`` cells (empty cells
    transparent): the map's shape at a fixed cost, whatever the number of turns."""
    x, y = points["x"].to_numpy(float), points["y"].to_numpy(float)
    counts, x_edges, y_edges = np.histogram2d(x, y, bins=bins)
    z = np.where(counts.T > 0, np.log1p(counts.T), np.nan)
    return go.Heatmap(z=z, x=(x_edges[:-1] + x_edges[1:]) / 2, y=(y_edges[:-1] + y_edges[1:]) / 2,
                      colorscale=[[0, "#eceef2"], [1, "#9aa1ad"]], showscale=False, hoverinfo="skip",
                      name=name, showlegend=False)


def paths_on_density(points: pd.DataFrame, conversation_ids: list[str], background_points: pd.DataFrame,
                     title: str) -> go.Figure:
    """``charts.trajectory_paths`` of the chosen conversations over ``density`` of
    ``background_points`` (the page passes every turn: a density costs the same for any number)."""
    from dashboard.figures.charts import trajectory_paths

    paths = trajectory_paths(points, conversation_ids, title=title, background=False)
    if not len(background_points):
        return paths
    name = "every turn (density)" if len(background_points) >= len(points) else "drawn turns (density)"
    return go.Figure(data=[density(background_points, name=name), *paths.data], layout=paths.layout)
