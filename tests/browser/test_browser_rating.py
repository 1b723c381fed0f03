"""Two people rating the same ten ideas in a real browser (``streamlit run`` + Debian's headless
Chromium through Playwright, as tests/browser/test_browser.py), each in their own browser
context, i.e. their own session. Ann's first context is closed after four ideas; a new context
for her resumes at idea 5. The exported CSV then holds exactly what was clicked, and the
ICC(3,k) / ICC(2,1) the page reports equal Shrout & Fleiss's mean-square formulas computed here
(tests/support/icc_by_hand.py) to 1e-6. Times from a click on "Save and next" to the next idea
on screen are measured and printed."""

from __future__ import annotations

import re
import statistics
import time

import numpy as np
import pandas as pd
import pytest

from dashboard import pages
from devtools.browser import served_dashboard, wait_until_idle
from engine.datasets import Dataset
from tests.support.icc_by_hand import shrout_fleiss

pytestmark = [pytest.mark.slow]

TASKS = ["plastic_waste"] * 6 + ["our_own_task"] * 4
SOURCES = ["llm", "human", "llm", "llm", "human", "llm", "llm", "llm", "human", "llm"]
IDEAS = [f"Idea {k}: {word} bins that pay back a deposit, *not* <b>bold</b> [a link](http://x.example)"
         for k, word in enumerate("red green blue amber violet white black grey pink teal".split())]
# what each rater clicks, by position in the shared order (novelty, usefulness); 0 = irrelevant
CLICKS = {"Ann": [(3, 6), (7, 2), (2, 8), (9, 5), (5, 0), (6, 7), (1, 3), (8, 9), (4, 4), (10, 6)],
          "Bob": [(4, 5), (6, 3), (3, 8), (8, 4), (5, 1), (7, 6), (2, 4), (9, 8), (3, 5), (9, 7)]}
MAIN = "[data-testid='stMain']"


@pytest.fixture
def rating_dashboard(tmp_path):
    root = tmp_path / "cached_runs"
    frame = pd.DataFrame({"conversation_id": [f"idea-{k}" for k in range(10)], "source": SOURCES, "task": TASKS,
                          "model": "m", "discussion": "open", "final_idea": IDEAS})
    Dataset(name="rate_browser", conversations=frame, manifest={"description": "ten ideas"}).save(root / "rate_browser")
    ratings = tmp_path / "ratings"
    env = {"CDL_CACHED_RUNS": str(root), "CDL_CACHE_DIR": str(tmp_path / "cache"), "CDL_RATINGS_DIR": str(ratings)}
    with served_dashboard(env=env) as url:
        yield url, ratings


def main_text_includes(page, text: str, timeout_ms: int = 120_000) -> None:
    page.wait_for_function(f"(t) => document.querySelector(\"{MAIN}\").innerText.includes(t)", arg=text,
                           timeout=timeout_ms)


def start(browser, url: str, rater: str, times: list):
    """A new context (a new session) on the Rate ideas page, the rater's name typed (the time
    from Enter to the rater's idea on screen goes in ``times``)."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.goto(f"{url}/{pages.page('rate_ideas').path.stem}", wait_until="domcontentloaded")  # the page's URL
    main_text_includes(page, "Type your name")
    wait_until_idle(page)
    box = page.locator("[class*='st-key-rate_rater'] input")
    box.fill(rater)
    started = time.perf_counter()
    box.press("Enter")
    page.wait_for_function(f"() => /Idea \\d+ of 10/.test(document.querySelector(\"{MAIN}\").innerText)",
                           timeout=120_000)
    times.append(time.perf_counter() - started)
    wait_until_idle(page)
    return context, page


def shown_position(page) -> int:
    found = re.search(r"Idea (\d+) of 10", page.locator(MAIN).inner_text())
    return int(found.group(1)) - 1


def rate(page, rater: str, seen: dict, times: list) -> None:
    """Rate the idea on screen with the rater's chosen values; note which idea it was."""
    position = shown_position(page)
    texts = page.locator("[class*='st-key-rate_item'] [data-testid='stText']")
    assert texts.count() == 2
    idea = texts.nth(1).inner_text().strip()
    assert idea in IDEAS  # the idea's own text, shown as text (no markdown made of it)
    item = page.locator("[class*='st-key-rate_item']").inner_text()
    assert not re.search(r"(?i)\b(llm|human|human_data|experiment)\b", item)  # no source shown
    seen.setdefault(position, idea)
    assert seen[position] == idea  # the same order for both raters
    novelty, usefulness = CLICKS[rater][position]
    for scale, value in (("novelty", novelty), ("usefulness", usefulness)):
        option = page.locator(f"[class*='st-key-rate_{scale}_{position}'] label[data-testid='stRadioOption']").nth(value)
        assert option.inner_text().strip() == ("0 (irrelevant)" if value == 0 else str(value))
        option.click()
    started = time.perf_counter()
    page.locator("[class*='st-key-rate_save'] button").click()
    following = f"Idea {position + 2} of 10" if position < 9 else "All 10 ideas rated"
    main_text_includes(page, following)
    times.append(time.perf_counter() - started)
    wait_until_idle(page)


def test_two_raters_resume_export_and_agree_as_computed_here(rating_dashboard, chromium, tmp_path):
    url, ratings = rating_dashboard
    browser = chromium  # the session's Chromium: each rater's tab is a context of its own
    seen, times, starts = {}, [], []
    contexts = []
    try:
        ann_first, ann = start(browser, url, "Ann", starts)
        bob_context, bob = start(browser, url, "Bob", starts)
        contexts += [ann_first, bob_context]
        assert shown_position(ann) == 0 and shown_position(bob) == 0
        for _ in range(4):
            rate(ann, "Ann", seen, times)
        for _ in range(5):
            rate(bob, "Bob", seen, times)
        ann_first.close()  # mid-way: Ann's tab is gone
        contexts.remove(ann_first)
        ann_again, ann = start(browser, url, "Ann", starts)
        contexts.append(ann_again)
        assert shown_position(ann) == 4  # resumes at idea 5
        main_text_includes(ann, "4 of 10 ideas rated by Ann")
        for _ in range(6):
            rate(ann, "Ann", seen, times)
        for _ in range(5):
            rate(bob, "Bob", seen, times)
        assert "Agreement of the raters" not in bob.locator(MAIN).inner_text()  # hidden while rating
        bob.locator("[class*='st-key-rate_show_all'] label").click()  # the coordinator's view
        main_text_includes(bob, "Agreement of the raters")
        wait_until_idle(bob)
        exact = bob.locator("[class*='st-key-rate_agreement_exact']").inner_text()
        with bob.expect_download() as download:
            bob.locator("[class*='st-key-rate_export_csv'] button").click()
        exported = pd.read_csv(download.value.path(), keep_default_na=False, na_values=[""])
        assert bob.locator("[data-testid='stException']").count() == 0
        bob.screenshot(path=str(tmp_path / "rating_done.png"), full_page=True)
    finally:
        for context in contexts:
            context.close()

    # the order both raters saw, as item ids (from the texts shown)
    ids = [f"idea-{IDEAS.index(seen[p])}" for p in range(10)]
    assert sorted(ids) == sorted(f"idea-{k}" for k in range(10))
    expected = pd.DataFrame({"file_id": ids, "question_id": [TASKS[int(i[5:])] for i in ids],
                             "final_idea": [seen[p] for p in range(10)],
                             "source": ["human_data" if SOURCES[int(i[5:])] == "human" else "llm" for i in ids],
                             "data_type": ["human" if SOURCES[int(i[5:])] == "human" else "experiment" for i in ids],
                             "N1": [n for n, _ in CLICKS["Ann"]], "N2": [n for n, _ in CLICKS["Bob"]],
                             "U1": [u for _, u in CLICKS["Ann"]], "U2": [u for _, u in CLICKS["Bob"]]})
    for scale, columns in (("novelty", ["N1", "N2"]), ("usefulness", ["U1", "U2"])):
        mean = expected[columns].mean(axis=1)
        low = mean.groupby(expected["question_id"]).transform("min")
        high = mean.groupby(expected["question_id"]).transform("max")
        expected[f"avg_{scale}_rating"] = (mean - low) / (high - low)
    expected["avg_creativity_rating"] = expected["avg_novelty_rating"] * expected["avg_usefulness_rating"]
    zeros = sum(((expected[f"N{j}"] == 0) | (expected[f"U{j}"] == 0)).astype(int) for j in (1, 2))
    expected["irrelevant"] = zeros * 2 > 2  # more than half of the two raters gave a 0: none here
    assert list(exported.columns) == list(expected.columns)
    pd.testing.assert_frame_equal(exported.iloc[:, :9], expected.iloc[:, :9], check_dtype=False)
    np.testing.assert_allclose(exported.iloc[:, 9:12].to_numpy(float), expected.iloc[:, 9:12].to_numpy(float),
                               rtol=0, atol=1e-12)
    assert exported["irrelevant"].tolist() == expected["irrelevant"].tolist() == [False] * 10

    # the agreement the page reports, against the mean squares written out here
    reported = {}
    for line in exact.splitlines():
        found = re.match(r"(novelty|usefulness) \((\S+)\): ICC\(3,2\) = ([\d.-]+); ICC\(2,1\) = ([\d.-]+)", line)
        if found:
            reported[found.group(1), found.group(2)] = (float(found.group(3)), float(found.group(4)))
    groups = {"all": list(range(10)), **{task: [p for p in range(10) if expected["question_id"][p] == task]
                                         for task in set(TASKS)}}
    assert set(reported) == {(s, g) for s in ("novelty", "usefulness") for g in groups}
    for (scale, group), (icc3k, icc21) in reported.items():
        index = 0 if scale == "novelty" else 1
        matrix = [[CLICKS["Ann"][p][index], CLICKS["Bob"][p][index]] for p in groups[group]]
        by_hand = shrout_fleiss(matrix)
        assert icc3k == pytest.approx(by_hand["ICC(3,k)"], abs=1e-6), (scale, group)
        assert icc21 == pytest.approx(by_hand["ICC(2,1)"], abs=1e-6), (scale, group)
    print(f"\nname typed -> the rater's idea on screen: {', '.join(f'{t:.2f}' for t in starts)} s; Save and next -> "
          f"next idea on screen: median {statistics.median(times):.2f} s, max {max(times):.2f} s over {len(times)} saves")
