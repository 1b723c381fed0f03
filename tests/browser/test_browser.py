"""The real app in a real browser: ``streamlit run`` on localhost, headless Debian Chromium via
Playwright (executable path set, no browser download), every page clicked in the sidebar,
no Streamlit exception box, one screenshot per page (into a tmp folder). The walks through the
pages are the session's (``page_walks``, one per dataset, shared with the layout test); the
lasso drives the session's local dashboard in its own context."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.browser import PAGE_TITLES, chromium_page, dashboard_page, drag_on_map, selection_counts, wait_until_idle
from tests.support.cached_runs import cached_runs_folder

REPO = Path(__file__).resolve().parents[2]
RELEASE = REPO / "cached_runs" / "paper_release"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built"),
]


def test_every_page_in_chromium(page_walks):
    import pandas as pd

    results = page_walks("paper_release")["pages"]
    assert list(results) == list(PAGE_TITLES)
    for title, result in results.items():
        assert result["exceptions"] == [], f"{title}: {result['exceptions']}"
        assert result["screenshot"].stat().st_size > 10_000, f"{title}: empty screenshot"
        assert result["screenshot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    release = pd.read_parquet(RELEASE / "conversations.parquet")
    data_text = results["Data"]["text"]
    assert f"{(release['source'] == 'llm').sum():,}" in data_text  # 3,702
    assert f"{(release['source'] == 'human').sum():,}" in data_text  # 308
    assert "26.8%" in results["Design levers"]["text"]
    assert results["LLM vs human"]["heading"] == "LLM vs human teams"


PAPER_B = REPO / "cached_runs" / "local_smollm2_paper_b"


@pytest.mark.skipif(not (PAPER_B / "manifest.json").exists(), reason="paper-B cached runs not built")
def test_quality_diversity_page_in_chromium_on_the_paper_b_runs(page_walks):
    page = page_walks(PAPER_B.name)["pages"]["Quality–Diversity"]
    assert page["exceptions"] == [] and page["heading"] == "Quality–Diversity"
    assert page["screenshot"].stat().st_size > 10_000
    conversations = __import__("pandas").read_parquet(PAPER_B / "conversations.parquet")
    assert f"{len(conversations):,} paper-B sessions with a final output" in page["text"]
    assert "not a finding" in page["text"] and "published" in page["text"]


LOCAL = REPO / "cached_runs" / "local_smollm2"


@pytest.mark.skipif(not (LOCAL / "manifest.json").exists(), reason="local cached runs not built")
def test_lasso_on_the_embedding_map_fills_the_table(served, chromium, tmp_path):
    """Drag a lasso over the middle of the Trajectories map in Chromium: the page reruns and
    lists the lassoed turns (Plotly selection events through st.plotly_chart(on_select=...))."""
    with chromium_page(served(LOCAL.name), browser=chromium) as page:
        page.locator("[data-testid='stSidebarNav'] a", has_text="Trajectories").first.click()
        page.wait_for_selector(".js-plotly-plot .nsewdrag", timeout=120_000)
        wait_until_idle(page)
        plot = page.locator(".js-plotly-plot").first
        plot.scroll_into_view_if_needed()
        # the map spans the main column (it was ~340 px at 1280 wide, a quarter column beside a picker)
        main = page.locator("[data-testid='stMainBlockContainer']").first.bounding_box()
        assert plot.bounding_box()["width"] >= 0.9 * (main["width"] - 2 * 48)
        # drag pans by default, the lasso is one click away
        drag_on_map(page, "lasso", [(-0.3, -0.3), (0.3, -0.3), (0.3, 0.3), (-0.3, 0.3), (-0.3, -0.28)])
        n_turns, _ = selection_counts(page)
        assert n_turns > 0
        assert page.locator("[data-testid='stException']").count() == 0
        page.screenshot(path=str(tmp_path / "lasso.png"), full_page=True)


def test_pilot_form_is_locked_while_running_and_cancel_keeps_the_turns(chromium, tmp_path):
    """The local model in Chromium: once Run is clicked the form is disabled and Cancel
    enabled; Cancel stops the run and the turns received stay on the page (a dashboard of its
    own: the run changes what the app holds)."""
    import re

    _, env = cached_runs_folder(tmp_path, "paper_release")
    with dashboard_page(env, browser=chromium) as page:
        page.locator("[data-testid='stSidebarNav'] a", has_text="Pilot").first.click()
        run = page.get_by_role("button", name="Run pilot")
        cancel = page.get_by_role("button", name="Cancel")
        run.wait_for(timeout=120_000)
        assert run.is_enabled() and cancel.is_disabled()
        run.click()
        main = page.locator("[data-testid='stMain']")
        page.wait_for_function(
            "() => /[1-9][0-9]* turns received/.test(document.querySelector(\"[data-testid='stMain']\").innerText)",
            timeout=300_000)
        assert run.is_disabled() and cancel.is_enabled()
        assert page.get_by_label(re.compile(r"^Agents")).first.is_disabled()
        cancel.click()
        page.wait_for_function(
            "() => document.querySelector(\"[data-testid='stMain']\").innerText.includes('Cancelled by the user')",
            timeout=300_000)
        wait_until_idle(page)
        text = main.inner_text()
        kept = int(re.search(r"Cancelled by the user: the (\d+) turns received are kept", text).group(1))
        assert kept >= 1
        assert "left out of the diagnosis" in text
        assert page.locator("[data-testid='stException']").count() == 0
        assert run.is_enabled()  # the form is usable again


def test_urls_in_turns_tasks_and_models_are_no_links_in_chromium(chromium, tmp_path):
    """Streamlit's GitHub-flavoured markdown links URLs and e-mail addresses it finds in text,
    escaped or not; the Trajectories page (transcript reader caption, tables) shows them as text."""
    from engine.corpus import Conversation, Corpus, Turn
    from engine.datasets import dataset_from_corpus
    from engine.embedding.embedder import Embedder

    corpus = Corpus([Conversation(f"c{i}", [Turn("AB"[t % 2], f"idea {i}.{t}: see http://evil.example/{i} or "
                                                              f"www.evil{i}.example.com, mail bob@evil.example")
                                            for t in range(4)],
                                  task="task http://task.example", model="model www.model.example",
                                  source="llm", protocol="open") for i in range(3)])
    root = tmp_path / "cached_runs"
    root.mkdir()
    dataset_from_corpus(corpus, Embedder(cache=tmp_path / "embeddings.sqlite"), name="urls").save(root / "urls")
    env = {"CDL_CACHED_RUNS": str(root), "CDL_CACHE_DIR": str(tmp_path / "cache")}
    with dashboard_page(env, browser=chromium) as page:
        page.locator("[data-testid='stSidebarNav'] a", has_text="Trajectories").first.click()
        page.wait_for_function(
            "() => document.querySelector(\"[data-testid='stMain']\").innerText.includes('Transcript reader')",
            timeout=180_000)
        wait_until_idle(page)
        text = page.locator("[data-testid='stMain']").inner_text()
        assert "task http://task.example" in text.replace("\u2060", "")  # shown, as text
        links = page.locator("[data-testid='stMain'] a").evaluate_all("nodes => nodes.map(n => n.href)")
        assert [href for href in links if "example" in href] == [], links
        assert page.locator("[data-testid='stException']").count() == 0
