"""How much of each trajectory feature the design levers explain (paper A, Tables 2, 24, 25).

For each of the nine features, OLS R² of five nested models on the same rows:
``task``; ``task + discussion``; ``task + model``; ``task + discussion + model``
(additive); ``task + discussion × model`` (interaction: both main effects and every
discussion-by-model cell). R² does not depend on the standard-error type, so the paper's
"HC3" label changes nothing here. All 45 fits share a handful of design matrices and are
solved together by least squares (one solve per design, nine outcomes at once).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.errors import InputError
from engine.features import FEATURE_NAMES

MANIPULABILITY_COLUMNS = ("task", "task+discussion", "task+model", "additive", "interaction")


def manipulability(df: pd.DataFrame, features=FEATURE_NAMES, *, task: str = "task",
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
    n_params = 1 + sum(block.shape[1] for block in designs["interaction"])
    if len(frame) <= n_params:
        raise InputError(f"sample too small: {len(frame)} complete row(s) for {n_params} "
                         "parameters in the interaction model")
    Y = frame[features].to_numpy(dtype=float)
    centred = Y - Y.mean(axis=0)
    total = (centred ** 2).sum(axis=0)
    constant = [f for f, t in zip(features, total) if t == 0]
    if constant:
        raise InputError(f"feature {constant[0]!r} is constant in the rows used; R² is undefined",
                         field=constant[0])
    intercept = np.ones((len(frame), 1))
    out = {}
    for name, blocks in designs.items():
        X = np.column_stack([intercept, *blocks])
        beta, *_ = np.linalg.lstsq(X, Y, rcond=None)
        residual = Y - X @ beta
        out[name] = 1.0 - (residual ** 2).sum(axis=0) / total
    table = pd.DataFrame(out, index=pd.Index(features, name="feature"))[list(MANIPULABILITY_COLUMNS)]
    table = table.clip(lower=0.0, upper=1.0)
    table.attrs["n"] = int(len(frame))
    table.attrs["n_dropped"] = int(n_dropped)
    table.attrs["dropped_factors"] = dropped
    return table


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
