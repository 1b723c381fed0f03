"""Every turn of a large map as one picture: the points aggregated into a grid of cells and
shaded, as datashader does it (holoviz/datashader: ``Canvas.points`` with ``count_cat`` or
``mean``, then ``shade``), so the browser draws an image of fixed size whatever the number
of turns; clicking, hovering and the reader work on the points drawn over it, and a lasso or
box is resolved on the server against every turn (``dashboard.page_data.map_selection``).

* ``shade_categories``: a cell's colour is the count-weighted mean of its categories' colours
  (datashader's categorical shading), so a cell holding 90% of one category looks like it;
* ``shade_values``: a cell's colour is the mean value of its turns on the map's colour scale;
* in both, an empty cell is transparent and a filled one more opaque the more turns it holds
  (``log(1 + count)``, from ``MIN_ALPHA`` to opaque), so dense regions stand out.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass

import numpy as np

RASTER_CELLS = 400  # cells per side: finer than the points' size on a 900-px map
MIN_ALPHA = 0.3


@dataclass(frozen=True)
class Raster:
    """An RGBA image (row 0 is the top, the largest y) and what it covers and holds."""

    rgba: np.ndarray
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    n_points: int  # turns aggregated (finite positions)
    filled_cells: int

    @property
    def cells(self) -> int:
        return self.rgba.shape[0]

    def data_uri(self) -> str:
        """The image as a PNG ``data:`` URI (what a Plotly layout image takes)."""
        from PIL import Image

        buffer = io.BytesIO()
        Image.fromarray(self.rgba, mode="RGBA").save(buffer, format="PNG", optimize=False)
        return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")

    def layout_image(self) -> dict:
        """A Plotly layout image placed on the data axes, under the traces."""
        return dict(source=self.data_uri(), xref="x", yref="y", x=self.x_range[0], y=self.y_range[1],
                    sizex=self.x_range[1] - self.x_range[0], sizey=self.y_range[1] - self.y_range[0],
                    sizing="stretch", layer="below", opacity=1.0)


def extent(x: np.ndarray, y: np.ndarray, pad: float = 0.03) -> tuple[tuple[float, float], tuple[float, float]]:
    """The finite points' x and y ranges widened by ``pad`` of their span on each side."""
    def one(values):
        values = values[np.isfinite(values)]
        if not len(values):
            return (0.0, 1.0)
        low, high = float(values.min()), float(values.max())
        span = high - low or 1.0
        return (low - pad * span, high + pad * span)

    return one(np.asarray(x, float)), one(np.asarray(y, float))


def cell_of(x: np.ndarray, y: np.ndarray, x_range, y_range, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """``(flat cell index, finite mask)``: the cell each finite point falls in, rows counted
    from the top (largest y), so the grid is an image as it is."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    finite = np.isfinite(x) & np.isfinite(y)
    column = np.floor((x[finite] - x_range[0]) / (x_range[1] - x_range[0]) * cells).astype(np.int64)
    row = np.floor((y_range[1] - y[finite]) / (y_range[1] - y_range[0]) * cells).astype(np.int64)
    return np.clip(row, 0, cells - 1) * cells + np.clip(column, 0, cells - 1), finite


def _alpha(counts: np.ndarray) -> np.ndarray:
    top = counts.max() if len(counts) else 0
    if top <= 0:
        return np.zeros(len(counts))
    scaled = np.log1p(counts) / np.log1p(top)
    return np.where(counts > 0, MIN_ALPHA + (1 - MIN_ALPHA) * scaled, 0.0)


def _image(rgb: np.ndarray, counts: np.ndarray, cells: int) -> np.ndarray:
    rgba = np.zeros((cells * cells, 4), dtype=np.uint8)
    rgba[:, :3] = np.clip(np.rint(rgb), 0, 255).astype(np.uint8)
    rgba[:, 3] = np.rint(255 * _alpha(counts)).astype(np.uint8)
    return rgba.reshape(cells, cells, 4)


def hex_rgb(colour: str) -> tuple[int, int, int]:
    """``"#rrggbb"`` as integers."""
    colour = colour.lstrip("#")
    return tuple(int(colour[i:i + 2], 16) for i in (0, 2, 4))


def shade_categories(x, y, codes, colours: list[str], *, x_range=None, y_range=None,
                     cells: int = RASTER_CELLS) -> Raster:
    """Categorical shading: ``codes[i]`` indexes ``colours`` (hex) for point ``i``."""
    if x_range is None or y_range is None:
        x_range, y_range = extent(x, y)
    flat, finite = cell_of(x, y, x_range, y_range, cells)
    codes = np.asarray(codes, np.int64)[finite]
    k = len(colours)
    per_category = np.bincount(flat * k + codes, minlength=cells * cells * k).reshape(cells * cells, k)
    counts = per_category.sum(axis=1)
    palette = np.array([hex_rgb(c) for c in colours], float)
    rgb = per_category @ palette / np.maximum(counts, 1)[:, None]
    return Raster(_image(rgb, counts, cells), tuple(x_range), tuple(y_range), int(finite.sum()),
                  int((counts > 0).sum()))


def shade_values(x, y, values, scale: list[str], value_range: tuple[float, float], *, x_range=None,
                 y_range=None, cells: int = RASTER_CELLS) -> Raster:
    """Numeric shading: each cell's mean of ``values`` (turns without a value left out) on
    ``scale``, a list of hex colours evenly spaced from ``value_range[0]`` to ``[1]``."""
    if x_range is None or y_range is None:
        x_range, y_range = extent(x, y)
    values = np.asarray(values, float)
    has_value = np.isfinite(values)
    flat, finite = cell_of(np.where(has_value, x, np.nan), y, x_range, y_range, cells)
    values = values[finite]
    counts = np.bincount(flat, minlength=cells * cells)
    means = np.bincount(flat, weights=values, minlength=cells * cells) / np.maximum(counts, 1)
    low, high = value_range
    position = np.clip((means - low) / ((high - low) or 1.0), 0, 1) * (len(scale) - 1)
    palette = np.array([hex_rgb(c) for c in scale], float)
    below = np.floor(position).astype(int)
    above = np.minimum(below + 1, len(scale) - 1)
    weight = (position - below)[:, None]
    rgb = palette[below] * (1 - weight) + palette[above] * weight
    return Raster(_image(rgb, counts, cells), tuple(x_range), tuple(y_range), int(finite.sum()),
                  int((counts > 0).sum()))
