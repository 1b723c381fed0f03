"""The authors' idea-level file: every row read, features joined, groups compared.

The ideas file is built by ``tests/support/ideas_fixture.py`` from the real metrics file's ids plus
ideas without conversation metrics (none, progressive, baseline, human-only); its ratings
are synthetic. Expected values are computed here with pandas / numpy / scipy directly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from engine.cli import main
from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.importers.kinds import table_kind
from engine.importers.paper_release import read_metrics
from engine.importers.ratings import ideas_with_metrics, read_ideas
from engine.stats import group_comparison
from tests.support.ideas_fixture import EXTRA, RELEASE, write_ideas

pytestmark = pytest.mark.skipif(not RELEASE.exists(), reason=f"paper release not at {RELEASE}")


@pytest.fixture(scope="module")
def ideas_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("ideas") / "ideas_with_ratings_clean.csv"
    raw = write_ideas(path)
    return path, raw


@pytest.fixture(scope="module")
def ideas(ideas_file):
    return read_ideas(ideas_file[0])


@pytest.fixture(scope="module")
def metrics():
    return read_metrics(RELEASE)


def test_every_row_is_read_with_the_papers_names(ideas_file, ideas):
    path, raw = ideas_file
    assert len(ideas) == len(raw) == 4_010 + sum(EXTRA.values())
    assert ideas["file_id"].tolist() == raw["file_id"].tolist()
    # creative -> progressive, all_at_once -> instructed, iterative_refinement -> iterative
    expected = raw["discussion_method"].map({"creative": "progressive", "all_at_once": "instructed",
                                             "iterative_refinement": "iterative", "open": "open",
                                             "none": "none"})
    llm = ideas["source"] == "llm"
    assert ideas.loc[llm, "discussion"].tolist() == expected[llm].tolist()
    assert set(ideas["discussion"].dropna()) == {"none", "open", "instructed", "iterative", "progressive"}
    assert ideas.loc[~llm, "discussion"].isna().all()
    # models: the three-model mixture is "Mixed"; persona "no" is "none"
    assert (ideas.loc[raw["models"].str.contains(",", na=False), "model"] == "Mixed").all()
    assert set(ideas.loc[llm, "persona"]) == {"none", "same", "different"}
    assert ideas["task"].tolist() == raw["question_id"].tolist()
    assert ideas["team_size"].tolist() == raw["number_of_agents"].tolist()
    assert np.allclose(ideas["creativity"], raw["avg_creativity_rating"])
    assert np.allclose(ideas["tokens"], raw["grand_total_tokens"], equal_nan=True)
    assert ideas["final_idea"].iloc[0] == "idea number 0, with a comma"
    assert [c for c in ideas.columns if c[0] in "NU" and c[1:].isdigit()] == \
        ["N2", "N4", "N5", "N7", "N9", "U2", "U4", "U5", "U7", "U9"]
    assert "row_ID" in ideas.columns  # columns we do not rename are kept as they are


def test_human_rows_follow_both_dictionary_rules(ideas_file, ideas):
    path, raw = ideas_file
    human = raw["source"].eq("human_data") | raw["data_type"].eq("human")
    assert (ideas["source"] == "human").tolist() == human.tolist()
    assert human.sum() == 308 + EXTRA["human_only"]
    # the row with source == human_data and a blank data_type: inferred and counted
    assert ideas.attrs["ideas"]["data_type_inferred"] == 1
    assert ideas.attrs["ideas"]["by_source_and_type"] == {
        "human/human": int(human.sum()), "llm/baseline": EXTRA["baseline"],
        "llm/experiment": int(len(raw) - human.sum() - EXTRA["baseline"])}


def test_ideas_with_metrics_keeps_every_idea(ideas, metrics):
    joined = ideas_with_metrics(ideas, metrics)
    assert len(joined) == len(ideas)
    assert joined["conversation_id"].tolist() == ideas["conversation_id"].tolist()
    info = joined.attrs["ideas_with_metrics"]
    assert info["with_metrics"] == 4_010 and info["metrics_without_idea"] == 0
    assert info["without_metrics"] == sum(EXTRA.values())
    assert info["without_metrics_by"] == {
        "human/human/(none)": EXTRA["human_only"], "llm/baseline/none": EXTRA["baseline"],
        "llm/experiment/none": EXTRA["none_interactive"] + EXTRA["none_nominal"],
        "llm/experiment/progressive": EXTRA["progressive"]}
    # features equal the metrics row of the same file_id + task; NaN where there is none
    by_key = metrics.set_index("conversation_id")
    has = joined["conversation_id"].isin(by_key.index)
    for feature in ("global_coherence", "revisit_score"):
        assert np.allclose(joined.loc[has, feature], by_key.loc[joined.loc[has, "conversation_id"], feature],
                           equal_nan=True)
    assert joined.loc[~has, list(PAPER_A_FEATURES)].isna().all().all()
    assert joined.loc[joined["discussion"].isin(["none", "progressive"]), "global_coherence"].isna().all()


def test_group_comparison_on_the_ideas_sample_by_hand(ideas):
    from engine.samples import select

    sample = select(ideas, "ideas")
    result = group_comparison(sample, "creativity")
    overall = result[result["by"] == "overall"].iloc[0]
    llm = ideas.loc[(ideas["source"] == "llm") & (ideas["data_type"] == "experiment"), "creativity"].to_numpy()
    human = ideas.loc[ideas["source"] == "human", "creativity"].to_numpy()
    assert overall["llm_n"] == len(llm) == 4_010 - 308 + EXTRA["none_interactive"] + EXTRA["none_nominal"] \
        + EXTRA["progressive"]
    assert overall["human_n"] == len(human) == 308 + EXTRA["human_only"]
    pooled = np.sqrt(((len(llm) - 1) * llm.var(ddof=1) + (len(human) - 1) * human.var(ddof=1))
                     / (len(llm) + len(human) - 2))
    assert overall["cohens_d"] == pytest.approx((llm.mean() - human.mean()) / pooled, rel=1e-12)
    student = scipy_stats.ttest_ind(llm, human)
    assert overall["student_t"] == pytest.approx(student.statistic, rel=1e-10)
    assert overall["student_df"] == len(llm) + len(human) - 2
    assert overall["cohens_d"] > 0.5  # the fixture's LLM raters score novelty higher


def test_kinds_are_told_by_columns_not_one_name(ideas_file):
    header = list(pd.read_csv(ideas_file[0], nrows=0).columns)
    assert table_kind(header) == "ideas"
    assert table_kind(list(pd.read_csv(RELEASE, nrows=0).columns)) == "metrics"
    assert table_kind(["file_id", "question_id", "text"]) is None  # file_id alone decides nothing
    with pytest.raises(InputError, match="both"):
        table_kind(header + list(pd.read_csv(RELEASE, nrows=0).columns))


def test_bad_number_names_row_and_field(tmp_path, ideas_file):
    raw = ideas_file[1].head(5).astype({"avg_novelty_rating": object})
    raw.loc[3, "avg_novelty_rating"] = "high"
    path = tmp_path / "bad.csv"
    raw.to_csv(path, index=False)
    with pytest.raises(InputError) as caught:
        read_ideas(path)
    assert caught.value.row == 4 and caught.value.field == "avg_novelty_rating"
    raw = ideas_file[1].head(5).copy()
    raw.loc[1, "discussion"], raw.loc[1, "discussion_method"] = "debate", "debate"
    raw.to_csv(path, index=False)
    with pytest.raises(InputError, match="unknown discussion") as caught:
        read_ideas(path)
    assert caught.value.row == 2


def test_cli_import_recognises_the_ideas_file(tmp_path, ideas_file, capsys):
    out = tmp_path / "ideas.parquet"
    assert main(["import", str(ideas_file[0]), str(out), "--metrics", str(RELEASE)]) == 0
    printed = capsys.readouterr().out
    written = pd.read_parquet(out)
    assert len(written) == len(ideas_file[1])
    assert f"imported {len(ideas_file[1])} ideas" in printed
    assert "4010 ideas with a conversation" in printed
    assert written["global_coherence"].notna().sum() == 4_010 - int(
        read_metrics(RELEASE)["global_coherence"].isna().sum())


def test_analyze_reads_an_ideas_csv(tmp_path, ideas_file, capsys):
    assert main(["analyze", "compare", "--metrics", str(ideas_file[0]), "--value", "creativity"]) == 0
    printed = capsys.readouterr().out
    assert "creativity: llm vs human" in printed


def test_dashboard_upload_recognises_the_ideas_file(ideas_file):
    from dashboard.page_data.uploads import read_upload

    dataset = read_upload("ideas_with_ratings_clean.csv", ideas_file[0].read_bytes(), max_mb=50)
    assert len(dataset.conversations) == len(ideas_file[1])
    assert dataset.manifest["ideas"]["rows"] == len(ideas_file[1])
    assert "licence_note" in dataset.manifest


def test_unknown_design_labels_are_kept_and_counted(tmp_path, ideas_file):
    raw = ideas_file[1].head(6).copy()
    raw.loc[2, "discussion_order_plan"] = "round_robin"
    path = tmp_path / "labels.csv"
    raw.to_csv(path, index=False)
    ideas = read_ideas(path)
    assert ideas.loc[2, "order"] == "round_robin"
    assert ideas.attrs["ideas"]["unmapped"] == {"discussion_order_plan=round_robin": 1}
    assert ideas["row_ID"].dtype.kind in "if"  # a numeric column we keep as it is, read as numbers


def test_compare_within_figure1s_sample(ideas_file, capsys):
    raw = ideas_file[1]
    assert main(["analyze", "compare", "--metrics", str(ideas_file[0]), "--value", "creativity",
                 "--paper-sample", "ideas"]) == 0
    printed = capsys.readouterr().out
    human = raw["source"].eq("human_data") | raw["data_type"].eq("human")
    n_llm = int(((raw["data_type"] == "experiment") & ~human).sum())  # baselines apart
    assert f"ideas sample (Figure 1, Tables 5, 13, 14): N = {n_llm + int(human.sum()):,} " \
           f"({n_llm:,} LLM, {int(human.sum()):,} human)" in printed
