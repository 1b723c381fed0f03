"""Cluster names on the Trajectories map (``explore_map.turn_map``), the map's legend room
(``style.n_legend_rows``, ``style.legend_height``) and the start/end texts of short paths
(``charts.trajectory_paths``), on hand-built points."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from dashboard.figures import charts, explore_map, label_layout, style


def _points(clusters: dict[str, tuple[float, float, int]], spread: float = 0.02, seed: int = 0) -> pd.DataFrame:
    """``n`` turns around ``(x, y)`` per cluster name, on a 3 × 3 grid of step ``spread``
    (so each cluster's median is its ``(x, y)`` and its quartiles ``± spread``)."""
    rows = []
    for name, (x, y, n) in clusters.items():
        for i in range(n):
            dx, dy = (i % 3 - 1) * spread, ((i // 3) % 3 - 1) * spread
            rows.append({"conversation_id": f"{name}-{i // 4}", "turn": i % 4, "x": x + dx, "y": y + dy,
                         "cluster": name})
    frame = pd.DataFrame(rows)
    return frame.assign(point_id=np.arange(len(frame)))


def _boxes_in_pixels(fig) -> list[tuple[float, float, float, float]]:
    """Each name's box at the map's narrowest width, from the figure alone: the plot area is
    ``NARROWEST_WIDTH`` less the side margins wide and the figure's height less the top and
    bottom margins tall; a box is centred on its annotation's ``ax, ay`` and as large as
    ``label_layout.text_box`` says of its lines."""
    m = fig.layout.margin
    width, height = explore_map.NARROWEST_WIDTH - m.l - m.r, fig.layout.height - m.t - m.b
    (x0, x1), (y0, y1) = fig.layout.xaxis.range, fig.layout.yaxis.range
    out = []
    for a in fig.layout.annotations:
        w, h = label_layout.text_box([line.replace("&amp;", "&") for line in a.text.split("<br>")], 12)
        cx, cy = (a.ax - x0) / (x1 - x0) * width, (y1 - a.ay) / (y1 - y0) * height
        out.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2))
    return out


def _apart(a, b) -> bool:
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def test_names_of_clusters_on_one_spot_are_apart_and_point_at_their_medians():
    """Three clusters on one spot and two elsewhere: five names, no two boxes meeting, each
    joined by a leader line to its cluster's median (the hand-built centre)."""
    clusters = {"alpha: one, two": (0.0, 0.0, 36), "beta: three, four": (0.0, 0.0, 27),
                "gamma: five, six": (0.0, 0.0, 18), "delta: seven": (1.0, 1.0, 18), "eps: eight": (-1.0, 0.5, 9)}
    fig = explore_map.turn_map(_points(clusters), "cluster", "map", cluster_column="cluster")
    annotations = {a.text: a for a in fig.layout.annotations}
    assert len(annotations) == 5 and fig.layout.meta["cluster_labels"] == {"shown": 5, "left_off": []}
    for name, (x, y, _) in clusters.items():
        a = annotations[name]
        assert (a.x, a.y) == (pytest.approx(x), pytest.approx(y))
        assert a.showarrow and a.axref == "x" and a.ayref == "y"
        assert (a.ax, a.ay) != (pytest.approx(x), pytest.approx(y))  # the box is off the point
    for a, b in itertools.combinations(_boxes_in_pixels(fig), 2):
        assert _apart(a, b), (a, b)
    assert fig.layout.xaxis.range == pytest.approx((-1.122, 1.122))  # ±1.02 and 5% of 2.04 more
    assert fig.layout.xaxis.autorange is False


def test_a_name_does_not_cover_its_own_cluster():
    """One cluster of 18 turns around (0, 0), quartiles ± 0.02: its name's box stays off that
    core (in the figure's own coordinates)."""
    fig = explore_map.turn_map(_points({"solo: word": (0.0, 0.0, 18), "far: word": (1.0, 1.0, 9)}), "cluster",
                               "map", cluster_column="cluster")
    m = fig.layout.margin
    width, height = explore_map.NARROWEST_WIDTH - m.l - m.r, fig.layout.height - m.t - m.b
    (x0, x1), (y0, y1) = fig.layout.xaxis.range, fig.layout.yaxis.range
    core = ((-0.02 - x0) / (x1 - x0) * width, (y1 - 0.02) / (y1 - y0) * height,
            (0.02 - x0) / (x1 - x0) * width, (y1 + 0.02) / (y1 - y0) * height)
    solo = [b for b, a in zip(_boxes_in_pixels(fig), fig.layout.annotations) if a.text == "solo: word"]
    assert len(solo) == 1 and _apart(solo[0], core)


def test_a_crowded_map_writes_fewer_names_and_says_how_many_it_left_off():
    clusters = {f"{i}: keyword{i}, another{i}, third{i}": (0.0, i * 1e-3, 30 - i) for i in range(30)}
    fig = explore_map.turn_map(_points(clusters, spread=0.001), "cluster", "map", cluster_column="cluster")
    shown, left_off = len(fig.layout.annotations), fig.layout.meta["cluster_labels"]["left_off"]
    assert 0 < shown < 30 and shown + len(left_off) == 30
    assert f"{shown} of 30 cluster names written on the map; {len(left_off)} left off" in fig.layout.title.subtitle.text
    written = {a.text.replace("<br>", " ") for a in fig.layout.annotations}
    assert "0: keyword0, another0, third0" in written  # the largest cluster is named
    assert left_off[0] == "29: keyword29, another29, third29"  # the smallest is the first left off
    for a, b in itertools.combinations(_boxes_in_pixels(fig), 2):
        assert _apart(a, b)


def test_legend_rows_follow_plotlys_grid():
    """Entries are 40 px plus 0.62 × 12 px a character, 5 px apart. Two one-letter names
    (47.44 px each) fit one row of 450 px. Ten names of 20 characters (188.8 px each, 1,933 px
    in all) do not: every column is then 188.8 + 5 wide, and 2 fit in 450 + 5 (3 need
    581.4 − 5), so 5 rows. Eight names of 43 characters (359.9 px) in 460 px: one a row, 8 rows,
    8 × 22 + 12 = 188 px."""
    assert style.n_legend_rows(["a", "b"], 450) == 1
    assert style.n_legend_rows(["x" * 20] * 10, 450) == 5
    assert style.n_legend_rows([], 450) == 0
    assert style.legend_height(["y" * 43] * 8, 460) == 188


def test_the_map_leaves_its_legend_room_under_the_axis():
    """Eight cluster names of 43 characters at the narrowest plot width (560 − 70 − 30 = 460 px):
    188 px of legend under the 62 px of the axis, the figure taller by the legend."""
    clusters = {f"{i}: " + "w" * 40: (float(i), float(i % 3), 9) for i in range(8)}
    fig = explore_map.turn_map(_points(clusters), "cluster", "map")
    assert (fig.layout.margin.l, fig.layout.margin.r) == (70, 30)
    assert fig.layout.margin.b == explore_map.AXIS_ROOM + 188
    assert fig.layout.height == explore_map.MAP_HEIGHT + 188
    assert fig.layout.legend.yref == "container" and fig.layout.legend.y == 0


def _marks(fig):
    return [(t.name, t.x[0], t.y[0], t.text[0], t.textposition) for t in fig.data if t.name in ("start", "end")]


def test_a_one_turn_path_writes_start_and_end_once():
    points = pd.DataFrame({"conversation_id": ["solo"], "turn": [0], "x": [0.5], "y": [0.25]})
    fig = charts.trajectory_paths(points, ["solo"], background=False)
    assert _marks(fig) == [("start", 0.5, 0.25, "start = end", "top center"), ("end", 0.5, 0.25, "", "top center")]


def test_close_start_and_end_write_their_texts_on_opposite_sides():
    """The end 0.001 below the start: the start's text above it, the end's below; reversed when
    the end is higher. Texts above the higher point and below the lower one never meet."""
    down = pd.DataFrame({"conversation_id": ["c"] * 2, "turn": [0, 1], "x": [0.0, 0.001], "y": [0.0, -0.001]})
    fig = charts.trajectory_paths(down, ["c"], background=False)
    assert [(m[0], m[3], m[4]) for m in _marks(fig)] == [("start", "start", "top center"),
                                                         ("end", "end", "bottom center")]
    up = down.assign(y=[0.0, 0.001])
    fig = charts.trajectory_paths(up, ["c"], background=False)
    assert [(m[0], m[3], m[4]) for m in _marks(fig)] == [("start", "start", "bottom center"),
                                                         ("end", "end", "top center")]


def test_texts_of_different_paths_at_one_point_take_the_free_side_or_none():
    """Three paths start at (0, 0) and go down: the first writes "start" above, the second
    (above taken) below, the third (both taken) no text: its mark keeps its symbol and hover."""
    points = pd.DataFrame({"conversation_id": ["a", "a", "b", "b", "c", "c"], "turn": [0, 1] * 3,
                           "x": [0.0, 1.0, 0.0, -1.0, 0.0, 0.5], "y": [0.0, -1.0] * 3})
    fig = charts.trajectory_paths(points, ["a", "b", "c"], background=False)
    starts = [(t.text[0], t.textposition) for t in fig.data if t.name == "start"]
    assert starts == [("start", "top center"), ("start", "bottom center"), ("", "top center")]
    assert [t.hovertext[0] for t in fig.data if t.name == "start"] == ["start of a", "start of b", "start of c"]
    ends = [(t.text[0], t.textposition) for t in fig.data if t.name == "end"]
    assert ends == [("end", "bottom center")] * 3  # 0.5 apart on x: 76 px of 340 for a range 2.24 wide
    assert fig.layout.yaxis.range == pytest.approx((-1.12, 0.12))  # 12% of the 1.0 span each side
