"""The Regression page fits paper A's trajectory sample by default, says so, and agrees with
``python -m engine analyze``. Expected N are computed here from the Parquet files with pandas."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import statsmodels.api as sm
from streamlit.testing.v1 import AppTest

from dashboard.figures.labels import readable_term
from engine.cli import main
from tests.support.cached_runs import cached_runs_folder

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
FEATURES = ["local_coherence", "global_coherence", "path_length", "convergence_ratio", "max_distance",
            "trajectory_curvature", "topic_switching_rate", "revisit_score", "semantic_spread"]
TURN_BY_TURN = ["instructed", "open", "iterative"]


def _root(tmp_path, monkeypatch, name: str) -> Path:
    source = REPO / "cached_runs" / name
    if not (source / "manifest.json").exists():
        pytest.skip(f"cached_runs/{name} is not built")
    for key, value in cached_runs_folder(tmp_path, name)[1].items():
        monkeypatch.setenv(key, value)
    return source


def _regression_page(widgets=None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("views/regression.py").run()
    if widgets:
        widgets(at)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_regression_page_fits_the_trajectory_sample_on_local_runs(tmp_path, monkeypatch):
    source = _root(tmp_path, monkeypatch, "local_smollm2")
    frame = pd.read_parquet(source / "conversations.parquet")
    at = _regression_page()
    assert at.selectbox(key="reg_paper_sample").value == "trajectory"
    outcome = at.selectbox(key="reg_outcome").value
    assert outcome == "creativity"
    llm = frame[(frame["source"] == "llm") & frame["discussion"].isin(TURN_BY_TURN)]
    used = llm.dropna(subset=FEATURES + [outcome, "task"])
    every_llm = frame[frame["source"] == "llm"].dropna(subset=FEATURES + [outcome, "task"])
    assert len(used) < len(every_llm)  # the debates of paper B are not in it
    # trajectory + task: 9 features, 5 task dummies and the intercept on 18 rows: refused
    k = 1 + len(FEATURES) + used["task"].nunique() - 1
    assert len(used) - k < 5
    assert not at.error  # a refused fit is a guard, not a fault: a warning in place of the table
    refused = [w.value.replace("\\", "") for w in at.warning]
    assert any(f"fit refused: N − k = {len(used) - k} (N = {len(used)} rows, k = {k} estimated" in w for w in refused)
    assert not any(m.label.endswith(": R²") for m in at.metric)
    assert any(f"trajectory sample (Tables 1, 20-26, 28): N = {len(llm):,}" in c.value for c in at.caption)
    ladder_n = next(d.value for d in at.dataframe if "LLM N" in d.value.columns).set_index("specification")
    assert ladder_n.loc["trajectory", "LLM N"] == len(llm.dropna(subset=FEATURES + [outcome]))
    assert ladder_n.loc["trajectory", "LLM k"] == 1 + len(FEATURES)
    assert bool(ladder_n.loc["trajectory", "LLM small sample"]) is True

    # the features alone: N - k = 8, shown with the warning first and adjusted R² as the headline
    at = _regression_page(lambda at: at.checkbox(key="reg_block_task").uncheck())
    shown = {m.label: m.value for m in at.metric}
    assert shown["LLM (SmolLM2-135M): N"] == f"{len(used):,}"
    z = lambda s: (s - s.mean()) / s.std(ddof=0)  # noqa: E731
    fit = sm.OLS(z(used[outcome]), sm.add_constant(used[FEATURES].apply(z))).fit()
    assert shown["LLM (SmolLM2-135M): adjusted R²"] == f"{100 * fit.rsquared_adj:.1f}%"
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert any(w.startswith(f"LLM: warning: N = {len(used)} rows for k = 10 estimated coefficients") for w in warnings)

    def every_row(at):
        at.selectbox(key="reg_paper_sample").set_value("all")

    at = _regression_page(every_row)
    assert {m.label: m.value for m in at.metric}["LLM (SmolLM2-135M): N"] == f"{len(every_llm):,}"


def test_regression_page_agrees_with_the_cli_on_the_release(tmp_path, monkeypatch, capsys):
    source = _root(tmp_path, monkeypatch, "paper_release")
    at = _regression_page()
    outcome = at.selectbox(key="reg_outcome").value
    shown = {m.label: m.value for m in at.metric}
    page_table = next(d.value for d in at.dataframe if "term" in d.value.columns and "coef" in d.value.columns)
    others = ",".join(f for f in FEATURES if f != outcome)
    release = Path(__file__).resolve().parents[3] / "shared/data/paper_release/comprehensive_trajectory_metrics.csv"
    if not release.exists():
        pytest.skip("the paper release CSV is not beside the repository")
    capsys.readouterr()
    assert main(["analyze", "regress", "--metrics", str(release), "--outcome", outcome,
                 "--blocks", others + ",task"]) == 0
    printed = capsys.readouterr().out
    n, r2 = re.search(r"N = ([\d,]+), k = 14, N − k = [\d,]+; R² ([\d.]+) \(adj\. R² [\d.]+\)", printed).groups()
    assert shown["LLM: N"] == n
    assert shown["LLM: R²"] == f"{100 * float(r2):.1f}%"
    printed_terms = re.findall(r"^\s*(Intercept|\w+|C\(task\)\[T\.\w+\])\s+(-?\d+\.\d{4})\s+\d",
                               printed, flags=re.M)
    assert len(printed_terms) == 1 + 8 + 5  # intercept, the other eight features, five tasks
    for term, coef in printed_terms:
        page_coef = page_table.set_index("term").loc[readable_term(term), "coef"]  # page prints readable names
        assert f"{page_coef:.4f}" == coef, term


def _tables_page(widgets=None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.switch_page("views/paper_a_tables.py").run()
    if widgets:
        widgets(at)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_tables_page_on_the_release_says_what_is_missing_and_runs_table_25(tmp_path, monkeypatch):
    from engine.stats import published_a

    source = _root(tmp_path, monkeypatch, "paper_release")
    at = _tables_page()
    assert at.selectbox(key="pat_table").value == "1"
    shown = [re.sub(r"\\(.)", r"\1", i.value) for i in at.info]  # markdown escapes undone
    assert any("needs the ideas file (ideas_with_ratings_clean.csv)" in text for text in shown)
    assert any("published" in m.value and "Table 1" in m.value for m in at.markdown)

    at = _tables_page(lambda at: at.selectbox(key="pat_table").set_value("25"))
    assert at.selectbox(key="pat_sample").value == "trajectory"
    ours = next(d.value for d in at.dataframe if "share_from_interaction" in d.value.columns
                and d.value["additive"].dtype.kind == "f" and (d.value["additive"] % 0.1 > 1e-6).any())
    published = published_a.table25().set_index("feature")
    ours = ours.set_index("feature")
    assert (ours["full"].round(1) == published.loc[ours.index, "full"]).all()
    frame = pd.read_parquet(source / "conversations.parquet")
    n = len(frame[(frame.source == "llm") & frame.discussion.isin(TURN_BY_TURN)].dropna(subset=FEATURES))
    assert any(f"N = {n:,}" in t.value for t in at.text)


def test_tables_page_with_the_ideas_file_joined_on_the_data_page(tmp_path, monkeypatch):
    from tests.support.ideas_fixture import RELEASE as RELEASE_CSV
    from tests.support.ideas_fixture import build_ideas

    _root(tmp_path, monkeypatch, "paper_release")
    if not RELEASE_CSV.exists():
        pytest.skip("the paper release CSV is not beside the repository")
    ideas = build_ideas()
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.file_uploader(key="ratings_file").upload("ideas_with_ratings_clean.csv",
                                                ideas.to_csv(index=False).encode()).run()
    at.button(key="ratings_join").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(f"of {len(ideas):,} ideas" in c.value for c in at.caption)  # every idea kept
    at.switch_page("views/paper_a_tables.py").run()
    at.selectbox(key="pat_table").set_value("12").run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "creativity_se" in d.value.columns).set_index(["model", "discussion"])
    design = ideas[(ideas.data_type == "experiment") & (ideas.number_of_agents == 3) & (ideas.persona == "different")]
    cell = design[(design.models == "o3-low") & (design.discussion == "none")]["avg_creativity_rating"]
    assert table.loc[("o3-low", "none"), "N"] == len(cell) > 0
    assert table.loc[("o3-low", "none"), "creativity_mean"] == pytest.approx(cell.mean())


def test_regression_page_stars_follow_the_chosen_levels(tmp_path, monkeypatch):
    _root(tmp_path, monkeypatch, "paper_release")

    def tenths(at):
        at.radio(key="reg_stars").set_value("tenths")

    for widgets, levels in ((None, (0.05, 0.01, 0.001)), (tenths, (0.10, 0.05, 0.01))):
        at = _regression_page(widgets)
        table = next(d.value for d in at.dataframe if "stars" in d.value.columns and "coef" in d.value.columns)
        # p is shown as text ("0.0094", "<0.001"): below 0.001 every level gives its stars
        shown_p = [0.0 if str(p).startswith("<") else float(p) for p in table["p"]]
        expected = ["*" * sum(p < level for level in levels) for p in shown_p]
        assert any(e != "*" * sum(p < lv for lv in (0.05, 0.01, 0.001)) for e, p in zip(expected, shown_p)) \
            or levels == (0.05, 0.01, 0.001)  # the two choices differ on this table
        assert table["stars"].tolist() == expected
