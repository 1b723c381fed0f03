"""What a sample can carry: the one place that decides whether a fit, an interval or a verdict
is shown, and how. The CLI, every page, the report, the exports and the pilot ask here, so the
same rule holds everywhere. Pure numpy/scipy (no Streamlit, no pandas).

Thresholds (named so a reader can find them):

* ``ROWS_PER_COEFFICIENT`` (10): a regression with N < 10·k rows for k estimated coefficients
  is *small*: a ``warning:`` names N and k and adjusted R² becomes the headline (R² only
  beside it). The rule of thumb of 10 events/rows per parameter (Harrell, *Regression
  Modeling Strategies*, 2015, sec. 4.4) is where R² stops being a usable summary.
* ``MIN_RESIDUAL_DF`` (5): with N − k < 5 residual degrees of freedom the fit is *refused*:
  the t quantile at 4 df is 2.78 against 1.96 and HC3 standard errors are unstable, so the
  table would mostly show noise (adjusted R² of the issue's example: 0.944 vs 0.527).
* ``MIN_GROUPS_FOR_INTERVAL`` (3): with fewer than 3 groups (or sessions) no interval is
  given, only the values and "too few groups for an interval (n = 2)". A t interval on 2
  values has 1 degree of freedom (quantile 12.7).
* ``MIN_GROUPS_FOR_GROUP_VARIANCE`` (5): a mixed model's random-intercept variance (paper A's
  task intercepts, Model 5 of Tables 20-21) is estimated from the spread of the group means,
  so the number of *groups*, not of rows, limits it: with g groups it rests on about g − 1
  degrees of freedom, and for a balanced design σ²/σ̂² varies like (g − 1)/χ²(g − 1), whose
  95% range is [0.36, 8.3] at g = 5 and [0.27, 39.5] at g = 3. Fewer than 5 levels is the
  floor below which a grouping factor's variance is not usefully estimated (Bolker et al.,
  *Trends in Ecology & Evolution* 24, 2009; Harrison et al., *PeerJ* 6:e4794, 2018; Gelman &
  Hill, *Data Analysis Using Regression and Multilevel/Hierarchical Models*, 2007).
* Mixed-model R² as a headline (``mixed_r2_guard``): marginal and conditional R² (Nakagawa &
  Schielzeth 2013) are headlines only when **both** (a) N ≥ ``ROWS_PER_COEFFICIENT``·k, with
  k the fixed effects plus the random-intercept variance (the k of the fit's summary), the
  OLS rule of 10 rows per estimated parameter (Harrell 2015, sec. 4.4), and (b) the fit has at
  least ``MIN_GROUPS_FOR_GROUP_VARIANCE`` groups, since σ²_task is in the numerator of the
  conditional and the denominator of both. There is no adjusted R² of a mixed model to fall
  back on, so below either rule the two values are shown as raw numbers labelled "not a
  headline at this N" with the rule that failed.
* ``MIN_SESSIONS_TO_DIAGNOSE`` (5): a pilot design is diagnosed against the reference only
  with 5 or more successful sessions; below it the raw numbers are shown and no flag or
  recommendation is given.
* ``MIN_SESSIONS_TO_VERIFY`` (5): a prediction is said to have **held** or **not held** only
  with 5 or more sessions of each design; otherwise the verdict is **inconclusive** with the
  reason and the N per design that 80% power would need.
* ``MIN_PER_GROUP_FOR_BOOTSTRAP`` (10): no percentile bootstrap with fewer than 10 values
  per group (a resample of 3 values takes at most 10 distinct means; its "95%" interval
  undercovers). The pilot's verification uses the Welch interval below at every size.

Intervals (``Interval``; each says which method it used in ``method``):

* ``mean_interval(values, bounds)``: the mean of a score with a known range. Both bounds
  known (Div-BLEU and win rates in [0, 1], Vendi in [1, group size], rubric scores in
  [1, 10], R² in [0, 1]): the score is rescaled to [0, 1] and a Student-t interval is formed
  on the logit of the mean (delta method: SE_logit = SE / (m (1 − m))), then mapped back, so
  it never leaves the range and is close to the plain t interval away from the bounds.
  Only a lower bound: the same on log(mean − lower). No bound: the plain t interval.
* ``wilson_interval(successes, n)``: a proportion (Wilson score interval; ties counted 1/2
  are allowed, the count need not be whole).
* ``welch(a, b)``: Welch's t-test and the Welch–Satterthwaite interval of the difference of
  means (the same statistic, so the p-value and the interval agree: p < .05 exactly when the
  95% interval excludes 0).
* ``hedges_g(a, b)``: the standardised difference g = J · (mean_a − mean_b) / pooled SD with
  Hedges' small-sample correction J = Γ(ν/2) / (√(ν/2) Γ((ν−1)/2)), ν = n_a + n_b − 2, and a
  confidence interval by inverting the noncentral t distribution of *Welch's* statistic
  (Welch df): the bounds λ of the noncentrality give the mean difference λ·SE_Welch, divided
  by the pooled SD and multiplied by J. The interval excludes 0 exactly when Welch's p < α,
  so a test and an effect-size interval on one row cannot contradict each other. With equal
  sample variances and equal n it is the classical noncentral-t interval for d (Steiger &
  Fouladi 1997) times J. ``equal_var=True`` gives that classical interval from Student's
  pooled t instead (for tables that report Student's test, as paper A's Figure 1 does).
* ``holm(pvalues)``: Holm's step-down adjustment for several target features at once.

``regression_guard(n, k)`` returns a :class:`RegressionGuard` (``n, k, df_resid,
small_sample, refuse, warning, refusal``); ``check_regression`` raises the refusal as
``SampleTooSmall`` (an ``InputError``: exit code 2 on the command line). ``engine.stats.fit``
calls it on every fit, so a refused fit never reaches a table; a fit's summary carries
``n, k, df_resid, small_sample, sample_warning``. For a mixed model k counts the fixed
effects and the random-intercept variance. ``r2_headline(summary)`` gives the R² to lead with
as an :class:`R2Headline` (``label, value, beside, headline, reason``): adjusted R² for a small
OLS fit, R² otherwise; a mixed model's conditional R² only when ``mixed_r2_guard(n, k,
n_groups)`` lets it be one. ``headline_r2(summary)`` is the same as a (label, value, beside)
tuple.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

import numpy as np
from scipy import optimize
from scipy import special
from scipy import stats as scipy_stats

from engine.errors import InputError

LEVEL = 0.95
ROWS_PER_COEFFICIENT = 10
MIN_RESIDUAL_DF = 5
MIN_GROUPS_FOR_INTERVAL = 3
MIN_GROUPS_FOR_GROUP_VARIANCE = 5
NOT_A_HEADLINE = "not a headline at this N"
MIN_SESSIONS_TO_DIAGNOSE = 5
MIN_SESSIONS_TO_VERIFY = 5
MIN_PER_GROUP_FOR_BOOTSTRAP = 10
VERIFY_ALPHA = 0.05

# The range each score can take; ``None`` as the upper bound of Vendi means "the group size"
# (the Vendi Score of n items lies in [1, n]). Rubric and judge scores are on paper B's 1-10
# rubric; creativity, novelty and usefulness are min-max scaled to [0, 1] within task.
SCORE_RANGES: dict[str, tuple[float | None, float | None]] = {
    "vendi": (1.0, None), "div_bleu": (0.0, 1.0), "win_rate": (0.0, 1.0), "r2": (0.0, 1.0),
    "rubric": (1.0, 10.0), "rubric_score": (1.0, 10.0), "score": (1.0, 10.0),
    "creativity": (0.0, 1.0), "novelty": (0.0, 1.0), "usefulness": (0.0, 1.0),
}

# How each interval is described on pages, in tables and exports
METHOD_LOGIT_T = "Student-t on the logit of the mean within the score's range (delta method), back-transformed"
METHOD_LOG_T = "Student-t on the log of the mean above the score's lower bound (delta method), back-transformed"
METHOD_T = "Student-t"
METHOD_WILSON = "Wilson score"
METHOD_WELCH = "Welch t (Welch-Satterthwaite df)"
METHOD_COHEN_STUDENT = "Cohen's d (pooled SD) with a CI from the noncentral t of Student's pooled statistic"
METHOD_HEDGES = ("Hedges' g (pooled SD, small-sample correction J) with a CI from the noncentral t "
                 "of Welch's statistic (Welch df)")


# -- regressions ------------------------------------------------------------------------------
@dataclass(frozen=True)
class RegressionGuard:
    """What a fit on ``n`` rows with ``k`` estimated coefficients can carry."""

    n: int
    k: int

    @property
    def df_resid(self) -> int:
        return self.n - self.k

    @property
    def small_sample(self) -> bool:
        return self.n < ROWS_PER_COEFFICIENT * self.k

    @property
    def refuse(self) -> bool:
        return self.df_resid < MIN_RESIDUAL_DF

    @property
    def warning(self) -> str | None:
        """The line printed above the numbers of a small fit (None when N >= 10·k)."""
        if not self.small_sample:
            return None
        return (f"warning: N = {self.n} rows for k = {self.k} estimated coefficients (fewer than "
                f"{ROWS_PER_COEFFICIENT} rows per coefficient, {ROWS_PER_COEFFICIENT * self.k} needed); "
                f"R² overstates the fit, read adjusted R²")

    @property
    def refusal(self) -> str | None:
        """Why the fit is not shown (None when N − k >= 5)."""
        if not self.refuse:
            return None
        return (f"fit refused: N − k = {self.df_resid} (N = {self.n} rows, k = {self.k} estimated "
                f"coefficients) is below {MIN_RESIDUAL_DF} residual degrees of freedom; drop predictor "
                f"blocks or add rows")

    def to_dict(self) -> dict:
        return {**asdict(self), "df_resid": self.df_resid, "small_sample": self.small_sample,
                "refuse": self.refuse, "warning": self.warning, "refusal": self.refusal}


def regression_guard(n: int, k: int) -> RegressionGuard:
    """The guard of a fit with ``n`` rows and ``k`` estimated coefficients (intercept included)."""
    return RegressionGuard(int(n), int(k))


class SampleTooSmall(InputError):
    """A fit refused by ``check_regression``; ``guard`` holds its N and k."""

    def __init__(self, message: str, guard: RegressionGuard):
        super().__init__(message)
        self.guard = guard


def check_regression(n: int, k: int, where: str = "") -> RegressionGuard:
    """``regression_guard``, raising its refusal as ``SampleTooSmall`` (an ``InputError``:
    one line and exit code 2 on the command line)."""
    guard = regression_guard(n, k)
    if guard.refuse:
        raise SampleTooSmall(f"{where}: {guard.refusal}" if where else guard.refusal, guard)
    return guard


@dataclass(frozen=True)
class MixedR2Guard:
    """Whether a mixed model on ``n`` rows, ``k`` estimated parameters (fixed effects and the
    random-intercept variance) and ``n_groups`` groups can carry its R² as a headline."""

    n: int
    k: int
    n_groups: int | None

    @property
    def rows_needed(self) -> int:
        return ROWS_PER_COEFFICIENT * self.k

    @property
    def enough_rows(self) -> bool:
        return self.n >= self.rows_needed

    @property
    def enough_groups(self) -> bool:
        return self.n_groups is not None and self.n_groups >= MIN_GROUPS_FOR_GROUP_VARIANCE

    @property
    def headline(self) -> bool:
        return self.enough_rows and self.enough_groups

    @property
    def reasons(self) -> list[str]:
        """Each rule the fit fails, in words (empty when its R² is a headline)."""
        out = []
        if not self.enough_rows:
            out.append(f"N = {self.n} rows for k = {self.k} estimated parameters (fixed effects and the "
                       f"group variance), fewer than {ROWS_PER_COEFFICIENT} per parameter "
                       f"({self.rows_needed} needed)")
        if not self.enough_groups:
            groups = "an unknown number of" if self.n_groups is None else str(self.n_groups)
            out.append(f"{groups} groups for the random-intercept variance, fewer than "
                       f"{MIN_GROUPS_FOR_GROUP_VARIANCE}")
        return out

    @property
    def reason(self) -> str:
        """'not a headline at this N: <rules failed>' ('' when it is a headline)."""
        return f"{NOT_A_HEADLINE}: " + "; ".join(self.reasons) if self.reasons else ""

    @property
    def warning(self) -> str | None:
        """The line printed above a mixed fit whose R² is no headline (None otherwise)."""
        if self.headline:
            return None
        return ("warning: " + "; ".join(self.reasons)
                + f": marginal and conditional R² are shown as raw numbers, {NOT_A_HEADLINE}")


def mixed_r2_guard(n: int, k: int, n_groups: int | None) -> MixedR2Guard:
    """The headline guard of a mixed model's R² (see the module docstring)."""
    return MixedR2Guard(int(n), int(k), None if n_groups is None else int(n_groups))


@dataclass(frozen=True)
class R2Headline:
    """The R² a fit leads with: ``label`` and ``value``, the other value(s) as text
    (``beside``), and whether it may be a headline (``headline``; ``reason`` says why not)."""

    label: str
    value: float | None
    beside: str
    headline: bool = True
    reason: str = ""

    def text(self, digits: int = 1) -> str:
        """'35.1%' or 'n/a'."""
        if self.value is None or not math.isfinite(self.value):
            return "n/a"
        return f"{100 * self.value:.{digits}f}%"


def r2_headline(summary: dict) -> R2Headline:
    """The headline R² of a fit summary (``engine.stats.fit``): adjusted R² for a small OLS
    sample (R² beside it), R² otherwise; for a mixed model its conditional R² (marginal beside
    it), a headline only when ``mixed_r2_guard`` allows."""
    if summary.get("r2") is None:
        marginal = summary.get("marginal_r2")
        beside = f"marginal R² {marginal:.3f}" if marginal is not None else "marginal R² n/a"
        guard = mixed_r2_guard(summary.get("n", 0), summary.get("k", 0), summary.get("n_groups"))
        return R2Headline("conditional R²", summary.get("conditional_r2"), beside, guard.headline, guard.reason)
    if summary.get("small_sample"):
        return R2Headline("adjusted R²", summary.get("adj_r2"), f"R² {summary['r2']:.3f}")
    return R2Headline("R²", summary.get("r2"), f"adj. R² {summary.get('adj_r2', float('nan')):.3f}")


def headline_r2(summary: dict) -> tuple[str, float | None, str]:
    """``r2_headline`` as (label, value, the other value as text); a mixed model's R² that is
    no headline has the label "conditional R² (not a headline at this N)"."""
    head = r2_headline(summary)
    label = head.label if head.headline else f"{head.label} ({NOT_A_HEADLINE})"
    return label, head.value, head.beside


# -- intervals --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    """An estimate, its interval (NaN bounds when none is given) and why."""

    estimate: float
    low: float
    high: float
    n: int
    method: str
    note: str = ""

    @property
    def has_interval(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def columns(self, name: str) -> dict:
        """``{name, name_lo, name_hi, name_n}`` for a table row."""
        return {name: self.estimate, f"{name}_lo": self.low, f"{name}_hi": self.high, f"{name}_n": self.n}

    def text(self, digits: int = 2) -> str:
        """'m [lo, hi]' or 'm (too few groups for an interval (n = 2))'."""
        if not math.isfinite(self.estimate):
            return "n/a"
        if self.has_interval:
            return f"{self.estimate:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"
        return f"{self.estimate:.{digits}f} ({self.note})" if self.note else f"{self.estimate:.{digits}f}"


def too_few_text(n: int, unit: str = "groups") -> str:
    """The words shown instead of an interval: 'too few groups for an interval (n = 2)'."""
    return f"too few {unit} for an interval (n = {n})"


def score_range(score: str, group_size: int | None = None) -> tuple[float | None, float | None]:
    """(lower, upper) of a named score; Vendi's upper bound is ``group_size``."""
    low, high = SCORE_RANGES.get(score, (None, None))
    if score == "vendi":
        high = float(group_size) if group_size else None
    return low, high


def _finite(values) -> np.ndarray:
    """The finite numbers of ``values`` (None, NaN, inf and non-numbers left out)."""
    try:
        array = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        array = np.asarray([float(v) for v in np.asarray(values, dtype=object).ravel()
                            if v is not None and _is_number(v)], dtype=float)
    return array[np.isfinite(array)]


def _is_number(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def mean_interval(values, bounds: tuple[float | None, float | None] = (None, None), *,
                  level: float = LEVEL, unit: str = "groups") -> Interval:
    """Mean of ``values`` with an interval inside ``bounds`` (see the module docstring);
    NaN bounds and the "too few" words with fewer than ``MIN_GROUPS_FOR_INTERVAL`` values."""
    x = _finite(values)
    n = len(x)
    lower, upper = bounds
    method = (METHOD_LOGIT_T if lower is not None and upper is not None else
              METHOD_LOG_T if lower is not None else METHOD_T)
    if n == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0, method, f"no {unit}")
    mean = float(x.mean())
    if n < MIN_GROUPS_FOR_INTERVAL:
        return Interval(mean, float("nan"), float("nan"), n, method, too_few_text(n, unit))
    quantile = float(scipy_stats.t.ppf(0.5 + level / 2, n - 1))
    se = float(x.std(ddof=1) / math.sqrt(n))
    if lower is not None and upper is not None:
        if not upper > lower:
            raise InputError(f"the range of a score needs upper > lower, got [{lower}, {upper}]")
        width = upper - lower
        m = (mean - lower) / width
        if m <= 0 or m >= 1 or se == 0:  # every value at a bound, or no spread
            point = min(max(mean, lower), upper)
            return Interval(mean, point, point, n, method, "no spread: the interval is the point")
        centre, half = special.logit(m), quantile * (se / width) / (m * (1 - m))
        low, high = special.expit(centre - half), special.expit(centre + half)
        return Interval(mean, float(lower + width * low), float(lower + width * high), n, method)
    if lower is not None:
        m = mean - lower
        if m <= 0 or se == 0:
            return Interval(mean, mean, mean, n, method, "no spread: the interval is the point")
        half = quantile * se / m
        return Interval(mean, float(lower + m * math.exp(-half)), float(lower + m * math.exp(half)), n, method)
    return Interval(mean, mean - quantile * se, mean + quantile * se, n, method)


def wilson_interval(successes: float, n: float, *, level: float = LEVEL) -> Interval:
    """Wilson score interval of a proportion ``successes / n`` (equals statsmodels'
    ``proportion_confint(method="wilson")``); no interval when n is 0."""
    if n <= 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0, METHOD_WILSON, "no comparisons")
    p = successes / n
    z = float(scipy_stats.norm.ppf(0.5 + level / 2))
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return Interval(float(p), max(0.0, centre - half), min(1.0, centre + half), int(round(n)), METHOD_WILSON)


# -- two groups -------------------------------------------------------------------------------
def welch(a, b, *, level: float = LEVEL) -> dict:
    """Welch's t-test of mean(a) − mean(b) and its interval (same statistic and df).

    Keys: ``diff, se, df, t, p, ci_low, ci_high, n_a, n_b, method``; NaN when a group has
    fewer than 2 values or both variances are 0.
    """
    a, b = _finite(a), _finite(b)
    out = {"diff": float("nan"), "se": float("nan"), "df": float("nan"), "t": float("nan"),
           "p": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"),
           "n_a": len(a), "n_b": len(b), "method": METHOD_WELCH}
    if len(a) < 2 or len(b) < 2:
        return out
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    diff = float(a.mean() - b.mean())
    out["diff"] = diff
    se = math.sqrt(va + vb)
    if se == 0:
        return out
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    t = diff / se
    half = float(scipy_stats.t.ppf(0.5 + level / 2, df)) * se
    out.update({"se": se, "df": float(df), "t": float(t), "p": float(2 * scipy_stats.t.sf(abs(t), df)),
                "ci_low": diff - half, "ci_high": diff + half})
    return out


def hedges_j(df: float) -> float:
    """Hedges' exact small-sample correction J(ν) = Γ(ν/2) / (√(ν/2) Γ((ν−1)/2))."""
    if not df > 1:
        return float("nan")
    return float(math.exp(special.gammaln(df / 2) - special.gammaln((df - 1) / 2)) / math.sqrt(df / 2))


def noncentrality_interval(t: float, df: float, *, level: float = LEVEL) -> tuple[float, float]:
    """(λ_low, λ_high): the noncentrality parameters whose noncentral t(df, λ) puts the observed
    ``t`` at its upper and lower (1 − level)/2 tail (inversion of the noncentral t)."""
    if not (math.isfinite(t) and math.isfinite(df) and df > 0):
        return float("nan"), float("nan")
    if t < 0:  # the noncentral t is symmetric: t(df, λ) at -t is -t(df, -λ) at t
        low, high = noncentrality_interval(-t, df, level=level)
        return -high, -low
    tail = (1 - level) / 2

    def solve(target: float) -> float:
        def gap(ncp: float) -> float:
            value = float(scipy_stats.nct.cdf(t, df, ncp))
            if not math.isfinite(value):  # underflow far from t: the cdf is 1 below, 0 above
                value = 1.0 if ncp < t else 0.0
            return value - target
        spread = 5.0 + 2.0 * abs(t)
        low, high = t - spread, t + spread
        for _ in range(60):
            if gap(low) > 0 > gap(high):
                return float(optimize.brentq(gap, low, high, xtol=1e-10, rtol=1e-12))
            low, high = low - spread, high + spread
        # numerically out of reach (|t| very large): the normal approximation of the noncentral t
        z = float(scipy_stats.norm.ppf(1 - target))
        return t - z * math.sqrt(1 + t * t / (2 * df))
    return solve(1 - tail), solve(tail)


def hedges_g(a, b, *, level: float = LEVEL, equal_var: bool = False) -> dict:
    """Hedges' g of a − b with a CI consistent with the t-test (see the module docstring).

    ``equal_var=False`` (default): the interval inverts Welch's statistic (Welch df), so it
    excludes 0 exactly when Welch's p < 1 − level. ``equal_var=True``: Student's pooled t
    (df n_a + n_b − 2), the classical noncentral-t interval, consistent with Student's p.
    Keys: ``g, g_low, g_high`` (corrected by J), ``d, d_low, d_high`` (uncorrected), ``j``,
    ``p`` (of that test), ``test``, ``method``; NaN when a group has fewer than 2 values or
    the pooled SD is 0.
    """
    a, b = _finite(a), _finite(b)
    test_name = "Student" if equal_var else "Welch"
    method = METHOD_COHEN_STUDENT if equal_var else METHOD_HEDGES
    out = {key: float("nan") for key in ("g", "g_low", "g_high", "d", "d_low", "d_high", "j", "p")}
    out.update({"test": test_name, "method": method})
    n1, n2 = len(a), len(b)
    if n1 < 2 or n2 < 2:
        return out
    pooled = math.sqrt(((n1 - 1) * a.var(ddof=1) + (n2 - 1) * b.var(ddof=1)) / (n1 + n2 - 2))
    if pooled == 0:
        return out
    j = hedges_j(n1 + n2 - 2)
    d = float((a.mean() - b.mean()) / pooled)
    out.update({"d": d, "j": j, "g": j * d})
    if equal_var:
        se, df = pooled * math.sqrt(1 / n1 + 1 / n2), n1 + n2 - 2
        t = (a.mean() - b.mean()) / se
        p = float(2 * scipy_stats.t.sf(abs(t), df))
    else:
        test = welch(a, b, level=level)
        se, df, t, p = test["se"], test["df"], test["t"], test["p"]
    out["p"] = p
    if math.isfinite(t):
        lam_low, lam_high = noncentrality_interval(t, df, level=level)
        scale = se / pooled
        out.update({"d_low": lam_low * scale, "d_high": lam_high * scale,
                    "g_low": j * lam_low * scale, "g_high": j * lam_high * scale})
    return out


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN kept as NaN, not counted in the family)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    m = len(finite)
    if m == 0:
        return out
    order = finite[np.argsort(p[finite], kind="stable")]
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        out[index] = running
    return out


def needed_per_group(effect_sd_units: float, *, alpha: float = 0.05, power: float = 0.80) -> int | None:
    """Sessions per group for ``power`` to detect a standardised shift (two-sided normal
    approximation: n = 2 (z_(1−α/2) + z_power)² / δ²); None for a zero or unknown shift."""
    if not math.isfinite(effect_sd_units) or effect_sd_units == 0:
        return None
    z = scipy_stats.norm.ppf(1 - alpha / 2) + scipy_stats.norm.ppf(power)
    return int(math.ceil(2 * z * z / effect_sd_units ** 2))


# -- findings from a small model --------------------------------------------------------------
SMALL_MODEL_MAX_PARAMETERS = 3e9  # at or below 3B parameters a model is "small" here
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)\s*([MB])(?![A-Za-z])", re.IGNORECASE)


def model_size(name: str) -> float | None:
    """Parameters a model's name states ("SmolLM2-135M-Instruct.Q4_1" -> 1.35e8, "Qwen3-8B"
    -> 8e9); None when the name states no size (gpt-4.1, o3-high)."""
    match = _SIZE.search(str(name))
    if not match:
        return None
    return float(match.group(1)) * (1e6 if match.group(2).upper() == "M" else 1e9)


def model_label(name: str) -> str:
    """The model's name up to its size ("SmolLM2-135M-Instruct.Q4_1" -> "SmolLM2-135M")."""
    match = _SIZE.search(str(name))
    return str(name)[: match.end()] if match else str(name)


def small_model_label(models) -> str | None:
    """"SmolLM2-135M" (names joined by " and ") when any model in ``models`` is small (a stated
    size of at most 3B parameters, or the local model); None otherwise."""
    labels = []
    for name in models:
        if name is None or (isinstance(name, float) and math.isnan(name)):
            continue
        size = model_size(name)
        if (size is not None and size <= SMALL_MODEL_MAX_PARAMETERS) or str(name).lower() == "local":
            label = model_label(name) if str(name).lower() != "local" else "SmolLM2-135M (local)"
            if label not in labels:
                labels.append(label)
    return " and ".join(labels) if labels else None


def not_comparable(published: str, ours: str) -> str:
    """The sentence that goes between a published headline and one of ours from another model."""
    return f"published: {published}; ours: {ours} — different models and scale, not comparable"
