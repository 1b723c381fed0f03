"""Readable at 1024 and 1440 px: every page in Chromium, on every cached dataset
(``cached_runs/*/manifest.json``), with no chart text running into other text or out of its
chart and no legend outside its figure or over an axis (layout boxes measured by
``devtools.text_overlaps``); the Trajectories map again with its cluster labels written on it
(the labels are SVG text too: two labels that overlap are two texts that overlap) and, where a
dataset has one, a one-turn conversation drawn as a path (its start and end in one place); the
published Table 1 keeps its Human column at 1024 px.

Each dataset is one served dashboard and one walk through the pages: every page is measured at
1024 px, then the same window is widened to 1440 px and measured again."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from devtools import text_overlaps
from devtools.browser import (chromium_page, chromium_path, nav_link, resize, served_dashboard, visit_pages,
                              wait_until_idle)
from tests.support.cached_runs import REPO, cached_runs_folder

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(chromium_path() is None, reason="needs Debian's chromium")]

DATASETS = sorted(p.parent.name for p in (REPO / "cached_runs").glob("*/manifest.json"))
WIDTHS = ((1024, 768), (1440, 900))
STEERED = "local_smollm2_steered"  # the Steering page's own dataset, always beside the one tested


def _at_both_widths(page) -> dict[int, list[dict]]:
    """``text_overlaps.overlaps_on_page`` at each of ``WIDTHS`` (the window as tall as the page)."""
    out = {}
    for width, height in WIDTHS:
        if page.viewport_size["width"] != width:
            resize(page, width, height)
        out[width] = text_overlaps.overlaps_on_page(page)
    resize(page, *WIDTHS[0])
    return out


def _found(measured: dict[str, dict[int, list[dict]]]) -> dict:
    """``{(page, width): problem lines}`` of text overlaps, cut text and legends off their place."""
    found = {}
    for title, by_width in measured.items():
        for width, charts in by_width.items():
            lines = text_overlaps.problems(charts) + text_overlaps.legend_problems(charts)
            if lines:
                found[(title, width)] = lines
    return found


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


def _trajectories_with_labels(url: str, dataset: str) -> dict | None:
    """The Trajectories page with cluster labels on (and a one-turn path drawn, when the dataset
    has one), measured at both widths; None for a dataset without turn embeddings."""
    with chromium_page(url, width=WIDTHS[0][0], height=WIDTHS[0][1]) as page:
        nav_link(page, "Trajectories").click()
        page.wait_for_function("() => { const h = document.querySelector(\"[data-testid='stMain'] h1\"); "
                               "return h && h.innerText.includes('Trajectories'); }", timeout=120_000)
        wait_until_idle(page)
        if page.locator("[class*='st-key-traj_clusters']").count() == 0:
            return None
        _cluster_labels_on(page)
        one_turn = _click_a_one_turn_conversation(page, dataset)
        resize(page, *WIDTHS[0])
        measured = _at_both_widths(page)
        return {"measured": measured, "one_turn": one_turn,
                "main": page.locator("[data-testid='stMain']").inner_text()}


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_page_readable_at_1024_and_1440_px(tmp_path, dataset):
    root, env = cached_runs_folder(tmp_path, *dict.fromkeys([dataset, STEERED]))
    with served_dashboard(env=env) as url:
        results = visit_pages(url, tmp_path / "shots", width=WIDTHS[0][0], height=WIDTHS[0][1], full_page=False,
                              inspect=_at_both_widths)
        labelled = _trajectories_with_labels(url, dataset)
    assert not {t: r["exceptions"] for t, r in results.items() if r["exceptions"]}
    measured = {title: r["inspected"] for title, r in results.items()}
    assert sum(len(charts[1024]) for charts in measured.values()) >= 10  # the rule is checked on real charts
    assert sum(len(c["legends"]) for charts in measured.values() for c in charts[1024]) >= 1
    if labelled is not None:
        measured["Trajectories, cluster labels on"] = labelled["measured"]
        for width, charts in labelled["measured"].items():
            labels = [c for c in charts if c["annotations"] > 0]
            assert labels and labels[0]["annotations"] >= 2, width  # the labels are drawn and measured
        if labelled["one_turn"] is not None:  # its path is drawn: its start/end text is measured
            paths = [c for by_width in labelled["measured"].values() for c in by_width
                     if c["title"].startswith("Chosen conversations as paths")]
            assert len(paths) == 2
    found = _found(measured)
    for (title, width), lines in sorted(found.items()):  # shown with -s, and in the failure's report
        print(f"{dataset} {width}px {title}: {len(lines)} chart(s)", *lines, sep="\n  ")
    assert found == {}
    if dataset == "paper_release":
        ladder = next(c for c in measured["Regression"][1024] if c["title"].startswith("Published"))
        assert ladder["width"] <= 600 and ladder["texts"] > 10
        assert "Paper A, Table 1" in results["Regression"]["text"]


def test_published_table_1_keeps_its_human_column_at_1024_px(tmp_path):
    """Table 1 as printed: LLM 8.6, 17.6, 22.3, 24.4, 32.6 and Human 11.6, 15.3, n/a, n/a, 17.0
    (paper A); every value and both legend entries are drawn inside the chart at 1024 px."""
    def ladder_texts(page):
        return page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot'))
            .filter(p => ((p.querySelector('.gtitle') || {}).textContent || '').startsWith('Published R'))
            .map(p => { const frame = p.getBoundingClientRect();
                        return Array.from(p.querySelectorAll('text')).filter(t => {
                            const b = t.getBoundingClientRect();
                            return b.width > 0 && b.left >= frame.left - 1 && b.right <= frame.right + 1; })
                          .map(t => t.textContent); })""")

    if not (REPO / "cached_runs" / "paper_release" / "manifest.json").exists():
        pytest.skip("paper_release not built")
    root, env = cached_runs_folder(tmp_path, "paper_release")
    with served_dashboard(env=env) as url:
        results = visit_pages(url, tmp_path / "shots", width=1024, height=768, titles=("Regression",),
                              full_page=False, inspect=ladder_texts)
    (texts,) = results["Regression"]["inspected"]
    for value in ("11.6%", "15.3%", "17.0%", "8.6%", "17.6%", "22.3%", "24.4%", "32.6%"):
        assert value in texts, value
    assert texts.count("n/a") == 2 and "Human" in texts and "LLM" in texts
