"""The Judges page: a saved validation report shown with its provenance, the published anchors
kept apart, semantic distance computed on the shipped OCSAI file, a broken report refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

from dashboard.page_data import judges as jd

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
REPORTS = REPO / "cached_runs/human_ratings/ocsai1_test/reports"


def _page(widgets=None):
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/judges.py")
    at.run()
    if widgets:
        widgets(at)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_saved_semdis_report_is_shown_with_its_provenance_and_the_published_anchors(cached_runs_of, tmp_path):
    root = cached_runs_of()
    folder = root / "human_ratings/set/reports"
    folder.mkdir(parents=True)
    report = json.loads((REPORTS / "semdis_all-MiniLM-L6-v2.json").read_text())
    (folder / "semdis.json").write_text(json.dumps(report))
    at = _page()
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert any("against people's ratings in cached_runs/human_ratings/ocsai1_test/ratings.csv (3,030 items" in c
               for c in captions), captions
    summary = at.dataframe[0].value
    pearson = summary[summary["statistic"] == "Pearson r with the people's mean"].iloc[0]
    assert pearson["value"] == pytest.approx(round(report["pearson"]["value"], 4))
    assert pearson["N"] == 3030
    published = at.dataframe[-1].value
    assert set(published["published"]) >= {"up to .81", ".12 to .26", "81.0%", "79.0%"}
    markdown = " ".join(m.value for m in at.markdown)
    assert "Published anchors" in markdown


def test_semantic_distance_on_the_shipped_file_equals_scipy(cached_runs_of):
    cached_runs_of("human_ratings")
    at = _page(lambda at: at.radio(key="judges_source").set_value("Semantic distance on a rated file"))
    at.button(key="judges_compute").click().run()
    assert not at.exception, [e.value for e in at.exception]
    summary = at.dataframe[0].value
    frame = pd.read_csv(REPO / "cached_runs/human_ratings/ocsai1_test/ratings.csv")
    from engine.embedding.embedder import Embedder

    embedder = Embedder(progress=False)  # the page's embedder, its cache
    a = embedder.encode(list(frame["prompt"])).astype(float)
    b = embedder.encode(list(frame["response"])).astype(float)
    distance = 1 - (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    spearman = summary[summary["statistic"] == "Spearman rho with the people's mean"].iloc[0]
    assert spearman["value"] == pytest.approx(round(stats.spearmanr(distance, frame["human"])[0], 4), abs=1e-4)


def test_a_report_that_is_not_one_is_refused_by_name():
    with pytest.raises(Exception) as error:
        jd.read_report(b'{"measure": {}}', "mine.json")
    assert "mine.json" in str(error.value) and "not a judge validation report" in str(error.value)
    with pytest.raises(Exception, match="not JSON"):
        jd.read_report(b"<html>", "page.json")


def test_the_scatter_shows_item_and_prompt_text_as_typed():
    from dashboard.figures.judges import agreement_scatter

    scores = pd.DataFrame({"item": ["<b>1</b>", "2"], "prompt": ["<a href='x'>brick</a>", "box"],
                           "human": [1.0, 2.0], "measure": [0.3, 0.4]})
    figure = agreement_scatter(scores, "semantic distance <i>x</i>", "people", "t")
    shown = figure.data[0].customdata
    assert shown[0][0] == "&lt;b&gt;1&lt;/b&gt;" and shown[0][1] == "&lt;a href='x'&gt;brick&lt;/a&gt;"
    assert figure.layout.xaxis.title.text == "semantic distance &lt;i&gt;x&lt;/i&gt;"


def test_compare_runs_says_who_rated_each_run_and_whether_checked(tmp_path):
    from dashboard.page_data.comparison import rating_sources

    folder = tmp_path / "human_ratings/set/reports"
    folder.mkdir(parents=True)
    report = {"measure": {"kind": "judge", "judge": "m1", "criterion": "originality", "scale": [1, 5], "samples": 1},
              "source": {"path": "x/set/ratings.csv"}, "items": 40, "n": 38, "unreadable": 2,
              "pearson": {"value": 0.5, "ci": [0.2, 0.7]}, "spearman": {"value": 0.4, "ci": [0.1, 0.6]}}
    (folder / "judge_m1.json").write_text(json.dumps(report))
    frames = {"a": pd.DataFrame({"creativity": [0.1, 0.2], "rater": ["llm:m1", "llm:m1"]}),
              "b": pd.DataFrame({"creativity": [0.3, np.nan], "rater": ["m2 x5", None]}),
              "c": pd.DataFrame({"path_length": [1.0]})}
    table = rating_sources(frames, tmp_path).set_index("dataset")
    assert list(table.index) == ["a", "b"]  # c has no rating
    assert table.loc["a", "judge"] == "m1" and table.loc["b", "judge"] == "m2"
    assert "checked against people on set (40 items rated by people, originality 1-5" in table.loc["a", "against people"]
    assert "Pearson r = 0.50 [0.20, 0.70], Spearman rho = 0.40 [0.10, 0.60], N = 38, 2 unreadable" in \
        table.loc["a", "against people"]
    assert table.loc["b", "against people"].startswith("not checked against people: no validation report of judge m2")


def test_a_rewritten_report_is_read_again(tmp_path):
    from engine.judging.people_check import people_check

    folder = tmp_path / "human_ratings/set/reports"
    folder.mkdir(parents=True)
    report = {"measure": {"kind": "judge", "judge": "m1", "criterion": "originality", "scale": [1, 5]},
              "source": {"path": "x/set/ratings.csv"}, "items": 40, "n": 38, "unreadable": 2,
              "pearson": {"value": 0.5, "ci": [0.2, 0.7]}, "spearman": {"value": 0.4, "ci": [0.1, 0.6]}}
    (folder / "judge_m1.json").write_text(json.dumps(report))
    assert "N = 38" in people_check("m1", tmp_path)
    report["n"] = 1234
    (folder / "judge_m1.json").write_text(json.dumps(report))
    assert "N = 1,234" in people_check("m1", tmp_path)
