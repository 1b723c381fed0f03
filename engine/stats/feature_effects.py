"""Each of several columns compared between two groups, one row per column: the table behind
paper A's Figure 1 and Tables 5 and 12 (LLM − human on the trajectory features and ratings).

``feature_effects`` takes the ``overall`` row of ``engine.stats.groups.group_comparison`` for
each column: both groups' N and mean, the difference of means with Welch's 95% interval,
Welch's t-test p, and Hedges' g (pooled SD, small-sample correction) with its 95% interval from
the noncentral t of Welch's statistic, so that p < .05 exactly when both intervals exclude 0
(``engine.stats.guards``). A column one group has no value of is left out (no row). The
LLM vs human page, the report and the page's notebook all call it."""

from __future__ import annotations

import pandas as pd

from engine.errors import InputError
from engine.stats.groups import group_comparison

COLUMNS = ("feature", "{0}_n", "{0}_mean", "{1}_n", "{1}_mean", "diff", "diff_ci_low", "diff_ci_high",
           "welch_p", "g", "ci_low", "ci_high")


def feature_effects(frame: pd.DataFrame, columns, group: str = "source",
                    groups: tuple[str, str] = ("llm", "human")) -> pd.DataFrame:
    """``groups[0]`` minus ``groups[1]`` (values of ``group``) on each of ``columns``; numbers
    as floats (p-values too), N as ints. Columns: ``COLUMNS`` with the groups' names."""
    first, second = groups
    rows = []
    for column in columns:
        try:
            overall = group_comparison(frame, column, group=group, groups=groups).query("by == 'overall'").iloc[0]
        except InputError:  # one group has no value of this column
            continue
        rows.append({"feature": column,
                     f"{first}_n": int(overall[f"{first}_n"]), f"{first}_mean": overall[f"{first}_mean"],
                     f"{second}_n": int(overall[f"{second}_n"]), f"{second}_mean": overall[f"{second}_mean"],
                     "diff": overall["diff"], "diff_ci_low": overall["diff_ci_low"],
                     "diff_ci_high": overall["diff_ci_high"], "welch_p": overall["welch_p"],
                     "g": overall["hedges_g"], "ci_low": overall["g_ci_low"], "ci_high": overall["g_ci_high"]})
    return pd.DataFrame(rows, columns=[c.format(first, second) for c in COLUMNS]) if rows else pd.DataFrame(rows)
