"""Variance inflation factors of the feature block (paper A, Methods: all VIF < 10)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES


def vif(df: pd.DataFrame, columns=PAPER_A_FEATURES) -> pd.DataFrame:
    """VIF_j = 1 / (1 - R²_j), R²_j from regressing column j on the others with an intercept.

    Computed as the diagonal of the inverse correlation matrix, which equals the regression
    definition. Rows with a missing value are dropped; ``attrs["n"]`` is the N used.
    Returns columns ``feature, vif``; an exactly collinear column gets ``inf``.
    """
    columns = list(columns)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"column {missing[0]!r} is not in the data", field=missing[0])
    if len(columns) < 2:
        raise InputError("VIF needs at least two columns")
    values = df[columns].apply(pd.to_numeric, errors="coerce").replace([np.inf, -np.inf], np.nan).dropna()
    if len(values) <= len(columns):
        raise InputError(f"sample too small: {len(values)} complete row(s) for {len(columns)} columns")
    constant = [c for c in columns if values[c].std() == 0]
    if constant:
        raise InputError(f"column {constant[0]!r} is constant, so its VIF is undefined", field=constant[0])
    correlation = np.corrcoef(values.to_numpy(), rowvar=False)
    try:
        with np.errstate(all="ignore"):
            inverse = np.linalg.inv(correlation)
        diagonal = np.diag(inverse)
        if np.linalg.cond(correlation) > 1e12:
            raise np.linalg.LinAlgError
    except np.linalg.LinAlgError:
        diagonal = _vif_by_regression(values.to_numpy())
    out = pd.DataFrame({"feature": columns, "vif": diagonal})
    out.attrs["n"] = len(values)
    return out


def _vif_by_regression(x: np.ndarray) -> np.ndarray:
    result = []
    for j in range(x.shape[1]):
        others = np.column_stack([np.ones(len(x)), np.delete(x, j, axis=1)])
        beta, *_ = np.linalg.lstsq(others, x[:, j], rcond=None)
        residual = x[:, j] - others @ beta
        total = ((x[:, j] - x[:, j].mean()) ** 2).sum()
        r2 = 1 - (residual @ residual) / total
        result.append(np.inf if r2 >= 1 - 1e-12 else 1 / (1 - r2))
    return np.array(result)
