"""The dashboard reads a dataset with every registered feature it can have: a feature its build
lacks is computed from its stored turns and offered by the pickers at once; a dataset without
turn embeddings (the paper release) says in the sidebar which features it lacks and why."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import pages
from dashboard.widgets.ui import escape
from engine.measures.at_read import NO_EMBEDDINGS
from engine.measures.registry import feature_names

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")


def stored_columns(name: str) -> set[str]:
    return set(pd.read_parquet(REPO / "cached_runs" / name / "conversations.parquet").columns)


def test_the_release_says_which_features_it_cannot_have_and_why(cached_runs_of):
    cached_runs_of("paper_release")
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    lacking = [n for n in feature_names() if n not in stored_columns("paper_release")]
    assert lacking  # forward flow and the rest were never in the authors' release
    said = f"Not computed for this dataset: {', '.join(lacking)}: {NO_EMBEDDINGS}."
    assert escape(said) in [c.value for c in at.sidebar.caption]


@pytest.fixture
def a_new_feature(tmp_path):
    """A feature registered after every cached dataset was built (the turn count), in this
    process, where AppTest runs the dashboard."""
    import numpy as np

    from engine.measures.feature import Feature
    from engine.measures.registry import FEATURES

    FEATURES.register(Feature("turn_count_test", "Turns", lambda chunk: np.full(chunk.batch, float(chunk.n)),
                              "this test", min_turns=0, description="turns"))
    yield "turn_count_test"
    FEATURES.unregister("turn_count_test")


def test_a_feature_the_build_lacks_is_offered_by_the_pickers(cached_runs_of, a_new_feature):
    cached_runs_of("local_smollm2")
    lacking = [n for n in feature_names() if n not in stored_columns("local_smollm2")]
    assert a_new_feature in lacking
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page(pages.page("trajectories").script).run()
    assert not at.exception, [e.value for e in at.exception]
    assert set(lacking) <= set(at.selectbox(key="traj_colour").options)
    assert not [c.value for c in at.sidebar.caption if "Not computed" in c.value]
