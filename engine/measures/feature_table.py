"""Reading a table of per-conversation trajectory features (paper A, Table 19) strictly.

A pilot handed to ``analyze diagnose`` or uploaded to the dashboard as a conversation table
is one row per conversation with feature columns (paper A's nine, and any other registered
feature it holds). Every feature cell must be empty
(a missing feature, counted by the diagnosis) or a finite number of plausible size: the
features come from unit-length embeddings (cosines, distances, rates, turn counts), so a
value beyond ``FEATURE_LIMIT`` in size is a broken file, not a measurement. Anything else
(``abc``, ``inf``, ``1e308``, ``true``) is an ``InputError`` naming the file, the row and
the column, never turned into NaN silently.

CSV/TSV and JSON lines are read with the transcript importer's strict readers (a ragged
row, bad UTF-8 or a broken quote names its row); Parquet through pyarrow.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.errors import InputError
from engine.measures.registry import feature_names

FEATURE_LIMIT = 1e6
TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".parquet")


def feature_value(value: Any, *, path: str | Path | None, row: int | None, field: str) -> float:
    """One feature cell as a float: blank -> NaN; not a finite, plausible number -> InputError."""
    from engine.storage.records import is_blank, number_or_none

    if is_blank(value):
        return math.nan
    number = number_or_none(value)
    where = {"path": None if path is None else str(path), "row": row, "field": field}
    if number is None:
        raise InputError(f"expected a number, got {value!r}", **where)
    if math.isnan(number):
        return math.nan
    if not math.isfinite(number) or abs(number) > FEATURE_LIMIT:
        raise InputError(f"{value!r} is not a plausible feature value (a finite number of size "
                         f"at most {FEATURE_LIMIT:g})", **where)
    return number


def check_features(table: pd.DataFrame, path: str | Path | None) -> pd.DataFrame:
    """The table with its feature columns as floats; a bad cell -> InputError (row = position + 1)."""
    table = table.reset_index(drop=True).copy()
    for name in feature_names():  # every registered feature the table holds
        if name in table.columns:
            column = table[name].tolist()
            table[name] = np.array([feature_value(v, path=path, row=i + 1, field=name)
                                    for i, v in enumerate(column)], dtype=float)
    return table


def read_feature_table(path: str | Path) -> pd.DataFrame:
    """A per-conversation table from .csv/.tsv/.jsonl/.parquet, features checked (see module)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.exists():
        raise InputError("no such file", path=str(path))
    if suffix == ".parquet":
        table = read_parquet_table(path)
    elif suffix in TABLE_SUFFIXES:
        from engine.storage.records import read_records

        records = read_records(path)
        table = _infer_numbers(pd.DataFrame([r.values for r in records]))
    else:
        raise InputError(f"unknown extension {path.suffix or '(none)'!r}; expected one of "
                         f"{list(TABLE_SUFFIXES)}", path=str(path))
    if table.empty:
        raise InputError("has no rows", path=str(path))
    return check_features(table, path)


def read_parquet_table(path: str | Path) -> pd.DataFrame:
    from engine.storage.files import check_regular

    check_regular(path)  # not a FIFO or a device: pyarrow would wait or read forever
    try:
        return pd.read_parquet(path)
    except Exception as error:  # pyarrow raises several types for a broken file
        raise InputError(f"not a readable Parquet file ({type(error).__name__})",
                         path=str(path)) from None


def _infer_numbers(table: pd.DataFrame) -> pd.DataFrame:
    """Text columns whose every non-blank cell is a number become numeric (as pandas would
    read them); feature columns are left for ``check_features``; blanks become missing."""
    from engine.storage.records import is_blank

    features = set(feature_names())
    for name in table.columns:
        values = [None if is_blank(v) else v for v in table[name].tolist()]
        table[name] = pd.Series(values, dtype=object)
        if name in features:
            continue
        converted = pd.to_numeric(table[name], errors="coerce")
        if converted.notna().sum() == table[name].notna().sum() and np.isfinite(
                converted.dropna().astype(float)).all():
            table[name] = converted
    return table
