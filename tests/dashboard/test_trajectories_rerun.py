"""A Trajectories rerun with nothing changed builds no chart and reads no transcript again
(``dashboard.widgets.cached.figure``, ``cached.transcript``): building the map's figure
(a thousand points, each with its hover excerpt) was about half of every rerun. Counted by
wrapping the builders; an option that changes a chart builds that chart once, and only it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.figures import charts, explore_map
from dashboard.page_data import trajectories
from tests.support.call_counter import count_calls

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
LOCAL = REPO / "cached_runs" / "local_smollm2"


@pytest.fixture
def calls(monkeypatch):
    counted = count_calls(monkeypatch, explore_map, ("turn_map", "paths_on_density"))
    count_calls(monkeypatch, charts, ("trajectory_pair",), counted)
    return count_calls(monkeypatch, trajectories, ("transcript",), counted)


@pytest.mark.skipif(not (LOCAL / "manifest.json").exists(), reason="local cached runs not built")
def test_a_rerun_builds_no_chart_and_a_new_colour_only_the_map(cached_runs_of, calls):
    cached_runs_of(LOCAL.name)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/trajectories.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("plotly_chart")) == 3  # map, paths, side by side: all shown

    calls.clear()
    at.run()  # the same page again, nothing changed
    assert not at.exception
    assert calls == Counter(), calls
    assert len(at.get("plotly_chart")) == 3

    at.selectbox(key="traj_colour").set_value("speaker").run()
    assert not at.exception
    assert calls == Counter({"turn_map": 1}), calls
    import json

    from engine.datasets import Dataset

    speakers = trajectories.turn_texts(Dataset.load(LOCAL))["speaker"].fillna("(none)").astype(str)
    drawn = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    assert sorted(t["name"] for t in drawn) == sorted(set(speakers))  # the new colouring is what is shown


@pytest.mark.skipif(not (LOCAL / "manifest.json").exists(), reason="local cached runs not built")
@pytest.mark.parametrize("page, builders", [
    ("views/diversity.py", ("diversity_bars", "rounds_lines", "scatter_map")),
    ("views/llm_vs_human.py", ("distributions_by_group",)),  # no human rows here: no forest
])
def test_a_new_session_on_the_same_data_builds_no_chart_again(cached_runs_of, monkeypatch, page, builders):
    """``cached.chart``: the charts of Diversity and LLM vs human are built once per data; a
    second browser tab (a new AppTest) with the same dataset builds none of them."""
    from dashboard.widgets import cached

    cached_runs_of(LOCAL.name)
    cached.chart.clear()  # earlier tests in this process may have built these charts already
    counted = count_calls(monkeypatch, charts, builders)
    first = AppTest.from_file(APP, default_timeout=300)
    first.run()
    first.switch_page(page).run()
    assert not first.exception, [e.value for e in first.exception]
    assert set(counted) == set(builders), counted  # each drawn on this dataset at first
    shown = len(first.get("plotly_chart"))
    counted.clear()
    second = AppTest.from_file(APP, default_timeout=300)
    second.run()
    second.switch_page(page).run()
    assert not second.exception
    assert counted == Counter(), counted
    assert len(second.get("plotly_chart")) == shown
