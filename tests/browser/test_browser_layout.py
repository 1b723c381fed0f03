"""Readable at 1024 px: every page in Chromium at 1024×768 (and 1440×900), on the paper release
and on the paper-B runs, with no chart text running into other text or out of its chart
(layout boxes measured by ``devtools.text_overlaps``); the published Table 1 keeps its Human
column at 1024 px."""

from __future__ import annotations

import pytest

from devtools import text_overlaps
from devtools.browser import chromium_path, served_dashboard, visit_pages
from tests.support.cached_runs import REPO, cached_runs_folder

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(chromium_path() is None, reason="needs Debian's chromium")]


def _visit(tmp_path, dataset: str, width: int, height: int, titles=None):
    if not (REPO / "cached_runs" / dataset / "manifest.json").exists():
        pytest.skip(f"{dataset} not built")
    root, env = cached_runs_folder(tmp_path, dataset, "local_smollm2_steered")
    kwargs = {"titles": titles} if titles else {}
    with served_dashboard(env=env) as url:
        return visit_pages(url, tmp_path / "shots", width=width, height=height, full_page=False,
                           inspect=text_overlaps.overlaps_on_page, **kwargs)


@pytest.mark.parametrize("dataset", ["paper_release", "local_smollm2_paper_b"])
def test_no_chart_text_overlaps_at_1024_px(tmp_path, dataset):
    results = _visit(tmp_path, dataset, 1024, 768)
    assert not {t: r["exceptions"] for t, r in results.items() if r["exceptions"]}
    measured = {title: r["inspected"] for title, r in results.items()}
    assert sum(len(charts) for charts in measured.values()) >= 10  # the rule is checked on real charts
    found = {title: text_overlaps.problems(charts) for title, charts in measured.items()
             if text_overlaps.problems(charts)}
    assert found == {}
    if dataset == "paper_release":
        ladder = next(c for c in measured["Regression"] if c["title"].startswith("Published"))
        assert ladder["width"] <= 600 and ladder["texts"] > 10
        text = results["Regression"]["text"]
        assert "Paper A, Table 1" in text


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
