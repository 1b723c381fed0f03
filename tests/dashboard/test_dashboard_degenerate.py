"""Degenerate selections: a constant factor is dropped with a note, small samples get a
minimum-N message, p-values and terms print readably. Expected R² from statsmodels' formula API."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from streamlit.testing.v1 import AppTest

from dashboard.figures import labels
from dashboard.page_data import analyses

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
RELEASE = REPO / "cached_runs" / "paper_release"
FEATURES = ["local_coherence", "global_coherence", "path_length", "convergence_ratio", "max_distance",
            "trajectory_curvature", "topic_switching_rate", "revisit_score", "semantic_spread"]
needs_release = pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built")


def one_model_frame(n: int = 90, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, len(FEATURES))), columns=FEATURES)
    frame["task"] = np.repeat(["t1", "t2", "t3"], n // 3)
    frame["discussion"] = np.tile(["open", "instructed", "iterative"], n // 3)
    frame["model"], frame["source"] = "only-model", "llm"
    frame["creativity"] = frame["global_coherence"] * -0.5 + (frame["task"] == "t2") + rng.normal(size=n)
    return frame


def test_one_model_ladder_still_runs_and_says_the_factor_was_dropped():
    frame = one_model_frame()
    table, notes, _ = analyses.regression_ladder(frame, "creativity")
    r2 = table.set_index("specification")["LLM"]
    by_hand = 100 * smf.ols("creativity ~ " + " + ".join(FEATURES) + " + C(task)", frame).fit().rsquared
    assert r2["+task"] == pytest.approx(by_hand)
    assert r2["+model (model dropped)"] == pytest.approx(by_hand)  # a constant factor adds nothing
    with_discussion = smf.ols("creativity ~ " + " + ".join(FEATURES) + " + C(task) + C(discussion)", frame).fit()
    assert r2["+discussion (model dropped)"] == pytest.approx(100 * with_discussion.rsquared)
    assert any("factor model dropped: 1 level (only-model)" in n for n in notes)
    assert not any("cannot be estimated" in n for n in notes)


def test_small_sample_gets_a_minimum_n_note_not_a_fit():
    table, notes, _ = analyses.regression_ladder(one_model_frame().head(8), "creativity")
    assert table.empty
    assert notes == ["llm / every specification: 8 conversation(s), fewer than the 10 a regression needs "
                     "here; not fitted", "human: no human rows in this sample; not fitted"]  # every row is llm


@needs_release
def test_table24_with_one_model_drops_the_factor():
    frame = pd.read_parquet(RELEASE / "conversations.parquet")
    one = frame[frame["model"] == "gpt-4.1"]
    table = analyses.manipulability_percent(one)
    assert table.attrs["dropped_factors"] == {"model": "gpt-4.1"}
    sample = one[one["source"].eq("llm") & one["discussion"].isin(["instructed", "open", "iterative"])].dropna(
        subset=FEATURES)
    by_hand = 100 * smf.ols("global_coherence ~ C(task) + C(discussion)", sample).fit().rsquared
    row = table.loc["global_coherence"]
    assert row["task+discussion"] == pytest.approx(by_hand)
    assert row["additive"] == pytest.approx(by_hand) and row["interaction"] == pytest.approx(by_hand)
    assert row["task+model"] == pytest.approx(row["task"])


@needs_release
def test_design_levers_page_with_one_model(runs_root):
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.sidebar.multiselect(key="filter_model").set_value(["gpt-4.1"]).run()
    at.switch_page("views/design_levers.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("factor model dropped: 1 level (gpt-4.1)" in i.value.replace("\\", "") for i in at.info)
    assert not any("Cannot compute" in w.value for w in at.warning)


@needs_release
def test_regression_tables_print_p_values_and_terms_readably(runs_root):
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("views/regression.py").run()
    at.selectbox(key="reg_outcome").set_value("global_coherence").run()
    at.checkbox(key="reg_block_discussion").check().run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "term" in d.value.columns and "p" in d.value.columns)
    assert not table["term"].str.contains(r"C\(|\[T\.", regex=True).any()
    assert "discussion: open" in set(table["term"])
    assert "<0.001" in set(table["p"]) and "0" not in set(table["p"])


def test_readable_terms_and_p_values():
    assert labels.readable_term("C(discussion)[T.open]") == "discussion: open"
    assert labels.readable_term("C(discussion)[T.open]:C(model)[T.o3-high]") == "discussion: open × model: o3-high"
    assert labels.readable_term("global_coherence") == "Global Coherence"
    assert [labels.format_p(p) for p in (0.0, 0.000999, 0.001, 0.0456)] == ["<0.001", "<0.001", "0.001", "0.046"]


@needs_release
def test_a_failed_ratings_join_names_the_users_file_not_a_temp_path(runs_root):
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.file_uploader(key="ratings_file").upload("my_ratings.csv", b"file_id,question_id,novelty\nzz,qq,abc\n").run()
    at.button(key="ratings_join").click().run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [e.value.replace("\\", "") for e in at.error]
    assert shown and all("my_ratings.csv" in e and "cdl-ratings" not in e and "/tmp" not in e for e in shown), shown


@needs_release
def test_upload_with_other_column_names_points_to_the_mapping_form_and_loads_with_it(runs_root):
    payload = pd.DataFrame({"dialog": ["d1"] * 3, "n": [0, 1, 2], "who": ["a", "b", "a"],
                            "said": ["we could plant trees", "or build a dam", "trees are cheaper"]}).to_csv(index=False)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.file_uploader(key="upload_file").upload("workshop.csv", payload.encode()).run()
    at.button(key="upload_load").click().run()
    assert any("workshop.csv" in e.value.replace("\\", "") for e in at.error)
    assert any("Column mapping and metadata" in i.value for i in at.info)
    at.text_input(key="upload_map").input("dialog=conversation_id, n=turn, who=speaker, said=text")
    at.selectbox(key="upload_source").set_value("human")
    at.text_input(key="upload_task").input("plastic_waste").run()
    at.button(key="upload_load").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.selectbox[0].value == "upload: workshop"
    rows = next(d.value for d in at.dataframe if "conversation_id" in d.value.columns and "n_turns" in d.value.columns)
    assert rows["source"].tolist() == ["human"] and rows["task"].tolist() == ["plastic_waste"]
