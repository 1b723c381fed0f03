"""How far raters agree: intraclass correlations and Krippendorff's alpha.

Paper A (Methods, "Creativity evaluation"; Table 4) reports ICC(3,5), the two-way mixed,
consistency, average-measures coefficient of its five human raters per task and scale. A
panel of LLM raters is described the same way here, from an items x raters matrix:

* ``icc(matrix)``: the six coefficients of Shrout & Fleiss (1979), ICC(1,1), ICC(1,k),
  ICC(2,1), ICC(2,k), ICC(3,1), ICC(3,k), from the two-way ANOVA mean squares (between
  targets BMS, within targets WMS, between judges JMS, residual EMS), each with its 95%
  interval (F-based for cases 1 and 3; for case 2 the approximate degrees of freedom of
  McGraw & Wong 1996, and the average-measures bounds by Spearman-Brown from the single-measure
  ones). Only complete rows enter; how many were dropped is returned.
* ``krippendorff_alpha(matrix)``: alpha with the interval metric (Krippendorff 2011,
  "Computing Krippendorff's alpha-reliability"), alpha = 1 - D_o / D_e, which keeps every unit
  with at least two values (missing values allowed; at least 3 such units, as the ICC's 3 items).
* ``weighted_kappa(a, b, categories)``: Cohen's (1968) weighted kappa of two raters' whole-number
  ratings on an ordered scale, kappa_w = 1 - sum w_ij o_ij / sum w_ij e_ij, with quadratic
  (w_ij = (i - j)^2 / (c - 1)^2, the default) or linear weights; o the observed and e the
  chance (product of the margins) proportions.
* ``panel_agreement(matrix, judge=...)``: what a rating table says about its raters (plain
  JSON values and one sentence): the judge, ratings per item, ICC(3,k) and ICC(2,1) with N
  items and k raters, alpha. With one rating per item it says "one rating per item: agreement
  cannot be computed", never a number; with fewer than 3 items rated by every rater
  (``engine.stats.guards.MIN_GROUPS_FOR_INTERVAL``) it gives no coefficient, only the counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from engine.errors import InputError
from engine.stats.guards import MIN_GROUPS_FOR_INTERVAL

ONE_RATING = "one rating per item: agreement cannot be computed"
NO_READABLE = "no item has a readable rating: agreement cannot be computed"
AT_MOST_ONE = "at most one readable rating per item: agreement cannot be computed"


def no_agreement_reason(raters: int, items: int, most: int) -> str:
    """Why no coefficient ("" when one can be tried): a single rater (one rating per item), no
    readable rating at all, or a panel whose items each got at most one readable rating."""
    if raters <= 1:
        return ONE_RATING
    if items == 0:
        return NO_READABLE
    if most <= 1:
        return AT_MOST_ONE
    return ""
KINDS = ("ICC(1,1)", "ICC(1,k)", "ICC(2,1)", "ICC(2,k)", "ICC(3,1)", "ICC(3,k)")


def _matrix(matrix) -> np.ndarray:
    """The items x raters table as floats (NaN = missing); a text cell is an InputError."""
    frame = pd.DataFrame(matrix)
    values = frame.apply(pd.to_numeric, errors="coerce")
    bad = values.isna() & frame.notna()
    if bad.to_numpy().any():
        row, column = np.argwhere(bad.to_numpy())[0]
        raise InputError(f"expected a number, got {frame.iat[row, column]!r}", row=int(row) + 1,
                         field=str(frame.columns[column]))
    return values.to_numpy(dtype=float)


@dataclass(frozen=True)
class ICCResult:
    """Shrout & Fleiss's coefficients on ``n`` complete items x ``k`` raters (``dropped`` rows
    with a missing rating left out). ``values[kind]`` and ``intervals[kind]`` for the
    ``KINDS`` ("ICC(3,k)" stands for ICC(3,k) with this k); ``mean_squares`` BMS, WMS, JMS, EMS."""

    n: int
    k: int
    dropped: int
    values: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    mean_squares: dict[str, float] = field(default_factory=dict)

    def label(self, kind: str) -> str:
        """"ICC(3,k)" written with this k: "ICC(3,5)"."""
        return kind.replace(",k)", f",{self.k})")


def icc(matrix, level: float = 0.95) -> ICCResult:
    """Shrout & Fleiss (1979) ICCs of an items x raters matrix (rows with a missing value dropped).

    Needs at least 2 raters and 3 complete items; an InputError otherwise, or when every
    item has the same mean (no between-item variance: the coefficients are undefined).
    """
    x = _matrix(matrix)
    if x.ndim != 2 or x.shape[1] < 2:
        raise InputError(f"an ICC needs at least 2 raters (columns), got {x.shape[1] if x.ndim == 2 else 0}")
    complete = ~np.isnan(x).any(axis=1)
    dropped = int((~complete).sum())
    x = x[complete]
    n, k = x.shape
    if n < MIN_GROUPS_FOR_INTERVAL:
        raise InputError(f"an ICC needs at least {MIN_GROUPS_FOR_INTERVAL} items rated by every rater, "
                         f"got {n}" + (f" ({dropped} with a missing rating left out)" if dropped else ""))
    grand = x.mean()
    ss_rows = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ss_total = ((x - grand) ** 2).sum()
    ss_error = max(ss_total - ss_rows - ss_cols, 0.0)
    bms = ss_rows / (n - 1)
    wms = (ss_total - ss_rows) / (n * (k - 1))
    jms = ss_cols / (k - 1)
    ems = ss_error / ((n - 1) * (k - 1))
    if bms == 0:
        raise InputError("every item has the same mean rating: the ICC is undefined")
    values = {
        "ICC(1,1)": (bms - wms) / (bms + (k - 1) * wms),
        "ICC(1,k)": (bms - wms) / bms,
        "ICC(2,1)": (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n),
        "ICC(2,k)": (bms - ems) / (bms + (jms - ems) / n),
        "ICC(3,1)": (bms - ems) / (bms + (k - 1) * ems),
        "ICC(3,k)": (bms - ems) / bms,
    }
    intervals = _intervals(values, bms, wms, jms, ems, n, k, 1 - level)
    return ICCResult(n, k, dropped, {name: float(v) for name, v in values.items()}, intervals,
                     {"BMS": float(bms), "WMS": float(wms), "JMS": float(jms), "EMS": float(ems)})


def _intervals(values, bms, wms, jms, ems, n, k, alpha) -> dict[str, tuple[float, float]]:
    """Shrout & Fleiss's (cases 1, 3) and McGraw & Wong's (case 2) 95% intervals; NaN where a
    mean square of 0 leaves an F undefined."""
    nan = (math.nan, math.nan)
    out = dict.fromkeys(values, nan)
    upper = 1 - alpha / 2

    def f_bounds(f_value, df1, df2):
        return f_value / scipy_stats.f.ppf(upper, df1, df2), f_value * scipy_stats.f.ppf(upper, df2, df1)

    if wms > 0:  # case 1: F = BMS / WMS on (n - 1, n(k - 1))
        low, high = f_bounds(bms / wms, n - 1, n * (k - 1))
        out["ICC(1,1)"] = ((low - 1) / (low + k - 1), (high - 1) / (high + k - 1))
        out["ICC(1,k)"] = (1 - 1 / low, 1 - 1 / high)
    if ems > 0:  # case 3: F = BMS / EMS on (n - 1, (n - 1)(k - 1))
        low, high = f_bounds(bms / ems, n - 1, (n - 1) * (k - 1))
        out["ICC(3,1)"] = ((low - 1) / (low + k - 1), (high - 1) / (high + k - 1))
        out["ICC(3,k)"] = (1 - 1 / low, 1 - 1 / high)
        single = values["ICC(2,1)"]
        if single < 1:  # case 2: Satterthwaite df of a JMS + b EMS (McGraw & Wong 1996, Table 7)
            a = k * single / (n * (1 - single))
            b = 1 + k * single * (n - 1) / (n * (1 - single))
            denominator = (a * jms) ** 2 / (k - 1) + (b * ems) ** 2 / ((n - 1) * (k - 1))
            if denominator > 0:
                v = (a * jms + b * ems) ** 2 / denominator
                f_star = scipy_stats.f.ppf(upper, n - 1, v)
                f_star_inv = scipy_stats.f.ppf(upper, v, n - 1)
                spread = k * jms + (k * n - k - n) * ems
                low = n * (bms - f_star * ems) / (f_star * spread + n * bms)
                high = n * (f_star_inv * bms - ems) / (spread + n * f_star_inv * bms)
                out["ICC(2,1)"] = (low, high)
                out["ICC(2,k)"] = tuple(k * r / (1 + (k - 1) * r) for r in (low, high))
    return {name: (float(lo), float(hi)) for name, (lo, hi) in out.items()}


@dataclass(frozen=True)
class AlphaResult:
    """Krippendorff's alpha (interval metric): ``units`` with at least two values, ``values``
    pairable values among them, observed and expected disagreement."""

    alpha: float
    units: int
    values: int
    observed: float
    expected: float


def krippendorff_alpha(matrix) -> AlphaResult:
    """Interval alpha of an items x raters matrix; NaN cells are missing values.

    D_o = (1/n) sum_u sum_{i != j in u} (v_i - v_j)^2 / (m_u - 1) over the units with m_u >= 2
    values (n of them in all), D_e = sum over every ordered pair of those n values of
    (v_c - v_k)^2 / (n (n - 1)); alpha = 1 - D_o / D_e. Fewer than 3 pairable units
    (``MIN_GROUPS_FOR_INTERVAL``), or no variation at all, is an InputError.
    """
    x = _matrix(matrix)
    pairable = [row[~np.isnan(row)] for row in x]
    pairable = [row for row in pairable if len(row) >= 2]
    if len(pairable) < MIN_GROUPS_FOR_INTERVAL:
        raise InputError(f"Krippendorff's alpha needs at least {MIN_GROUPS_FOR_INTERVAL} items with two or more "
                         f"ratings, got {len(pairable)}")

    def ordered_pairs_sum(v: np.ndarray) -> float:  # sum over i != j of (v_i - v_j)^2
        return 2.0 * (len(v) * (v ** 2).sum() - v.sum() ** 2)

    every = np.concatenate(pairable)
    n = len(every)
    observed = sum(ordered_pairs_sum(v) / (len(v) - 1) for v in pairable) / n
    expected = ordered_pairs_sum(every) / (n * (n - 1))
    if expected == 0:
        raise InputError("every rating is the same: Krippendorff's alpha is undefined")
    return AlphaResult(float(1 - observed / expected), len(pairable), n, float(observed), float(expected))


WEIGHTS = ("quadratic", "linear")


@dataclass(frozen=True)
class KappaResult:
    """Weighted kappa over ``n`` pairs on the ``categories`` scale; ``observed`` and ``expected``
    the weighted disagreements it compares."""

    kappa: float
    n: int
    categories: tuple[int, ...]
    weights: str
    observed: float
    expected: float


def weighted_kappa(a, b, categories, weights: str = "quadratic") -> KappaResult:
    """Cohen's weighted kappa of two raters' ratings ``a``, ``b`` (pairs with a missing value
    left out) on the ordered whole-number ``categories`` (e.g. ``range(1, 6)``).

    A rating that is not one of the categories is an InputError naming its position; fewer than
    3 pairs, or ratings that leave no chance disagreement (both raters used one category), too.
    """
    if weights not in WEIGHTS:
        raise InputError(f"weights must be one of {list(WEIGHTS)}, got {weights!r}", field="weights")
    cats = tuple(int(c) for c in categories)
    if len(cats) < 2 or len(set(cats)) != len(cats):
        raise InputError(f"a weighted kappa needs at least 2 distinct categories, got {list(cats)}",
                         field="categories")
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    position = {c: i for i, c in enumerate(cats)}
    for name, values in (("first", x), ("second", y)):
        for row, value in enumerate(values):
            if not float(value).is_integer() or int(value) not in position:
                raise InputError(f"{name} rater's rating {value:g} is not one of the categories "
                                 f"{cats[0]}..{cats[-1]}", row=row + 1, field=name)
    if len(x) < MIN_GROUPS_FOR_INTERVAL:
        raise InputError(f"a weighted kappa needs at least {MIN_GROUPS_FOR_INTERVAL} rated pairs, got {len(x)}")
    c = len(cats)
    table = np.zeros((c, c))
    for u, v in zip(x, y):
        table[position[int(u)], position[int(v)]] += 1
    table /= table.sum()
    i, j = np.indices((c, c))
    w = ((i - j) / (c - 1)) ** 2 if weights == "quadratic" else np.abs(i - j) / (c - 1)
    expected_table = np.outer(table.sum(axis=1), table.sum(axis=0))
    observed, expected = float((w * table).sum()), float((w * expected_table).sum())
    if expected == 0:
        raise InputError("both raters used a single category: the weighted kappa is undefined")
    return KappaResult(1 - observed / expected, int(len(x)), cats, weights, observed, expected)


def _clean(value):
    return None if value is None or (isinstance(value, float) and not math.isfinite(value)) else value


def panel_agreement(matrix, *, judge: str = "", level: float = 0.95) -> dict:
    """What a table of ratings says about its raters (plain JSON values).

    ``{"judge", "items", "unrated_items", "raters", "ratings_per_item": {"min", "max"},
    "complete_items", "dropped_items", "icc3k", "icc3k_ci", "icc21", "icc21_ci", "alpha", "note",
    "text"}``: ``items`` rows with at least one rating (``unrated_items`` rows with none, left
    out), ``raters`` columns; the ICCs over the complete
    rows, alpha over every item with two or more ratings. A coefficient that cannot be
    computed is None and ``note`` says why (``no_agreement_reason``: one rater, ``ONE_RATING``;
    no readable rating; at most one readable rating per item).
    """
    x = _matrix(matrix)
    if x.ndim != 2:
        x = x.reshape(len(x), -1)
    per_item = (~np.isnan(x)).sum(axis=1)
    rated = per_item > 0
    out = {"judge": judge, "items": int(rated.sum()), "unrated_items": int((~rated).sum()), "raters": int(x.shape[1]),
           "ratings_per_item": {"min": int(per_item[rated].min()) if rated.any() else 0,
                                "max": int(per_item[rated].max()) if rated.any() else 0},
           "complete_items": int((per_item == x.shape[1]).sum()) if x.shape[1] else 0,
           "dropped_items": int((rated & (per_item < x.shape[1])).sum()),
           "icc3k": None, "icc3k_ci": None, "icc21": None, "icc21_ci": None, "alpha": None, "alpha_items": 0,
           "note": ""}
    reason = no_agreement_reason(out["raters"], out["items"], out["ratings_per_item"]["max"])
    if reason:
        out["note"] = reason
    else:
        notes = []
        try:
            result = icc(x[rated], level=level)
            out.update(icc3k=result.values["ICC(3,k)"], icc3k_ci=list(result.intervals["ICC(3,k)"]),
                       icc21=result.values["ICC(2,1)"], icc21_ci=list(result.intervals["ICC(2,1)"]))
        except InputError as error:
            notes.append(f"ICC: {error.reason}")
        try:
            found = krippendorff_alpha(x[rated])
            out["alpha"], out["alpha_items"] = found.alpha, found.units
        except InputError as error:
            notes.append(f"alpha: {error.reason}")
        out["note"] = "; ".join(notes)
    for key in ("icc3k", "icc21", "alpha"):
        out[key] = _clean(out[key])
    for key in ("icc3k_ci", "icc21_ci"):
        if out[key] is not None:
            out[key] = [_clean(v) for v in out[key]]
    out["text"] = agreement_text(out)
    return out


def _number(value) -> str:
    return "–" if value is None else f"{value:.2f}"


def agreement_text(summary: dict) -> str:
    """One sentence: judge, ratings per item, N items, k raters and the agreement (or why none)."""
    judge = f"judge {summary['judge']}: " if summary.get("judge") else ""
    low, high = summary["ratings_per_item"]["min"], summary["ratings_per_item"]["max"]
    unrated = summary.get("unrated_items") or 0
    items = f"N = {summary['items']} items" + (f" with a readable rating, {unrated} without" if unrated else "")
    reason = no_agreement_reason(summary["raters"], summary["items"], high)
    if reason:
        asked = "" if summary["raters"] <= 1 else f"{summary['raters']} raters asked; "
        return f"{judge}{asked}{reason} ({items})."
    per_item = f"{high}" if low == high else f"{low} to {high}"
    k = summary["raters"]
    text = f"{judge}{per_item} ratings per item from {k} raters, {items}"
    parts = []
    if summary["icc3k"] is not None:
        ci3, ci2 = summary["icc3k_ci"] or [None, None], summary["icc21_ci"] or [None, None]
        parts.append(f"ICC(3,{k}) = {_number(summary['icc3k'])} [{_number(ci3[0])}, {_number(ci3[1])}]")
        parts.append(f"ICC(2,1) = {_number(summary['icc21'])} [{_number(ci2[0])}, {_number(ci2[1])}]")
        used = summary["complete_items"]
        parts.append(f"over the {used} items every rater rated"
                     + (f" ({summary['dropped_items']} with a missing rating left out)"
                        if summary["dropped_items"] else ""))
    if summary["alpha"] is not None:
        parts.append(f"Krippendorff's alpha (interval) = {_number(summary['alpha'])} over the "
                     f"{summary.get('alpha_items')} items with two or more ratings")
    if summary.get("note"):
        parts.append(summary["note"])
    return text + (": " + "; ".join(parts) if parts else "") + "."
