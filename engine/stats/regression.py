"""Fitting a :class:`RegressionSpec`: OLS with HC3 / clustered SEs, or a REML mixed model.

Paper A reports hierarchical OLS with HC3 robust standard errors (Tables 1, 7, 20, 21, 23)
and a mixed model with task random intercepts estimated by REML (Model 5 of Tables 20 and
21) with marginal and conditional R² after Nakagawa & Schielzeth (2013):

    R²_marginal    = σ²_f / (σ²_f + σ²_task + σ²_ε)
    R²_conditional = (σ²_f + σ²_task) / (σ²_f + σ²_task + σ²_ε)

with σ²_f the variance of the fixed-effect predictions Xβ. The authors' notebook computed
σ²_f from the fitted values including the random intercepts; that variant is reported as
``conditional_r2_paper_variant`` so the published numbers can be matched when ratings are
imported. A mixed model that does not converge is an error by default; with
``allow_nonconvergence=True`` it is returned with ``converged=False`` and the warnings.
"""

from __future__ import annotations

import warnings as python_warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from engine.errors import InputError
from engine.stats.design import build_design
from engine.stats.guards import MIN_GROUPS_FOR_GROUP_VARIANCE, check_regression, mixed_r2_guard
from engine.stats.spec import RegressionSpec

TABLE_COLUMNS = ("term", "coef", "se", "p", "ci_low", "ci_high", "stars")


@dataclass
class RegressionResult:
    """A fitted specification: tidy ``table``, ``summary`` dict, the ``spec`` and raw ``model``."""

    spec: RegressionSpec
    table: pd.DataFrame
    summary: dict
    model: object = field(default=None, repr=False)

    def coef(self, term: str) -> float:
        return float(self.table.set_index("term").loc[term, "coef"])

    def to_dict(self) -> dict:
        """JSON-ready: spec, summary and the table as records."""
        table = self.table.replace({np.nan: None})
        return {"spec": self.spec.to_dict(), "summary": self.summary,
                "table": table.to_dict(orient="records")}


def stars(p: float, levels: tuple[float, float, float] = (0.05, 0.01, 0.001)) -> str:
    """'*', '**' or '***' when ``p`` is below the first, second or third level."""
    if p is None or not np.isfinite(p):
        return ""
    return "*" * sum(p < level for level in levels)


def fit(spec: RegressionSpec, df: pd.DataFrame, *, allow_nonconvergence: bool = False,
        alpha: float = 0.05) -> RegressionResult:
    """Fit ``spec`` on ``df`` and return a tidy result (Tables 1, 7, 20, 21 and 29).

    Every fit passes ``engine.stats.guards.check_regression`` first: with fewer than 5
    residual degrees of freedom (N − k) it is refused (``SampleTooSmall``); the summary
    carries ``n``, ``k``, ``df_resid``, ``small_sample`` (N < 10·k) and ``sample_warning``; a
    mixed fit also ``n_groups``, ``r2_headline`` and ``r2_headline_reason``
    (``engine.stats.guards.mixed_r2_guard``: its R² is a headline only with N ≥ 10·k and 5 or
    more groups) and its own ``sample_warning``.
    """
    if not isinstance(spec, RegressionSpec):
        raise InputError(f"expected a RegressionSpec, got {type(spec).__name__}")
    where = f"specification {spec.name!r}"
    extra: tuple[str, ...] = ()
    if spec.estimator == "mixedlm":
        extra = (spec.columns.get(spec.group, spec.group),)
        if any(spec.columns.get(b, b) == extra[0] for b in spec.blocks):
            raise InputError(f"{where}: {extra[0]!r} is both a fixed-effect block and the random-"
                             "intercept group; remove it from blocks (the paper's mixed model has "
                             "task as a random intercept only)", field=extra[0])
    elif spec.estimator == "ols_cluster":
        extra = (spec.cluster,)
    design = build_design(df, outcome=spec.outcome, blocks=spec.blocks, zscore=spec.zscore,
                          reference=spec.reference, columns=spec.columns, extra_columns=extra,
                          spec_name=where)
    _refuse_degenerate_outcome(design.y, spec, where)
    if spec.estimator == "mixedlm":
        return _fit_mixed(spec, design, extra[0], allow_nonconvergence, alpha)
    return _fit_ols(spec, design, alpha)


def _refuse_degenerate_outcome(y, spec: RegressionSpec, where: str) -> None:
    """An outcome without variation (every rating the same) has nothing to explain: the fit
    would report coefficients of 0 with standard errors of 0 and p = 0 ('***'). Refused."""
    values = np.asarray(y, dtype=float)
    if len(values) and np.ptp(values) <= 1e-12 * max(1.0, float(np.abs(values).max())):
        raise InputError(f"{where}: the outcome {spec.outcome!r} is {values[0]:g} in every one of the "
                         f"{len(values)} rows; with no variation there is nothing to fit (no "
                         "coefficient, standard error or p-value is defined)", field=spec.outcome)


def _refuse_perfect_fit(residual_ss: float, total_ss: float, spec: RegressionSpec) -> None:
    """Predictors that reproduce the outcome exactly leave no residual: standard errors of 0
    and p-values of 0 would be an artefact, not evidence. Refused."""
    if total_ss > 0 and residual_ss <= 1e-20 * total_ss:
        raise InputError(f"specification {spec.name!r}: the predictors reproduce {spec.outcome!r} "
                         "exactly (no residual variation), so standard errors and p-values are "
                         "undefined; not fitted", field=spec.outcome)


def _fit_ols(spec: RegressionSpec, design, alpha: float) -> RegressionResult:
    import statsmodels.api as sm

    guard = check_regression(len(design.y), design.X.shape[1], f"specification {spec.name!r}")
    model = sm.OLS(design.y, design.X)
    notes = list(design.warnings)
    with python_warnings.catch_warnings(record=True) as caught:
        python_warnings.simplefilter("always")
        if spec.estimator == "ols_hc3":
            leverage = _leverage(design.X.to_numpy())
            if np.any(leverage > 1 - 1e-10):
                notes.append(f"{int((leverage > 1 - 1e-10).sum())} row(s) have leverage 1 (a "
                             "factor level with a single row); their HC3 standard errors are undefined")
            result = model.fit(cov_type="HC3")
        elif spec.estimator == "ols_cluster":
            codes = pd.factorize(design.rows[spec.cluster])[0]
            if codes.max() + 1 < 2:
                raise InputError(f"specification {spec.name!r}: clustered SEs need at least 2 "
                                 f"clusters in {spec.cluster!r}", field=spec.cluster)
            result = model.fit(cov_type="cluster", cov_kwds={"groups": codes})
            notes.append(f"standard errors clustered by {spec.cluster!r} ({codes.max() + 1} clusters)")
        else:
            result = model.fit()
    notes += _warning_texts(caught)
    _refuse_perfect_fit(float(result.ssr), float(result.centered_tss), spec)
    table = _tidy(result.params, result.bse, result.pvalues, result.conf_int(alpha), spec)
    summary = {"name": spec.name, "estimator": spec.estimator, "n": int(result.nobs),
               "n_dropped": design.n_dropped, "n_parameters": int(design.X.shape[1]),
               "r2": float(result.rsquared), "adj_r2": float(result.rsquared_adj),
               "marginal_r2": None, "conditional_r2": None, "conditional_r2_paper_variant": None,
               "group_variance": None, "converged": True, "warnings": notes,
               "reference_levels": {c: _plain(levels[0]) for c, levels in design.factor_levels.items()},
               **_guard_fields(guard)}
    return RegressionResult(spec=spec, table=table, summary=summary, model=result)


def _fit_mixed(spec: RegressionSpec, design, group: str, allow_nonconvergence: bool,
               alpha: float) -> RegressionResult:
    import statsmodels.api as sm

    where = f"specification {spec.name!r}"
    groups = design.rows[group].astype(str).to_numpy()
    n_groups = len(np.unique(groups))
    if n_groups < 2:
        raise InputError(f"{where}: the random-intercept group {group!r} has {n_groups} level in "
                         "the rows used; a mixed model needs at least 2 groups", field=group)
    guard = check_regression(len(design.y), design.X.shape[1] + 1, where)  # + the group variance
    notes = list(design.warnings)
    if n_groups < MIN_GROUPS_FOR_GROUP_VARIANCE:
        notes.append(f"only {n_groups} groups in {group!r}: the group variance is poorly estimated")
    model = sm.MixedLM(design.y.to_numpy(), design.X, groups=groups)
    with python_warnings.catch_warnings(record=True) as caught:
        python_warnings.simplefilter("always")
        try:
            result = model.fit(reml=True, maxiter=200)
        except (np.linalg.LinAlgError, ValueError) as error:
            raise InputError(f"{where}: the mixed model could not be fitted ({error}); the design "
                             "may be too small or collinear within groups") from None
    notes += _warning_texts(caught)
    converged = bool(getattr(result, "converged", False))
    group_variance = float(np.asarray(result.cov_re)[0, 0])
    if group_variance <= 1e-8:
        notes.append(f"the {group!r} variance is estimated at the boundary (0): groups do not "
                     "differ beyond the fixed effects")
    if not converged and not allow_nonconvergence:
        telling = [n for n in notes if "Retrying" not in n and "mle_retvals" not in n]
        detail = "; ".join(telling[-3:]) or "the optimiser stopped before the likelihood settled"
        raise InputError(f"{where}: the mixed model did not converge ({detail}). Try fewer fixed "
                         f"effects, more rows per {group!r}, or an OLS estimator (allow_nonconvergence / "
                         "--allow-nonconvergence shows the unconverged estimates, flagged)")
    residuals = np.asarray(design.y, dtype=float) - np.asarray(result.fittedvalues, dtype=float)
    _refuse_perfect_fit(float(residuals @ residuals), float(np.var(np.asarray(design.y, dtype=float))) * len(residuals),
                        spec)
    fe_names = list(design.X.columns)
    params = pd.Series(np.asarray(result.fe_params), index=fe_names)
    with np.errstate(invalid="ignore"), python_warnings.catch_warnings():
        python_warnings.simplefilter("ignore")
        bse = pd.Series(np.asarray(result.bse_fe), index=fe_names)
    z = params / bse
    pvalues = pd.Series(2 * scipy_stats.norm.sf(np.abs(z)), index=fe_names)
    crit = scipy_stats.norm.ppf(1 - alpha / 2)
    conf = pd.DataFrame({0: params - crit * bse, 1: params + crit * bse})
    table = _tidy(params, bse, pvalues, conf, spec)
    with np.errstate(invalid="ignore"), python_warnings.catch_warnings():
        python_warnings.simplefilter("ignore")
        bse_re = np.asarray(result.bse_re)
    group_se = float(bse_re[0]) if len(bse_re) else np.nan
    table = pd.concat([table, pd.DataFrame([{"term": "Group Var", "coef": group_variance,
                                             "se": group_se, "p": np.nan, "ci_low": np.nan,
                                             "ci_high": np.nan, "stars": ""}])], ignore_index=True)

    fixed_prediction = design.X.to_numpy() @ params.to_numpy()
    var_fixed = float(np.var(fixed_prediction))
    residual = float(result.scale)
    total = var_fixed + group_variance + residual
    var_fitted = float(np.var(np.asarray(result.fittedvalues)))
    summary = {"name": spec.name, "estimator": spec.estimator, "n": int(len(design.y)),
               "n_dropped": design.n_dropped, "n_parameters": int(design.X.shape[1]),
               "n_groups": n_groups, "r2": None, "adj_r2": None,
               "marginal_r2": var_fixed / total, "conditional_r2": (var_fixed + group_variance) / total,
               "conditional_r2_paper_variant":
                   (var_fitted + group_variance) / (var_fitted + group_variance + residual),
               "group_variance": group_variance, "residual_variance": residual,
               "log_likelihood": float(result.llf), "converged": converged, "warnings": notes,
               "reference_levels": {c: _plain(levels[0]) for c, levels in design.factor_levels.items()},
               **_guard_fields(guard), **_mixed_headline_fields(guard, n_groups)}
    return RegressionResult(spec=spec, table=table, summary=summary, model=result)


def _mixed_headline_fields(guard, n_groups: int) -> dict:
    """Whether the mixed fit's R² is a headline (``engine.stats.guards.mixed_r2_guard``); its
    warning replaces the OLS one, which points at an adjusted R² a mixed model does not have."""
    headline = mixed_r2_guard(guard.n, guard.k, n_groups)
    return {"r2_headline": headline.headline, "r2_headline_reason": headline.reason,
            "sample_warning": headline.warning}


def _guard_fields(guard) -> dict:
    return {"k": guard.k, "df_resid": guard.df_resid, "small_sample": guard.small_sample,
            "sample_warning": guard.warning}


def _tidy(params, bse, pvalues, conf, spec: RegressionSpec) -> pd.DataFrame:
    conf = pd.DataFrame(conf)
    table = pd.DataFrame({
        "term": list(params.index), "coef": np.asarray(params, dtype=float),
        "se": np.asarray(bse, dtype=float), "p": np.asarray(pvalues, dtype=float),
        "ci_low": np.asarray(conf.iloc[:, 0], dtype=float),
        "ci_high": np.asarray(conf.iloc[:, 1], dtype=float)})
    table["stars"] = [stars(p, spec.star_levels) for p in table["p"]]
    return table


def _plain(value):
    """A numpy scalar as a plain Python value, so summaries serialise to JSON."""
    return value.item() if hasattr(value, "item") else value


def _leverage(X: np.ndarray) -> np.ndarray:
    q, _ = np.linalg.qr(X)
    return np.einsum("ij,ij->i", q, q)


def _warning_texts(caught) -> list[str]:
    texts = []
    for item in caught:
        text = str(item.message).strip().splitlines()[0] if str(item.message).strip() else ""
        if text and text not in texts:
            texts.append(f"{item.category.__name__}: {text}")
    return texts
