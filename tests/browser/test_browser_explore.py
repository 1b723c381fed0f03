"""Exploring the Trajectories map in a real browser (``streamlit run`` + headless Debian
Chromium through Playwright, as tests/browser/test_browser.py): a click on a point opens the transcript
reader at that turn, with the turn's whole text as the corpus holds it; with cluster labels on,
each cluster's name is written on the map at the median position of its points. Both tests
drive the session's local dashboard (``served``), each in a context of its own."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pandas as pd
import pytest

from devtools.browser import chromium_page, settle_time, wait_until_idle

REPO = Path(__file__).resolve().parents[2]
LOCAL = REPO / "cached_runs" / "local_smollm2"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (LOCAL / "manifest.json").exists(), reason="local cached runs not built"),
]

# Every point of the first map in page pixels, with its hover text; the test clicks the one
# farthest from its nearest neighbour (so the click cannot land on another point).
POINTS = """() => {
  const gd = document.querySelectorAll('.js-plotly-plot')[0];
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  const out = [];
  gd._fullData.forEach((trace, i) => Array.from(trace.x).forEach((x, j) => out.push({
    trace: i, x: x, y: trace.y[j], text: trace.text[j],
    px: box.left + xa._offset + xa.l2p(x), py: box.top + ya._offset + ya.l2p(trace.y[j])})));
  return out;
}"""
CLUSTERS = """() => {
  const gd = document.querySelectorAll('.js-plotly-plot')[0];
  const box = gd.getBoundingClientRect();
  const drawn = Array.from(gd.querySelectorAll('.annotation')).map(a => {
    const r = a.getBoundingClientRect();
    return {text: a.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
  });
  return {annotations: gd._fullLayout.annotations.map(a => ({text: a.text, x: a.x, y: a.y})),
          traces: gd._fullData.map(t => ({name: t.name, x: Array.from(t.x), y: Array.from(t.y)})),
          drawn: drawn, plot: {left: box.left, right: box.right, top: box.top, bottom: box.bottom}};
}"""


def _corpus_turns() -> pd.DataFrame:
    from engine.corpus import Corpus

    turns = Corpus.from_parquet(LOCAL / "corpus.parquet").turns_frame()
    return turns.set_index(["conversation_id", "turn"])


def _plain(html_text: str) -> str:
    text = re.sub(r"<br>", " ", html_text)
    text = re.sub(r"<[^>]+>", "", text)
    return " ".join(text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").split())


@pytest.fixture
def trajectories_page(served, chromium):
    with chromium_page(served(LOCAL.name), width=1440, height=900, browser=chromium) as page:
        settle_time(page, lambda: page.locator("[data-testid='stSidebarNav'] a", has_text="Trajectories")
                    .first.click(), heading="Trajectories")
        page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
        yield page


def test_a_click_on_a_point_opens_the_reader_at_that_turn(trajectories_page, tmp_path):
    page = trajectories_page
    points = page.evaluate(POINTS)
    assert len(points) == len(pd.read_parquet(LOCAL / "turn_index.parquet"))

    def nearest(p):
        return min(((p["px"] - q["px"]) ** 2 + (p["py"] - q["py"]) ** 2) ** 0.5 for q in points if q is not p)

    # a turn longer than the hover's excerpt, so the reader must show more than the hover did
    turns = _corpus_turns()
    long_points = [p for p in points if len(turns.loc[tuple(_ids(p["text"])), "text"]) > 300]
    target = max(long_points, key=nearest)
    assert nearest(target) > 6  # pixels: the click can only hit this point
    conversation, turn = _ids(target["text"])
    page.mouse.move(target["px"], target["py"])
    page.wait_for_timeout(300)
    page.mouse.click(target["px"], target["py"])
    focus = page.locator("[class*='st-key-traj_reader_focus']")
    page.wait_for_function(
        "(want) => { const el = document.querySelector(\"[class*='st-key-traj_reader_focus']\"); "
        "return el && el.innerText.includes(want); }", arg=f"Reading turn {turn} of {conversation}",
        timeout=120_000)
    wait_until_idle(page)
    shown = " ".join(focus.inner_text().split())
    whole = " ".join(str(turns.loc[(conversation, turn), "text"]).split())
    assert whole in shown  # the whole turn, not the hover's excerpt
    assert len(whole) > 300
    # the conversation picker and the turn picker moved to it too
    reader = page.locator("[class*='st-key-traj_reader_all']").inner_text()
    assert f"▶ turn {turn}" in reader
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(tmp_path / "clicked.png"), full_page=True)


def _ids(hover: str) -> tuple[str, int]:
    found = re.match(r"<b>(.*?)</b> · turn (\d+)", hover)
    return found.group(1), int(found.group(2))


def test_cluster_labels_are_drawn_on_the_map_at_their_clusters(trajectories_page):
    page = trajectories_page
    page.locator("[class*='st-key-traj_clusters'] label").first.click()
    page.wait_for_function(
        "() => { const gd = document.querySelectorAll('.js-plotly-plot')[0]; "
        "return gd && gd._fullLayout && (gd._fullLayout.annotations || []).length > 0; }", timeout=300_000)
    wait_until_idle(page)
    found = page.evaluate(CLUSTERS)
    annotations, traces = found["annotations"], found["traces"]
    assert len(annotations) == 8  # the default k
    by_name = {_plain(t["name"]): t for t in traces}  # coloured by cluster: one trace per cluster
    assert len(by_name) == 8
    for annotation in annotations:
        label = _plain(annotation["text"])
        trace = by_name[label]  # the label is a cluster's name
        assert annotation["x"] == pytest.approx(statistics.median(trace["x"]))
        assert annotation["y"] == pytest.approx(statistics.median(trace["y"]))
    # drawn: each label's box lies on the map
    assert len(found["drawn"]) == 8
    plot = found["plot"]
    for box in found["drawn"]:
        assert plot["left"] <= box["left"] < box["right"] <= plot["right"]
        assert plot["top"] <= box["top"] < box["bottom"] <= plot["bottom"]
    # the colours of the eight clusters are distinct
    colours = page.evaluate("() => document.querySelectorAll('.js-plotly-plot')[0]._fullData"
                            ".map(t => String(t.marker.color))")
    assert len(set(colours)) == 8
