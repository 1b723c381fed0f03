"""Comparing two groups (LLM vs human teams): paper A, Figure 1, Tables 5, 12, 16, 17, A.5.

``group_comparison`` gives each group's mean with a 95% t interval, Welch's and Student's
t-tests, overall and per ``by`` level, and two effect sizes whose intervals agree with a test
on the same row (``engine.stats.guards``): Hedges' g (small-sample corrected) with a 95% CI
from the noncentral t of Welch's statistic, beside the Welch interval of the difference, so
``welch_p < .05`` exactly when both exclude 0; and Cohen's d (pooled SD, paper A's Figure 1)
with the classical noncentral-t interval of Student's statistic, consistent with
``student_p``. The difference and the t statistics are ``groups[0] - groups[1]``.
``top_share`` compares the groups above a pooled percentile threshold.
``group_effect_robustness`` repeats the comparison as in A.5: task fixed effects with HC3
SEs, the same clustered by generating cluster, task-level differences, and a mixed model
with random intercepts for task and cluster.
"""

from __future__ import annotations

import warnings as python_warnings

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from engine.errors import InputError


def _check(df: pd.DataFrame, columns: list[str]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"column {missing[0]!r} is not in the data", field=missing[0])


def _values(df: pd.DataFrame, value: str) -> pd.Series:
    values = pd.to_numeric(df[value], errors="coerce").replace([np.inf, -np.inf], np.nan)
    return values


def mean_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and its t-based confidence interval."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    mean = float(values.mean()) if n else np.nan
    if n < 2:
        return mean, np.nan, np.nan
    half = scipy_stats.t.ppf(0.5 + level / 2, n - 1) * values.std(ddof=1) / np.sqrt(n)
    return mean, mean - half, mean + half


def cohens_d(a, b, level: float = 0.95) -> tuple[float, float, float]:
    """Cohen's d = (mean_a - mean_b) / pooled SD, with the noncentral-t interval of Student's
    pooled statistic (``engine.stats.guards.hedges_g(equal_var=True)``; it excludes 0 exactly
    when Student's p < 1 - level)."""
    from engine.stats.guards import hedges_g

    result = hedges_g(a, b, level=level, equal_var=True)
    return float(result["d"]), float(result["d_low"]), float(result["d_high"])


def _compare_two(a: np.ndarray, b: np.ndarray, labels: tuple[str, str]) -> dict:
    row: dict = {}
    for label, values in zip(labels, (a, b)):
        mean, low, high = mean_ci(values)
        row.update({f"{label}_n": len(values), f"{label}_mean": mean, f"{label}_ci_low": low,
                    f"{label}_ci_high": high, f"{label}_sd": float(np.std(values, ddof=1)) if len(values) > 1 else np.nan})
    row["diff"] = float(a.mean() - b.mean())
    welch = scipy_stats.ttest_ind(a, b, equal_var=False)
    student = scipy_stats.ttest_ind(a, b, equal_var=True)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    row.update({"welch_t": float(welch.statistic), "welch_df": float((va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))),
                "welch_p": float(welch.pvalue), "student_t": float(student.statistic),
                "student_df": len(a) + len(b) - 2, "student_p": float(student.pvalue)})
    from engine.stats.guards import hedges_g, welch

    difference = welch(a, b)
    row.update({"diff_ci_low": difference["ci_low"], "diff_ci_high": difference["ci_high"]})
    g = hedges_g(a, b)
    row.update({"hedges_g": g["g"], "g_ci_low": g["g_low"], "g_ci_high": g["g_high"]})
    d = hedges_g(a, b, equal_var=True)
    row.update({"cohens_d": d["d"], "d_ci_low": d["d_low"], "d_ci_high": d["d_high"]})
    return row


def group_comparison(df: pd.DataFrame, value: str, group: str = "source",
                     groups: tuple[str, str] = ("llm", "human"), by: str | None = None) -> pd.DataFrame:
    """Means with 95% CIs, Welch and Student t, Cohen's d: overall and per ``by`` level.

    One row per ``by`` level then an ``overall`` row (column ``by`` names the level).
    Columns ``<group>_n, _mean, _ci_low, _ci_high, _sd`` for both groups, ``diff``,
    ``welch_t, welch_df, welch_p, student_t, student_df, student_p``, ``diff_ci_low, diff_ci_high``
    (Welch), ``hedges_g, g_ci_low, g_ci_high`` (CI from Welch's statistic) and ``cohens_d,
    d_ci_low, d_ci_high`` (CI from Student's statistic).
    """
    _check(df, [value, group] + ([by] if by else []))
    if len(groups) != 2 or groups[0] == groups[1]:
        raise InputError(f"groups must be two different values of {group!r}, got {groups!r}")
    frame = df.assign(_value=_values(df, value)).dropna(subset=["_value"])
    present = set(frame[group].astype(str))
    absent = [g for g in groups if str(g) not in present]
    if absent:
        raise InputError(f"group {absent[0]!r} has no rows with a value of {value!r} "
                         f"(groups present: {sorted(present)})", field=group)
    labels = tuple(str(g) for g in groups)
    sections = []
    if by:
        sections += [(level, part) for level, part in frame.groupby(by, sort=True)]
    sections.append(("overall", frame))
    rows = []
    for level, part in sections:
        a = part.loc[part[group].astype(str) == labels[0], "_value"].to_numpy(dtype=float)
        b = part.loc[part[group].astype(str) == labels[1], "_value"].to_numpy(dtype=float)
        if len(a) < 2 or len(b) < 2:
            if level == "overall":
                raise InputError(f"sample too small: each group needs at least 2 values of "
                                 f"{value!r} (got {len(a)} and {len(b)})", field=value)
            continue
        rows.append({"by": level, **_compare_two(a, b, labels)})
    return pd.DataFrame(rows)


def top_share(df: pd.DataFrame, value: str, q: float = 0.95, group: str = "source",
              by: str | None = None) -> pd.DataFrame:
    """Who is in the top (1 - q) of the pooled distribution of ``value``.

    The threshold is the pooled ``q`` quantile (per ``by`` level when given). For each group:
    ``n``, ``n_top`` (values >= threshold), ``rate_top`` (n_top / n), ``share_of_top``
    (its part of the top set) and ``share_of_all`` (its part of all rows, the share
    expected if groups did not differ).
    """
    _check(df, [value, group] + ([by] if by else []))
    if not 0 < q < 1:
        raise InputError(f"q must be in (0, 1), got {q}", field="q")
    frame = df.assign(_value=_values(df, value)).dropna(subset=["_value"])
    if frame.empty:
        raise InputError(f"no numeric values of {value!r}", field=value)
    sections = ([(level, part) for level, part in frame.groupby(by, sort=True)] if by else []) + [("overall", frame)]
    rows = []
    for level, part in sections:
        threshold = float(np.quantile(part["_value"], q))
        top = part["_value"] >= threshold
        for name, members in part.groupby(group, sort=True):
            in_top = members["_value"] >= threshold
            rows.append({"by": level, "threshold": threshold, "group": name, "n": len(members),
                         "n_top": int(in_top.sum()), "rate_top": float(in_top.mean()),
                         "share_of_top": float(in_top.sum() / top.sum()) if top.sum() else np.nan,
                         "share_of_all": len(members) / len(part)})
    return pd.DataFrame(rows)


def top_within_groups(df: pd.DataFrame, value: str, share: float = 0.05, group: str = "source") -> pd.DataFrame:
    """The best ``share`` of each group *within* that group (paper A, Figure 1d).

    As the authors' notebook: the ``int(share * n)`` largest values of each group (not a pooled
    threshold; ``top_share`` is the pooled view). Per group: ``n``, ``p95`` (the group's own
    95th percentile, Figure 1c), ``max``, ``top_n``, ``top_mean``, ``top_sd``.
    """
    _check(df, [value, group])
    if not 0 < share < 1:
        raise InputError(f"share must be in (0, 1), got {share}", field="share")
    frame = df.assign(_value=_values(df, value)).dropna(subset=["_value"])
    rows = []
    for name, part in frame.groupby(group, sort=True):
        values = part["_value"]
        k = int(len(values) * share)
        top = values.nlargest(k)
        rows.append({"group": name, "n": len(values), "p95": float(np.percentile(values, 95)),
                     "max": float(values.max()), "top_n": k, "top_mean": float(top.mean()) if k else np.nan,
                     "top_sd": float(top.std(ddof=1)) if k > 1 else np.nan})
    return pd.DataFrame(rows)


def group_effect_robustness(df: pd.DataFrame, value: str, group: str = "source",
                            groups: tuple[str, str] = ("llm", "human"), task: str = "task",
                            cluster: str | None = None, mixed: bool = True) -> pd.DataFrame:
    """The group effect (``groups[0]`` minus ``groups[1]``) under the A.5 robustness models.

    Rows (``method``): task fixed effects + HC3; the same with SEs clustered by ``cluster``;
    the mean of task-level differences with a one-sample t-test (df = tasks - 1); and, when
    ``mixed``, a REML mixed model with random intercepts for task and a variance component
    for ``cluster`` within task. Columns: ``estimate, se, ci_low, ci_high, p, n, note``.
    """
    import statsmodels.api as sm

    _check(df, [value, group, task] + ([cluster] if cluster else []))
    labels = tuple(str(g) for g in groups)
    frame = df.assign(_value=_values(df, value), _group=df[group].astype(str))
    frame = frame[frame["_group"].isin(labels)].dropna(subset=["_value", task])
    if cluster:
        for label in labels:
            part = frame.loc[frame["_group"] == label, cluster]
            if len(part) and part.isna().all():
                raise InputError(f"cluster column {cluster!r} is empty for every {label!r} row; give a column "
                                 "that names the generating cluster of both groups (for the paper release, "
                                 "engine.stats.generating_cluster)", field=cluster)
        frame = frame.dropna(subset=[cluster])
    counts = frame["_group"].value_counts()
    if any(counts.get(label, 0) < 2 for label in labels):
        raise InputError(f"sample too small: each group needs at least 2 rows (got "
                         f"{[int(counts.get(label, 0)) for label in labels]})", field=group)
    if frame[task].nunique() < 2:
        raise InputError(f"{task!r} has one level; task fixed effects need at least two", field=task)
    indicator = (frame["_group"] == labels[0]).astype(float).rename("effect")
    tasks = pd.get_dummies(frame[task].astype(str), prefix="task", drop_first=True, dtype=float)
    X = pd.concat([pd.Series(1.0, index=frame.index, name="Intercept"), indicator, tasks], axis=1)
    y = frame["_value"].astype(float)
    rows = []

    def add(method, estimate, se, low, high, p, n, note=""):
        rows.append({"method": method, "estimate": float(estimate), "se": float(se), "ci_low": float(low),
                     "ci_high": float(high), "p": float(p), "n": int(n), "note": note})

    hc3 = sm.OLS(y, X).fit(cov_type="HC3")
    ci = hc3.conf_int().loc["effect"]
    add("task fixed effects, HC3", hc3.params["effect"], hc3.bse["effect"], ci[0], ci[1], hc3.pvalues["effect"], len(y))
    if cluster:
        codes = pd.factorize(frame[cluster].astype(str))[0]
        clustered = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": codes})
        ci = clustered.conf_int().loc["effect"]
        add(f"task fixed effects, clustered by {cluster}", clustered.params["effect"],
            clustered.bse["effect"], ci[0], ci[1], clustered.pvalues["effect"], len(y),
            f"{codes.max() + 1} clusters")
    means = frame.groupby([task, "_group"])["_value"].mean().unstack("_group")
    differences = (means[labels[0]] - means[labels[1]]).dropna()
    if len(differences) >= 2:
        test = scipy_stats.ttest_1samp(differences, 0.0)
        se = differences.std(ddof=1) / np.sqrt(len(differences))
        half = scipy_stats.t.ppf(0.975, len(differences) - 1) * se
        add("task-level differences, t-test", differences.mean(), se, differences.mean() - half,
            differences.mean() + half, test.pvalue, len(differences),
            f"t({len(differences) - 1}) = {test.statistic:.2f}; positive in {(differences > 0).sum()} of {len(differences)} tasks")
    if mixed:
        rows.append(_mixed_row(frame, labels, task, cluster))
    return pd.DataFrame(rows)


def _mixed_row(frame: pd.DataFrame, labels, task: str, cluster: str | None) -> dict:
    import statsmodels.formula.api as smf

    data = pd.DataFrame({"value": frame["_value"].astype(float).to_numpy(),
                         "effect": (frame["_group"] == labels[0]).astype(float).to_numpy(),
                         "task": frame[task].astype(str).to_numpy()})
    vc = None
    if cluster:
        data["cluster"] = frame[cluster].astype(str).to_numpy()
        vc = {"cluster": "0 + C(cluster)"}
    with python_warnings.catch_warnings(record=True) as caught:
        python_warnings.simplefilter("always")
        result = smf.mixedlm("value ~ effect", data, groups="task", vc_formula=vc).fit(reml=True)
    estimate, se = float(result.fe_params["effect"]), float(result.bse_fe["effect"])
    z = scipy_stats.norm.ppf(0.975)
    notes = [] if result.converged else ["did not converge"]
    notes += sorted({type(w.message).__name__ for w in caught})
    return {"method": "mixed model, random task" + (f" and {cluster}" if cluster else ""),
            "estimate": estimate, "se": se, "ci_low": estimate - z * se, "ci_high": estimate + z * se,
            "p": float(2 * scipy_stats.norm.sf(abs(estimate / se))), "n": len(data),
            "note": "; ".join(notes)}
