"""The Rate ideas page (AppTest): a rater types a name, rates ideas with Save and next (each saved
at once to their file), goes back to revise, and resumes in a second session where they
stopped; a second rater makes the agreement table appear, whose ICCs equal the Shrout & Fleiss
mean-square formulas written out in tests/support/icc_by_hand.py. The page's data function is
checked on its own: the progress and export it reports are those of the files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import pages
from dashboard.page_data.rating import rate_ideas_page_data
from engine.datasets import Dataset
from engine.judging import human_rating as hr
from tests.support.icc_by_hand import shrout_fleiss

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
IDEAS = [f"Idea number {k}: reuse *bold* [link](http://x.example) <b>tag</b>" for k in range(5)]


@pytest.fixture
def env(tmp_path, monkeypatch):
    root = tmp_path / "cached_runs"
    frame = pd.DataFrame({"conversation_id": [f"c{k}" for k in range(6)], "source": ["llm"] * 5 + ["human"],
                          "task": "plastic_waste", "model": "m", "discussion": "open",
                          "status": ["ok"] * 5 + ["failed"], "final_idea": IDEAS + ["not finished"]})
    Dataset(name="rate_me", conversations=frame, manifest={"description": "five ideas"}).save(root / "rate_me")
    ratings = tmp_path / "ratings"
    for key, value in {"CDL_CACHED_RUNS": str(root), "CDL_CACHE_DIR": str(tmp_path / "cache"),
                       "CDL_RATINGS_DIR": str(ratings)}.items():
        monkeypatch.setenv(key, value)
    return ratings


def open_page(name: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(pages.page("rate_ideas").script).run()
    if name is not None:
        at.text_input(key="rate_rater").input(name).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def plain(markdown: str) -> str:
    """A message as the reader sees it (the page escapes every punctuation character)."""
    return markdown.replace("\\", "")


def heading(at: AppTest) -> str:
    return next((h.value for h in at.subheader if h.value.startswith("Idea ")), "")


def rate(at: AppTest, position: int, novelty: int, usefulness: int) -> None:
    at.radio(key=f"rate_novelty_{position}").set_value(novelty)
    at.radio(key=f"rate_usefulness_{position}").set_value(usefulness)
    at.button(key="rate_save").click().run()
    assert not at.exception, [e.value for e in at.exception]


def records(ratings: Path, rater_slug: str) -> list[dict]:
    path = ratings / "rate_me" / "raters" / f"{rater_slug}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_rating_saves_at_once_revises_and_resumes_in_another_session(env):
    at = open_page()
    assert at.info and not (env / "rate_me").exists()  # nothing is written before a rater starts
    at.text_input(key="rate_rater").input("Ann").run()
    order = json.loads((env / "rate_me" / "order.json").read_text(encoding="utf-8"))
    assert sorted(order["item_ids"]) == [f"c{k}" for k in range(5)]  # the failed session is not rated
    assert heading(at) == "Idea 1 of 5"
    shown = [t.value for t in at.text]
    first = order["item_ids"][0]
    assert order["items"][first]["text"] in shown  # the idea as text (st.text), never as markdown
    assert order["items"][first]["prompt"] in shown and order["items"][first]["prompt"].startswith("Plastic waste")
    assert not any("rate_me" in t.value or "llm" in t.value for t in at.text)  # no source, model or dataset

    at.button(key="rate_save").click().run()  # nothing chosen: not saved
    assert at.warning and "Choose a novelty" in plain(at.warning[0].value)
    assert not (env / "rate_me" / "raters" / "ann.jsonl").exists()

    rate(at, 0, 7, 3)
    assert [(r["item_id"], r["novelty"], r["usefulness"], r["position"]) for r in records(env, "ann")] == [
        (first, 7, 3, 1)]
    assert heading(at) == "Idea 2 of 5"
    rate(at, 1, 2, 8)
    assert heading(at) == "Idea 3 of 5"
    at.button(key="rate_previous").click().run()  # back to revise idea 2: its ratings shown
    assert heading(at) == "Idea 2 of 5"
    assert (at.radio(key="rate_novelty_1").value, at.radio(key="rate_usefulness_1").value) == (2, 8)
    rate(at, 1, 9, 8)
    saved = records(env, "ann")
    assert [(r["novelty"], r["usefulness"]) for r in saved] == [(7, 3), (2, 8), (9, 8)]
    assert saved[2]["item_id"] == saved[1]["item_id"] == order["item_ids"][1]

    again = open_page("Ann")  # a second session: resumes at the first idea not rated
    assert heading(again) == "Idea 3 of 5"
    assert not any("ideas rated" in d.value.columns for d in again.dataframe)  # others' ratings hidden
    again.toggle(key="rate_show_all").set_value(True).run()  # the coordinator's view
    progress = next(d.value for d in again.dataframe if "ideas rated" in d.value.columns).set_index("rater")
    assert progress.loc["Ann", "ideas rated"] == 2 and progress.loc["Ann", "ratings saved"] == 3
    assert any("1 rater(s) so far" in plain(i.value) for i in again.info)  # no agreement with one rater


def test_a_bad_name_is_refused_and_nothing_is_written(env):
    at = open_page("<b>Ann</b>")
    assert at.warning and "field 'rater'" in plain(at.warning[0].value) and not heading(at)
    assert not (env / "rate_me" / "raters").exists()


def test_two_raters_give_the_agreement_and_the_export(env):
    ann, bob = (2, 4, 6, 8, 5), (3, 4, 8, 9, 4)
    usefulness_ann, usefulness_bob = (1, 5, 9, 0, 3), (2, 6, 9, 1, 5)
    for name, novelty, usefulness in (("Ann", ann, usefulness_ann), ("bob", bob, usefulness_bob)):
        at = open_page(name)
        for position in range(5):
            rate(at, position, novelty[position], usefulness[position])
        assert at.success and "All 5 ideas rated" in " ".join(plain(s.value) for s in at.success)
    at.toggle(key="rate_show_all").set_value(True).run()
    table = next(d.value for d in at.dataframe if "ICC(3,k)" in d.value.columns).set_index("scale")
    for scale, pair in (("novelty", (ann, bob)), ("usefulness", (usefulness_ann, usefulness_bob))):
        expected = shrout_fleiss(list(zip(*pair)))
        for kind in ("ICC(3,k)", "ICC(2,1)", "ICC(2,k)"):
            assert table.loc[scale, kind] == pytest.approx(expected[kind], abs=1e-9)
        assert table.loc[scale, "N items"] == 5 and table.loc[scale, "k raters"] == 2
    legend = next(d.value for d in at.dataframe if "ideas rated" in d.value.columns and "column" in d.value.columns)
    assert legend.to_dict("records") == [{"column": "N1 / U1", "rater": "Ann", "ideas rated": 5},
                                         {"column": "N2 / U2", "rater": "bob", "ideas rated": 5}]
    # the page's data function reports what the files hold
    data = rate_ideas_page_data(Dataset.load(Path(env).parent / "cached_runs" / "rate_me"), env)
    order = json.loads((env / "rate_me" / "order.json").read_text(encoding="utf-8"))["item_ids"]
    export = data.export.table.set_index("file_id")
    assert list(export.index) == order
    for position, item_id in enumerate(order):
        assert (export.loc[item_id, "N1"], export.loc[item_id, "N2"]) == (ann[position], bob[position])
        assert (export.loc[item_id, "U1"], export.loc[item_id, "U2"]) == (usefulness_ann[position],
                                                                          usefulness_bob[position])
    means = [(a + b) / 2 for a, b in zip(ann, bob)]  # 2.5, 4, 7, 8.5, 4.5: min 2.5, max 8.5
    assert list(export["avg_novelty_rating"]) == pytest.approx([(m - 2.5) / 6 for m in means])
    assert data.progress.set_index("rater")["next idea"].tolist() == ["all rated", "all rated"]
    assert hr.agreement(data.order).shared == 5
