"""Ours beside published, row by row (dashboard/page_data/beside.py): the paper's rows in the
paper's order and labels, ours rounded to the paper's decimals, a difference column, and the N
actually fitted. Our numbers are recomputed here with statsmodels on the data read directly."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from streamlit.testing.v1 import AppTest

from dashboard.page_data import analyses, beside
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.stats import paper_tables, published_a
from tests.support.ideas_fixture import RELEASE as RELEASE_CSV

REPO = Path(__file__).resolve().parents[2]
RELEASE = REPO / "cached_runs" / "paper_release"
FEATURES = list(PAPER_A_FEATURES)
needs_release = pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper_release not built")


@pytest.fixture(scope="module")
def release() -> pd.DataFrame:
    return pd.read_parquet(RELEASE / "conversations.parquet")


def _trajectory_llm(frame):
    return frame[(frame.source == "llm") & frame.discussion.isin(["instructed", "open", "iterative"])]


@needs_release
def test_design_levers_table_in_the_papers_order_with_differences_and_the_fitted_n(release):
    ours = analyses.manipulability_percent(release)
    table = beside.manipulability_beside(ours)
    shown = table.formatted()
    # the paper's row order (Table 24 as printed) and its labels
    assert list(shown["feature"]) == ["Global Coherence", "Max Distance", "Local Coherence", "Semantic Spread",
                                      "Topic Switching Rate", "Path Length", "Revisit Score",
                                      "Trajectory Curvature", "Convergence Ratio"]
    assert [c for c in shown.columns if c.endswith("· ours")] == [
        "Task · ours", "+Discussion · ours", "+Model · ours", "Additive · ours", "Interaction · ours"]
    sample = _trajectory_llm(release)
    fitted = sample.dropna(subset=FEATURES)
    assert len(sample) == 3574 + (len(sample) - len(fitted))  # rows with a missing feature are not fitted
    assert table.n_ours == f"{len(fitted):,}" == "3,574" and table.n_published == "3,574"
    by_hand = 100 * smf.ols("semantic_spread ~ C(task) + C(discussion) * C(model)", fitted).fit().rsquared
    row = shown[shown["feature"] == "Semantic Spread"].iloc[0]
    assert row["Interaction · ours"] == f"{by_hand:.1f}"  # the paper prints one decimal
    assert row["Interaction · published"] == "24.8"
    assert row["Interaction · ours − published"] == f"{round(by_hand, 1) - 24.8:+.1f}"


@needs_release
def test_table_24_page_heading_gives_the_fitted_n_not_the_sample_size(tmp_path, monkeypatch, release):
    from tests.support.cached_runs import cached_runs_folder

    root, env = cached_runs_folder(tmp_path, "paper_release")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    at = AppTest.from_file(str(REPO / "dashboard" / "app.py"), default_timeout=240)
    at.run()
    at.switch_page("views/paper_a_tables.py").run()
    at.selectbox(key="pat_table").set_value("24").run()
    assert not at.exception, [e.value for e in at.exception]
    headings = [re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown]
    n_sample = len(release[(release.source == "llm") | (release.source == "human")].pipe(
        lambda f: f[f.discussion.isin(["instructed", "open", "iterative"]) | (f.source == "human")]))
    assert any("N fitted = 3,574" in h and "ours" in h for h in headings), headings
    assert not any(f"N = {n_sample:,}" in h for h in headings)
    table = next(d.value for d in at.dataframe if "Task · ours − published" in d.value.columns)
    assert list(table["feature"])[:3] == ["Global Coherence", "Max Distance", "Local Coherence"]


# ------------------------------------------------------------------------------ ratings tables
@pytest.fixture(scope="module")
def ideas(tmp_path_factory):
    if not RELEASE_CSV.exists():
        pytest.skip("the paper release CSV is not beside the repository")
    from engine.importers.paper_release import read_release
    from engine.importers.ratings import ideas_with_metrics, read_ideas
    from tests.support.ideas_fixture import write_ideas

    path = tmp_path_factory.mktemp("beside") / "ideas_with_ratings_clean.csv"
    write_ideas(path)
    return ideas_with_metrics(read_ideas(path), read_release(RELEASE_CSV))


def test_table_1_rows_labels_decimals_and_n_per_source(ideas):
    (table,) = beside.beside(paper_tables.build("1", ideas))
    shown = table.formatted()
    assert list(shown["specification"]) == list(published_a.table1()["specification"])
    llm = ideas[(ideas.source == "llm") & ideas.discussion.isin(["instructed", "open", "iterative"])]
    llm = llm.dropna(subset=FEATURES + ["creativity"])
    human = ideas[ideas.source == "human"].dropna(subset=FEATURES + ["creativity"])
    assert table.n_ours == f"LLM {len(llm):,}; human {len(human):,}"
    z = llm.copy()
    for column in FEATURES + ["creativity"]:
        z[column] = (z[column] - z[column].mean()) / z[column].std(ddof=0)
    r2 = 100 * smf.ols("creativity ~ " + " + ".join(FEATURES) + " + C(task)", z).fit().rsquared
    row = shown[shown["specification"] == "Trajectory + Task"].iloc[0]
    assert row["LLM · ours"] == f"{r2:.1f}" and row["LLM · published"] == "17.6"
    assert row["LLM · ours − published"] == f"{round(r2, 1) - 17.6:+.1f}"
    # the paper has no human value with model or discussion: "–" on both sides
    assert shown.loc[shown["specification"] == "Trajectory + Task + Model", "Human · published"].item() == "–"


def test_table_7_terms_as_printed_and_interactions_matched(ideas):
    (table,) = beside.beside(paper_tables.build("7", ideas))
    frame = table.table
    published = published_a.table7()
    head = frame.iloc[: len(published)]
    assert list(zip(head["term"], head["model"])) == list(zip(published["term"], published["model"].astype(str)))
    assert table.decimals["coef"] == 4
    design = ideas[(ideas.source == "llm") & (ideas.data_type == "experiment") & (ideas.team_size == 3)
                   & (ideas.persona == "different")]
    fit = smf.ols("creativity ~ C(discussion, Treatment('none')) * C(model, Treatment('Mixed')) + C(task)",
                  design).fit(cov_type="HC3")
    name = "C(discussion, Treatment('none'))[T.open]:C(model, Treatment('Mixed'))[T.gpt-4.1]"
    row = frame[(frame["term"] == "open x gpt-4.1") & (frame["model"] == "4")].iloc[0]
    assert row["coef · ours"] == pytest.approx(round(fit.params[name], 4))
    assert row["coef · ours − published"] == pytest.approx(round(round(fit.params[name], 4) - 0.0429, 4))
    assert table.n_ours == f"{int(fit.nobs):,}" and table.n_published == "3,223"
    # the task dummies are ours only, after the paper's rows
    tail = frame.iloc[len(published):]
    assert tail["term"].str.endswith(beside.NOT_IN_PAPER).all() and len(tail) == table.extra_rows


def test_table_23_in_the_papers_order_with_both_samples(ideas):
    (table,) = beside.beside(paper_tables.build("23", ideas))
    shown = table.formatted()
    assert list(shown["feature"]) == [published_a.FEATURE_LABELS[f] for f in published_a.table23()["feature"]]
    assert table.n_ours.startswith("LLM 3,574") and "human" in table.n_ours
    assert {"llm_sig · ours", "llm_sig · published"} <= set(shown.columns)
    assert "llm_sig · ours − published" not in shown.columns  # stars have no difference


def test_every_paper_table_has_a_row_by_row_pairing(ideas):
    """Every table the ideas file allows, beside the paper's: the paper's rows come first in
    its order, no row lost."""
    for key in paper_tables.TABLES:
        if paper_tables.missing_needs(key, ideas):
            continue
        result = paper_tables.build(key, ideas)
        tables = beside.beside(result)
        assert tables, key
        for table in tables:
            published_rows = len(table.table) - table.extra_rows
            # every printed row kept (Table 8 is printed wide: one row per structure x model here)
            assert published_rows >= len(result.published), key
            first = table.keys[0]
            if first in result.published.columns:
                printed = list(dict.fromkeys(result.published[first].map(beside._key_text)))
                assert list(dict.fromkeys(table.table[first].iloc[:published_rows]))[: len(printed)] == printed \
                    or set(table.table[first].iloc[:published_rows]) == set(printed), key
            assert any(c.endswith(beside.DIFF) for c in table.table.columns), key


def test_decimals_follow_the_printed_column():
    assert beside.decimals_of([0.2, 0.35]) == 2
    assert beside.decimals_of([8.6, 17.6, None]) == 1
    assert beside.decimals_of([3223, 3223]) == 0
    assert beside.decimals_of(["***", ""]) is None
    assert beside.decimals_of([np.nan, 0.0207]) == 4
