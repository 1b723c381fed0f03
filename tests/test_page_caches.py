"""The pages' caches (``dashboard.widgets.cached``): a second browser tab on the same data
builds no chart or table again, and a changed selection or option gives the numbers of that
selection (a cache keyed on too little would hand back the previous ones). Builders are
counted by wrapping them; shown values are checked against pandas on the same rows."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.figures import charts
from dashboard.page_data import beside

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "dashboard" / "app.py")
LOCAL = REPO / "cached_runs" / "local_smollm2"
needs_local = pytest.mark.skipif(not (LOCAL / "manifest.json").exists(), reason="local cached runs not built")


def _count(monkeypatch, module, names) -> Counter:
    counted = Counter()
    for name in names:
        original = getattr(module, name)

        def wrapper(*args, _original=original, _name=name, **kwargs):
            counted[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)
    return counted


def _open(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _chart(at: AppTest, key: str) -> dict:
    for element in at.get("plotly_chart"):
        if element.proto.id and key in element.proto.id:
            return json.loads(element.proto.spec)
    raise AssertionError(f"no chart {key}")


@needs_local
def test_design_levers_in_a_second_tab_builds_no_chart_or_table_again(cached_runs_of, monkeypatch):
    from dashboard.widgets import cached

    cached_runs_of(LOCAL.name)
    cached.chart.clear()
    cached._levers_tables.clear()
    built = _count(monkeypatch, charts, ("group_means_with_ci", "percent_heatmap"))
    tables = _count(monkeypatch, beside, ("manipulability_beside",))
    first = _open("views/design_levers.py")
    assert built["group_means_with_ci"] == 1 and built["percent_heatmap"] >= 3, built
    assert tables == Counter({"manipulability_beside": 1})
    shown = len(first.get("plotly_chart"))
    built.clear()
    tables.clear()
    second = _open("views/design_levers.py")
    assert built == Counter() and tables == Counter(), (built, tables)
    assert len(second.get("plotly_chart")) == shown


@needs_local
def test_design_levers_means_follow_the_chosen_feature(cached_runs_of):
    """The bars are the means of the chosen feature per discussion × model, worked out here by
    pandas on the LLM rows of the trajectory sample; a second feature gives its own means."""
    from engine import samples
    from engine.datasets import Dataset

    cached_runs_of(LOCAL.name)
    frame = Dataset.load(LOCAL).conversations
    rows = samples.sample("trajectory").select(frame)
    rows = rows[rows["source"] == "llm"]
    at = _open("views/design_levers.py")
    features = at.selectbox(key="levers_feature").options
    for feature in features[:2]:
        at.selectbox(key="levers_feature").set_value(feature).run()
        assert not at.exception
        spec = _chart(at, "levers_means")
        expected = rows.dropna(subset=[feature, "discussion", "model"]).groupby(["model", "discussion"])[feature].mean()
        got = {(trace["name"], x): y for trace in spec["data"] for x, y in zip(trace["x"], _values(trace["y"]))}
        assert len(got) == len(expected)
        for (model, discussion), mean in expected.items():
            assert got[(str(model), str(discussion))] == pytest.approx(mean, rel=1e-12), (feature, model, discussion)


def _values(y):
    """Plotly's JSON of a numeric array: a list, or ``{"dtype", "bdata"}`` (base64 of the array)."""
    if isinstance(y, dict):
        import base64

        return np.frombuffer(base64.b64decode(y["bdata"]), dtype=np.dtype(y["dtype"])).tolist()
    return list(y)


def test_levers_tables_are_kept_per_table_and_fitted_n():
    """Two tables of the same R² values fitted on different N: each gets its own caption (the
    N is in ``attrs``, which a DataFrame's hash does not see)."""
    from dashboard.widgets import cached
    from engine.stats import published_a

    cached._levers_tables.clear()
    ours = published_a.table24().copy() + 2.0  # one decimal, as the paper prints: ours − published = 2.0
    ours.attrs["n"] = 120
    other = ours.copy()
    other.attrs["n"] = 4_321
    first, second = cached.levers_tables(ours), cached.levers_tables(other)
    assert first[0].n_ours == "120" and second[0].n_ours == "4,321"
    difference = first[2].loc[ours.index, ours.columns].to_numpy()
    assert np.allclose(difference, 2.0)
