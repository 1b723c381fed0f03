"""The Trajectories map past what a browser can draw as points: every turn aggregated into an
image (``dashboard.figures.raster``, datashader-style shading), a sample drawn over it, and
box and lasso selections resolved on the server against every turn
(``dashboard.page_data.map_selection``). Expected values are worked out by hand."""

from __future__ import annotations

import base64
import io

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from dashboard.figures import explore_map, raster
from dashboard.page_data import map_selection, trajectories


# ------------------------------------------------------------------ shading, by hand
def test_categorical_cells_mix_their_categories_colours_by_count():
    """2 x 2 cells over [0, 2] x [0, 2]. Top-left cell (x < 1, y > 1): 3 red + 1 blue turns
    -> colour (3*255 + 0)/4, 0, (0 + 255)/4 = (191.25, 0, 63.75) -> (191, 0, 64); bottom-right:
    one blue turn; the two other cells empty (transparent). Opacity: log1p(count)/log1p(4)
    from 0.3 to 1: 4 turns opaque (255), 1 turn 0.3 + 0.7*log(2)/log(5) = 0.6015 -> 153."""
    x = [0.5, 0.5, 0.2, 0.7, 1.5]
    y = [1.5, 1.5, 1.8, 1.2, 0.5]
    codes = [0, 0, 0, 1, 1]
    image = raster.shade_categories(x, y, codes, ["#ff0000", "#0000ff"], x_range=(0, 2), y_range=(0, 2), cells=2)
    assert image.n_points == 5 and image.filled_cells == 2
    assert image.rgba[0, 0].tolist() == [191, 0, 64, 255]
    assert image.rgba[1, 1].tolist() == [0, 0, 255, round(255 * (0.3 + 0.7 * np.log(2) / np.log(5)))]
    assert image.rgba[0, 1, 3] == 0 and image.rgba[1, 0, 3] == 0


def test_numeric_cells_take_the_mean_of_their_turns_on_the_scale():
    """Scale black -> white over [0, 10]; left cell turns 2 and 6 (mean 4 -> 0.4*255 = 102),
    right cell 10 (white); a turn without a value is left out (not a zero)."""
    image = raster.shade_values([0.2, 0.4, 1.6, 1.7], [0.5, 0.5, 0.5, 0.5], [2, 6, 10, np.nan],
                                ["#000000", "#ffffff"], (0, 10), x_range=(0, 2), y_range=(0, 1), cells=2)
    assert image.n_points == 3
    assert image.rgba[1, 0, :3].tolist() == [102, 102, 102]  # y 0.5 in [0, 1] falls in the lower row
    assert image.rgba[1, 1, :3].tolist() == [255, 255, 255]


def test_the_png_carries_the_cells_as_they_are():
    image = raster.shade_categories([0.1, 0.9], [0.1, 0.9], [0, 1], ["#112233", "#445566"], x_range=(0, 1),
                                    y_range=(0, 1), cells=4)
    decoded = np.asarray(Image.open(io.BytesIO(base64.b64decode(image.data_uri().split(",", 1)[1]))))
    assert decoded.shape == (4, 4, 4)
    assert (decoded == image.rgba).all()
    assert decoded[0, 3, :3].tolist() == [0x44, 0x55, 0x66]  # (0.9, 0.9): top right
    assert decoded[3, 0, :3].tolist() == [0x11, 0x22, 0x33]


# ------------------------------------------------------------------ selection, by hand
def test_box_and_lasso_from_streamlits_event_are_polygons():
    event = {"selection": {"points": [], "box": [{"xref": "x", "yref": "y", "x": [1, 3], "y": [0, 2]}],
                           "lasso": [{"xref": "x", "yref": "y", "x": [0, 4, 0], "y": [0, 0, 4]},
                                     {"x": [0, 1], "y": [0, 1]}]}}  # 2 corners: not a shape
    shapes = map_selection.regions(event)
    assert [s.tolist() for s in shapes] == [[[1, 0], [3, 0], [3, 2], [1, 2]], [[0, 0], [4, 0], [0, 4]]]
    assert map_selection.regions({"selection": {"points": [{"customdata": 3}]}}) == []
    assert map_selection.regions(None) == []


def test_a_concave_lasso_keeps_only_what_it_encloses():
    """An L: the square [0, 2]^2 without its top-right quarter [1, 2] x [1, 2]."""
    ell = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]], float)
    x = np.array([0.5, 1.5, 0.5, 1.5, 2.5, -0.1])
    y = np.array([0.5, 0.5, 1.5, 1.5, 0.5, 1.0])
    assert map_selection.inside_polygon(x, y, ell).tolist() == [True, True, True, False, False, False]


def test_a_selection_counts_every_turn_inside_not_only_the_drawn_ones():
    """10,000 turns on a 100 x 100 grid (x, y = 0..99); a box over [9.5, 19.5] x [29.5, 49.5]
    encloses columns 10..19 and rows 30..49: 10 * 20 = 200 turns, whatever the sample drawn."""
    grid = np.arange(100, dtype=float)
    xs, ys = np.meshgrid(grid, grid)
    points = pd.DataFrame({"conversation_id": [f"c{i // 50}" for i in range(10_000)],
                           "turn": np.arange(10_000) % 50, "x": xs.ravel(), "y": ys.ravel(),
                           "point_id": np.arange(10_000)})
    drawn = trajectories.drawn_turns(points, cap=1_000)
    assert len(drawn) <= trajectories.POINTS_OVER_IMAGE
    event = {"selection": {"points": [{"customdata": 5}], "box": [{"x": [9.5, 19.5], "y": [29.5, 49.5]}],
                           "lasso": []}}
    chosen = trajectories.selected_points(points, event)
    assert len(chosen) == 200
    assert set(chosen["x"]) == set(range(10, 20)) and set(chosen["y"]) == set(range(30, 50))
    # a click (no box, no lasso) picks the clicked point alone
    clicked = trajectories.selected_points(points, {"selection": {"points": [{"customdata": [5]}]}})
    assert clicked["point_id"].tolist() == [5]


def test_above_the_cap_the_sample_over_the_image_is_small_and_whole():
    points = pd.DataFrame({"conversation_id": np.repeat([f"c{i}" for i in range(1_000)], 10),
                           "turn": np.tile(np.arange(10), 1_000)})
    assert trajectories.drawn_turns(points, cap=10_000) is points
    drawn = trajectories.drawn_turns(points, cap=9_999)
    assert len(drawn) == trajectories.POINTS_OVER_IMAGE  # 500 whole conversations of 10 fit exactly
    assert (drawn.groupby("conversation_id").size() == 10).all()
    one_long = pd.DataFrame({"conversation_id": ["a"] * 50, "turn": range(50)})
    assert len(trajectories.drawn_turns(one_long, cap=20)) == 50  # never an empty map


# ------------------------------------------------------------------ the map figure
@pytest.fixture()
def many_points():
    rng = np.random.default_rng(3)
    n = 20_000
    frame = pd.DataFrame({"conversation_id": np.repeat([f"c{i}" for i in range(n // 20)], 20),
                          "turn": np.tile(np.arange(20), n // 20), "x": rng.normal(size=n),
                          "y": rng.normal(size=n), "speaker": "A", "text": "t",
                          "discussion": np.where(np.arange(n) < n // 2, "open", "progressive"),
                          "progress": np.tile(np.linspace(0, 1, 20), n // 20)})
    frame["point_id"] = range(n)
    return frame


def test_the_map_puts_every_turn_in_its_image_and_says_it(many_points):
    drawn = many_points.iloc[:500]
    fig = explore_map.turn_map(drawn, "discussion", "map", aggregate=many_points)
    (image,) = fig.layout.images
    pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(image.source.split(",", 1)[1]))))
    expected = raster.shade_categories(many_points["x"], many_points["y"],
                                       (many_points["discussion"] == "progressive").astype(int),
                                       [fig.data[0].marker.color, fig.data[1].marker.color])
    assert (pixels == expected.rgba).all()
    assert image.layer == "below" and image.xref == "x" and image.yref == "y"
    (x_low, x_high), _ = raster.extent(many_points["x"].to_numpy(), many_points["y"].to_numpy())
    assert list(fig.layout.xaxis.range) == pytest.approx([x_low, x_high])
    assert sum(x is not None for t in fig.data for x in t.x) == 500  # the points drawn are the sample alone
    # "progressive" is only in the image: it keeps its legend entry (no point drawn)
    assert [t.name for t in fig.data] == ["open", "progressive"] and list(fig.data[1].x) == [None]
    # a number: the colour bar spans every turn's values, not the sample's
    numeric = explore_map.turn_map(drawn.assign(progress=0.5), "progress", "map",
                                   aggregate=many_points)
    assert (numeric.data[0].marker.cmin, numeric.data[0].marker.cmax) == (0.0, 1.0)
    # without more turns than drawn: no image
    assert not explore_map.turn_map(drawn, "discussion", "map", aggregate=drawn).layout.images


def test_level_codes_name_levels_as_the_points_legend_does():
    frame = pd.DataFrame({"c": ["b", None, "a", "b", 3, np.nan]})
    codes, levels = explore_map._level_codes(frame, "c")
    assert levels == sorted(explore_map._levels(frame, "c").unique()) == ["(none)", "3", "a", "b"]
    assert [levels[i] for i in codes] == explore_map._levels(frame, "c").tolist()


def test_the_banded_polygon_test_agrees_with_the_plain_ray_count():
    """A 200-corner star over 20,000 random points: each point's crossings counted edge by edge
    over every edge (no bands, no sorting), the textbook even-odd test."""
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-2, 2, 20_000), rng.uniform(-2, 2, 20_000)
    angle = np.linspace(0, 2 * np.pi, 200, endpoint=False)
    radius = np.where(np.arange(200) % 2, 0.6, 1.7)
    star = np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
    crossings = np.zeros(len(x), dtype=int)
    for (x1, y1), (x2, y2) in zip(star, np.roll(star, -1, axis=0)):
        with np.errstate(divide="ignore", invalid="ignore"):
            at = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
        crossings += ((y1 > y) != (y2 > y)) & (x < at)
    expected = crossings % 2 == 1
    assert 1_000 < expected.sum() < 19_000
    assert (map_selection.inside_polygon(x, y, star) == expected).all()


def test_the_selection_digest_tells_selections_apart_by_their_turns():
    points = pd.DataFrame({"point_id": [3, 7, 9]})
    digest = trajectories.selection_digest_of_points
    assert digest(points) == digest(points.copy())
    assert digest(points) != digest(points.iloc[:2]) != digest(points.iloc[[0, 2]])
    assert digest(points).startswith("3:")


def test_pickers_list_the_kept_conversations_first_then_the_dataset_order_up_to_the_limit():
    ids = [f"c{i}" for i in range(10)]
    assert trajectories.picker_options(ids, ["c9"], limit=10) == ids  # within the limit: as they are
    assert trajectories.picker_options(ids, ["c7", "zz", None, "c1", "c7"], limit=4) == ["c7", "c1", "c0", "c2"]
    assert trajectories.picker_options(ids, ["c5", "c6", "c8"], limit=2) == ["c5", "c6", "c8"]  # kept ones stay
