"""Every registered page rendered once per cached dataset (Streamlit's AppTest), for the tests
that read what the pages show: that each renders (a title, no exception, no error box), the
figure rules, the slides made of the pages' charts. Rendering is what costs (about a minute
per dataset), so the suite does it once per dataset in a session fixture (``page_renders`` in
``tests/conftest.py``) and each test asserts on the shared result.

The dashboard sees every cached dataset (as people see ``cached_runs/``) with the one tested
chosen in the sidebar; the Trajectories page is rendered again with its map coloured by
``CLUSTER_KS`` clusters (the default k and more clusters than the palette keeps apart)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dashboard import pages
from tests.support.cached_runs import REPO, cached_runs_folder

APP = str(REPO / "dashboard" / "app.py")
DATASETS = tuple(sorted(p.parent.name for p in (REPO / "cached_runs").glob("*/manifest.json")))
CLUSTER_KS = (8, 20)


@dataclass
class PageRender:
    """What one page showed: its titles, error boxes, exceptions and charts (the Plotly JSON
    Streamlit sends the browser)."""

    titles: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    figures: list[dict] = field(default_factory=list)


def clusters_key(k: int) -> str:
    """The key of the Trajectories page rendered with its map coloured by ``k`` clusters."""
    return f"trajectories (clusters, k = {k})"


def _read(at) -> PageRender:
    return PageRender(titles=[t.value for t in at.title], errors=[e.value for e in at.error],
                      exceptions=[str(e.value) for e in at.exception],
                      figures=[json.loads(chart.proto.spec) for chart in at.get("plotly_chart")])


def render_every_page(dataset: str) -> dict[str, PageRender]:
    """``{page key: PageRender}`` of every registered page opened with ``dataset`` chosen, and
    ``{clusters_key(k): ...}`` of the Trajectories page coloured by each of ``CLUSTER_KS``.
    The environment must point the dashboard at the cached datasets."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=600)
    at.session_state["dataset_choice"] = dataset
    at.run()
    out = {}
    for page in pages.keys():
        at.switch_page(pages.page(page).script)
        at.run()
        out[page] = _read(at)
    for k in CLUSTER_KS:
        at.switch_page(pages.page("trajectories").script)
        at.session_state["traj_clusters"] = True
        at.session_state["traj_k"] = k
        at.run()
        out[clusters_key(k)] = _read(at)
    return out


class PageRenders:
    """``renders(dataset)``: ``render_every_page(dataset)``, worked out on the first call and
    kept for the session, with the dashboard pointed at every cached dataset meanwhile."""

    def __init__(self, folder: Path, shared_cache: Path | None = None):
        self._root, self._env = cached_runs_folder(folder, *DATASETS, shared_cache=shared_cache)
        self._done: dict[str, dict[str, PageRender]] = {}

    def __call__(self, dataset: str) -> dict[str, PageRender]:
        if dataset not in self._done:
            with pytest.MonkeyPatch.context() as patch:
                for key, value in self._env.items():
                    patch.setenv(key, value)
                self._done[dataset] = render_every_page(dataset)
        return self._done[dataset]
