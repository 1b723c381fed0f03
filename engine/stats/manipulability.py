"""How much of each trajectory feature the design levers explain (paper A, Tables 2, 24, 25).

For each of the nine features, OLS R² of five nested models on the same rows:
``task``; ``task + discussion``; ``task + model``; ``task + discussion + model``
(additive); ``task + discussion × model`` (interaction: both main effects and every
discussion-by-model cell). R² does not depend on the standard-error type, so the paper's
"HC3" label changes nothing here. All 45 fits share a handful of design matrices and are
solved together by least squares (one solve per design, nine outcomes at once).

Each column's fit passes the sample guard (``engine.stats.guards``): its N and k (the rank of
its design) are in ``attrs["fits"]``; a column with N − k < 5 is NaN (refused), one with
N < 10·k is flagged ``small_sample`` (``guard_lines`` says so; ``adjusted_r2`` gives the
adjusted R² to lead with).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.stats.guards import regression_guard

MANIPULABILITY_COLUMNS = ("task", "task+discussion", "task+model", "additive", "interaction")


def manipulability(df: pd.DataFrame, features=PAPER_A_FEATURES, *, task: str = "task",
                   discussion: str = "discussion", model: str = "model",
                   drop_constant: bool = False) -> pd.DataFrame:
    """R² (in [0, 1]) of each feature under the five Table 24 models.

    Rows missing any feature or design factor are dropped first; ``attrs["n"]`` is the N
    used (3,574 on the paper release's LLM rows with instructed, open or iterative
    discussion) and ``attrs["n_dropped"]`` the rows left out.
    """
    features = list(features)
    needed = features + [task, discussion, model]
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise InputError(f"manipulability needs column {missing[0]!r}, which is not in the data",
                         field=missing[0])
    frame = df[needed].replace([np.inf, -np.inf], np.nan)
    for column in features:
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    frame = frame.dropna()
    n_dropped = len(df) - len(frame)
    dropped = {}
    for column in (task, discussion, model):
        levels = frame[column].nunique()
        if levels == 1 and drop_constant:
            dropped[column] = str(frame[column].iloc[0])
        elif levels < 2:
            raise InputError(f"factor {column!r} has {levels} level(s) in the {len(frame)} complete "
                             "rows; its share of variance cannot be estimated", field=column)
    dummies = {column: _dummies(frame[column]) for column in (task, discussion, model)}
    T, D, M = dummies[task], dummies[discussion], dummies[model]
    interaction = np.column_stack([D[:, i] * M[:, j] for i in range(D.shape[1]) for j in range(M.shape[1])]
                                  + [np.zeros((len(frame), 0))])
    designs = {"task": [T], "task+discussion": [T, D], "task+model": [T, M],
               "additive": [T, D, M], "interaction": [T, D, M, interaction]}
    intercept = np.ones((len(frame), 1))
    matrices = {name: np.column_stack([intercept, *blocks]) for name, blocks in designs.items()}
    fits = {name: regression_guard(len(frame), int(np.linalg.matrix_rank(X))) for name, X in matrices.items()}
    if all(guard.refuse for guard in fits.values()):
        raise InputError(f"sample too small: {fits['task'].refusal}")
    Y = frame[features].to_numpy(dtype=float)
    centred = Y - Y.mean(axis=0)
    total = (centred ** 2).sum(axis=0)
    constant = [f for f, t in zip(features, total) if t == 0]
    if constant:
        raise InputError(f"feature {constant[0]!r} is constant in the rows used; R² is undefined",
                         field=constant[0])
    out = {}
    for name, X in matrices.items():
        if fits[name].refuse:  # fewer than 5 residual degrees of freedom: no R² shown
            out[name] = np.full(len(features), np.nan)
            continue
        beta, *_ = np.linalg.lstsq(X, Y, rcond=None)
        residual = Y - X @ beta
        out[name] = 1.0 - (residual ** 2).sum(axis=0) / total
    table = pd.DataFrame(out, index=pd.Index(features, name="feature"))[list(MANIPULABILITY_COLUMNS)]
    table = table.clip(lower=0.0, upper=1.0)
    table.attrs["n"] = int(len(frame))
    table.attrs["n_dropped"] = int(n_dropped)
    table.attrs["dropped_factors"] = dropped
    table.attrs["fits"] = {name: guard.to_dict() for name, guard in fits.items()}
    return table


def adjusted_r2(table: pd.DataFrame) -> pd.DataFrame:
    """Adjusted R² of each cell of a ``manipulability`` table (same units as the table:
    1 − (1 − R²)(N − 1)/(N − k), with N and k of each column's fit in ``attrs["fits"]``)."""
    fits = table.attrs["fits"]
    scale = 100.0 if table.attrs.get("percent") else 1.0
    out = table.copy()
    for column in table.columns:
        fit = fits[column]
        out[column] = scale - (scale - table[column]) * (fit["n"] - 1) / fit["df_resid"]
    out.attrs.update(table.attrs)
    return out


def guard_lines(table: pd.DataFrame) -> list[str]:
    """A ``warning:`` for the columns with N < 10·k and a line for the refused ones."""
    fits = table.attrs.get("fits", {})
    small = [f"{name} (k = {fit['k']})" for name, fit in fits.items() if fit["small_sample"] and not fit["refuse"]]
    refused = [f"{name} (N − k = {fit['df_resid']})" for name, fit in fits.items() if fit["refuse"]]
    lines = []
    if small:
        lines.append(f"warning: N = {table.attrs['n']} rows, fewer than 10 per estimated coefficient in "
                     f"{', '.join(small)}; R² overstates these fits, read adjusted R²")
    if refused:
        lines.append(f"not fitted (fewer than 5 residual degrees of freedom): {', '.join(refused)}")
    return lines


def interaction_share(table: pd.DataFrame) -> pd.DataFrame:
    """Table 25: additive R², the interaction's increment, full R², and % from interaction."""
    out = pd.DataFrame({"additive": table["additive"],
                        "interaction_increment": table["interaction"] - table["additive"],
                        "full": table["interaction"]})
    out["share_from_interaction"] = out["interaction_increment"] / out["full"].where(out["full"] > 0)
    out.attrs.update(table.attrs)
    return out.sort_values("interaction_increment", ascending=False)


def _dummies(values: pd.Series) -> np.ndarray:
    levels = sorted(pd.unique(values), key=str)
    return np.column_stack([(values == level).to_numpy(dtype=float) for level in levels[1:]]
                           + [np.zeros((len(values), 0))])
