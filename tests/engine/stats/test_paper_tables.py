"""Paper A's tables (engine.stats.paper_tables) against statsmodels / scipy / pandas written here.

Idea-level tables run on the constructed ideas file (tests/support/ideas_fixture.py: real metrics ids,
synthetic ratings), so only the machinery is checked there; the metrics-only tables (24, 25)
run on the real release and are compared with the published values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats as scipy_stats
from statsmodels.stats.anova import anova_lm

from engine.cli import main
from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.importers.paper_release import read_release
from engine.importers.ratings import ideas_with_metrics, read_ideas
from engine.stats import paper_tables, published_a
from tests.support.ideas_fixture import RELEASE, write_ideas

pytestmark = pytest.mark.skipif(not RELEASE.exists(), reason=f"paper release not at {RELEASE}")
FEATURES = list(PAPER_A_FEATURES)


@pytest.fixture(scope="module")
def ideas_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("tables") / "ideas_with_ratings_clean.csv"
    write_ideas(path)
    return path


@pytest.fixture(scope="module")
def data(ideas_path):
    return ideas_with_metrics(read_ideas(ideas_path), read_release(RELEASE))


@pytest.fixture(scope="module")
def design(data):
    """Tables 7, 8, 12, 15's sample written out here: LLM team ideas, 3 agents, different personas."""
    return data[(data.source == "llm") & (data.data_type == "experiment") & (data.team_size == 3)
                & (data.persona == "different")].copy()


def zscored(frame, columns):
    out = frame.copy()
    for c in columns:
        out[c] = (frame[c] - frame[c].mean()) / frame[c].std(ddof=0)
    return out


def test_table7_model4_matches_statsmodels_hc3(data, design):
    result = paper_tables.build("7", data)
    assert result.n == len(design)
    reference = smf.ols("creativity ~ C(discussion, Treatment('none')) * C(model, Treatment('Mixed')) + C(task)",
                        data=design).fit(cov_type="HC3")
    ours = result.parts["coefficients (HC3)"]
    ours = ours[ours["model"] == "+interaction"].set_index("term")
    term = "C(discussion)[T.iterative]:C(model)[T.gpt-4.1]"
    theirs = "C(discussion, Treatment('none'))[T.iterative]:C(model, Treatment('Mixed'))[T.gpt-4.1]"
    assert ours.loc[term, "coef"] == pytest.approx(reference.params[theirs], rel=1e-9)
    assert ours.loc[term, "se"] == pytest.approx(reference.bse[theirs], rel=1e-9)
    fit = result.parts["fit"].set_index("model")
    assert fit.loc["+interaction", "r2"] == pytest.approx(reference.rsquared, rel=1e-9)
    assert fit.loc["+interaction", "n"] == len(design)
    # stars at the levels of the paper's Table 7 (.10/.05/.01)
    assert result.star_levels == (0.10, 0.05, 0.01)
    assert all(s == "*" * sum(p < level for level in (0.10, 0.05, 0.01)) for s, p in zip(ours["stars"], ours["p"]))


def test_table8_simple_effect_is_main_plus_interaction(data, design):
    effects = paper_tables.build("8", data).parts["effect vs none, within model"].set_index(["factor_level", "by_level"])
    reference = smf.ols("creativity ~ C(discussion, Treatment('none')) * C(model, Treatment('Mixed')) + C(task)",
                        data=design).fit(cov_type="HC3")
    main_term = "C(discussion, Treatment('none'))[T.open]"
    both = f"{main_term} + {main_term}:C(model, Treatment('Mixed'))[T.o3-high] = 0"
    test = reference.t_test(both)
    assert effects.loc[("open", "o3-high"), "effect"] == pytest.approx(float(test.effect[0]), rel=1e-9)
    assert effects.loc[("open", "o3-high"), "se"] == pytest.approx(float(test.sd[0, 0]), rel=1e-9)
    assert effects.loc[("open", "Mixed"), "effect"] == pytest.approx(reference.params[main_term], rel=1e-9)


def test_table10_likelihood_ratio_test(data):
    result = paper_tables.build("10", data)
    rows = data[(data.source == "llm") & data.discussion.isin(["instructed", "open", "iterative"])].copy()
    rows["team_size"] = rows["team_size"].astype(int)
    code = rows["condition_code"].astype(str)
    rows["rounds"] = np.where(code.str.contains("R60_M30"), "60_min30", code.str.extract(r"_R(30|60)")[0])
    full = smf.ols("creativity ~ C(rounds, Treatment('30')) + C(discussion) + C(model) + C(persona) "
                   "+ C(team_size) + C(task)", data=rows).fit()
    reduced = smf.ols("creativity ~ C(discussion) + C(model) + C(persona) + C(team_size) + C(task)", data=rows).fit()
    lr, p, df_diff = full.compare_lr_test(reduced)
    tests = result.parts["omnibus tests"].set_index("test")
    assert tests.loc["likelihood ratio", "statistic"] == pytest.approx(lr, rel=1e-8)
    assert tests.loc["likelihood ratio", "p"] == pytest.approx(p, rel=1e-8)
    assert tests.loc["likelihood ratio", "df"] == df_diff == 2
    coefficients = result.parts["length vs 30 rounds"].set_index("term")
    assert coefficients.loc["C(rounds)[T.60]", "coef"] == pytest.approx(
        full.params["C(rounds, Treatment('30'))[T.60]"], rel=1e-9)
    assert coefficients.loc["C(rounds)[T.60]", "se"] == pytest.approx(
        full.bse["C(rounds, Treatment('30'))[T.60]"], rel=1e-9)


def test_table12_and_table5_descriptives(data, design):
    table = paper_tables.build("12", data).parts["mean (SE)"].set_index(["model", "discussion"])
    cell = design[(design.model == "gpt-4.1") & (design.discussion == "iterative")]["novelty"]
    assert table.loc[("gpt-4.1", "iterative"), "N"] == len(cell)
    assert table.loc[("gpt-4.1", "iterative"), "novelty_mean"] == pytest.approx(cell.mean())
    assert table.loc[("gpt-4.1", "iterative"), "novelty_se"] == pytest.approx(cell.std(ddof=1) / np.sqrt(len(cell)))
    five = paper_tables.build("5", data).parts["mean (SD)"].set_index(["task", "group"])
    llm_with_baselines = data[(data.source == "llm")]
    assert five.loc[("Overall", "LLM"), "N"] == len(llm_with_baselines)  # baselines in, as the paper's 4,720
    assert five.loc[("Overall", "Human"), "creativity_sd"] == pytest.approx(
        data.loc[data.source == "human", "creativity"].std(ddof=1))


def test_table4_icc_matches_a_two_way_anova(data):
    table = paper_tables.build("4", data).parts["ICC(3,k)"].set_index(["task", "dimension"])
    part = data[data.task == "plastic_waste"]
    raters = ["N2", "N4", "N5", "N7", "N9"]
    x = part[raters].to_numpy(dtype=float)  # two-way ANOVA without replication, written out
    n, k = x.shape
    grand = x.mean()
    ss_targets = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_raters = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ss_error = ((x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + grand) ** 2).sum()
    assert ss_targets + ss_raters + ss_error == pytest.approx(((x - grand) ** 2).sum())
    ms_targets, ms_error = ss_targets / (n - 1), ss_error / ((n - 1) * (k - 1))
    assert table.loc[("plastic_waste", "novelty"), "icc"] == pytest.approx((ms_targets - ms_error) / ms_targets,
                                                                           rel=1e-9)
    assert table.loc[("plastic_waste", "novelty"), "N"] == len(part)


def test_table13_top10_counts(data):
    table = paper_tables.build("13", data).parts["top 10 per task"].set_index("task")
    ideas = data[(data.source == "human") | (data.data_type == "experiment")]
    for task, part in ideas.groupby("task"):
        top = part.nlargest(10, "usefulness")
        assert table.loc[task, "usefulness_human"] == (top.source == "human").sum()
    assert table.loc["Total", "creativity_human"] + table.loc["Total", "creativity_llm"] == 60


def test_table16_one_way_anova(data):
    result = paper_tables.build("16", data)
    rows = data.loc[data.index.isin(paper_tables.samples.select(data, "persona_gpt41").index)]
    anova = anova_lm(smf.ols("creativity ~ C(persona)", data=rows).fit())
    tests = result.parts["tests"].set_index(["measure", "test"])
    assert tests.loc[("creativity", "one-way ANOVA"), "statistic"] == pytest.approx(anova.loc["C(persona)", "F"])
    assert tests.loc[("creativity", "one-way ANOVA"), "p"] == pytest.approx(anova.loc["C(persona)", "PR(>F)"])
    assert set(rows.model) == {"gpt-4.1"}


def test_table20_ladder_coefficients_and_tenths_stars(data):
    result = paper_tables.build("20", data)
    llm = data[(data.source == "llm") & data.discussion.isin(["instructed", "open", "iterative"])]
    llm = zscored(llm.dropna(subset=FEATURES + ["creativity"]), FEATURES + ["creativity"])
    reference = smf.ols("creativity ~ " + " + ".join(FEATURES) + " + C(task)", data=llm).fit(cov_type="HC3")
    ours = result.parts["llm coefficients"]
    ours = ours[ours["model"] == "+task"].set_index("term")
    for feature in FEATURES:
        assert ours.loc[feature, "coef"] == pytest.approx(reference.params[feature], rel=1e-8, abs=1e-12)
        assert ours.loc[feature, "se"] == pytest.approx(reference.bse[feature], rel=1e-8)
    assert result.star_levels == (0.10, 0.05, 0.01)
    assert paper_tables.star_levels("conventional", "20") == (0.05, 0.01, 0.001)


def test_table22_r2_within_each_model(data):
    table = paper_tables.build("22", data).parts["R² (%)"].set_index("model")
    llm = data[(data.source == "llm") & data.discussion.isin(["instructed", "open", "iterative"])]
    part = llm[llm.model == "o3-high"].dropna(subset=FEATURES + ["creativity"])
    reference = smf.ols("creativity ~ " + " + ".join(FEATURES) + " + C(task)", data=part).fit()
    assert table.loc["o3-high", "+task"] == pytest.approx(100 * reference.rsquared, rel=1e-9)


def test_tables_26_and_28_variants(data):
    t26 = paper_tables.build("26", data).parts["standardized coefficients"].set_index("feature")
    human = data[data.source == "human"]
    robust = [f + "_4b" for f in FEATURES]
    part = zscored(human.dropna(subset=robust + ["creativity"]), robust + ["creativity"])
    reference = smf.ols("creativity ~ " + " + ".join(robust) + " + C(task)", data=part).fit()
    assert t26.loc["global_coherence", "human_4b"] == pytest.approx(reference.params["global_coherence_4b"], rel=1e-8)
    t28 = paper_tables.build("28", data).parts["standardized coefficients"].set_index("feature")
    llm = data[(data.source == "llm") & data.discussion.isin(["instructed", "open", "iterative"])]
    llm = llm.assign(additive=llm.novelty + llm.usefulness).dropna(subset=FEATURES + ["additive"])
    llm = zscored(llm, FEATURES + ["additive"])
    reference = smf.ols("additive ~ " + " + ".join(FEATURES) + " + C(task)", data=llm).fit()
    assert t28.loc["semantic_spread", "llm_sum"] == pytest.approx(reference.params["semantic_spread"], rel=1e-8)


def test_table29_token_control(data):
    result = paper_tables.build("29", data)
    rows = data[(data.source == "llm") & (data.data_type == "experiment") & (data.discussion != "none")]
    reference = smf.ols("creativity ~ C(discussion, Treatment('progressive')) + C(model) + C(task) + tokens",
                        data=rows).fit(cov_type="HC3")
    table = result.parts["coefficients (HC3)"].set_index("term")
    assert table.loc["tokens", "coef"] == pytest.approx(reference.params["tokens"], rel=1e-8)
    assert table.loc["C(discussion)[T.open]", "coef"] == pytest.approx(
        reference.params["C(discussion, Treatment('progressive'))[T.open]"], rel=1e-8)


def test_figure1_top5_within_each_group(data):
    result = paper_tables.build("fig1", data)
    tails = result.parts["c-d: upper tail (creativity)"].set_index("group")
    human = data.loc[data.source == "human", "creativity"].sort_values(ascending=False)
    k = int(len(human) * 0.05)
    assert tails.loc["human", "top_n"] == k
    assert tails.loc["human", "top_mean"] == pytest.approx(human.iloc[:k].mean())
    assert tails.loc["human", "top_sd"] == pytest.approx(human.iloc[:k].std(ddof=1))
    assert tails.loc["human", "p95"] == pytest.approx(np.percentile(human, 95))
    panel = result.parts["a-b: LLM vs human"].set_index("measure")
    llm = data.loc[(data.source == "llm") & (data.data_type == "experiment"), "novelty"]
    assert panel.loc["novelty", "llm_n"] == len(llm)
    t = scipy_stats.ttest_ind(llm, data.loc[data.source == "human", "novelty"])
    assert panel.loc["novelty", "student_t"] == pytest.approx(t.statistic)


def test_table25_on_the_release_matches_the_published_table():
    release = read_release(RELEASE)
    ours = paper_tables.build("25", release).parts["R² (%) and % from interaction"].set_index("feature")
    published = published_a.table25().set_index("feature")
    assert (ours["additive"].round(1) == published["additive"]).all()
    assert (ours["full"].round(1) == published["full"]).all()
    assert (ours["share_from_interaction"].round(0) == published["share_from_interaction"]).all()
    assert (ours["interaction_increment"].round(1) == published.loc[ours.index, "interaction_increment"]).all()


def test_ratings_tables_say_they_need_the_ideas_file(capsys):
    release = read_release(RELEASE)
    with pytest.raises(InputError, match="needs the ideas file"):
        paper_tables.build("7", release)
    assert main(["analyze", "table", "16", "--metrics", str(RELEASE)]) == 2
    assert "ideas_with_ratings_clean.csv" in capsys.readouterr().err


def test_cli_table_with_the_ideas_file(ideas_path, capsys, tmp_path):
    out = tmp_path / "t17.csv"
    assert main(["analyze", "table", "17", "--ideas", str(ideas_path), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Paper A, Table 17" in printed
    assert "sample: GPT-4.1 team-size-matched + human teams (Table 17): N = " in printed
    assert "-- published (paper A, Table 17)" in printed
    assert len(pd.read_csv(out)) > 0


@pytest.mark.slow  # two full ladders with their mixed models (about 10 s)
def test_regress_ladder_stars_at_the_papers_levels_and_configurable(ideas_path, tmp_path, capsys):
    table = tmp_path / "ideas.parquet"
    assert main(["import", str(ideas_path), str(table), "--metrics", str(RELEASE)]) == 0
    for option, levels in (([], (0.10, 0.05, 0.01)), (["--stars", "conventional"], (0.05, 0.01, 0.001))):
        capsys.readouterr()
        assert main(["analyze", "regress", "--metrics", str(table), "--outcome", "creativity",
                     "--hierarchical", *option]) == 0
        printed = capsys.readouterr().out
        assert "N = 3,574" in printed  # the trajectory sample, as Table 20
        rows = [line.split() for line in printed.splitlines()
                if line.strip().split(" ")[0] in FEATURES and len(line.split()) >= 6]
        assert len(rows) >= 9
        for cells in rows:
            p = float(cells[3])
            if min(abs(p - level) for level in levels) > 1e-4:  # not at a printed-rounding edge
                assert (cells[6] if len(cells) > 6 else "") == "*" * sum(p < level for level in levels), cells
        between = [c for c in rows if 0.05 < float(c[3]) < 0.10]
        assert between  # the seeded fixture has a feature there: one star at .10, none at .05
        assert all((c[6] if len(c) > 6 else "") == ("*" if levels[0] == 0.10 else "") for c in between)


def test_table14_top5_and_table2_on_the_release(data):
    top = paper_tables.build("14", data).parts["top 5 per task"]
    llm = data[(data.source == "llm") & (data.data_type == "experiment")]
    expected = llm[llm.task == "sorry_pandemic"].nlargest(5, "creativity")["creativity"].tolist()
    assert top[top.task == "sorry_pandemic"]["creativity"].tolist() == expected
    assert top["idea"].str.startswith("idea number").all()  # the fixture's final_idea texts
    release = read_release(RELEASE)
    ours = paper_tables.build("2", release).parts["mean R² (%)"]["mean R² (%)"].round(1).tolist()
    assert ours == list(published_a.table2()["mean R² (%)"])  # Table 2 to one decimal


def test_tables_9_11_18_against_statsmodels(data, design):
    nine = paper_tables.build("9", data).parts["order vs random"]
    order = design[(design.discussion != "none") & design.order.isin(["fixed", "random", "raise"])]
    reference = smf.ols("creativity ~ C(order, Treatment('random')) + C(discussion) + C(model, Treatment('Mixed')) "
                        "+ C(task)", data=order).fit()  # classical SEs, as the authors' notebook
    row = nine[(nine.model == "all discussion") & (nine.term == "C(order)[T.raise]")].iloc[0]
    assert row["coef"] == pytest.approx(reference.params["C(order, Treatment('random'))[T.raise]"], rel=1e-9)
    assert row["se"] == pytest.approx(reference.bse["C(order, Treatment('random'))[T.raise]"], rel=1e-9)
    assert row["n"] == len(order)

    eleven = paper_tables.build("11", data).parts["nominal vs interactive"].iloc[0]
    generation = design[design.discussion == "none"]
    reference = smf.ols("creativity ~ C(generation, Treatment('interactive')) + C(model) + C(task)",
                        data=generation).fit()
    assert eleven["coef"] == pytest.approx(reference.params["C(generation, Treatment('interactive'))[T.nominal]"],
                                           rel=1e-9)
    assert eleven["n"] == len(generation) == 72

    eighteen = paper_tables.build("18", data)
    pool = design[(design.discussion == "instructed") & design.condition_code.str.fullmatch(
        r"3A_D_3S_AO_[FHR]_P[05]_R30")]
    a, b = pool.loc[pool["pool"] == 5, "creativity"], pool.loc[pool["pool"] == 0, "creativity"]
    pooled = np.sqrt(((len(a) - 1) * a.var() + (len(b) - 1) * b.var()) / (len(a) + len(b) - 2))
    test = eighteen.parts["pool vs none (creativity)"].iloc[0]
    assert test["cohens_d"] == pytest.approx((a.mean() - b.mean()) / pooled)
    assert (test["n_pool"], test["n_no_pool"]) == (len(a), len(b))
