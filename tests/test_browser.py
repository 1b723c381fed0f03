"""The real app in a real browser: ``streamlit run`` on localhost, headless Debian Chromium via
Playwright (executable path set, no browser download), every page clicked in the sidebar,
no Streamlit exception box, one screenshot per page (into a tmp folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard.browser import PAGE_TITLES, chromium_path, served_dashboard, visit_pages

REPO = Path(__file__).resolve().parents[1]
RELEASE = REPO / "cached_runs" / "paper_release"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chromium_path() is None, reason="needs Debian's chromium (make browser)"),
    pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built"),
]


def test_every_page_in_chromium(tmp_path):
    import pandas as pd

    root = tmp_path / "cached_runs"
    root.mkdir()
    (root / "paper_release").symlink_to(RELEASE, target_is_directory=True)
    env = {"CDL_CACHED_RUNS": str(root), "CDL_CACHE_DIR": str(tmp_path / "cache")}
    with served_dashboard(env=env) as url:
        results = visit_pages(url, tmp_path / "shots")
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
def test_quality_diversity_page_in_chromium_on_the_paper_b_runs(tmp_path):
    root = tmp_path / "cached_runs"
    root.mkdir()
    (root / PAPER_B.name).symlink_to(PAPER_B, target_is_directory=True)
    env = {"CDL_CACHED_RUNS": str(root), "CDL_CACHE_DIR": str(tmp_path / "cache")}
    with served_dashboard(env=env) as url:
        results = visit_pages(url, tmp_path / "shots", titles=("Quality–Diversity",))
    page = results["Quality–Diversity"]
    assert page["exceptions"] == [] and page["heading"] == "Quality–Diversity"
    assert page["screenshot"].stat().st_size > 10_000
    conversations = __import__("pandas").read_parquet(PAPER_B / "conversations.parquet")
    assert f"{len(conversations):,} paper-B sessions with a final output" in page["text"]
    assert "not a finding" in page["text"] and "published" in page["text"]
