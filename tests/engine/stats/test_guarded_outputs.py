"""The sample guards (engine.stats.guards) where the numbers come out: fits, the command line,
the Table 1 ladder, Table 24, the Quality–Diversity table, the paper-table picker, small-model
labels and the exports. Values checked against statsmodels and by hand."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from statsmodels.stats.proportion import proportion_confint

from engine.cli import main
from engine.stats import RegressionSpec, fit
from engine.stats.guards import SampleTooSmall


def rows(n, seed=0):
    """n rows: outcome y, three predictors, a 4-level factor (k = 1 + 3 + 3 = 7)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.normal(size=n),
                          "g": np.resize(["p", "q", "r", "s"], n)})
    return frame.assign(y=frame["a"] + 0.5 * rng.normal(size=n))


SPEC = dict(name="y", outcome="y", blocks=["a", "b", "c", "g"], estimator="ols_hc3", zscore=False)


@pytest.mark.parametrize("n, refused", [(11, True), (12, False), (17, False), (70, False)])
def test_fit_refuses_below_five_residual_df_and_flags_below_ten_per_coefficient(n, refused):
    data = rows(n)
    if refused:  # N − k = 4
        with pytest.raises(SampleTooSmall, match="fit refused: N − k = 4 \\(N = 11 rows, k = 7"):
            fit(RegressionSpec(**SPEC), data)
        return
    result = fit(RegressionSpec(**SPEC), data)
    s = result.summary
    X = sm.add_constant(pd.concat([data[["a", "b", "c"]], pd.get_dummies(data["g"], drop_first=True, dtype=float)],
                                  axis=1))
    ols = sm.OLS(data["y"], X).fit()
    assert (s["n"], s["k"], s["df_resid"]) == (n, 7, n - 7) and s["df_resid"] == ols.df_resid
    assert s["adj_r2"] == pytest.approx(ols.rsquared_adj) and s["r2"] == pytest.approx(ols.rsquared)
    assert s["small_sample"] is (n < 70)
    assert (s["sample_warning"] or "").startswith("warning: N = " if n < 70 else "")


def test_regress_cli_warns_refuses_and_writes_n_k(tmp_path, capsys):
    path = tmp_path / "t.csv"
    rows(21).assign(source="llm").to_csv(path, index=False)
    argv = ["analyze", "regress", "--metrics", str(path), "--sample", "all", "--outcome", "y", "--no-zscore"]
    assert main([*argv, "--blocks", "a,b,c,g", "--out", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    header, warning = out.splitlines()[:2]
    ols = sm.OLS(rows(21)["y"], sm.add_constant(pd.concat(
        [rows(21)[["a", "b", "c"]], pd.get_dummies(rows(21)["g"], drop_first=True, dtype=float)], axis=1))).fit()
    assert f"N = 21, k = 7, N − k = 14; adjusted R² {ols.rsquared_adj:.3f} (R² {ols.rsquared:.3f})" in header
    assert warning.startswith("warning: N = 21 rows for k = 7 estimated coefficients")
    summary = json.loads((tmp_path / "r.json").read_text())[0]["summary"]
    assert (summary["n"], summary["k"], summary["small_sample"]) == (21, 7, True)
    assert summary["adj_r2"] == pytest.approx(ols.rsquared_adj)
    assert main([*argv, "--blocks", "a,b,c,g", "--out", str(tmp_path / "r.csv")]) == 0
    table = pd.read_csv(tmp_path / "r.csv")
    assert {"n", "k", "adj_r2", "small_sample"} <= set(table.columns) and table["small_sample"].all()
    capsys.readouterr()
    path.write_text(rows(11).assign(source="llm").to_csv(index=False))
    assert main([*argv, "--blocks", "a,b,c,g"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "fit refused: N − k = 4 (N = 11 rows, k = 7" in captured.err
    assert captured.out == ""


def test_ladder_refuses_each_rung_on_its_own():
    from engine.stats.paper_tables import ladder

    rng = np.random.default_rng(1)
    features = ["local_coherence", "global_coherence", "path_length", "convergence_ratio", "max_distance",
                "trajectory_curvature", "topic_switching_rate", "revisit_score", "semantic_spread"]
    n = 17  # trajectory: k = 10, N − k = 7 (small); + task (6 tasks): k = 15, N − k = 2 (refused)
    frame = pd.DataFrame({f: rng.normal(size=n) for f in features}).assign(
        source="llm", creativity=rng.normal(size=n), task=np.resize(list("abcdef"), n), model="m",
        discussion="open")
    parts, notes = ladder(frame, sources=("llm",))
    fits = parts["llm fit"].set_index("model")
    assert "trajectory" in fits.index and not any(name.startswith("+task") for name in fits.index)
    assert (fits.loc["trajectory", "k"], fits.loc["trajectory", "n_minus_k"]) == (10, 7)
    assert bool(fits.loc["trajectory", "small_sample"])
    assert any("+task" in note and "fit refused: N − k = 2 (N = 17 rows, k = 15" in note for note in notes)
    r2 = parts["R² (%)"].set_index("specification")
    X = sm.add_constant((frame[features] - frame[features].mean()) / frame[features].std(ddof=0))
    ols = sm.OLS(frame["creativity"], X).fit()
    assert r2.loc["trajectory", "LLM"] == pytest.approx(100 * ols.rsquared)
    assert r2.loc["trajectory", "LLM adj."] == pytest.approx(100 * ols.rsquared_adj)


def test_manipulability_guards_each_column():
    from engine.measures.trajectory import PAPER_A_FEATURES
    from engine.stats.manipulability import adjusted_r2, guard_lines, manipulability

    rng = np.random.default_rng(2)
    n = 20  # task (2 levels): k = 2; + discussion (3): 4; + model (3): 4; additive: 6; interaction: 10
    frame = pd.DataFrame({f: rng.normal(size=n) for f in PAPER_A_FEATURES}).assign(
        task=np.resize(["t1", "t2"], n), discussion=np.resize(["d1", "d2", "d3"], n),
        model=np.resize(["m1", "m1", "m2", "m2", "m3"], n))
    table = manipulability(frame)
    fits = table.attrs["fits"]
    assert {name: fit["k"] for name, fit in fits.items()} == {"task": 2, "task+discussion": 4, "task+model": 4,
                                                               "additive": 6, "interaction": 10}
    assert [name for name, fit in fits.items() if not fit["small_sample"]] == ["task"]  # 20 = 10 x 2
    assert not any(fit["refuse"] for fit in fits.values())
    X = sm.add_constant(pd.get_dummies(frame[["task", "discussion", "model"]], drop_first=True, dtype=float))
    ols = sm.OLS(frame["semantic_spread"], X).fit()
    assert table.loc["semantic_spread", "additive"] == pytest.approx(max(0.0, ols.rsquared))
    assert adjusted_r2(table).loc["semantic_spread", "additive"] == pytest.approx(
        1 - (1 - table.loc["semantic_spread", "additive"]) * (n - 1) / (n - 6))
    assert guard_lines(table)[0].startswith("warning: N = 20 rows, fewer than 10 per estimated coefficient")
    small = manipulability(frame.head(13))  # interaction (rank 9 here): N − k = 4 -> refused; the others shown
    assert small.attrs["fits"]["interaction"]["refuse"] and small["interaction"].isna().all()
    assert small["additive"].notna().all()
    assert any(line.startswith("not fitted (fewer than 5 residual degrees of freedom): interaction (N − k = 4)")
               for line in guard_lines(small))


def test_quality_diversity_intervals_stay_in_range_and_need_three_groups():
    from dashboard.page_data import quality_diversity as qd

    inter = pd.DataFrame({"method": ["homo_mad", "creative_mad"], "condition": ["H", "C"],
                          "ablation": ["neither (Homo MAD)", "CLA + EPS (Creative-MAD)"], "k": [None, 2],
                          "task": ["t1", "t1"], "vendi_per_group": [[1.05, 1.02, 4.9], [3.0, 3.5]],
                          "div_bleu_per_group": [[0.02, 0.01, 0.9], [0.5, 0.6]]})
    conversations = pd.DataFrame({"conversation_id": list("abcd"), "discussion": "homo_mad", "task": "t1",
                                  "team_size": 3, "rounds": 1, "temperature": 1.0, "model": "m"})
    rubric = pd.DataFrame({"kind": "rubric", "conversation_id": list("abcd"), "round": [None] * 4,
                           "score": [1.0, 1.0, 9.0, 1.0]})
    pairwise = pd.DataFrame({"task": ["t1"] * 4, "condition_x": ["H"] * 4, "condition_y": ["C"] * 4,
                             "score_x": [1.0, 0.5, 0.0, 1.0]})
    summary = qd.condition_summary(inter, conversations, rubric, pairwise, group_size=5).set_index("condition")
    homo = summary.loc["H"]
    # a t interval over these 3 groups goes below Vendi's floor of 1; ours stays in [1, 5]
    assert 1.0 <= homo["vendi_lo"] < homo["vendi"] < homo["vendi_hi"] <= 5.0
    assert 0.0 <= homo["div_bleu_lo"] and homo["div_bleu_hi"] <= 1.0
    creative = summary.loc["C"]  # two groups: the values, no interval, and the words
    assert creative["vendi"] == pytest.approx(3.25) and np.isnan(creative["vendi_lo"]) and np.isnan(creative["vendi_hi"])
    assert "Vendi: too few groups for an interval (n = 2)" in creative["interval_note"]
    built = summary.drop(index=["H", "C"]).iloc[0]  # the sessions' own condition label: rubric in [1, 10]
    assert built["rubric"] == 3.0 and 1.0 <= built["rubric_lo"] and built["rubric_hi"] <= 10.0
    # win rate of H over C: 2.5 of 4 comparisons; Wilson as statsmodels
    low, high = proportion_confint(2.5, 4, method="wilson")
    assert (homo["win_rate"], homo["win_rate_lo"], homo["win_rate_hi"]) == pytest.approx((0.625, low, high))


def test_table_picker_says_what_the_data_lack_before_a_table_is_chosen():
    from engine.stats.paper_tables import picker_label

    release_like = pd.DataFrame({"source": ["llm"], "local_coherence": [0.5]})
    assert picker_label("7", release_like) == ("Table 7: creativity on discussion structure (models 1-4) "
                                               "[needs the authors' ideas file: published only]")
    rated = release_like.assign(creativity=[0.3], novelty=[0.2], usefulness=[0.4])
    assert picker_label("7", rated) == "Table 7: creativity on discussion structure (models 1-4)"


@pytest.mark.parametrize("name, size, label", [
    ("SmolLM2-135M-Instruct.Q4_1", 135e6, "SmolLM2-135M"), ("Qwen3-8B", 8e9, "Qwen3-8B"),
    ("gpt-4.1", None, "gpt-4.1"), ("Gemma-3-12B-Instruct", 12e9, "Gemma-3-12B")])
def test_model_sizes_from_names(name, size, label):
    from engine.stats.guards import model_label, model_size, small_model_label

    assert model_size(name) == size and model_label(name) == label
    assert small_model_label([name]) == ("SmolLM2-135M" if name.startswith("SmolLM2") else None)


def test_exports_keep_the_caveats_a_page_showed():
    from dashboard.exports.report import shown_as_items

    table = pd.DataFrame({"x": [1]})
    shown = {"reg_table": ("table", "Regression", table,
                           {"heading": ("ours", "Coefficients"), "selection": "dataset d",
                            "caveats": ["LLM: warning: N = 18 rows for k = 10 estimated coefficients"]}),
             "reg_paper": ("table", "Regression", table,
                           {"heading": ("published", "Paper A, Table 1"), "selection": "",
                            "caveats": ["LLM: warning: N = 18 rows for k = 10 estimated coefficients"]})}
    items = {item.slug: item for item in shown_as_items(shown)}
    assert items["regression_reg_table"].caption == "LLM: warning: N = 18 rows for k = 10 estimated coefficients"
    assert items["regression_reg_paper"].caption == ""  # a published table carries no caveat of ours


@pytest.mark.slow  # embeds the local runs' final outputs with MiniLM (about a minute on a free machine)
def test_small_model_headline_is_labelled_and_set_apart_from_the_published_one(tmp_path, monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from dashboard.exports.report import shown_as_items
    from tests.support.cached_runs import cached_runs_folder

    repo = Path(__file__).resolve().parents[3]
    if not (repo / "cached_runs" / "local_smollm2" / "manifest.json").exists():
        pytest.skip("cached_runs/local_smollm2 is not built")
    for key, value in cached_runs_folder(tmp_path, "local_smollm2")[1].items():
        monkeypatch.setenv(key, value)
    at = AppTest.from_file(str(repo / "dashboard" / "app.py"), default_timeout=600)
    at.run()
    at.switch_page("views/diversity.py").run()
    assert not at.exception, [e.value for e in at.exception]
    frame = pd.read_parquet(repo / "cached_runs" / "local_smollm2" / "conversations.parquet")
    runs = int(frame["discussion"].isin(["creative_mad", "homo_mad"]).sum())
    labels = [m.label for m in at.metric]
    assert f"Creative-MAD vs Homo MAD, vendi (SmolLM2-135M, {runs} runs)" in labels
    sentence = (f"published: Qwen3-8B and Gemma-3-12B-Instruct, 15 runs per query; ours: SmolLM2-135M, {runs} runs "
                "— different models and scale, not comparable")
    assert any(c.value.replace("\\", "") == sentence for c in at.caption)
    # the figures shown after it are exported with the sentence as their caption
    items = [item for item in shown_as_items(dict(at.session_state["shown_items"]))
             if item.title.startswith("Diversity:") and not item.published]
    assert items and all(sentence in item.caption for item in items), [(i.title, i.caption) for i in items]
