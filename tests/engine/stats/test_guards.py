"""engine.stats.guards: what a sample can carry, checked against scipy/statsmodels and by hand at
the edge sizes (n = 2, 3, 4, 5, 10 per group; N − k = 4, 5, 10)."""

import math

import numpy as np
import pytest
from scipy import optimize, special
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from engine.errors import InputError
from engine.stats import guards

SIZES = (2, 3, 4, 5, 10)


# -- regressions ------------------------------------------------------------------------------
@pytest.mark.parametrize("n, k, small, refuse", [
    (20, 16, True, True),     # N − k = 4: refused
    (21, 16, True, False),    # N − k = 5: shown, small
    (26, 16, True, False),    # N − k = 10
    (160, 16, False, False),  # N = 10 k exactly: not small
    (159, 16, True, False),
    (18, 16, True, True),     # the local_smollm2 example: N 18, k 16
])
def test_regression_guard_edges(n, k, small, refuse):
    guard = guards.regression_guard(n, k)
    assert (guard.n, guard.k, guard.df_resid) == (n, k, n - k)
    assert guard.small_sample is small and guard.refuse is refuse
    if small:
        assert guard.warning.startswith("warning:") and f"N = {n}" in guard.warning and f"k = {k}" in guard.warning
    else:
        assert guard.warning is None
    if refuse:
        assert f"N − k = {n - k}" in guard.refusal
        with pytest.raises(InputError, match="fit refused"):
            guards.check_regression(n, k)
    else:
        assert guards.check_regression(n, k).refusal is None
    assert guard.to_dict()["small_sample"] is small and guard.to_dict()["df_resid"] == n - k


def test_headline_r2_is_adjusted_for_a_small_sample():
    label, value, other = guards.headline_r2({"r2": 0.944, "adj_r2": 0.527, "small_sample": True})
    assert (label, value, other) == ("adjusted R²", 0.527, "R² 0.944")
    label, value, _ = guards.headline_r2({"r2": 0.30, "adj_r2": 0.29, "small_sample": False})
    assert (label, value) == ("R²", 0.30)


# -- intervals of a bounded score -------------------------------------------------------------
def test_two_groups_get_no_interval_but_the_words():
    interval = guards.mean_interval([1.2, 3.9], (1.0, 5.0))
    assert interval.estimate == pytest.approx(2.55)
    assert math.isnan(interval.low) and math.isnan(interval.high)
    assert interval.note == "too few groups for an interval (n = 2)"
    assert interval.text() == "2.55 (too few groups for an interval (n = 2))"


@pytest.mark.parametrize("n", SIZES[1:])
def test_unbounded_mean_interval_is_scipys_t_interval(n):
    x = np.random.default_rng(n).normal(0.3, 1.0, n)
    interval = guards.mean_interval(x)
    expected = scipy_stats.t.interval(0.95, n - 1, loc=x.mean(), scale=scipy_stats.sem(x))
    assert (interval.low, interval.high) == pytest.approx(expected, rel=1e-12)
    assert interval.method == guards.METHOD_T


@pytest.mark.parametrize("n", SIZES[1:])
def test_bounded_interval_by_hand_and_inside_the_range(n):
    x = np.random.default_rng(10 + n).uniform(1.0, 2.5, n)  # Vendi of groups of 5: [1, 5]
    interval = guards.mean_interval(x, (1.0, 5.0))
    u = (x - 1.0) / 4.0
    m, se = u.mean(), u.std(ddof=1) / math.sqrt(n)
    half = scipy_stats.t.ppf(0.975, n - 1) * se / (m * (1 - m))
    low = 1.0 + 4.0 / (1 + math.exp(-(math.log(m / (1 - m)) - half)))
    high = 1.0 + 4.0 / (1 + math.exp(-(math.log(m / (1 - m)) + half)))
    assert (interval.low, interval.high) == pytest.approx((low, high), rel=1e-10)
    assert 1.0 <= interval.low < interval.estimate < interval.high <= 5.0


def test_the_issues_intervals_stay_in_range():
    # t-intervals over 3 groups went below the score's floor: Vendi 1.02, 1.05, 3.9 (t: lower -2.6)
    vendi = [1.02, 1.05, 3.9]
    t_low = scipy_stats.t.interval(0.95, 2, loc=np.mean(vendi), scale=scipy_stats.sem(vendi))[0]
    assert t_low < 1  # what a plain t interval does
    assert guards.mean_interval(vendi, guards.score_range("vendi", 5)).low >= 1.0
    rubric = [1.0, 1.0, 9.0]
    assert guards.mean_interval(rubric, guards.score_range("rubric")).low >= 1.0
    assert guards.mean_interval(rubric, guards.score_range("rubric")).high <= 10.0
    bleu = [0.01, 0.02, 0.9]
    interval = guards.mean_interval(bleu, guards.score_range("div_bleu"))
    assert 0.0 <= interval.low and interval.high <= 1.0


def test_bounded_interval_is_close_to_t_far_from_the_bounds():
    x = np.random.default_rng(0).normal(5.5, 0.05, 10)  # middle of a 1-10 scale, small spread
    bounded = guards.mean_interval(x, (1.0, 10.0))
    plain = guards.mean_interval(x)
    assert bounded.low == pytest.approx(plain.low, abs=1e-3)
    assert bounded.high == pytest.approx(plain.high, abs=1e-3)


def test_no_spread_gives_the_point():
    interval = guards.mean_interval([1.0, 1.0, 1.0], (1.0, 5.0))
    assert (interval.low, interval.high) == (1.0, 1.0)


def test_lower_bound_only_uses_the_log_scale():
    x = np.array([1.5, 2.0, 4.0, 2.5])
    interval = guards.mean_interval(x, (1.0, None))
    m, se = x.mean() - 1.0, x.std(ddof=1) / 2
    half = scipy_stats.t.ppf(0.975, 3) * se / m
    assert (interval.low, interval.high) == pytest.approx((1 + m * math.exp(-half), 1 + m * math.exp(half)))


@pytest.mark.parametrize("successes, n", [(0, 2), (1, 3), (2.5, 4), (5, 5), (7, 10), (30, 100)])
def test_wilson_matches_statsmodels(successes, n):
    interval = guards.wilson_interval(successes, n)
    low, high = proportion_confint(successes, n, alpha=0.05, method="wilson")
    assert (interval.low, interval.high) == pytest.approx((low, high), rel=1e-9, abs=1e-12)
    assert 0.0 <= interval.low <= interval.high <= 1.0


# -- two groups -------------------------------------------------------------------------------
@pytest.mark.parametrize("n", SIZES)
def test_welch_matches_scipy(n):
    rng = np.random.default_rng(100 + n)
    a, b = rng.normal(1.0, 1.0, n), rng.normal(0.0, 2.0, n + 1)
    ours = guards.welch(a, b)
    theirs = scipy_stats.ttest_ind(a, b, equal_var=False)
    ci = theirs.confidence_interval(0.95)
    assert ours["t"] == pytest.approx(theirs.statistic, rel=1e-12)
    assert ours["p"] == pytest.approx(theirs.pvalue, rel=1e-9)
    assert ours["df"] == pytest.approx(theirs.df, rel=1e-12)
    assert (ours["ci_low"], ours["ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-9)


@pytest.mark.parametrize("df", [2, 3, 6, 8, 18, 100])
def test_hedges_j_exact_and_near_the_approximation(df):
    exact = special.gamma(df / 2) / (math.sqrt(df / 2) * special.gamma((df - 1) / 2))
    assert guards.hedges_j(df) == pytest.approx(exact, rel=1e-12)
    assert guards.hedges_j(df) == pytest.approx(1 - 3 / (4 * df - 1), abs=0.01)


@pytest.mark.parametrize("n", SIZES)
def test_hedges_g_equal_variances_is_the_classical_noncentral_interval(n):
    rng = np.random.default_rng(200 + n)
    a = rng.normal(0, 1, n)
    b = a - 0.9  # same sample variance: Welch df = 2n - 2 = Student df
    result = guards.hedges_g(a, b)
    df = 2 * n - 2
    pooled = a.std(ddof=1)
    d = 0.9 / pooled
    j = special.gamma(df / 2) / (math.sqrt(df / 2) * special.gamma((df - 1) / 2))
    assert result["d"] == pytest.approx(d) and result["g"] == pytest.approx(j * d)
    t = d / math.sqrt(2 / n)  # Student's t of the difference
    bounds = [optimize.brentq(lambda lam, q=q: scipy_stats.nct.cdf(t, df, lam) - q, t - 60, t + 60)
              for q in (0.975, 0.025)]
    expected = [j * lam * math.sqrt(2 / n) for lam in bounds]
    assert (result["g_low"], result["g_high"]) == pytest.approx(expected, rel=1e-7)


def test_effect_size_interval_agrees_with_welch_p():
    # the issue's case: the large group varies a lot, the small one little; Welch p < .01
    # while the old pooled-SD normal interval of d included 0
    rng = np.random.default_rng(7)
    a = rng.normal(0, 1, 3000)
    a = 0.07 + (a - a.mean()) / a.std(ddof=1)  # mean 0.07, SD 1 exactly
    b = rng.normal(0, 1, 60)
    b = 0.01 * (b - b.mean()) / b.std(ddof=1)  # mean 0, SD 0.01
    result = guards.hedges_g(a, b)
    assert result["p"] < 0.001
    assert result["g_low"] > 0
    for seed in range(40):
        r = np.random.default_rng(seed)
        x, y = r.normal(r.uniform(-1, 1), r.uniform(0.2, 2), r.integers(2, 12)), r.normal(0, r.uniform(0.2, 2), r.integers(2, 12))
        out = guards.hedges_g(x, y)
        assert (out["p"] < 0.05) == (out["g_low"] > 0 or out["g_high"] < 0), seed


def test_holm_matches_statsmodels():
    p = np.array([0.01, 0.04, 0.03, 0.2, np.nan, 0.005])
    finite = np.isfinite(p)
    expected = multipletests(p[finite], method="holm")[1]
    ours = guards.holm(p)
    assert ours[finite] == pytest.approx(expected)
    assert np.isnan(ours[4])


def test_needed_per_group_by_hand():
    # n = 2 (1.959964 + 0.841621)^2 / 0.5^2 = 62.79 -> 63
    assert guards.needed_per_group(0.5) == 63
    assert guards.needed_per_group(0.0) is None
