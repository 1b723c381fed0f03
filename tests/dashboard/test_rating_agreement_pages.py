"""Every rating table says which judge, how many ratings per item and their agreement
(Quality-Diversity and Paper A tables pages), and our judges' scaled means are never set beside
paper A's. Expected values worked out by hand (the ICC example of tests/engine/stats/test_agreement.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.page_data import paper_a_tables as pat
from dashboard.page_data import quality_diversity as qd
from engine.stats.agreement import ONE_RATING

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
SMOLLM2 = REPO / "cached_runs" / "local_smollm2"


def ideas(**columns) -> pd.DataFrame:
    base = {"conversation_id": [f"c{i}" for i in range(4)], "task": "plastic_waste", "source": "llm",
            "creativity": [0.1, 0.2, 0.3, 0.4], "novelty": [0.1, 0.5, 0.6, 1.0], "usefulness": [1.0, 0.4, 0.5, 0.4]}
    return pd.DataFrame({**base, **columns})


def test_panel_columns_give_agreement_per_task_and_scale():
    # novelty raters (1,2), (3,3), (5,7) -> ICC(3,2) = 20/21, ICC(2,1) = 6/7 (worked by hand); the 4th idea
    # is irrelevant by the majority rule: left out
    frame = ideas(N1=[1, 3, 5, 0], N2=[2, 3, 7, 0], U1=[4, 6, 8, 0], U2=[4, 6, 8, 0],
                  irrelevant=[False, False, False, True], rater="llm:m x2")
    found = pat.ratings_agreement(frame)
    assert found.judge == "m x2" and found.ratings_per_item == "2" and found.n_items == 3
    novelty = found.table.set_index("scale").loc["novelty"]
    assert novelty["ICC(3,k)"] == pytest.approx(20 / 21) and novelty["ICC(2,1)"] == pytest.approx(6 / 7)
    assert novelty["N"] == 3 and novelty["raters"] == 2
    assert found.text.startswith("judge m x2: 2 ratings per idea from 2 raters, N = 3 ideas in 1 task(s)")
    assert "1 idea(s) irrelevant by the majority rule" in found.text


def test_one_rating_per_idea_says_so_and_gives_no_number():
    found = pat.ratings_agreement(ideas(rater="llm:SmolLM2-135M"))
    assert found.ratings_per_item == "1" and found.table.empty
    assert found.text == f"judge SmolLM2-135M: {ONE_RATING} (N = 4 ideas)."


def test_authors_ratings_are_on_the_paper_scale_ours_are_not():
    assert pat.ratings_scale(ideas(N2=[1, 2, 3, 4])) == (True, "")
    on_scale, note = pat.ratings_scale(ideas(rater="llm:m"))
    assert not on_scale and "plastic_waste 4" in note and "never beside" in note
    assert pat.ratings_agreement(ideas(N2=[1, 2, 3, 4], N4=[2, 2, 4, 5])).judge.startswith("paper A's human raters")


@pytest.mark.skipif(not (SMOLLM2 / "manifest.json").exists(), reason="cached_runs/local_smollm2 is not built")
def test_cached_run_table_of_means_is_held_apart_and_says_one_rating():
    frame = pd.read_parquet(SMOLLM2 / "conversations.parquet")
    data = pat.paper_a_tables_page_data(frame, "5", "ideas_and_baselines", "paper")
    rated = int(pd.to_numeric(frame["creativity"], errors="coerce").notna().sum())
    assert data.held_apart and data.compared == [] and data.result is not None
    assert data.agreement.text == f"judge SmolLM2-135M-Instruct.Q4_1: {ONE_RATING} (N = {rated} ideas)."
    # a table that is not of means is still set beside the paper's
    assert not pat.paper_a_tables_page_data(frame, "4", "all", "paper").held_apart


def test_quality_agreement_from_records_or_the_runner_score():
    sessions = pd.DataFrame({"conversation_id": ["a", "b", "c", "d"], "rubric_score": [4.0, 6.0, np.nan, 8.0],
                             "rater": "llm:m"})
    rubric = pd.DataFrame({"kind": "rubric", "key": [f"k{c}{r}" for c in "abc" for r in "12"],
                           "conversation_id": [c for c in "abc" for _ in "12"], "round": None,
                           "judge": ["j#1", "j#2"] * 3, "score": [1, 2, 3, 3, 5, 7]})
    rubric["key"] = rubric["conversation_id"]  # one item per session, two raters each
    found = qd.quality_agreement(rubric, sessions)
    assert found["icc3k"] == pytest.approx(20 / 21) and found["raters"] == 2 and found["items"] == 3
    only_runner = qd.quality_agreement(pd.DataFrame(), sessions)
    assert only_runner["note"] == ONE_RATING and only_runner["items"] == 3 and only_runner["judge"] == "m"
    assert qd.quality_agreement(pd.DataFrame(), sessions.drop(columns="rubric_score")) is None


@pytest.mark.skipif(not (SMOLLM2 / "manifest.json").exists(), reason="cached_runs/local_smollm2 is not built")
def test_paper_a_tables_page_on_a_cached_run_says_one_rating_per_item(cached_runs_of):
    cached_runs_of(SMOLLM2.name)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/paper_a_tables.py")
    at.run()
    at.selectbox(key="pat_table").set_value("5").run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert any("Ratings: judge SmolLM2-135M-Instruct.Q4_1: one rating per item: agreement cannot be computed"
               in c for c in captions), captions
    # no validation report in this cached-runs folder: the judge is said to be unchecked
    assert any("Against people: not checked against people: no validation report of judge "
               "SmolLM2-135M-Instruct.Q4_1" in c for c in captions), captions
    infos = [i.value.replace("\\", "") for i in at.info]
    assert any("never beside" in i for i in infos), infos


PAPER_B = REPO / "cached_runs" / "local_smollm2_paper_b"


@pytest.mark.slow  # embeds the dataset's final outputs on a cold cache (~20 s)
@pytest.mark.skipif(not (PAPER_B / "manifest.json").exists(), reason="cached_runs/local_smollm2_paper_b is not built")
def test_quality_diversity_page_names_its_judge_and_one_rating_per_item(cached_runs_of):
    cached_runs_of(PAPER_B.name, "human_ratings")  # with the shipped judge validation reports
    records = pd.read_parquet(PAPER_B / "quality.parquet")
    finals = records[(records["kind"] == "rubric") & records["round"].isna()]
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/quality_diversity.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value.replace("\\", "") for c in at.caption]
    readable = finals.groupby("key")["score"].count() > 0  # final outputs the judge could read
    want = (f"Quality raters (rubric, final outputs): judge {finals['judge'].iat[0]}: {ONE_RATING} "
            f"(N = {int(readable.sum())} items with a readable rating, {int((~readable).sum())} without).")
    said = [c for c in captions if c.startswith(want)]
    assert said, captions
    # the judge's check against people, read from the shipped report itself
    import json

    report = json.loads((REPO / "cached_runs/human_ratings/ocsai1_test/reports/judge_SmolLM2-135M.json").read_text())
    low, high = report["spearman"]["ci"]
    assert (f"Against people: checked against people on ocsai1_test ({report['items']:,} items rated by people, "
            f"originality 1-5; other items than these)") in said[0]
    assert f"Spearman rho = {report['spearman']['value']:.2f} [{low:.2f}, {high:.2f}], N = {report['n']:,}" in said[0]


def test_a_panel_whose_ratings_were_all_unreadable_says_so():
    frame = ideas(N1=[np.nan] * 4, N2=[np.nan] * 4, U1=[np.nan] * 4, U2=[np.nan] * 4, rater="llm:m x2")
    found = pat.ratings_agreement(frame)
    assert found.text == ("judge m x2: 2 raters asked; no item has a readable rating: agreement cannot be "
                          "computed (N = 4 ideas).")
