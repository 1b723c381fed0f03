"""Readable at 1024 and 1440 px: every page in Chromium, on every cached dataset
(``cached_runs/*/manifest.json``), with no chart text running into other text or out of its
chart and no legend outside its figure or over an axis (layout boxes measured by
``devtools.text_overlaps``); the Trajectories map again with its cluster labels written on it
(the labels are SVG text too: two labels that overlap are two texts that overlap) and, where a
dataset has one, a one-turn conversation drawn as a path (its start and end in one place); the
published Table 1 keeps its Human column at 1024 px.

Each dataset is one served dashboard and one walk through the pages, shared with the other
browser tests (``page_walks``, ``tests/browser/page_walk.py``): every page is measured at 1024
px, then the same window is widened to 1440 px and measured again."""

from __future__ import annotations

import pytest

from devtools import text_overlaps
from tests.support.cached_runs import REPO

pytestmark = [pytest.mark.slow]

DATASETS = sorted(p.parent.name for p in (REPO / "cached_runs").glob("*/manifest.json"))


def _found(measured: dict[str, dict[int, list[dict]]]) -> dict:
    """``{(page, width): problem lines}`` of text overlaps, cut text and legends off their place."""
    found = {}
    for title, by_width in measured.items():
        for width, charts in by_width.items():
            lines = text_overlaps.problems(charts) + text_overlaps.legend_problems(charts)
            if lines:
                found[(title, width)] = lines
    return found


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_page_readable_at_1024_and_1440_px(page_walks, dataset):
    walked = page_walks(dataset)
    results, labelled = walked["pages"], walked["labelled"]
    assert not {t: r["exceptions"] for t, r in results.items() if r["exceptions"]}
    measured = {title: {w: charts for w, charts in r["inspected"].items() if w != "ladder"}
                for title, r in results.items()}
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


def test_published_table_1_keeps_its_human_column_at_1024_px(page_walks):
    """Table 1 as printed: LLM 8.6, 17.6, 22.3, 24.4, 32.6 and Human 11.6, 15.3, n/a, n/a, 17.0
    (paper A); every value and both legend entries are drawn inside the chart at 1024 px
    (read from the release's walk)."""
    if not (REPO / "cached_runs" / "paper_release" / "manifest.json").exists():
        pytest.skip("paper_release not built")
    (texts,) = page_walks("paper_release")["pages"]["Regression"]["inspected"]["ladder"]
    for value in ("11.6%", "15.3%", "17.0%", "8.6%", "17.6%", "22.3%", "24.4%", "32.6%"):
        assert value in texts, value
    assert texts.count("n/a") == 2 and "Human" in texts and "LLM" in texts
