"""Design matrices for the paper's regression specifications, with errors for people.

A specification is a list of predictor *blocks* (paper A, Tables 1, 7, 20, 21): each block
names columns of a conversation table. Numeric blocks enter as they are (z-scored within
sample when asked, as the paper does); factor blocks enter as treatment dummies against a
reference level (sorted first level unless told otherwise, which gives the paper's
references: task = education inequality, model = Mixed). Term names follow patsy's
convention (``C(task)[T.plastic_waste]``, ``C(discussion)[T.open]:C(model)[T.o3-high]``) so
results line up with statsmodels' formula output.

Every problem a person can cause is an :class:`~engine.errors.InputError` that says which
column or term is at fault and why: a missing column, a factor with one level, too few rows
for the number of parameters, a constant predictor, or a singular (collinear) design.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES

# block name -> (kind, columns). ``interaction`` blocks list the two factors crossed.
BLOCKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "trajectory": ("numeric", tuple(PAPER_A_FEATURES)),
    "task": ("factor", ("task",)),
    "model": ("factor", ("model",)),
    "discussion": ("factor", ("discussion",)),
    "persona": ("factor", ("persona",)),
    "team_size": ("factor", ("team_size",)),
    "order": ("factor", ("order",)),
    "tokens": ("numeric", ("tokens",)),
    "model_x_discussion": ("interaction", ("discussion", "model")),
}


@dataclass
class Design:
    """The numbers a fit needs: outcome ``y``, design ``X`` (with ``Intercept``) and context."""

    y: pd.Series
    X: pd.DataFrame
    rows: pd.DataFrame            # the rows used (original values), aligned with y and X
    n_dropped: int
    factor_levels: dict[str, list] = field(default_factory=dict)
    numeric_columns: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def block_columns(block: str, columns: dict[str, str] | None = None) -> tuple[str, tuple[str, ...]]:
    """Kind and data columns of one block; unknown names are taken as a data column."""
    columns = columns or {}
    if block in BLOCKS:
        kind, names = BLOCKS[block]
        return kind, tuple(columns.get(name, name) for name in names)
    return "auto", (columns.get(block, block),)


def factor_term(column: str, level) -> str:
    return f"C({column})[T.{level}]"


def build_design(df: pd.DataFrame, *, outcome: str, blocks: list[str], zscore: bool = True,
                 reference: dict[str, object] | None = None, columns: dict[str, str] | None = None,
                 extra_columns: tuple[str, ...] = (), intercept: bool = True,
                 spec_name: str = "specification") -> Design:
    """Outcome and design matrix for ``blocks`` on ``df`` (rows with a missing value dropped).

    ``extra_columns`` are kept in ``Design.rows`` (e.g. the random-effect group or the
    cluster id) and count towards dropping incomplete rows.
    """
    reference = reference or {}
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"{spec_name}: expected a table (pandas DataFrame), got {type(df).__name__}")
    plan: list[tuple[str, tuple[str, ...]]] = []
    for block in blocks:
        kind, names = block_columns(block, columns)
        if kind == "interaction":
            # C(a)*C(b): main effects come with the interaction, as in patsy.
            for name in names:
                if ("factor", (name,)) not in plan:
                    plan.append(("factor", (name,)))
        plan.append((kind, names))

    predictors = [c for _, names in plan for c in names]
    if outcome in predictors:
        raise InputError(f"{spec_name}: the outcome {outcome!r} is also a predictor (it is in the blocks "
                         f"{blocks}); a variable cannot explain itself, so remove it from the blocks",
                         field=outcome)
    needed = [outcome] + predictors + list(extra_columns)
    missing = [c for c in dict.fromkeys(needed) if c not in df.columns]
    if missing:
        raise InputError(
            f"{spec_name}: column {missing[0]!r} is not in the data "
            f"(blocks {blocks}; the table has {sorted(map(str, df.columns))[:30]})",
            field=missing[0])

    used = list(dict.fromkeys(needed))
    frame = df[used].replace([np.inf, -np.inf], np.nan)
    complete = frame.notna().all(axis=1)
    n_dropped = int((~complete).sum())
    rows = df.loc[complete, used].copy()
    warnings: list[str] = []
    if n_dropped:
        worst = frame.isna().sum().sort_values(ascending=False, kind="stable")
        worst = worst[worst > 0]
        detail = ", ".join(f"{c}: {int(k)}" for c, k in worst.head(4).items())
        warnings.append(f"dropped {n_dropped} row(s) with a missing value ({detail})")

    y = _numeric(rows[outcome], outcome, spec_name)
    if zscore:
        y = _zscore(y, outcome, spec_name)

    parts: list[pd.DataFrame] = []
    factor_levels: dict[str, list] = {}
    numeric_columns: list[str] = []
    for kind, names in plan:
        if kind == "auto":
            column = names[0]
            kind = "numeric" if pd.api.types.is_numeric_dtype(rows[column]) and \
                not pd.api.types.is_bool_dtype(rows[column]) else "factor"
        if kind == "numeric":
            for column in names:
                if column in numeric_columns:
                    continue
                values = _numeric(rows[column], column, spec_name)
                parts.append((_zscore(values, column, spec_name) if zscore else
                              _require_variation(values, column, spec_name)).to_frame(column))
                numeric_columns.append(column)
        elif kind == "factor":
            column = names[0]
            if column in factor_levels:
                continue
            dummies, levels = _treatment_dummies(rows[column], column, reference.get(column), spec_name)
            factor_levels[column] = levels
            parts.append(dummies)
        else:  # interaction of two factors already expanded as main effects
            first, second = names
            a = _treatment_dummies(rows[first], first, reference.get(first), spec_name)[0]
            b = _treatment_dummies(rows[second], second, reference.get(second), spec_name)[0]
            crossed = {f"{ca}:{cb}": a[ca].to_numpy() * b[cb].to_numpy() for ca in a for cb in b}
            crossed_frame = pd.DataFrame(crossed, index=rows.index)
            empty = [c for c in crossed_frame if not crossed_frame[c].any()]
            if empty:
                warnings.append(f"{len(empty)} {first} x {second} cell(s) have no rows and were left "
                                f"out: {', '.join(empty[:4])}{' ...' if len(empty) > 4 else ''}")
                crossed_frame = crossed_frame.drop(columns=empty)
            parts.append(crossed_frame)

    X = pd.concat(parts, axis=1) if parts else pd.DataFrame(index=rows.index)
    if intercept:
        X.insert(0, "Intercept", 1.0)
    X = X.astype(float)
    _check_size(len(rows), X.shape[1], spec_name, n_dropped)
    _check_rank(X, spec_name)
    return Design(y=y, X=X, rows=rows, n_dropped=n_dropped, factor_levels=factor_levels,
                  numeric_columns=numeric_columns, warnings=warnings)


def _numeric(values: pd.Series, column: str, spec_name: str) -> pd.Series:
    if pd.api.types.is_bool_dtype(values):
        return values.astype(float)
    converted = pd.to_numeric(values, errors="coerce")
    if converted.isna().any():
        bad = values[converted.isna()].iloc[0]
        raise InputError(f"{spec_name}: column {column!r} must be numeric, got {bad!r}", field=column)
    return converted.astype(float)


def _require_variation(values: pd.Series, column: str, spec_name: str) -> pd.Series:
    if len(values) and float(values.std(ddof=0)) == 0.0:
        raise InputError(f"{spec_name}: column {column!r} is constant ({values.iloc[0]!r}) in the "
                         f"{len(values)} rows used, so its effect cannot be estimated", field=column)
    return values


def _zscore(values: pd.Series, column: str, spec_name: str) -> pd.Series:
    """(x - mean) / SD with the population SD, as scikit-learn's StandardScaler (paper A)."""
    _require_variation(values, column, spec_name)
    return (values - values.mean()) / values.std(ddof=0)


def _treatment_dummies(values: pd.Series, column: str, reference, spec_name: str):
    levels = sorted(pd.unique(values), key=lambda v: (str(type(v)), v))
    if len(levels) < 2:
        only = levels[0] if levels else "none"
        raise InputError(f"{spec_name}: factor {column!r} has one level ({only!r}) in the "
                         f"{len(values)} rows used, so it explains nothing and cannot be "
                         "estimated; drop the block or widen the sample", field=column)
    if reference is not None:
        matches = [level for level in levels if str(level) == str(reference)]
        if not matches:
            raise InputError(f"{spec_name}: reference level {reference!r} of {column!r} is not "
                             f"among its levels {[str(v) for v in levels]}", field=column)
        levels = [matches[0]] + [level for level in levels if level is not matches[0]]
    data = {factor_term(column, level): (values == level).to_numpy(dtype=float) for level in levels[1:]}
    return pd.DataFrame(data, index=values.index), levels


def _check_size(n_rows: int, n_params: int, spec_name: str, n_dropped: int) -> None:
    if n_rows <= n_params:
        dropped = f" after dropping {n_dropped} incomplete row(s)" if n_dropped else ""
        raise InputError(f"{spec_name}: sample too small: {n_rows} row(s){dropped} for "
                         f"{n_params} parameters; a regression needs more rows than parameters "
                         "(use fewer blocks or more data)")


def _check_rank(X: pd.DataFrame, spec_name: str) -> None:
    """Name the columns that are linear combinations of earlier ones (a singular design)."""
    values = X.to_numpy()
    scale = np.linalg.norm(values, axis=0)
    scale[scale == 0] = 1.0
    normalised = values / scale
    if np.linalg.matrix_rank(normalised) == values.shape[1]:
        return
    redundant = []
    kept: list[int] = []
    for j in range(values.shape[1]):
        trial = kept + [j]
        if np.linalg.matrix_rank(normalised[:, trial]) == len(trial):
            kept = trial
        else:
            redundant.append(X.columns[j])
    raise InputError(f"{spec_name}: singular design: {', '.join(map(str, redundant[:6]))} "
                     f"{'is' if len(redundant) == 1 else 'are'} an exact linear combination of "
                     "other predictors (collinear or duplicated columns, or a factor level that "
                     "coincides with another block), so the coefficients are not identified; "
                     "drop one of the collinear blocks", field=str(redundant[0]))
