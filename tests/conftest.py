"""Fixtures shared by the dashboard tests."""

from pathlib import Path

import pytest

from tests.cached_runs import cached_runs_folder


@pytest.fixture
def cached_runs_of(tmp_path, monkeypatch):
    """``cached_runs_of(*names)``: the dashboard pointed at a cached_runs folder holding only
    those datasets; returns the folder."""
    def make(*names: str) -> Path:
        root, env = cached_runs_folder(tmp_path, *names)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        return root

    return make


@pytest.fixture
def runs_root(cached_runs_of):
    """A cached_runs folder holding only the paper release (so the default choice is fixed)."""
    return cached_runs_of("paper_release")
