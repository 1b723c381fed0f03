"""Read a file of items that people rated: what a judge or a measure is validated against.

Two shapes, CSV/TSV, JSONL or Parquet:

* **items**: one row per rated item with ``prompt`` (the task, or the Alternate Uses object),
  ``response`` (the idea) and either ``human`` (the raters' mean) or one column per rater
  (``human_1`` ... ``human_k``; a blank cell is a rating not given). Optional ``id``. The shipped
  OCSAI test file (``data/human_ratings/ocsai1_test``) has this shape with one mean per item.
* **ideas**: paper A's idea file shape (``ideas_with_ratings_clean.csv``, DATA_DICTIONARY.md;
  also what the dashboard's rating page exports): ``file_id``, ``question_id``, the idea
  (``paraphrased_idea`` when present, as paper A's raters saw it, else ``final_idea``) and the
  per-rater columns ``N*`` (novelty) / ``U*`` (usefulness); ``scale`` picks one. The prompt is
  the task's text when the task is one of paper A's, else its id.

``read_human_scores`` returns one row per item: ``item``, ``prompt``, ``group`` (what "per
prompt" groups by: the prompt, or the task id), ``response``, ``human`` (mean of the readable
ratings), the rater columns ``human_1..k`` when there are several, and ``row`` (the file's row,
``engine.storage.records``'s numbering). Numbers must be plain decimals (``1_000``, ``0x10``
or ``inf`` are refused, naming the row and column); a row with no rating at all is an error.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from engine.errors import InputError
from engine.storage.records import PLAIN_NUMBER, Record, explain_row, is_blank, read_records

PARQUET = ".parquet"
RATER = re.compile(r"^human_(\d+)$")
IDEA_RATER = {"novelty": re.compile(r"^N(\d+)$"), "usefulness": re.compile(r"^U(\d+)$")}
SCALES = tuple(IDEA_RATER)
MAX_ITEMS = 1_000_000


def _records(path: Path) -> list[Record]:
    if path.suffix.lower() == PARQUET:
        from engine.storage import files

        files.read_bytes(path, max_bytes=files.MAX_FILE_BYTES)  # a clear error for a FIFO or a huge file
        try:
            frame = pd.read_parquet(path)
        except Exception as error:  # pyarrow's errors have no common base
            raise InputError(f"not a readable Parquet file ({type(error).__name__}: {error})",
                             path=str(path)) from None
        return [Record({str(k): v for k, v in row.items()}, i + 1)
                for i, row in enumerate(frame.to_dict("records"))]
    try:
        return read_records(path)
    except InputError as error:
        if "unknown extension" in error.reason:
            raise InputError(f"{error.reason} or .parquet", path=str(path)) from None
        raise


def rating(value, *, path: Path, row: int, field: str) -> float:
    """One rating cell: a finite plain decimal, or NaN when blank."""
    if is_blank(value):
        return math.nan
    if isinstance(value, (bool, np.bool_)):
        raise InputError(f"expected a number, got {value!r}", path=str(path), row=row, field=field)
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
    elif isinstance(value, str) and PLAIN_NUMBER.fullmatch(value.strip()):
        number = float(value.strip())
    else:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise InputError(f"expected a number, got {shown}", path=str(path), row=row, field=field)
    if not math.isfinite(number):
        raise InputError(f"expected a finite number, got {value!r}", path=str(path), row=row, field=field)
    return number


def _text(value, *, path: Path, row: int, field: str) -> str:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not is_blank(value):
        return str(value)
    raise InputError("empty" if is_blank(value) else f"expected text, got {type(value).__name__}",
                     path=str(path), row=row, field=field)


def _ordered(columns, pattern: re.Pattern) -> list[str]:
    return sorted((c for c in columns if pattern.match(c)), key=lambda c: int(pattern.match(c).group(1)))


def read_human_scores(path: str | Path, *, scale: str | None = None) -> pd.DataFrame:
    """The rated items of ``path`` (either shape above); ``scale`` is needed for the ideas shape.

    ``frame.attrs["human_scores"]``: path, shape, scale, raters (column names as in the file),
    items, ratings given and missing.
    """
    path = Path(path)
    try:
        return _read(path, scale)
    except InputError as error:
        raise explain_row(error) from None


def _read(path: Path, scale: str | None) -> pd.DataFrame:
    records = _records(path)
    if not records:
        raise InputError("has no rows", path=str(path))
    if len(records) > MAX_ITEMS:
        raise InputError(f"has {len(records):,} rows; at most {MAX_ITEMS:,} items are read", path=str(path))
    columns = list(dict.fromkeys(k for r in records for k in r.values))
    if "question_id" in columns and any(IDEA_RATER[s].match(c) for s in SCALES for c in columns):
        shape = "ideas"
        if scale not in SCALES:
            raise InputError(f"an ideas file holds two scales: choose one of {list(SCALES)} (--scale)",
                             path=str(path), field="scale")
        raters = _ordered(columns, IDEA_RATER[scale])
        if not raters:
            raise InputError(f"no {scale} rater columns ({'N' if scale == 'novelty' else 'U'}1, ...)",
                             path=str(path), field=scale)
        text_column = "paraphrased_idea" if "paraphrased_idea" in columns else "final_idea"
        prompt_column, response_column, id_column = "question_id", text_column, "file_id"
    else:
        shape = "items"
        if scale is not None:
            raise InputError("--scale applies to an ideas file (N*/U* rater columns); this file has one "
                             "score per rater", path=str(path), field="scale")
        missing = [c for c in ("prompt", "response") if c not in columns]
        raters = _ordered(columns, RATER) or (["human"] if "human" in columns else [])
        if missing or not raters:
            needed = missing + ([] if raters else ["human (or human_1 ... human_k)"])
            raise InputError(f"missing column(s) {needed}; a file of rated items needs prompt, response "
                             "and human or human_1 ... human_k", path=str(path), field=needed[0].split()[0])
        prompt_column, response_column, id_column = "prompt", "response", "id"
    rows = []
    for record in records:
        values, row = record.values, record.row
        prompt = _text(values.get(prompt_column), path=path, row=row, field=prompt_column)
        response = _text(values.get(response_column), path=path, row=row, field=response_column)
        scores = [rating(values.get(c), path=path, row=row, field=c) for c in raters]
        if all(math.isnan(s) for s in scores):
            raise InputError("no rating in this row" if len(raters) > 1 else "empty", path=str(path),
                             row=row, field=raters[0] if len(raters) == 1 else ", ".join(raters))
        item = values.get(id_column)
        rows.append({"item": str(row) if is_blank(item) else str(item), "group": prompt, "prompt": prompt,
                     "response": response, "row": row, **{f"human_{i + 1}": s for i, s in enumerate(scores)}})
    frame = pd.DataFrame(rows)
    if shape == "ideas":
        frame["prompt"] = [_task_prompt(task) for task in frame["group"]]
    rater_columns = [f"human_{i + 1}" for i in range(len(raters))]
    ratings = frame[rater_columns].to_numpy(dtype=float)
    frame["human"] = np.nanmean(ratings, axis=1)
    if len(raters) == 1:
        frame = frame.drop(columns=rater_columns)
    frame.attrs["human_scores"] = {
        "path": str(path), "shape": shape, "scale": scale, "raters": raters, "items": len(frame),
        "ratings": int(np.isfinite(ratings).sum()), "missing_ratings": int(np.isnan(ratings).sum()),
    }
    return frame


def _task_prompt(task_id: str) -> str:
    from engine.tasks import TASKS

    return TASKS[task_id].prompt if task_id in TASKS else task_id


def rater_matrix(frame: pd.DataFrame) -> pd.DataFrame | None:
    """The items x raters ratings (``human_1..k``), or None when the file had one column."""
    columns = [c for c in frame.columns if RATER.match(c)]
    return frame[columns] if len(columns) > 1 else None
