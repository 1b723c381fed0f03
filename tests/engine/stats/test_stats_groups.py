"""Group comparisons (Figure 1, A.5) against scipy/statsmodels and hand computations."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats as scipy_stats

from engine.errors import InputError
from engine.stats import cohens_d, group_comparison, group_effect_robustness, mean_ci, top_share


@pytest.fixture(scope="module")
def ideas():
    rng = np.random.default_rng(3)
    rows = []
    for task_index, task in enumerate(["t1", "t2", "t3", "t4"]):
        for source, shift, n in (("llm", 0.15, 60), ("human", 0.0, 25)):
            for i in range(n):
                rows.append({"task": task, "source": source, "team": f"{source}{i % 5}{task}",
                             "creativity": 0.2 + shift + 0.02 * task_index + rng.normal(0, 0.08)})
    return pd.DataFrame(rows)


def test_hand_worked_example():
    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 4.0, 6.0])
    # pooled SD: sqrt((3 * 1.6667 + 2 * 4) / 5) = sqrt(2.6) ; d = (2.5 - 4) / 1.61245
    d, low, high = cohens_d(a, b)
    assert d == pytest.approx(-1.5 / np.sqrt(2.6))
    # the interval inverts the noncentral t of Student's statistic: t = d / sqrt(7/12), 5 df
    t = d / np.sqrt(7 / 12)
    assert scipy_stats.nct.cdf(t, 5, low / np.sqrt(7 / 12)) == pytest.approx(0.975, abs=1e-8)
    assert scipy_stats.nct.cdf(t, 5, high / np.sqrt(7 / 12)) == pytest.approx(0.025, abs=1e-8)
    mean, lo, hi = mean_ci(a)
    assert mean == 2.5 and hi - mean == pytest.approx(3.182446 * np.sqrt(5 / 3) / 2, rel=1e-6)


def test_group_comparison_matches_scipy(ideas):
    table = group_comparison(ideas, "creativity", "source", by="task")
    assert list(table["by"]) == ["t1", "t2", "t3", "t4", "overall"]
    overall = table.set_index("by").loc["overall"]
    llm = ideas.loc[ideas.source == "llm", "creativity"]
    human = ideas.loc[ideas.source == "human", "creativity"]
    welch = scipy_stats.ttest_ind(llm, human, equal_var=False)
    student = scipy_stats.ttest_ind(llm, human)
    assert overall["welch_t"] == pytest.approx(welch.statistic)
    assert overall["welch_p"] == pytest.approx(welch.pvalue, rel=1e-6, abs=1e-300)
    assert overall["student_t"] == pytest.approx(student.statistic)
    assert overall["student_df"] == len(llm) + len(human) - 2
    assert overall["llm_mean"] == pytest.approx(llm.mean())
    ci = scipy_stats.t.interval(0.95, len(llm) - 1, loc=llm.mean(), scale=scipy_stats.sem(llm))
    assert (overall["llm_ci_low"], overall["llm_ci_high"]) == pytest.approx(ci)
    assert overall["cohens_d"] > 1  # built with a large separation


def test_group_comparison_bad_input(ideas):
    with pytest.raises(InputError, match="group 'robots' has no rows"):
        group_comparison(ideas, "creativity", "source", groups=("llm", "robots"))
    with pytest.raises(InputError, match="column 'novelty' is not in the data"):
        group_comparison(ideas, "novelty")


def test_top_share_by_hand():
    df = pd.DataFrame({"source": ["llm"] * 8 + ["human"] * 2,
                       "creativity": [1, 2, 3, 4, 5, 6, 7, 10, 8, 9]})
    table = top_share(df, "creativity", q=0.8).set_index("group")
    threshold = np.quantile(df.creativity, 0.8)  # 8.2, so the top set is {9 (human), 10 (llm)}
    assert table.loc["llm", "threshold"] == pytest.approx(threshold)
    assert table.loc["llm", "n_top"] == 1 and table.loc["human", "n_top"] == 1
    assert table.loc["human", "rate_top"] == 0.5 and table.loc["llm", "share_of_top"] == 0.5
    assert table.loc["human", "share_of_all"] == 0.2


def test_robustness_matches_statsmodels(ideas):
    table = group_effect_robustness(ideas, "creativity", cluster="team").set_index("method")
    data = ideas.assign(effect=(ideas.source == "llm").astype(float))
    hc3 = smf.ols("creativity ~ effect + C(task)", data=data).fit(cov_type="HC3")
    row = table.loc["task fixed effects, HC3"]
    assert row["estimate"] == pytest.approx(hc3.params["effect"])
    assert row["se"] == pytest.approx(hc3.bse["effect"])
    codes = pd.factorize(data.team)[0]
    clustered = smf.ols("creativity ~ effect + C(task)", data=data).fit(cov_type="cluster", cov_kwds={"groups": codes})
    assert table.loc["task fixed effects, clustered by team", "se"] == pytest.approx(clustered.bse["effect"])
    means = ideas.groupby(["task", "source"]).creativity.mean().unstack()
    diffs = means.llm - means.human
    level = table.loc["task-level differences, t-test"]
    assert level["estimate"] == pytest.approx(diffs.mean())
    assert level["p"] == pytest.approx(scipy_stats.ttest_1samp(diffs, 0).pvalue)
    mixed = table.loc["mixed model, random task and team"]
    assert mixed["estimate"] == pytest.approx(0.15, abs=0.03)  # the built-in shift


def test_generating_cluster_drops_only_the_replicate():
    from engine.stats import generating_cluster

    df = pd.DataFrame({
        "source": ["llm", "llm", "llm", "human"],
        "file_id": ["gpt-4.1_1_3_different_direct_discussion_Direct_open_fixed_pool_0_30_None",
                    "gpt-4.1_2_3_different_direct_discussion_Direct_open_fixed_pool_0_30_None",
                    "gpt-4.1_1_3_different_direct_discussion_Direct_open_random_pool_0_30_None", "i7_2"],
        "task": ["plastic_waste"] * 4, "team": [None, None, None, "i7"]})
    clusters = generating_cluster(df).tolist()
    assert clusters[0] == clusters[1] != clusters[2]
    assert clusters[0] == "gpt-4.1_*_3_different_direct_discussion_Direct_open_fixed_pool_0_30_None::plastic_waste"
    assert clusters[3] == "human::i7"


def test_robustness_refuses_a_cluster_empty_for_one_group(ideas):
    df = ideas.assign(team=np.where(ideas.source == "llm", None, ideas.team))
    with pytest.raises(InputError, match="cluster column 'team' is empty for every 'llm' row"):
        group_effect_robustness(df, "creativity", cluster="team")


def test_welch_p_and_the_intervals_on_its_row_agree():
    # paper release, convergence_ratio: Welch p < .001 beside a pooled-SD d interval of
    # [-0.01, 0.22]. Built the same way: a large group that varies much, a small one that
    # varies little. Welch's test, the Welch difference interval and Hedges' g interval agree.
    rng = np.random.default_rng(7)
    a = rng.normal(0, 1, 3000)
    a = 0.07 + (a - a.mean()) / a.std(ddof=1)
    b = rng.normal(0, 1, 60)
    b = 0.01 * (b - b.mean()) / b.std(ddof=1)
    frame = pd.DataFrame({"source": ["llm"] * len(a) + ["human"] * len(b), "value": np.r_[a, b]})
    row = group_comparison(frame, "value").iloc[-1]
    welch = scipy_stats.ttest_ind(a, b, equal_var=False)
    ci = welch.confidence_interval(0.95)
    assert row["welch_p"] == pytest.approx(welch.pvalue) and row["welch_p"] < 0.001
    assert (row["diff_ci_low"], row["diff_ci_high"]) == pytest.approx((ci.low, ci.high))
    assert row["g_ci_low"] > 0 and row["hedges_g"] > row["g_ci_low"]
    # Cohen's d's interval follows Student's test, whose p is above .05 here: it includes 0
    assert row["student_p"] > 0.05 and row["d_ci_low"] < 0 < row["d_ci_high"]
