"""dashboard.figures.palette: one colour per level, the same in every chart."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.figures import charts, palette
from engine.names import METHODS, PAPER_A, PAPER_B


def test_eleven_methods_get_eleven_distinct_colours():
    papers = PAPER_A + PAPER_B
    assert len(papers) == 11
    assert len({palette.colour(m, "method").lower() for m in papers}) == 11
    assert len({palette.colour(m, "method").lower() for m in METHODS}) == len(METHODS)  # steered too


def test_method_colours_stay_apart_in_normal_vision():
    rgb = [np.array([int(palette.colour(m, "method")[i:i + 2], 16) / 255 for i in (1, 3, 5)]) for m in METHODS]
    closest = min(np.linalg.norm(a - b) for i, a in enumerate(rgb) for b in rgb[i + 1:])
    assert closest > 0.15


def test_same_method_same_colour_in_two_different_charts():
    """Before the palette, colours went by position in each chart: 'iterative' was the 2nd
    colour in a chart of (instructed, iterative) and the 3rd in one of (instructed, open, iterative)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"discussion": ["instructed", "open", "iterative"] * 4,
                          "model": ["m1"] * 6 + ["m2"] * 6, "path_length": rng.random(12)})
    boxes = charts.distributions_by_group(frame[frame["discussion"] != "open"], ["path_length"], group="discussion")
    bars = charts.group_means_with_ci(frame, "path_length", x="model", colour="discussion")
    box_colour = {t.name: t.marker.color for t in boxes.data}
    bar_colour = {t.name: t.marker.color for t in bars.data}
    assert box_colour["iterative"] == bar_colour["iterative"] == palette.METHOD["iterative"]
    assert box_colour["instructed"] == bar_colour["instructed"]


def test_unknown_levels_are_stable_and_missing_is_grey():
    assert palette.colour("some-new-model", "model") == palette.colour("some-new-model", "model")
    assert palette.colour("some-new-model") in palette.SEQUENCE
    assert palette.colour(None) == palette.colour("(none)") == palette.MISSING


def _deuteranope(hex_colour: str) -> np.ndarray:
    """sRGB seen by a deuteranope (Machado, Oliveira & Fernandes 2009, severity 1.0)."""
    rgb = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    matrix = np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                       [-0.011820, 0.042940, 0.968881]])
    simulated = np.clip(matrix @ linear, 0, 1)
    return np.where(simulated <= 0.0031308, 12.92 * simulated, 1.055 * simulated ** (1 / 2.4) - 0.055)


def test_method_colours_stay_apart_for_a_deuteranope():
    """No two method colours collapse under simulated deuteranopia (distance in sRGB units)."""
    seen = [_deuteranope(palette.colour(m, "method")) for m in METHODS]
    closest = min(np.linalg.norm(a - b) for i, a in enumerate(seen) for b in seen[i + 1:])
    assert closest > 0.15
