"""The Trajectories map of more turns than it draws, in a real browser (``streamlit run`` +
headless Debian Chromium through Playwright, software rendering): every turn is in the map's
image, a sample of whole conversations is drawn over it, and a box drawn on the map selects
every turn inside it, drawn or not, counted on the server. The data: the cached local runs'
real conversations repeated 40 times (49,920 turns; ``tests.support.tiled_dataset``)."""

from __future__ import annotations

import numpy as np
import pytest

from devtools.browser import dashboard_page, drag_on_map, selection_counts, wait_until_idle
from tests.support.tiled_dataset import LOCAL, tiled_dataset

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (LOCAL / "manifest.json").exists(), reason="local cached runs not built"),
]

COPIES = 40

MAP_STATE = """() => {
  const gd = document.querySelectorAll('.js-plotly-plot')[0];
  const drawn = [];
  gd._fullData.forEach(t => Array.from(t.x || []).forEach((x, j) => { if (x !== null) drawn.push([x, t.y[j]]); }));
  const selections = (gd._fullLayout.selections || []).map(s => ({x0: s.x0, x1: s.x1, y0: s.y0, y1: s.y1}));
  return {images: (gd._fullLayout.images || []).length, drawn: drawn, selections: selections,
          title: gd._fullLayout.title.text};
}"""


def test_a_box_on_the_aggregated_map_selects_every_turn_inside_it(chromium, tmp_path):
    from engine.datasets import Dataset
    from engine.maps.projection import project_turns

    root = tmp_path / "cached_runs"
    folder = tiled_dataset(root / "tiled_local", COPIES)
    dataset = Dataset.load(folder, with_corpus=False)
    total = len(dataset.turn_index)
    env = {"CDL_CACHED_RUNS": str(root), "CDL_CACHE_DIR": str(tmp_path / "cache")}
    with dashboard_page(env, browser=chromium) as page:
        page.locator("[data-testid='stSidebarNav'] a", has_text="Trajectories").first.click()
        page.wait_for_selector(".js-plotly-plot .nsewdrag", timeout=300_000)
        wait_until_idle(page)
        main_text = page.locator("[data-testid='stMain']").inner_text()
        assert f"all {total:,} turns are aggregated into the image" in main_text
        before = page.evaluate(MAP_STATE)
        assert before["images"] == 1
        assert 0 < len(before["drawn"]) <= 5_000 < total
        plot = page.locator(".js-plotly-plot").first
        plot.scroll_into_view_if_needed()
        drag_on_map(page, "select", [(-0.25, -0.25), (0.1, 0.2)], steps=10)
        shown, _ = selection_counts(page)
        (rectangle,) = page.evaluate(MAP_STATE)["selections"]
        page.screenshot(path=str(tmp_path / "aggregated_map.png"), full_page=False)
        assert page.locator("[data-testid='stException']").count() == 0
    # the count the page shows is every turn inside the drawn box: worked out here from the
    # projection the page uses (PCA, seed 42), against the box Plotly holds
    projected = project_turns(dataset.turn_embeddings, dataset.turn_index, method="pca", seed=42)
    x_low, x_high = sorted((rectangle["x0"], rectangle["x1"]))
    y_low, y_high = sorted((rectangle["y0"], rectangle["y1"]))
    x, y = projected["x"].to_numpy(), projected["y"].to_numpy()
    inside = (x > x_low) & (x < x_high) & (y > y_low) & (y < y_high)
    drawn = np.array(before["drawn"])
    drawn_inside = ((drawn[:, 0] > x_low) & (drawn[:, 0] < x_high) & (drawn[:, 1] > y_low) & (drawn[:, 1] < y_high)).sum()
    assert inside.sum() > 2 * drawn_inside > 0  # the box holds far more turns than points drawn in it
    assert shown == int(inside.sum())
