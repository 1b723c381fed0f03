"""Join the authors' idea ratings (``ideas_with_ratings_clean.csv``) onto the metrics table.

Paper A's release describes the file in ``data/DATA_DICTIONARY.md`` (pitehu/
llm_multiagent_creativity): one row per final idea, keyed by ``file_id`` and
``question_id``; ``avg_novelty_rating`` and ``avg_usefulness_rating`` are mean ratings
min-max scaled within task, ``avg_creativity_rating`` their product (the paper's primary
outcome, Methods "Creativity evaluation"); ``N2..N9`` / ``U2..U9`` are the anonymised
raters' novelty / usefulness scores. The file itself is not redistributed here.

``join_ratings`` left-joins it onto ``read_metrics`` output: every metrics row stays, and
gains ``novelty``, ``usefulness``, ``creativity`` (from the ``avg_*`` columns), the
per-rater columns present, and ``final_idea`` when the file has it. Counts of rows
that found no partner are in ``df.attrs["ratings_join"]``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from engine.errors import InputError
from engine.importers.transcripts import is_blank, read_csv_records, rows_explained

KEY_COLUMNS = ("file_id", "question_id")
AVERAGE_COLUMNS = {"avg_novelty_rating": "novelty", "avg_usefulness_rating": "usefulness",
                   "avg_creativity_rating": "creativity"}
RATER_COLUMN = re.compile(r"^[NU]\d+$")
TEXT_COLUMNS = ("final_idea",)


@rows_explained
def read_ratings(path: str | Path) -> pd.DataFrame:
    """The ratings file as a table keyed by ``file_id, question_id``, numbers checked.

    Columns: the keys, ``novelty, usefulness, creativity``, the per-rater ``N*``/``U*``
    columns present (sorted by rater number) and ``final_idea`` if present.
    """
    path = Path(path)
    header, records = read_csv_records(path)
    missing = [c for c in (*KEY_COLUMNS, *AVERAGE_COLUMNS) if c not in header]
    if missing:
        raise InputError(f"missing column(s) {missing}; a ratings file needs "
                         f"{[*KEY_COLUMNS, *AVERAGE_COLUMNS]}", path=str(path), field=missing[0])
    raters = sorted((c for c in header if RATER_COLUMN.match(c)), key=lambda c: (c[0], int(c[1:])))
    texts = [c for c in TEXT_COLUMNS if c in header]
    rows = []
    first_row: dict[tuple[str, str], int] = {}
    for record in records:
        values, row = record.values, record.row
        key = []
        for name in KEY_COLUMNS:
            value = values[name].strip()
            if not value:
                raise InputError("empty", path=str(path), row=row, field=name)
            key.append(value)
        key = tuple(key)
        if key in first_row:
            raise InputError(f"{key[0]!r} / {key[1]!r} is rated twice (also on row "
                             f"{first_row[key]})", path=str(path), row=row, field="file_id")
        first_row[key] = row
        out = dict(zip(KEY_COLUMNS, key))
        for name in (*AVERAGE_COLUMNS, *raters):
            out[AVERAGE_COLUMNS.get(name, name)] = _number(values[name], path, row, name)
        for name in texts:
            out[name] = None if is_blank(values[name]) else values[name]
        rows.append(out)
    columns = [*KEY_COLUMNS, *AVERAGE_COLUMNS.values(), *raters, *texts]
    return pd.DataFrame(rows, columns=columns)


def _number(text: str, path: Path, row: int, field: str) -> float:
    if is_blank(text) or text.strip().lower() in ("nan", "na", "n/a"):
        return np.nan
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"expected a number, got {text!r}", path=str(path), row=row,
                         field=field) from None
    if not np.isfinite(value):
        raise InputError(f"expected a finite number, got {text!r}", path=str(path), row=row,
                         field=field)
    return value


def join_ratings(metrics: pd.DataFrame, ratings_path: str | Path) -> pd.DataFrame:
    """Left-join the ratings onto a ``read_metrics`` table on ``file_id`` + ``question_id``.

    ``df.attrs["ratings_join"]`` = ``{"metrics_rows", "ratings_rows", "matched",
    "metrics_without_rating", "ratings_without_metrics", "ratings_path"}``.
    """
    missing = [c for c in KEY_COLUMNS if c not in metrics.columns]
    if missing:
        raise InputError(f"the metrics table has no column {missing[0]!r}; pass the output of "
                         "read_metrics", field=missing[0])
    ratings = read_ratings(ratings_path)
    clashes = [c for c in ratings.columns if c not in KEY_COLUMNS and c in metrics.columns]
    if clashes:
        raise InputError(f"the metrics table already has column(s) {clashes}; join once",
                         field=clashes[0])
    left = metrics.astype({name: str for name in KEY_COLUMNS})
    joined = left.merge(ratings, how="left", on=list(KEY_COLUMNS), indicator=True,
                        validate="many_to_one")
    matched = int((joined["_merge"] == "both").sum())
    joined = joined.drop(columns="_merge")
    metric_keys = set(zip(left["file_id"], left["question_id"]))
    orphans = sum(key not in metric_keys for key in zip(ratings["file_id"], ratings["question_id"]))
    joined.attrs = dict(metrics.attrs)
    joined.attrs["ratings_join"] = {
        "metrics_rows": len(metrics), "ratings_rows": len(ratings), "matched": matched,
        "metrics_without_rating": len(metrics) - matched,
        "ratings_without_metrics": orphans,
        "ratings_path": str(ratings_path),
    }
    return joined.reset_index(drop=True)
