"""Fixtures shared by the dashboard tests, and the tiers of the suite.

The suite is laid out like the code (``tests/engine/<package>/``, ``tests/dashboard/``), with
``tests/robustness/`` (bad files, faults, fuzzing, full disks) and ``tests/browser/`` (Chromium)
apart and helpers in ``tests/support/``. Every test under ``robustness/`` is marked
``robustness`` and every one under ``browser/`` ``browser`` (and ``slow``), so the developer's
fast tier is ``pytest -m "not slow and not robustness"`` (``make test-fast``); ``make test``
runs everything.
"""

from pathlib import Path

import pytest

from tests.support.cached_runs import cached_runs_folder


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


TIERS = {"robustness": ("robustness",), "browser": ("browser", "slow")}


def pytest_collection_modifyitems(items):
    """Mark each test by the folder it lives in (see the module docstring)."""
    tests = Path(__file__).resolve().parent
    for item in items:
        try:
            folder = Path(str(item.fspath)).resolve().relative_to(tests).parts[0]
        except ValueError:
            continue
        for marker in TIERS.get(folder, ()):
            item.add_marker(getattr(pytest.mark, marker))
