"""Selections on the Trajectories map in Chromium, on every cached dataset that has turn
embeddings, with the map in PCA and in UMAP: a box and a lasso each select turns and the page
settles (``devtools.browser.selection_settle_times``), on the session's dashboard of that
dataset in a context of its own. The settle times are printed, not
asserted (wall-clock depends on the machine's load); ``python -m benchmarks.bench_browser
--selections`` prints them beside a bare Streamlit page measured in the same run, against the
pages' 3 s warm target."""

from __future__ import annotations

import os

import pytest

from devtools.browser import chromium_page, selection_settle_times
from tests.support.cached_runs import REPO

DATASETS = sorted(p.parent.name for p in (REPO / "cached_runs").glob("*/turn_embeddings.npy"))

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not DATASETS, reason="no cached dataset with turn embeddings")]


@pytest.mark.parametrize("dataset", DATASETS)
def test_a_box_and_a_lasso_select_turns_in_both_projections(served, chromium, dataset):
    with chromium_page(served(dataset), width=1440, height=900, browser=chromium) as page:
        measured = selection_settle_times(page)
    print(f"{dataset}: " + ", ".join(f"{m} {tool} {s:.2f} s ({n} turns)" for (m, tool), (s, n) in measured.items())
          + f"; load {os.getloadavg()[0]:.1f}")
    assert set(measured) == {(m, t) for m in ("pca", "umap") for t in ("box", "lasso")}
    assert all(turns > 0 for _, turns in measured.values()), measured
