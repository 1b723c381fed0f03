"""The placement of cluster names (``dashboard.figures.label_layout``) on hand-worked plots.

Every case uses a plot of 200 × 200 pixels showing 0–200 on both axes (one data unit a pixel,
y upwards in data and downwards in pixels: pixel row = 200 − y), so boxes can be checked by
hand."""

from __future__ import annotations

import itertools

import pytest

from dashboard.figures import label_layout as layout
from dashboard.figures.label_layout import Cluster

RANGE = (0.0, 200.0)
GAP = layout.GAP


def _cluster(name, x, y, n=10, core=5.0, box=(40.0, 20.0)):
    return Cluster(name, x, y, n, (x - core, x + core, y - core, y + core), box)


def _disjoint(a, b, gap=0.0) -> bool:
    return a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1] or b[3] + gap <= a[1]


def _core_pixels(cluster):
    x_low, x_high, y_low, y_high = cluster.core
    pad = layout.CORE_PAD
    return (x_low - pad, 200 - y_high - pad, x_high + pad, 200 - y_low + pad)


def test_a_lone_cluster_is_named_straight_above_its_core():
    """Core 95–105 on both axes, 5 px wider: pixels 90–110. A 40 × 20 box straight up clears it
    when its bottom (row 100 − t + 10) is GAP (6) above the core's top (row 90): t = 26, so the
    box's centre is at row 74, y = 126. Any other direction needs longer: right needs t = 36
    (20 + 6 + 10), 22.5° off up needs 26 / cos 22.5° = 28.1."""
    found = layout.place([_cluster("a", 100, 100)], RANGE, RANGE, 200, 200)
    (only,) = found.placed
    assert (only.x, only.y) == (100, 100)  # the leader line's head: the cluster's centre
    assert only.label_x == pytest.approx(100.0)
    assert only.label_y == pytest.approx(126.0)
    assert only.pixels == pytest.approx((80.0, 64.0, 120.0, 84.0))
    assert found.n_left_off == 0


def test_three_clusters_at_one_centre_get_three_disjoint_names_off_the_core():
    clusters = [_cluster(name, 100, 100, n) for name, n in (("a", 30), ("b", 20), ("c", 10))]
    found = layout.place(clusters, RANGE, RANGE, 200, 200)
    assert [p.name for p in found.placed] == ["a", "b", "c"] and found.n_left_off == 0
    for p, q in itertools.combinations(found.placed, 2):
        assert _disjoint(p.pixels, q.pixels, GAP), (p, q)
    core = _core_pixels(clusters[0])
    for p in found.placed:
        assert _disjoint(p.pixels, core)
        left, top, right, bottom = p.pixels
        assert left >= GAP and top >= GAP and right <= 200 - GAP and bottom <= 200 - GAP
        assert (right - left, bottom - top) == pytest.approx((40.0, 20.0))


def test_a_crowded_map_names_the_largest_clusters_and_counts_the_rest():
    """Twenty clusters at one point, names 90 × 40: two boxes side by side need 90 + 6 + 90
    plus 6 at each edge = 198 ≤ 200 pixels, three rows 3 × 40 + 4 × 6 = 144 ≤ 200, four 184,
    five 224 > 200: at most 2 × 4 = 8 names fit (and the core takes room too), so at least 12
    of the 20 are left off, the smallest clusters first."""
    clusters = [_cluster(f"c{i}", 100, 100, n=100 - i, box=(90.0, 40.0)) for i in range(20)]
    found = layout.place(clusters, RANGE, RANGE, 200, 200)
    assert 1 <= len(found.placed) <= 8
    assert len(found.placed) + found.n_left_off == 20
    named = {p.name for p in found.placed}
    assert "c0" in named  # the largest is always named first, with the whole plot free
    assert found.left_off == tuple(sorted(found.left_off, key=lambda name: -int(name[1:])))  # smallest first
    for p, q in itertools.combinations(found.placed, 2):
        assert _disjoint(p.pixels, q.pixels, GAP)


def test_a_name_with_no_room_is_left_off_and_counted():
    """A box 190 px wide cannot fit in 200 − 2 × 6 = 188; a core that fills the plot leaves no
    place off it."""
    found = layout.place([_cluster("wide", 100, 100, box=(190.0, 20.0)),
                          Cluster("everywhere", 100, 100, 5, (0.0, 200.0, 0.0, 200.0), (40.0, 20.0)),
                          _cluster("fine", 100, 100, n=1)], RANGE, RANGE, 200, 200)
    assert [p.name for p in found.placed] == ["fine"]
    assert found.left_off == ("everywhere", "wide")  # smallest first (n 5, then 10)
    assert found.n_left_off == 2


def test_places_do_not_collide_on_a_wider_plot():
    """Places are in data coordinates and boxes in pixels: at twice the width the centres move
    apart, the boxes keep their size, so names disjoint at 200 px stay disjoint at 400 px."""
    clusters = [_cluster(f"c{i}", 90 + 4 * i, 100 + (i % 2) * 6, n=10 - i) for i in range(6)]
    found = layout.place(clusters, RANGE, RANGE, 200, 200)
    assert len(found.placed) >= 4
    by_name = {c.name: c for c in clusters}
    wide = []
    for p in found.placed:
        w, h = by_name[p.name].box
        cx, cy = p.label_x * 2, 200 - p.label_y  # pixels at 400 × 200
        wide.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2))
    for a, b in itertools.combinations(wide, 2):
        assert _disjoint(a, b, GAP)


def test_a_name_avoids_covering_another_cluster():
    """Cluster b sits straight above a, 40 px up: a's cheapest place (straight above, 26 px)
    would cover b's centre and core, so a's name goes elsewhere, off both cores."""
    a, b = _cluster("a", 100, 100, n=20), _cluster("b", 100, 140, n=5, core=3.0)
    found = layout.place([a, b], RANGE, RANGE, 200, 200)
    placed = {p.name: p for p in found.placed}
    assert set(placed) == {"a", "b"}
    assert _disjoint(placed["a"].pixels, _core_pixels(b))
    assert _disjoint(placed["a"].pixels, _core_pixels(a))
    assert placed["a"].label_y != pytest.approx(126.0)


def test_the_same_input_gives_the_same_places():
    clusters = [_cluster(f"c{i}", 60 + 10 * (i % 5), 80 + 7 * i, n=5 + i % 3) for i in range(9)]
    first = layout.place(clusters, RANGE, RANGE, 200, 200)
    assert layout.place(list(clusters), RANGE, RANGE, 200, 200) == first


def test_text_box_is_characters_times_the_font():
    """Two lines, the longer of 10 characters, at 12 px: 10 × 0.64 × 12 + 10 = 86.8 px wide,
    2 × 1.3 × 12 + 10 = 41.2 px tall."""
    assert layout.text_box(["0123456789", "abc"], 12) == pytest.approx((86.8, 41.2))


def test_a_plot_without_size_is_refused():
    with pytest.raises(ValueError):
        layout.place([_cluster("a", 1, 1)], (0, 0), RANGE, 200, 200)
