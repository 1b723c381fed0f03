"""Fixtures shared by the dashboard tests."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RELEASE = REPO / "cached_runs" / "paper_release"


@pytest.fixture
def runs_root(tmp_path, monkeypatch):
    """A cached_runs folder holding only the paper release (so the default choice is fixed)."""
    root = tmp_path / "cached_runs"
    root.mkdir()
    (root / "paper_release").symlink_to(RELEASE, target_is_directory=True)
    monkeypatch.setenv("CDL_CACHED_RUNS", str(root))
    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
    return root
