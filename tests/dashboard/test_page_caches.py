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
from engine.datasets import Dataset
from tests.support.call_counter import count_calls

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
LOCAL = REPO / "cached_runs" / "local_smollm2"
needs_local = pytest.mark.skipif(not (LOCAL / "manifest.json").exists(), reason="local cached runs not built")


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
    built = count_calls(monkeypatch, charts, ("group_means_with_ci", "percent_heatmap"))
    tables = count_calls(monkeypatch, beside, ("manipulability_beside",))
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


STEERED = REPO / "cached_runs" / "local_smollm2_steered"
needs_two = pytest.mark.skipif(not ((LOCAL / "manifest.json").exists() and (STEERED / "manifest.json").exists()),
                               reason="local and steered cached runs not built")


def _compare(at: AppTest) -> AppTest:
    at.multiselect(key="compare_datasets").set_value(["local_smollm2", "local_smollm2_steered"]).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _differences(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "g_low" in d.value.columns
                and "N reference" in d.value.columns).set_index("column")


@needs_two
def test_compare_in_a_second_tab_builds_nothing_again_and_follows_reference_and_features(cached_runs_of, monkeypatch):
    from dashboard.figures import compare_runs
    from dashboard.page_data import comparison
    from dashboard.widgets import cached

    cached_runs_of(LOCAL.name, STEERED.name)
    cached._kept.clear()
    cached._figure.clear()
    built = count_calls(monkeypatch, charts, ("distributions_by_group",))
    count_calls(monkeypatch, compare_runs, ("difference_forest",), built)  # into the same count
    computed = count_calls(monkeypatch, comparison, ("run_differences", "feature_summary", "diversity_summary"))
    first = _compare(_open("views/compare.py"))
    assert built["distributions_by_group"] == 2 and computed["run_differences"] == 2, (built, computed)
    built.clear()
    computed.clear()
    second = _compare(_open("views/compare.py"))
    assert built == Counter() and computed == Counter(), (built, computed)
    assert len(second.get("plotly_chart")) == len(first.get("plotly_chart"))

    # the other run as reference: differences are the other way round (pandas means)
    # the tables as the dashboard reads them (registered features a build lacks computed at read)
    local, steered = (Dataset.load(p, with_corpus=False).conversations for p in (LOCAL, STEERED))
    forward = _differences(second)
    second.selectbox(key="compare_reference").set_value("local_smollm2_steered").run()
    assert not second.exception
    backward = _differences(second)
    for feature in forward.index:
        expected = steered[feature].dropna().mean() - local[feature].dropna().mean()
        assert forward.loc[feature, "difference"] == pytest.approx(expected, abs=1e-4)
        assert backward.loc[feature, "difference"] == pytest.approx(-expected, abs=1e-4)
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in second.get("plotly_chart")]
    assert any(t.startswith("Features: run − local_smollm2_steered") for t in titles), titles

    # other features chosen: the boxes show those
    from dashboard.figures.labels import readable_term

    chosen = second.multiselect(key="compare_features").options[-2:]
    second.multiselect(key="compare_features").set_value(chosen).run()
    assert not second.exception
    boxes = next(json.loads(c.proto.spec) for c in second.get("plotly_chart")
                 if json.loads(c.proto.spec)["layout"]["title"]["text"].startswith("Features by dataset"))
    subplot_titles = [a["text"] for a in boxes["layout"]["annotations"]]
    assert [t.replace("<br>", " ") for t in subplot_titles] == [readable_term(f) for f in chosen]


def test_frame_fingerprint_names_the_content_and_is_worked_out_once_per_table(monkeypatch):
    import pickle

    from dashboard.widgets import cached

    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "z"]})
    same = frame.copy()
    changed = frame.copy()
    changed.loc[2, "a"] = 3.5
    retitled = frame.rename(columns={"b": "c"})
    digests = [cached.frame_fingerprint(f) for f in (frame, same, changed, retitled)]
    assert digests[0] == digests[1]
    assert len(set(digests[1:])) == 3
    dumps = count_calls(monkeypatch, pickle, ("dumps",))
    assert cached.frame_fingerprint(frame) == digests[0]
    assert dumps["dumps"] == 0  # remembered for this table object


@needs_local
def test_export_provenance_follows_the_sidebar_filter(cached_runs_of):
    """``ui.selection_provenance`` is kept per dataset and filters: a filter changes the N it says
    (counted here with pandas)."""
    from dashboard.widgets import ui

    cached_runs_of(LOCAL.name)
    frame = pd.read_parquet(LOCAL / "conversations.parquet")
    at = _open("views/design_levers.py")
    said = [item[3]["selection"] for key, item in at.session_state[ui.SHOWN_KEY].items() if key.startswith("levers_")]
    assert said and all(f"{len(frame):,} of {len(frame):,} conversations selected" in s for s in said), said
    task = sorted(frame["task"].dropna().astype(str).unique())[0]
    at.session_state[ui.SHOWN_KEY] = {}  # what this rerun shows, only
    at.multiselect(key="filter_task").set_value([task]).run()
    assert not at.exception
    n = int((frame["task"].astype(str) == task).sum())
    said = [item[3]["selection"] for key, item in at.session_state[ui.SHOWN_KEY].items() if key.startswith("levers_")]
    assert said and all(f"{n:,} of {len(frame):,} conversations selected" in s and f"task = {task}" in s for s in said), said


@needs_local
def test_export_catalog_is_made_once_per_dataset_and_filters(cached_runs_of, monkeypatch):
    """A second tab builds no standard set again; a filter gives the set of the filtered rows
    (the counts table's total is the filtered N, counted with pandas)."""
    from dashboard.exports import report
    from dashboard.widgets import cached

    cached_runs_of(LOCAL.name)
    cached._figure.clear()
    made = count_calls(monkeypatch, report, ("catalog",))
    _open("views/export.py")
    assert made == Counter({"catalog": 1})
    made.clear()
    at = _open("views/export.py")
    assert made == Counter(), made
    frame = pd.read_parquet(LOCAL / "conversations.parquet")
    task = sorted(frame["task"].dropna().astype(str).unique())[-1]
    at.multiselect(key="filter_task").set_value([task]).run()
    assert not at.exception
    assert made == Counter({"catalog": 1})
    counts = next(d.value for d in at.dataframe if "conversations" in d.value.columns)
    assert counts["conversations"].sum() == int((frame["task"].astype(str) == task).sum())


@needs_local
def test_data_page_counts_and_availability_follow_the_selection(cached_runs_of):
    """The model × task counts are pandas' crosstab of the filtered rows; ``cached.availability``
    equals ``datasets.availability`` of the dataset."""
    from dashboard.page_data import datasets
    from dashboard.widgets import cached
    from engine.datasets import Dataset

    cached_runs_of(LOCAL.name)
    frame = pd.read_parquet(LOCAL / "conversations.parquet")
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception
    totals = next(d.value for d in at.dataframe if "total" in d.value.columns)
    assert totals.loc["total", "total"] == len(frame)
    model = sorted(frame["model"].dropna().astype(str).unique())[0]
    at.multiselect(key="filter_model").set_value([model]).run()
    assert not at.exception
    totals = next(d.value for d in at.dataframe if "total" in d.value.columns)
    chosen = frame[frame["model"].astype(str) == model]
    expected = pd.crosstab(chosen["model"], chosen["task"], margins=True, margins_name="total")
    assert totals.loc["total", "total"] == len(chosen)
    assert totals.loc[model].to_dict() == expected.loc[model].to_dict()
    dataset = Dataset.load(LOCAL)
    assert cached.availability(dataset) == datasets.availability(dataset)


@needs_local
def test_paper_a_tables_fit_once_per_selection_table_sample_and_stars(cached_runs_of, monkeypatch):
    """A second tab fits nothing again; other stars, or a sidebar filter, fit again and show
    what they ask for (the stars' levels; the filtered N, counted with pandas)."""
    from dashboard.widgets import cached
    from engine.stats import paper_tables

    cached_runs_of(LOCAL.name)
    cached._figure.clear()
    cached._kept.clear()
    fits = count_calls(monkeypatch, paper_tables, ("build",))
    first = _open("views/paper_a_tables.py")
    fitted = fits["build"]
    assert fitted == 1, fits
    second = _open("views/paper_a_tables.py")
    assert fits["build"] == fitted
    assert [c.value for c in second.caption] == [c.value for c in first.caption]
    second.selectbox(key="pat_stars").set_value("conventional").run()
    assert not second.exception
    assert fits["build"] == fitted + 1
    said = lambda: [c.value.replace("\\", "") for c in second.caption]  # noqa: E731 (captions are escaped)
    assert any("* p < 0.05, ** p < 0.01, *** p < 0.001" in c for c in said()), said()
    from engine import samples

    frame = pd.read_parquet(LOCAL / "conversations.parquet")
    before = len(samples.sample("trajectory").select(frame))
    assert any(f"The sample has {before:,} rows" in c for c in said()), said()
    discussion = samples.sample("trajectory").select(frame)["discussion"].astype(str).value_counts().index[0]
    second.multiselect(key="filter_discussion").set_value([discussion]).run()
    assert not second.exception
    after = len(samples.sample("trajectory").select(frame[frame["discussion"].astype(str) == discussion]))
    assert after != before and fits["build"] == fitted + 2
    assert any(f"The sample has {after:,} rows" in c for c in said()), said()
