"""Where the cluster names of a map go: no two names overlap, none sits on its own cluster's
dense core, each joined to its cluster by a leader line, and the smallest clusters' names left
off (and counted) when the map has no room for them. This is how corpus maps such as
datamapplot and Apple's Embedding Atlas write theirs (names pushed off the points, lines back to
the clusters, fewer names when crowded); the placement here is our own, a greedy search that
needs nothing but the boxes:

1. every cluster's centre and dense core (a rectangle in data coordinates, e.g. the middle half
   of its points on each axis) go to pixels of a plot of ``width`` × ``height``;
2. clusters are taken largest first; for each, candidate places for its name's box are tried
   on rings around its centre (``DIRECTIONS`` directions, each starting where the box just
   clears the core), and a place is allowed only inside the plot, clear of its own core and
   at least ``GAP`` pixels from every name already placed;
3. among the allowed places the cheapest wins: the leader line's length, plus a penalty for
   covering another cluster's core or centre and for a leader line crossing a placed name; the
   first of equal costs in the fixed order of candidates wins (deterministic);
4. a cluster with no allowed place has its name left off; ``Layout.left_off`` counts them.

The names' boxes are estimated (``text_box``: characters × the font's size, on the generous
side) and are fixed in pixels, while the places are returned in data coordinates (a Plotly
annotation with ``axref="x"``/``ayref="y"``): on a plot wider than ``width`` the places move
apart with the data and the boxes keep their size, so names that do not overlap at ``width``
never overlap wider. Pure functions of their arguments (numpy only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

GAP = 6.0  # pixels kept free between two names and between a name and the plot's edge
CORE_PAD = 5.0  # pixels around a core (a point's marker reaches this far beyond its centre)
DIRECTIONS = 16  # directions tried around a centre, starting straight up, clockwise
RING_STEP = 14.0  # pixels between two rings of candidates
MAX_RINGS = 24
CHAR_WIDTH = 0.64  # a character's width in font sizes (wide for a sans-serif's lowercase)
LINE_HEIGHT = 1.3  # a line's height in font sizes
BOX_PAD = 10.0  # pixels a box adds to its text (border and padding on both sides)
COVER_PENALTY = 400.0  # cost of covering another cluster's core entirely (in pixels of leader line)
CENTRE_PENALTY = 600.0  # cost of covering another cluster's centre
CROSS_PENALTY = 120.0  # cost of a leader line crossing a placed name's box


@dataclass(frozen=True)
class Cluster:
    """One cluster to name: its centre and core in data coordinates, its size (larger clusters
    are named first) and its name's box in pixels."""

    name: str
    x: float
    y: float
    n: int
    core: tuple[float, float, float, float]  # x_low, x_high, y_low, y_high
    box: tuple[float, float]  # width, height in pixels


@dataclass(frozen=True)
class Placement:
    """A placed name: its box's centre in data coordinates and its box in plot pixels
    (``left, top, right, bottom``, y downwards)."""

    name: str
    x: float
    y: float
    label_x: float
    label_y: float
    pixels: tuple[float, float, float, float]


@dataclass(frozen=True)
class Layout:
    placed: tuple[Placement, ...]
    left_off: tuple[str, ...]  # names with no room, smallest clusters first

    @property
    def n_left_off(self) -> int:
        return len(self.left_off)


def text_box(text_lines: list[str], font_px: float = 12.0) -> tuple[float, float]:
    """``(width, height)`` in pixels of a name written on ``text_lines`` in a box (estimated on
    the generous side: ``CHAR_WIDTH`` font sizes a character)."""
    longest = max((len(line) for line in text_lines), default=0)
    return (longest * CHAR_WIDTH * font_px + BOX_PAD, max(1, len(text_lines)) * LINE_HEIGHT * font_px + BOX_PAD)


class _Plot:
    """Data coordinates to the pixels of a plot area (x rightwards, y downwards)."""

    def __init__(self, x_range, y_range, width: float, height: float):
        self.x0, self.x1 = (float(v) for v in x_range)
        self.y0, self.y1 = (float(v) for v in y_range)
        self.width, self.height = float(width), float(height)
        if not (self.x1 > self.x0 and self.y1 > self.y0 and self.width > 0 and self.height > 0):
            raise ValueError("a plot needs increasing ranges and a positive size")

    def px(self, x):
        return (np.asarray(x, float) - self.x0) / (self.x1 - self.x0) * self.width

    def py(self, y):
        return (self.y1 - np.asarray(y, float)) / (self.y1 - self.y0) * self.height

    def data_x(self, px: float) -> float:
        return self.x0 + px / self.width * (self.x1 - self.x0)

    def data_y(self, py: float) -> float:
        return self.y1 - py / self.height * (self.y1 - self.y0)

    def core(self, core) -> np.ndarray:
        """A core rectangle in pixels (``left, top, right, bottom``), ``CORE_PAD`` wider."""
        x_low, x_high, y_low, y_high = core
        return np.array([self.px(x_low) - CORE_PAD, self.py(y_high) - CORE_PAD,
                         self.px(x_high) + CORE_PAD, self.py(y_low) + CORE_PAD])


def _overlap(boxes: np.ndarray, other: np.ndarray, gap: float = 0.0) -> np.ndarray:
    """Per box of ``boxes`` (n×4) and rectangle of ``other`` (m×4): True when they come closer
    than ``gap`` on both axes (n×m)."""
    if not len(other):
        return np.zeros((len(boxes), 0), bool)
    b, o = boxes[:, None, :], other[None, :, :]
    return ((b[..., 0] < o[..., 2] + gap) & (o[..., 0] < b[..., 2] + gap)
            & (b[..., 1] < o[..., 3] + gap) & (o[..., 1] < b[..., 3] + gap))


def _covered_share(boxes: np.ndarray, rects: np.ndarray) -> np.ndarray:
    """Per box and rectangle: the share of the rectangle's area the box covers (n×m)."""
    if not len(rects):
        return np.zeros((len(boxes), 0))
    b, r = boxes[:, None, :], rects[None, :, :]
    w = np.clip(np.minimum(b[..., 2], r[..., 2]) - np.maximum(b[..., 0], r[..., 0]), 0, None)
    h = np.clip(np.minimum(b[..., 3], r[..., 3]) - np.maximum(b[..., 1], r[..., 1]), 0, None)
    area = np.maximum((r[..., 2] - r[..., 0]) * (r[..., 3] - r[..., 1]), 1.0)
    return w * h / area


def _segment_hits_box(x0, y0, x1, y1, box) -> np.ndarray:
    """Per segment (arrays) from ``(x0, y0)`` to ``(x1, y1)``: True when it passes through
    ``box`` (``left, top, right, bottom``), by clipping the segment to the box (Liang–Barsky)."""
    dx, dy = x1 - x0, y1 - y0
    low, high = np.zeros_like(dx), np.ones_like(dx)
    ok = np.ones(dx.shape, bool)
    for p, q in ((-dx, x0 - box[0]), (dx, box[2] - x0), (-dy, y0 - box[1]), (dy, box[3] - y0)):
        parallel = np.abs(p) < 1e-12
        ok &= ~(parallel & (q < 0))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(parallel, 0.0, q / np.where(parallel, 1.0, p))
        low = np.where(~parallel & (p < 0), np.maximum(low, t), low)
        high = np.where(~parallel & (p > 0), np.minimum(high, t), high)
    return ok & (low < high)


def _clearance(half_w: float, half_h: float, core: np.ndarray, cx: float, cy: float, ux: float, uy: float) -> float:
    """The least distance along ``(ux, uy)`` from ``(cx, cy)`` at which a box of half-size
    ``half_w``, ``half_h`` centred there no longer meets ``core`` (plus ``GAP``)."""
    needs = []
    for u, low, high, c, half in ((ux, core[0], core[2], cx, half_w), (uy, core[1], core[3], cy, half_h)):
        if abs(u) < 1e-9:
            continue
        # the box's near edge passes the core's far edge on this axis
        edge = (high + half + GAP - c) / u if u > 0 else (low - half - GAP - c) / u
        needs.append(max(0.0, edge))
    return min(needs) if needs else 0.0


def _candidates(cluster: Cluster, cx: float, cy: float, core: np.ndarray) -> np.ndarray:
    """Candidate box centres (k×2, pixels) on rings around the centre, in a fixed order:
    ring by ring outwards, each ring from straight up clockwise."""
    half_w, half_h = cluster.box[0] / 2, cluster.box[1] / 2
    angles = [2 * math.pi * i / DIRECTIONS for i in range(DIRECTIONS)]
    units = [(math.sin(a), -math.cos(a)) for a in angles]  # up first, then clockwise (y down)
    starts = [_clearance(half_w, half_h, core, cx, cy, ux, uy) for ux, uy in units]
    out = []
    for ring in range(MAX_RINGS):
        for (ux, uy), start in zip(units, starts):
            distance = start + ring * RING_STEP
            out.append((cx + ux * distance, cy + uy * distance))
    return np.array(out)


def place(clusters: list[Cluster], x_range, y_range, width: float, height: float) -> Layout:
    """Place the names of ``clusters`` on a plot area of ``width`` × ``height`` pixels showing
    ``x_range`` × ``y_range`` (see the module docstring)."""
    plot = _Plot(x_range, y_range, width, height)
    order = sorted(range(len(clusters)), key=lambda i: (-clusters[i].n, i))  # largest first, stable
    centres = np.array([[float(plot.px(c.x)), float(plot.py(c.y))] for c in clusters]).reshape(-1, 2)
    cores = np.array([plot.core(c.core) for c in clusters]).reshape(-1, 4)
    centre_dots = np.concatenate([centres - CORE_PAD, centres + CORE_PAD], axis=1)
    placed_boxes: list[np.ndarray] = []
    placed: dict[int, Placement] = {}
    left_off: list[int] = []
    for i in order:
        cluster, (cx, cy) = clusters[i], centres[i]
        half_w, half_h = cluster.box[0] / 2, cluster.box[1] / 2
        points = _candidates(cluster, cx, cy, cores[i])
        boxes = np.column_stack([points[:, 0] - half_w, points[:, 1] - half_h,
                                 points[:, 0] + half_w, points[:, 1] + half_h])
        allowed = ((boxes[:, 0] >= GAP) & (boxes[:, 1] >= GAP) & (boxes[:, 2] <= width - GAP)
                   & (boxes[:, 3] <= height - GAP))
        allowed &= ~_overlap(boxes, cores[i:i + 1])[:, 0]
        others = np.array(placed_boxes).reshape(-1, 4)
        allowed &= ~_overlap(boxes, others, GAP).any(axis=1)
        if not allowed.any():
            left_off.append(i)
            continue
        boxes, points = boxes[allowed], points[allowed]
        rest = [j for j in range(len(clusters)) if j != i]
        cost = np.hypot(points[:, 0] - cx, points[:, 1] - cy)
        cost += COVER_PENALTY * _covered_share(boxes, cores[rest]).sum(axis=1)
        cost += CENTRE_PENALTY * _overlap(boxes, centre_dots[rest]).sum(axis=1)
        for other in others:  # the leader line from the box's centre to the cluster's centre
            cost += CROSS_PENALTY * _segment_hits_box(points[:, 0], points[:, 1], np.full(len(points), cx),
                                                      np.full(len(points), cy), other)
        best = int(np.argmin(cost))  # the first of equal costs: candidates are in a fixed order
        placed_boxes.append(boxes[best])
        bx, by = points[best]
        placed[i] = Placement(cluster.name, cluster.x, cluster.y, plot.data_x(float(bx)), plot.data_y(float(by)),
                              tuple(float(v) for v in boxes[best]))
    return Layout(tuple(placed[i] for i in sorted(placed, key=order.index)),
                  tuple(clusters[i].name for i in sorted(left_off, key=lambda i: (clusters[i].n, i))))
