"""engine.stats.fit against statsmodels called directly on the same data.

The paper release has no creativity ratings, so the outcome here is a synthetic test
fixture built from the release's real features plus seeded noise (never presented as a
rating); the check is that our fit equals statsmodels' formula API on the same rows.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.stats import RegressionSpec, compare_results, fit, hierarchical_specs, stars, vif

RELEASE = Path(__file__).resolve().parents[4] / "shared/data/paper_release/comprehensive_trajectory_metrics.csv"
needs_release = pytest.mark.skipif(not RELEASE.exists(), reason=f"paper release not at {RELEASE}")


@pytest.fixture(scope="module")
def llm_rows():
    from engine.importers.paper_release import read_metrics

    if not RELEASE.exists():
        pytest.skip(f"paper release not at {RELEASE}")
    df = read_metrics(RELEASE)
    rows = df[(df.source == "llm") & df.discussion.isin(["instructed", "open", "iterative"])]
    rows = rows.dropna(subset=list(PAPER_A_FEATURES)).reset_index(drop=True)
    rng = np.random.default_rng(7)
    # TEST FIXTURE, not a rating: an outcome with known structure plus noise.
    task_shift = rows.task.map({t: i * 0.05 for i, t in enumerate(sorted(rows.task.unique()))})
    rows = rows.assign(fixture_outcome=-0.3 * rows.global_coherence + 0.02 * rows.path_length
                       + task_shift + (rows.model == "o3-high") * 0.05 + rng.normal(0, 0.1, len(rows)))
    return rows


@pytest.fixture(scope="module")
def human_rows():
    from engine.importers.paper_release import read_metrics

    if not RELEASE.exists():
        pytest.skip(f"paper release not at {RELEASE}")
    df = read_metrics(RELEASE)
    rows = df[df.source == "human"].dropna(subset=list(PAPER_A_FEATURES)).reset_index(drop=True)
    rng = np.random.default_rng(8)
    return rows.assign(fixture_outcome=0.4 * rows.local_coherence + rng.normal(0, 0.1, len(rows)))


def standardised(rows, columns):
    out = rows.copy()
    for c in columns:
        out[c] = (out[c] - out[c].mean()) / out[c].std(ddof=0)
    return out


def test_ols_hc3_equals_statsmodels_formula(llm_rows):
    spec = RegressionSpec(name="t", outcome="fixture_outcome", blocks=["trajectory", "task", "model", "discussion"])
    ours = fit(spec, llm_rows)
    data = standardised(llm_rows, list(PAPER_A_FEATURES) + ["fixture_outcome"])
    formula = "fixture_outcome ~ " + " + ".join(PAPER_A_FEATURES) + " + C(task) + C(model) + C(discussion)"
    reference = smf.ols(formula, data=data).fit(cov_type="HC3")
    table = ours.table.set_index("term")
    assert set(table.index) == set(reference.params.index)
    for term in reference.params.index:
        assert table.loc[term, "coef"] == pytest.approx(reference.params[term], abs=1e-10)
        assert table.loc[term, "se"] == pytest.approx(reference.bse[term], rel=1e-8)
        assert table.loc[term, "p"] == pytest.approx(reference.pvalues[term], rel=1e-6, abs=1e-300)
        assert table.loc[term, "ci_low"] == pytest.approx(reference.conf_int().loc[term, 0], abs=1e-10)
    assert ours.summary["n"] == 3574
    assert ours.summary["r2"] == pytest.approx(reference.rsquared, abs=1e-12)
    assert ours.summary["adj_r2"] == pytest.approx(reference.rsquared_adj, abs=1e-12)
    # reference levels are the paper's: task = education inequality, model = Mixed
    assert "C(model)[T.Mixed]" not in table.index and "C(model)[T.gpt-4.1]" in table.index


def test_zscore_off_keeps_raw_scale(llm_rows):
    spec = RegressionSpec(name="raw", outcome="fixture_outcome", blocks=["global_coherence"], zscore=False)
    ours = fit(spec, llm_rows)
    reference = smf.ols("fixture_outcome ~ global_coherence", data=llm_rows).fit(cov_type="HC3")
    assert ours.coef("global_coherence") == pytest.approx(reference.params["global_coherence"], rel=1e-10)


def test_interaction_block_matches_patsy_star(llm_rows):
    spec = RegressionSpec(name="x", outcome="fixture_outcome", blocks=["task", "model_x_discussion"])
    ours = fit(spec, llm_rows).table.set_index("term")
    data = standardised(llm_rows, ["fixture_outcome"])
    reference = smf.ols("fixture_outcome ~ C(task) + C(discussion) * C(model)", data=data).fit(cov_type="HC3")
    assert len(ours) == len(reference.params)
    for term, value in reference.params.items():
        assert ours.loc[term, "coef"] == pytest.approx(value, abs=1e-9)
        assert ours.loc[term, "se"] == pytest.approx(reference.bse[term], rel=1e-7)


def test_clustered_standard_errors_match_statsmodels(llm_rows):
    rows = llm_rows.assign(condition=llm_rows.file_id.str.split("_").str[2:].str.join("_") + llm_rows.task)
    spec = RegressionSpec(name="c", outcome="fixture_outcome", blocks=["trajectory", "task"],
                          estimator="ols_cluster", cluster="condition")
    ours = fit(spec, rows).table.set_index("term")
    data = standardised(rows, list(PAPER_A_FEATURES) + ["fixture_outcome"])
    codes = pd.factorize(data["condition"])[0]
    reference = smf.ols("fixture_outcome ~ " + " + ".join(PAPER_A_FEATURES) + " + C(task)", data=data).fit(
        cov_type="cluster", cov_kwds={"groups": codes})
    for term in PAPER_A_FEATURES:
        assert ours.loc[term, "se"] == pytest.approx(reference.bse[term], rel=1e-8)


def test_mixed_model_equals_statsmodels_and_nakagawa_by_hand(llm_rows):
    spec = RegressionSpec(name="m", outcome="fixture_outcome", blocks=["trajectory", "model", "discussion"],
                          estimator="mixedlm", group="task")
    ours = fit(spec, llm_rows)
    data = standardised(llm_rows, list(PAPER_A_FEATURES) + ["fixture_outcome"])
    formula = "fixture_outcome ~ " + " + ".join(PAPER_A_FEATURES) + " + C(model) + C(discussion)"
    reference = smf.mixedlm(formula, data, groups=data["task"]).fit(reml=True, maxiter=200)
    assert reference.converged and ours.summary["converged"]
    table = ours.table.set_index("term")
    for term, value in reference.fe_params.items():
        assert table.loc[term, "coef"] == pytest.approx(value, abs=1e-5)
        assert table.loc[term, "se"] == pytest.approx(reference.bse_fe[term], rel=1e-3)
    # Nakagawa & Schielzeth by hand from the reference fit
    var_f = np.var(reference.model.exog @ reference.fe_params.to_numpy())
    var_g = float(reference.cov_re.iloc[0, 0])
    total = var_f + var_g + reference.scale
    assert ours.summary["marginal_r2"] == pytest.approx(var_f / total, rel=1e-4)
    assert ours.summary["conditional_r2"] == pytest.approx((var_f + var_g) / total, rel=1e-4)
    assert table.loc["Group Var", "coef"] == pytest.approx(var_g, rel=1e-3)
    assert ours.summary["conditional_r2"] > ours.summary["marginal_r2"]


def test_hierarchical_ladder_matches_table1_structure():
    llm = hierarchical_specs("creativity", "llm")
    assert [s.blocks for s in llm] == [
        ["trajectory"], ["trajectory", "task"], ["trajectory", "task", "model"],
        ["trajectory", "task", "model", "discussion"], ["trajectory", "model", "discussion"]]
    assert [s.estimator for s in llm] == ["ols_hc3"] * 4 + ["mixedlm"]
    human = hierarchical_specs("creativity", "human")
    assert [s.blocks for s in human] == [["trajectory"], ["trajectory", "task"], ["trajectory"]]
    assert human[-1].group == "task"
    with pytest.raises(InputError, match="sample"):
        hierarchical_specs(sample="robots")


def test_hierarchical_r2_increases_along_ladder(llm_rows):
    r2 = [fit(s, llm_rows).summary["r2"] for s in hierarchical_specs("fixture_outcome")[:4]]
    assert r2 == sorted(r2)


def test_compare_results_is_table23_shape(llm_rows, human_rows):
    spec = RegressionSpec(name="t23", outcome="fixture_outcome", blocks=["trajectory", "task"])
    llm, human = fit(spec, llm_rows), fit(spec, human_rows)
    table = compare_results(llm, human)
    assert list(table.term) == list(PAPER_A_FEATURES) + [t for t in llm.table.term if t.startswith("C(task)")]
    row = table.set_index("term").loc["local_coherence"]
    assert row["diff"] == pytest.approx(llm.coef("local_coherence") - human.coef("local_coherence"))
    se_l = llm.table.set_index("term").loc["local_coherence", "se"]
    se_h = human.table.set_index("term").loc["local_coherence", "se"]
    assert row["diff_se"] == pytest.approx(np.hypot(se_l, se_h))
    assert {"LLM_coef", "LLM_se", "LLM_stars", "Human_coef", "Human_se", "Human_stars"} <= set(table.columns)


def test_stars_thresholds():
    assert [stars(p) for p in (0.2, 0.04, 0.009, 0.0001)] == ["", "*", "**", "***"]
    assert stars(0.08, (0.10, 0.05, 0.01)) == "*"  # Table 20's convention


def test_vif_equals_statsmodels(llm_rows):
    from statsmodels.stats.outliers_influence import variance_inflation_factor

    ours = vif(llm_rows)
    X = sm.add_constant(llm_rows[list(PAPER_A_FEATURES)].to_numpy())
    expected = [variance_inflation_factor(X, j) for j in range(1, X.shape[1])]
    assert ours["vif"].to_numpy() == pytest.approx(expected, rel=1e-8)
    assert ours.attrs["n"] == 3574
    assert (ours["vif"] < 10).all()  # paper A, Methods: "All VIF values were below 10"


def test_spec_from_yaml_and_dict(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("name: m\noutcome: creativity\nblocks: [trajectory, task]\nestimator: mixedlm\n"
                    "group: task\nzscore: false\n")
    spec = RegressionSpec.from_yaml(path)
    assert (spec.outcome, spec.blocks, spec.estimator, spec.zscore) == ("creativity", ["trajectory", "task"], "mixedlm", False)
    assert RegressionSpec.from_dict(spec.to_dict()) == spec
    with pytest.raises(InputError, match="unknown specification key"):
        RegressionSpec.from_dict({"name": "x", "outcome": "y", "blok": ["task"]})
    with pytest.raises(InputError, match="estimator"):
        RegressionSpec.from_dict({"name": "x", "outcome": "y", "blocks": ["task"], "estimator": "gls"})
    (tmp_path / "bad.yaml").write_text("name: [unclosed\n")
    with pytest.raises(InputError, match="not valid YAML"):
        RegressionSpec.from_yaml(tmp_path / "bad.yaml")


# Bad input: each names which and why.

def small_frame(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                         "task": np.resize(["a", "b", "c", "d"], n), "model": "gpt-4.1",
                         "y": rng.normal(size=n)})


def test_missing_column_is_named():
    spec = RegressionSpec(name="s", outcome="y", blocks=["x1", "tokens"])
    with pytest.raises(InputError, match="column 'tokens' is not in the data") as info:
        fit(spec, small_frame())
    assert info.value.field == "tokens"


def test_factor_with_one_level_is_named():
    with pytest.raises(InputError, match="factor 'model' has one level \\('gpt-4.1'\\)"):
        fit(RegressionSpec(name="s", outcome="y", blocks=["x1", "model"]), small_frame())


def test_sample_too_small():
    spec = RegressionSpec(name="s", outcome="y", blocks=["x1", "x2", "task"])
    with pytest.raises(InputError, match="sample too small: 5 row\\(s\\) for 6 parameters"):
        fit(spec, small_frame(n=5))


def test_singular_design_names_the_collinear_column():
    df = small_frame().assign(x3=lambda d: 2 * d.x1 - d.x2)
    with pytest.raises(InputError, match="singular design: x3 is an exact linear combination"):
        fit(RegressionSpec(name="s", outcome="y", blocks=["x1", "x2", "x3"], zscore=False), df)


def test_constant_predictor_is_named():
    df = small_frame().assign(flat=1.0)
    with pytest.raises(InputError, match="column 'flat' is constant"):
        fit(RegressionSpec(name="s", outcome="y", blocks=["x1", "flat"]), df)


def _unconverged_exact_fit():
    """A near-exact fit (no residual variance left) on which statsmodels itself reports
    non-convergence. Whether a given draw converges depends on the statsmodels/NumPy build,
    so the first of a few seeded draws that statsmodels flags is used."""
    for seed in range(20):
        rng = np.random.default_rng(seed)
        df = pd.DataFrame(rng.normal(size=(12, 3)), columns=["a", "b", "c"])
        df["task"] = np.repeat(["t1", "t2", "t3"], 4)
        df["y"] = df.a + 2 * df.b + 3 * df.c + rng.normal(0, 1e-9, 12)
        try:
            direct = sm.MixedLM(df.y, sm.add_constant(df[["a", "b", "c"]]),
                                groups=df.task).fit(reml=True, maxiter=200)
        except np.linalg.LinAlgError:
            continue
        if not direct.converged:  # statsmodels itself says so
            return df
    pytest.skip("no seeded draw fails to converge with this statsmodels build")


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.ConvergenceWarning")
def test_mixed_model_that_fails_to_converge():
    df = _unconverged_exact_fit()
    spec = RegressionSpec(name="nc", outcome="y", blocks=["a", "b", "c"], estimator="mixedlm")
    with pytest.raises(InputError, match="the mixed model did not converge"):
        fit(spec, df)
    result = fit(spec, df, allow_nonconvergence=True)
    assert result.summary["converged"] is False
    assert any("ConvergenceWarning" in w for w in result.summary["warnings"])


def test_group_both_fixed_and_random_is_refused():
    spec = RegressionSpec(name="s", outcome="y", blocks=["x1", "task"], estimator="mixedlm")
    with pytest.raises(InputError, match="both a fixed-effect block and the random-intercept group"):
        fit(spec, small_frame())


def test_rows_with_missing_values_are_dropped_and_reported():
    df = small_frame()
    df.loc[:4, "x1"] = np.nan
    result = fit(RegressionSpec(name="s", outcome="y", blocks=["x1", "x2"]), df)
    assert result.summary["n"] == 35 and result.summary["n_dropped"] == 5
    assert "dropped 5 row(s)" in result.summary["warnings"][0]


def test_outcome_among_predictors_is_refused():
    df = small_frame()
    with pytest.raises(InputError, match="the outcome 'x1' is also a predictor"):
        fit(RegressionSpec(name="s", outcome="x1", blocks=["x1", "x2"]), df)


def test_simple_effects_equal_statsmodels_contrasts(llm_rows):
    """Table 8: discussion effect within each model = main + interaction, SE from the HC3 covariance."""
    from engine.stats import simple_effects

    spec = RegressionSpec(name="t7", outcome="fixture_outcome", blocks=["task", "model_x_discussion"], zscore=False)
    result = fit(spec, llm_rows)
    effects = simple_effects(result).set_index(["factor_level", "by_level"])
    reference = smf.ols("fixture_outcome ~ C(task) + C(discussion) * C(model)", data=llm_rows).fit(cov_type="HC3")
    main = "C(discussion)[T.open]"
    test = reference.t_test(f"{main} + {main}:C(model)[T.o3-high] = 0")
    assert effects.loc[("open", "o3-high"), "effect"] == pytest.approx(float(test.effect[0]), rel=1e-8)
    assert effects.loc[("open", "o3-high"), "se"] == pytest.approx(float(test.sd[0, 0]), rel=1e-8)
    assert effects.loc[("open", "Mixed"), "effect"] == pytest.approx(reference.params[main], rel=1e-8)
    assert effects.loc[("open", "o3-high"), "p"] == pytest.approx(float(test.pvalue), rel=1e-6)


def test_table7_ladder_uses_papers_references(llm_rows):
    """Table 7 reference categories: discussion = none, model = Mixed (here: none is absent,
    so the fixture uses instructed as the only other choice and must be refused clearly)."""
    from engine.stats import discussion_specs

    specs = discussion_specs("fixture_outcome")
    assert [s.blocks[-1] for s in specs] == ["discussion", "model", "task", "model_x_discussion"]
    with pytest.raises(InputError, match="reference level 'none' of 'discussion' is not among its levels"):
        fit(specs[0], llm_rows)
    rows = llm_rows.assign(discussion=llm_rows.discussion.replace({"instructed": "none"}))
    result = fit(specs[2], rows)
    reference = smf.ols("fixture_outcome ~ C(discussion, Treatment('none')) + C(model) + C(task)", data=rows).fit()
    assert result.summary["r2"] == pytest.approx(reference.rsquared, abs=1e-12)
    assert result.coef("C(discussion)[T.open]") == pytest.approx(
        reference.params["C(discussion, Treatment('none'))[T.open]"], rel=1e-9)
