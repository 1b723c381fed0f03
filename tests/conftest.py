"""Fixtures shared by the dashboard tests, and the tiers of the suite.

The suite is laid out like the code (``tests/engine/<package>/``, ``tests/dashboard/``), with
``tests/robustness/`` (bad files, faults, fuzzing, full disks) and ``tests/browser/`` (Chromium)
apart and helpers in ``tests/support/``. Every test under ``robustness/`` is marked
``robustness`` and every one under ``browser/`` ``browser`` (and ``slow``), so the developer's
fast tier is ``pytest -m "not slow and not robustness"`` (``make test-fast``); ``make test``
runs everything.

What costs is paid once per session: the page renders of every cached dataset
(``page_renders``), the embeddings and projections the dashboard and its notebooks compute
(``shared_cache``, borrowed by every ``cached_runs_of`` folder), the served dashboards and the
browser (``tests/browser/conftest.py``), the llama.cpp server (``tests/support/llama_server.py``),
the sentence model (``sentence_model_loaded_once``; the local GGUF is kept once per process
by ``engine.llm.local_backend``).
Each test has a time limit by its tier (``TIMEOUTS``; pyproject's ``timeout`` for the fast tier).
"""

from pathlib import Path

import pytest

from tests.support.cached_runs import cached_runs_folder, make_shared_cache


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory) -> Path:
    """The session's embedding store and projections folder (``make_shared_cache``)."""
    return make_shared_cache(tmp_path_factory.mktemp("shared_cache"))


@pytest.fixture(scope="session", autouse=True)
def sentence_model_loaded_once():
    """Every ``Embedder`` of the session shares one loaded sentence model per name
    (``tests.support.shared_models``)."""
    from engine.embedding import embedder
    from tests.support.shared_models import load_once

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(embedder, "load_sentence_model", load_once(embedder.load_sentence_model))
        yield


@pytest.fixture(scope="session")
def page_renders(tmp_path_factory, shared_cache):
    """``page_renders(dataset)``: every page rendered on that cached dataset, once per session
    (``tests.support.page_renders``)."""
    from tests.support.page_renders import PageRenders

    return PageRenders(tmp_path_factory.mktemp("page_renders"), shared_cache)


@pytest.fixture
def cached_runs_of(tmp_path, monkeypatch, shared_cache):
    """``cached_runs_of(*names)``: the dashboard pointed at a cached_runs folder holding only
    those datasets (its cache folder borrowing the session's embeddings and projections);
    returns the folder."""
    def make(*names: str) -> Path:
        root, env = cached_runs_folder(tmp_path, *names, shared_cache=shared_cache)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        return root

    return make


@pytest.fixture
def runs_root(cached_runs_of):
    """A cached_runs folder holding only the paper release (so the default choice is fixed)."""
    return cached_runs_of("paper_release")


TIERS = {"robustness": ("robustness",), "browser": ("browser", "slow")}
# seconds per test, setup included (a session fixture's first user renders every page of a
# dataset, or starts a served dashboard): hang guards, generous on a loaded 2-core machine
TIMEOUTS = {"browser": 2400, "slow": 1800, "robustness": 900}


def pytest_collection_modifyitems(items):
    """Mark each test by the folder it lives in (see the module docstring) and give it its
    tier's time limit unless it sets its own."""
    tests = Path(__file__).resolve().parent
    for item in items:
        try:
            folder = Path(str(item.fspath)).resolve().relative_to(tests).parts[0]
        except ValueError:
            folder = None
        for marker in TIERS.get(folder, ()):
            item.add_marker(getattr(pytest.mark, marker))
        if item.get_closest_marker("timeout") is None:
            tier = next((name for name in TIMEOUTS if item.get_closest_marker(name)), None)
            if tier is not None:
                item.add_marker(pytest.mark.timeout(TIMEOUTS[tier]))
