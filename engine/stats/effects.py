"""Simple effects from an interaction model: paper A, Table 8 (from Table 7, Model 4).

In ``outcome ~ ... + C(discussion) * C(model)`` the effect of discussion level d against
the reference for model m is the main effect plus the d×m interaction (the main effect
alone for the reference model). Its SE is sqrt(c' V c) with V the fit's covariance (HC3
for ``ols_hc3``), c the 0/1 contrast picking both terms.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from engine.errors import InputError
from engine.stats.design import factor_term
from engine.stats.regression import RegressionResult, stars


def simple_effects(result: RegressionResult, factor: str = "discussion", by: str = "model") -> pd.DataFrame:
    """Effect of each non-reference ``factor`` level within each level of ``by`` (Table 8).

    Columns: ``factor_level, by_level, effect, se, p, stars``. Needs a fitted OLS result of a
    specification with the ``model_x_discussion`` block (or both factors and their interaction).
    """
    model = getattr(result, "model", None)
    if model is None or not hasattr(model, "cov_params"):
        raise InputError("simple effects need a fitted result (with its covariance); refit with engine.stats.fit")
    names = list(result.table["term"])
    names = [n for n in names if n != "Group Var"]
    cov = pd.DataFrame(np.asarray(model.cov_params())[: len(names), : len(names)], index=names, columns=names)
    params = result.table.set_index("term")["coef"]
    prefix_f, prefix_b = f"C({factor})[T.", f"C({by})[T."
    factor_levels = [n[len(prefix_f):-1] for n in names if n.startswith(prefix_f) and ":" not in n]
    by_levels = [n[len(prefix_b):-1] for n in names if n.startswith(prefix_b) and ":" not in n]
    if not factor_levels or not by_levels:
        raise InputError(f"the result has no {factor!r} and {by!r} terms to combine")
    if not any(":" in n for n in names):
        raise InputError(f"the result has no {factor} x {by} interaction; use the model_x_discussion block")
    reference = (result.summary or {}).get("reference_levels", {}).get(by, "reference")
    rows = []
    for level in factor_levels:
        main = factor_term(factor, level)
        for by_level in [str(reference)] + by_levels:
            contrast = pd.Series(0.0, index=names)
            contrast[main] = 1.0
            interaction = f"{main}:{factor_term(by, by_level)}"
            if by_level in by_levels:
                if interaction not in contrast.index:
                    continue  # an empty cell, left out of the fit
                contrast[interaction] = 1.0
            effect = float(contrast @ params[names])
            se = float(np.sqrt(contrast @ cov @ contrast))
            dof = getattr(model, "df_resid", None)
            statistic = effect / se
            p = float(2 * (scipy_stats.t.sf(abs(statistic), dof) if getattr(model, "use_t", False) and dof
                           else scipy_stats.norm.sf(abs(statistic))))
            rows.append({"factor_level": level, "by_level": by_level, "effect": effect, "se": se, "p": p,
                         "stars": stars(p, result.spec.star_levels if result.spec else (0.05, 0.01, 0.001))})
    return pd.DataFrame(rows)
