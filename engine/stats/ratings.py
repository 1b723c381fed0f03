"""Ratings: min-max scaling within task, creativity scores and inter-rater ICC(3,k).

Paper A, Methods: each raw judge score is scaled to [0, 1] within its task,
x' = (x - min_T x) / (max_T x - min_T x); creativity = novelty × usefulness; the
robustness variant (Table 28) is novelty + usefulness. Reliability is ICC(3,k), the
two-way mixed, consistency, average-measures coefficient of Shrout & Fleiss (1979), with
the F-based 95% interval of McGraw & Wong (1996) (Table 4).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from engine.errors import InputError


def minmax_within_task(df: pd.DataFrame, columns, task: str = "task") -> pd.DataFrame:
    """A copy of ``df`` with each of ``columns`` min-max scaled to [0, 1] within ``task``."""
    columns = [columns] if isinstance(columns, str) else list(columns)
    missing = [c for c in columns + [task] if c not in df.columns]
    if missing:
        raise InputError(f"column {missing[0]!r} is not in the data", field=missing[0])
    out = df.copy()
    for column in columns:
        values = pd.to_numeric(df[column], errors="coerce")
        bad = values.isna() & df[column].notna()
        if bad.any():
            raise InputError(f"expected a number, got {df.loc[bad, column].iloc[0]!r}",
                             row=int(np.flatnonzero(bad.to_numpy())[0]) + 1, field=column)
        grouped = values.groupby(df[task])
        low, high = grouped.transform("min"), grouped.transform("max")
        spread = high - low
        flat = spread == 0
        if flat.any():
            name = df.loc[flat, task].iloc[0]
            raise InputError(f"every {column!r} value in task {name!r} is the same, so it cannot "
                             "be min-max scaled within the task", field=column)
        out[column] = (values - low) / spread
    return out


def creativity_product(df: pd.DataFrame, novelty: str = "novelty", usefulness: str = "usefulness") -> pd.Series:
    """Creativity = novelty × usefulness (paper A, Methods), on already scaled ratings."""
    return _pair(df, novelty, usefulness).prod(axis=1, min_count=2).rename("creativity")


def creativity_additive(df: pd.DataFrame, novelty: str = "novelty", usefulness: str = "usefulness") -> pd.Series:
    """The additive operationalisation, novelty + usefulness (Table 28)."""
    return _pair(df, novelty, usefulness).sum(axis=1, min_count=2).rename("creativity_additive")


def _pair(df: pd.DataFrame, novelty: str, usefulness: str) -> pd.DataFrame:
    missing = [c for c in (novelty, usefulness) if c not in df.columns]
    if missing:
        raise InputError(f"column {missing[0]!r} is not in the data", field=missing[0])
    return df[[novelty, usefulness]].apply(pd.to_numeric, errors="coerce")


def icc3k(ratings_wide, level: float = 0.95) -> tuple[float, float, float]:
    """ICC(3,k) and its confidence interval from a targets × raters table.

    Two-way ANOVA without replication: with MS_rows (targets) and MS_error,
    ICC(3,k) = (MS_rows - MS_error) / MS_rows; F = MS_rows / MS_error on
    (n - 1, (n - 1)(k - 1)) df; bounds 1 - 1/(F / F_crit) and 1 - 1/(F · F_crit').
    Targets with a missing rating are dropped (listwise), as in pingouin.
    """
    table = pd.DataFrame(ratings_wide).apply(pd.to_numeric, errors="coerce").dropna()
    n, k = table.shape
    if k < 2:
        raise InputError(f"ICC needs at least 2 raters (columns), got {k}")
    if n < 3:
        raise InputError(f"ICC needs at least 3 rated targets with every rating present, got {n}")
    x = table.to_numpy(dtype=float)
    grand = x.mean()
    ss_rows = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ss_error = ((x - grand) ** 2).sum() - ss_rows - ss_cols
    df_rows, df_error = n - 1, (n - 1) * (k - 1)
    ms_rows, ms_error = ss_rows / df_rows, ss_error / df_error
    if ms_rows == 0:
        raise InputError("every target has the same mean rating; ICC is undefined")
    icc = (ms_rows - ms_error) / ms_rows
    if ms_error == 0:
        return float(icc), float(icc), float(icc)
    f_value = ms_rows / ms_error
    alpha = 1 - level
    f_low = f_value / scipy_stats.f.ppf(1 - alpha / 2, df_rows, df_error)
    f_high = f_value * scipy_stats.f.ppf(1 - alpha / 2, df_error, df_rows)
    return float(icc), float(1 - 1 / f_low), float(1 - 1 / f_high)
