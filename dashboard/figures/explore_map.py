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

from dashboard.figures import label_layout, raster, style

SVG_LIMIT = 5_000
HOVER_CHARS = 280  # characters of a turn on hover; the reader has the whole text
DENSITY_BINS = 60
PROGRESS_SCALE = "Viridis"
MAP_HEIGHT = 620
UI_REVISION = "trajectories-map"  # keeps the user's zoom and pan across reruns
# the map's width in a 1024 px window (measured 564 px, tests/browser/test_browser_layout.py):
# the cluster names are placed for this width; a wider map moves them apart, never together
NARROWEST_WIDTH = 560
MARGIN_LEFT = 70
MARGIN_RIGHT = 30  # categorical colours: the legend is below
MARGIN_RIGHT_SCALE = 120  # a number's colour bar on the right
AXIS_ROOM = 62  # pixels under the plot for the x tick labels and the axis title
TITLE_LINE = 20  # pixels a line of the title (or its subtitle) takes above the plot
LABEL_FONT = 12
LABEL_WRAP = 24  # characters per line of a cluster's name




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
    """``label, x, y, n, x_low, x_high, y_low, y_high`` per cluster: the median position of its
    points (a label's leader line points inside its cluster even when the cluster is not round)
    and its dense core, the middle half of its points on each axis (quartiles), largest
    cluster first."""
    grouped = points.dropna(subset=[column]).groupby(column)
    rows = grouped.agg(x=("x", "median"), y=("y", "median"), n=("x", "size"))
    low, high = grouped[["x", "y"]].quantile(0.25), grouped[["x", "y"]].quantile(0.75)
    rows = rows.assign(x_low=low["x"], x_high=high["x"], y_low=low["y"], y_high=high["y"])
    return rows.reset_index().rename(columns={column: "label"}).sort_values("n", ascending=False,
                                                                               kind="stable")


def _label_lines(label: str, width: int = LABEL_WRAP, most: int = 3) -> list[str]:
    """A cluster's name on at most ``most`` lines of ``width`` characters ("…" when cut)."""
    lines = textwrap.wrap(str(label), width) or [""]
    if len(lines) > most:
        lines = [*lines[: most - 1], textwrap.shorten(" ".join(lines[most - 1:]), width, placeholder="…")]
    return lines


def _label_text(label: str) -> str:
    return "<br>".join(style.plain_text(line) for line in _label_lines(label))


def axis_ranges(points: pd.DataFrame, pad: float = 0.05) -> tuple[list[float], list[float]]:
    """The map's x and y ranges: the points' extent and ``pad`` of it on each side (fixed, so
    the cluster names' places, computed for these ranges, hold in the browser)."""
    out = []
    for axis in ("x", "y"):
        values = points[axis].to_numpy(float)
        values = values[np.isfinite(values)]
        low, high = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
        margin = (high - low) * pad or 1.0
        out.append([low - margin, high + margin])
    return out[0], out[1]


def cluster_labels(centres: pd.DataFrame, x_range, y_range, plot_width: float, plot_height: float):
    """``label_layout.place`` of the clusters' names (``cluster_centres``) on a plot area of
    ``plot_width`` × ``plot_height`` pixels."""
    clusters = [label_layout.Cluster(str(row.label), float(row.x), float(row.y), int(row.n),
                                     (float(row.x_low), float(row.x_high), float(row.y_low), float(row.y_high)),
                                     label_layout.text_box(_label_lines(row.label), LABEL_FONT))
                for row in centres.itertuples()]
    return label_layout.place(clusters, x_range, y_range, plot_width, plot_height)


def _add_cluster_labels(fig: go.Figure, placed) -> None:
    """Each placed name in its box, a leader line from it to its cluster's centre (the
    annotation's ``x, y``; the box's centre is ``ax, ay`` in data coordinates)."""
    for p in placed:
        fig.add_annotation(x=p.x, y=p.y, ax=p.label_x, ay=p.label_y, axref="x", ayref="y", text=_label_text(p.name),
                           showarrow=True, arrowhead=0, arrowwidth=1, arrowcolor="#555", standoff=2,
                           font=dict(size=LABEL_FONT, color="#111"), bgcolor="rgba(255,255,255,0.85)",
                           bordercolor="#555", borderwidth=1, borderpad=3, name="cluster label")


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
    image = image_of(every, colour, coded) if every is not None else None
    x_range, y_range = (list(image.x_range), list(image.y_range)) if image is not None else axis_ranges(whole)
    title = style.wrap_title(title)
    right = MARGIN_RIGHT_SCALE if numeric else MARGIN_RIGHT
    plot_width = NARROWEST_WIDTH - MARGIN_LEFT - right
    left_off = ()
    if cluster_column and cluster_column in whole:
        top = TITLE_LINE * (title.count("<br>") + 2) + 20  # room for a subtitle line too
        names = cluster_labels(cluster_centres(whole, cluster_column), x_range, y_range, plot_width,
                               height - top - AXIS_ROOM)
        _add_cluster_labels(fig, names.placed)
        left_off = names.left_off
    else:
        top = TITLE_LINE * (title.count("<br>") + 1) + 20
    # fixed margins (with automargin Plotly draws every point again for each margin it grows):
    # the legend's rows at the narrowest width below the axis, the figure taller by as much, so
    # the plot area keeps its size and the legend never reaches the axis
    legend = style.legend_height([t.name for t in fig.data if t.showlegend is not False], plot_width)
    style.finish(fig, title, height=height + legend, xaxis_title="dimension 1", yaxis_title="dimension 2",
                 dragmode="pan", clickmode="event+select", hovermode="closest", uirevision=UI_REVISION)
    if left_off:
        shown = len(fig.layout.annotations)
        fig.update_layout(title_subtitle=dict(
            text=f"{shown} of {shown + len(left_off)} cluster names written on the map; {len(left_off)} left off "
                 "(no room): the smallest clusters", font=dict(size=12, color="#444")))
    fig.update_layout(meta={"cluster_labels": {"shown": len(fig.layout.annotations), "left_off": list(left_off)}})
    if image is not None:
        fig.add_layout_image(image.layout_image())
    fig.update_xaxes(range=x_range, autorange=False, automargin=False)
    fig.update_yaxes(range=y_range, autorange=False, automargin=False)
    fig.update_layout(legend=style.LEGEND_BELOW, title_automargin=False,
                      margin=dict(l=MARGIN_LEFT, r=right, t=top, b=AXIS_ROOM + legend))
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
