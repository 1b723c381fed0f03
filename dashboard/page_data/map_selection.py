"""A map selection resolved on the server: the box and lasso a user drew on the Trajectories
map, as Streamlit reports them (``PlotlySelectionState.box`` and ``.lasso``: the shapes'
corners in data coordinates), applied to every turn, including those aggregated into the
map's image rather than drawn as points (``dashboard.figures.raster``)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _field(container, name):
    try:
        return container[name]
    except (KeyError, TypeError, IndexError):
        return getattr(container, name, None)


def regions(event) -> list[np.ndarray]:
    """The event's boxes and lassos as polygons, each an ``(m, 2)`` array of ``x, y`` corners
    (a box as its four corners). Shapes without at least 3 finite corners are left out."""
    selection = _field(event, "selection")
    shapes = []
    for box in _field(selection, "box") or []:
        xs, ys = _field(box, "x") or [], _field(box, "y") or []
        if len(xs) >= 2 and len(ys) >= 2:
            (x0, x1), (y0, y1) = xs[:2], ys[:2]
            shapes.append(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], float))
    for lasso in _field(selection, "lasso") or []:
        xs, ys = _field(lasso, "x") or [], _field(lasso, "y") or []
        if len(xs) == len(ys) and len(xs) >= 3:
            shapes.append(np.column_stack([np.asarray(xs, float), np.asarray(ys, float)]))
    return [s for s in shapes if np.isfinite(s).all() and len(s) >= 3]


def inside_polygon(x: np.ndarray, y: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Which points lie inside ``polygon`` (even-odd rule: a horizontal ray from the point
    crosses its edges an odd number of times). Only points in the polygon's bounding box are
    tested, sorted by y, so that each edge looks only at the points in its own band of y (a
    slice): about two edges per point for a round lasso, whatever its number of corners."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    inside = np.zeros(len(x), dtype=bool)
    (x_low, y_low), (x_high, y_high) = polygon.min(axis=0), polygon.max(axis=0)
    candidates = np.flatnonzero((x >= x_low) & (x <= x_high) & (y >= y_low) & (y <= y_high))
    if not len(candidates):
        return inside
    order = np.argsort(y[candidates], kind="stable")
    candidates = candidates[order]
    px, py = x[candidates], y[candidates]
    odd = np.zeros(len(candidates), dtype=bool)
    for (x1, y1), (x2, y2) in zip(polygon, np.roll(polygon, -1, axis=0)):
        if y1 == y2:
            continue  # a horizontal edge never crosses a horizontal ray
        # the ray at height p crosses the edge when min(y1, y2) <= p < max(y1, y2)
        start, stop = np.searchsorted(py, [min(y1, y2), max(y1, y2)], side="left")
        band_y = py[start:stop]
        crossing_x = x1 + (band_y - y1) * (x2 - x1) / (y2 - y1)
        odd[start:stop] ^= px[start:stop] < crossing_x
    inside[candidates] = odd
    return inside


def in_regions(points: pd.DataFrame, shapes: list[np.ndarray]) -> pd.DataFrame:
    """The rows of ``points`` (columns ``x, y``) inside any of ``shapes``, in their order."""
    if not shapes or points.empty:
        return points.iloc[0:0]
    x, y = points["x"].to_numpy(float), points["y"].to_numpy(float)
    chosen = np.zeros(len(points), dtype=bool)
    for shape in shapes:
        chosen |= inside_polygon(x, y, shape)
    return points[chosen]
