"""What the browser tests share, paid once: one Chromium (``chromium``), one served dashboard
per cached dataset (``served``: the dataset, the Steering page's own dataset beside it, the
dataset chosen by default) and one walk through every page per dataset with its layout
measured at 1024 and 1440 px (``page_walks``, ``tests/browser/page_walk.py``), which the
layout test and the page tests read. Package-scoped: the servers and the browser stop when
the last browser test has run (so a later ``sync_playwright`` of another test starts clean).
A test that changes what the app holds (a pilot run, its own dataset) serves its own."""

from __future__ import annotations

import contextlib
import threading

import pytest

from devtools.browser import chromium_path, open_chromium, served_dashboard
from tests.support.cached_runs import REPO, cached_runs_folder

STEERED = "local_smollm2_steered"  # the Steering page's own dataset, always beside the one tested
# served dashboards kept at once (each holds its datasets and page caches in memory): the one
# used longest ago stops when another starts; it starts again if asked for (its projections
# and embeddings stay in the session's cache folder)
MAX_SERVED = 3


@pytest.fixture(scope="package")
def chromium():
    """One headless Chromium; each test opens its own context (its own session) in it."""
    if chromium_path() is None:
        pytest.skip("needs Debian's chromium (make browser)")
    with open_chromium() as browser:
        yield browser


def datasets_beside(dataset: str) -> tuple[str, ...]:
    """``dataset`` and, when it is built, the steered dataset (the default choice stays
    ``dataset``: ``dashboard.widgets.session.default_choice`` prefers the release, then
    local_smollm2, then the first name, and the steered one sorts after the others)."""
    steered = (STEERED,) if (REPO / "cached_runs" / STEERED / "manifest.json").is_file() else ()
    return tuple(dict.fromkeys((dataset, *steered)))


@pytest.fixture(scope="package")
def served(tmp_path_factory, shared_cache):
    """``served(dataset)``: the URL of the dashboard served on ``datasets_beside(dataset)``,
    started on first use and kept until the browser tests end (at most ``MAX_SERVED`` at once)."""
    urls: dict[str, str] = {}
    servers: dict[str, contextlib.ExitStack] = {}  # oldest use first

    def url_of(dataset: str) -> str:
        if dataset in urls:
            servers[dataset] = servers.pop(dataset)  # used last now
            return urls[dataset]
        if len(servers) >= MAX_SERVED:
            oldest = next(iter(servers))
            servers.pop(oldest).close()
            del urls[oldest]
        folder = tmp_path_factory.mktemp(f"served_{dataset}")
        _, env = cached_runs_folder(folder, *datasets_beside(dataset), shared_cache=shared_cache)
        server = contextlib.ExitStack()
        urls[dataset] = server.enter_context(served_dashboard(env=env))
        servers[dataset] = server
        return urls[dataset]

    try:
        yield url_of
    finally:  # stopped side by side: each waits for its own process to end
        stopping = [threading.Thread(target=server.close) for server in servers.values()]
        for thread in stopping:
            thread.start()
        for thread in stopping:
            thread.join()


@pytest.fixture(scope="package")
def page_walks(served, chromium, tmp_path_factory):
    """``page_walks(dataset)``: ``page_walk.walk`` of that dataset's served dashboard, done
    once per dataset."""
    from tests.browser import page_walk

    done: dict[str, dict] = {}

    def walk_of(dataset: str) -> dict:
        if dataset not in done:
            done[dataset] = page_walk.walk(served(dataset), dataset, chromium,
                                           tmp_path_factory.mktemp(f"walk_{dataset}"))
        return done[dataset]

    return walk_of
