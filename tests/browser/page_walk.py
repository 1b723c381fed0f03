"""One walk through every page of a served dashboard in Chromium, its layout measured once per
page and width (``devtools.text_overlaps``), for the layout test and the page tests to read.

``walk(url, dataset, browser, folder)``: every page opened at 1024 px (exceptions, heading,
text, a screenshot), measured at 1024 px, widened to 1440 px and measured again, with the
texts drawn inside the published Table 1 chart at 1024 px; then the Trajectories map with its
cluster labels written on it and, where the dataset has one, a one-turn conversation drawn
as a path (its start and end in one place), measured at both widths."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from devtools import text_overlaps
from devtools.browser import chromium_page, nav_link, resize, visit_pages, wait_until_idle
from tests.support.cached_runs import REPO

WIDTHS = ((1024, 768), (1440, 900))

# texts drawn inside the frame of the "Published R²" ladder (paper A's Table 1)
LADDER_TEXTS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
    .filter(p => ((p.querySelector('.gtitle') || {}).textContent || '').startsWith('Published R'))
    .map(p => { const frame = p.getBoundingClientRect();
                return Array.from(p.querySelectorAll('text')).filter(t => {
                    const b = t.getBoundingClientRect();
                    return b.width > 0 && b.left >= frame.left - 1 && b.right <= frame.right + 1; })
                  .map(t => t.textContent); })"""


def at_both_widths(page) -> dict:
    """``{width: text_overlaps.overlaps_on_page}`` at each of ``WIDTHS`` (the window as tall as
    the page), and under ``"ladder"`` the published ladders' texts at the first width. The
    window is left at the last width (``visit_pages`` sets it back for the next page)."""
    out = {}
    for width, height in WIDTHS:
        if page.viewport_size["width"] != width:
            resize(page, width, height)
        out[width] = text_overlaps.overlaps_on_page(page)
        if width == WIDTHS[0][0]:
            out["ladder"] = page.evaluate(LADDER_TEXTS)
    return out


# the map's points in page pixels with their hover texts (as tests/browser/test_browser_explore.py)
POINTS = """() => {
  const gd = document.querySelectorAll('.js-plotly-plot')[0];
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  const out = [];
  gd._fullData.forEach((trace) => { if (!trace.text || !trace.x) return;
    Array.from(trace.x).forEach((x, j) => { if (x === null) return; out.push({x: x, y: trace.y[j], text: trace.text[j],
      px: box.left + xa._offset + xa.l2p(x), py: box.top + ya._offset + ya.l2p(trace.y[j])}); }); });
  return out;
}"""


def _cluster_labels_on(page) -> None:
    page.locator("[class*='st-key-traj_clusters'] label").first.click()
    page.wait_for_function(
        "() => { const gd = document.querySelectorAll('.js-plotly-plot')[0]; "
        "return gd && gd._fullLayout && (gd._fullLayout.annotations || []).length > 0; }", timeout=300_000)
    wait_until_idle(page)


def _click_a_one_turn_conversation(page, dataset: str) -> str | None:
    """Click the map's point of a one-turn conversation farthest from every other point (so the
    click hits it); the page draws that conversation as a path. None when there is none."""
    turns = pd.read_parquet(REPO / "cached_runs" / dataset / "turn_index.parquet")
    sizes = turns.groupby("conversation_id").size()
    single = set(sizes[sizes == 1].index.astype(str))
    if not single:
        return None
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    points = page.evaluate(POINTS)
    ids = [re.match(r"<b>(.*?)</b> · turn", p["text"] or "") for p in points]
    points = [dict(p, cid=m.group(1)) for p, m in zip(points, ids) if m]

    def room(p):
        return min(((p["px"] - q["px"]) ** 2 + (p["py"] - q["py"]) ** 2) ** 0.5 for q in points if q is not p)

    candidates = [p for p in points if p["cid"] in single]
    target = max(candidates, key=room)
    page.mouse.move(target["px"], target["py"])
    page.wait_for_timeout(300)
    page.mouse.click(target["px"], target["py"])
    page.wait_for_function(
        "(want) => { const el = document.querySelector(\"[class*='st-key-traj_reader_focus']\"); "
        "return el && el.innerText.includes(want); }", arg=f"of {target['cid']}", timeout=120_000)
    wait_until_idle(page)
    return target["cid"]


def trajectories_with_labels(url: str, dataset: str, browser) -> dict | None:
    """The Trajectories page with cluster labels on (and a one-turn path drawn, when the dataset
    has one), measured at both widths; None for a dataset without turn embeddings."""
    with chromium_page(url, width=WIDTHS[0][0], height=WIDTHS[0][1], browser=browser) as page:
        nav_link(page, "Trajectories").click()
        page.wait_for_function("() => { const h = document.querySelector(\"[data-testid='stMain'] h1\"); "
                               "return h && h.innerText.includes('Trajectories'); }", timeout=120_000)
        wait_until_idle(page)
        if page.locator("[class*='st-key-traj_clusters']").count() == 0:
            return None
        _cluster_labels_on(page)
        one_turn = _click_a_one_turn_conversation(page, dataset)
        resize(page, *WIDTHS[0])
        measured = at_both_widths(page)
        measured.pop("ladder")
        return {"measured": measured, "one_turn": one_turn,
                "main": page.locator("[data-testid='stMain']").inner_text()}


def walk(url: str, dataset: str, browser, folder: Path) -> dict:
    """``{"pages": visit_pages' results (each page's ``"inspected"``: ``at_both_widths``),
    "labelled": trajectories_with_labels}`` of the dashboard served at ``url``."""
    pages = visit_pages(url, folder / "shots", width=WIDTHS[0][0], height=WIDTHS[0][1], full_page=False,
                        inspect=at_both_widths, browser=browser)
    return {"pages": pages, "labelled": trajectories_with_labels(url, dataset, browser)}
