"""Rows of a CSV or JSONL file, read for people: every problem names the file, row and field.

The strict reader every file of rows builds on: the importers (``engine.importers``), the
tasks and benchmark files (``engine.tasks``) and the feature tables (``engine.measures``).
Rows are counted as a person reads them: in a CSV, row 1 is the first data row under the
header; in a JSONL file, row N is line N.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import InputError
from engine.storage.jsonl import INT64_MAX, INT64_MIN, iter_json_objects, refuse_lone_surrogates
from engine.storage.jsonl import read_text as read_file_text

CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}
JSONL_SUFFIXES = (".jsonl", ".ndjson")


@dataclass
class Record:
    """One data row of a tabular file: its values and where it came from."""

    values: dict[str, Any]
    row: int


# -- how rows are counted ----------------------------------------------------------------
CSV_ROW_NOTE = "row N = the N-th data row under the header"
JSON_ROW_NOTE = "row N = line N of the file"


def explain_row(error: InputError) -> InputError:
    """The same error, saying how its row is counted (CSV data row or JSON line)."""
    if error.row is None or not error.path or "row N =" in error.reason:
        return error
    suffix = Path(error.path).suffix.lower()
    note = (CSV_ROW_NOTE if suffix in CSV_SUFFIXES
            else JSON_ROW_NOTE if suffix in (*JSONL_SUFFIXES, ".json") else None)
    if note is None:
        return error
    return InputError(f"{error.reason} ({note})", path=error.path, row=error.row, field=error.field)


def rows_explained(function):
    """Decorate an importer so every InputError it raises says how rows are counted."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except InputError as error:
            raise explain_row(error) from None
    return wrapper


# -- reading files ---------------------------------------------------------------------
def read_text(path: str | Path) -> str:
    """The file's text (UTF-8, BOM allowed); empty, unreadable or non-UTF-8 -> InputError.

    A bad byte is reported with the physical line it is on, as ``row`` (for a CSV the
    caller converts this to a data row).
    """
    text = read_file_text(path)
    if not text.strip():
        raise InputError("is empty", path=str(path))
    return text


def read_csv_records(path: str | Path, *, delimiter: str = ",") -> tuple[list[str], list[Record]]:
    """Header and data rows of a CSV; row numbers are 1-based data rows (header excluded).

    Blank lines are skipped. A row with more or fewer cells than the header, an
    unterminated quote or a repeated header name are InputErrors; an unnamed header cell
    (pandas writes one for its index) becomes ``unnamed_<position>``.
    """
    path = Path(path)
    try:
        text = read_text(path)
    except InputError as error:
        if error.row is not None:  # a bad byte: line L of the file is data row L - 1
            data_row = error.row - 1
            raise InputError(error.reason + (" (in the header)" if data_row < 1 else ""),
                             path=error.path, row=data_row if data_row >= 1 else None) from None
        raise
    from engine.storage.files import universal_newlines

    text = universal_newlines(text)  # an old-Mac file: "\r" alone ends its lines
    previous_limit = csv.field_size_limit()
    csv.field_size_limit(max(previous_limit, 1 << 30))
    try:
        return _parse_csv(text, path, delimiter)
    finally:
        csv.field_size_limit(previous_limit)


def _parse_csv(text: str, path: Path, delimiter: str) -> tuple[list[str], list[Record]]:
    from engine.storage.csv_cells import unescape_cell

    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    records: list[Record] = []
    data_row = 0
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            where = data_row + 1 if header is not None else None
            raise InputError(f"not a readable CSV row ({error}; line {reader.line_num} of the "
                             "file)", path=str(path), row=where) from None
        if not cells or (len(cells) == 1 and not cells[0].strip()):
            continue
        cells = [unescape_cell(c) for c in cells]  # the quote our CSV writers put before a formula
        if header is None:
            header = [unescape_cell(c.strip()) for c in cells]
            _check_header(header, path)
            continue
        data_row += 1
        if len(cells) != len(header):
            raise InputError(f"has {len(cells)} cells but the header has {len(header)} "
                             f"(line {reader.line_num} of the file)", path=str(path), row=data_row,
                             field=header[min(len(cells), len(header)) - 1])
        records.append(Record(dict(zip(header, cells)), data_row))
    if header is None:
        raise InputError("is empty", path=str(path))
    if not records:
        raise InputError("has a header but no data rows", path=str(path))
    return header, records


def _check_header(header: list[str], path: Path) -> None:
    for position, name in enumerate(header, start=1):
        if not name:
            header[position - 1] = f"unnamed_{position}"
    seen = set()
    for name in header:
        if name in seen:
            raise InputError("column name appears twice in the header", path=str(path), field=name)
        seen.add(name)


def read_jsonl_records(path: str | Path) -> list[Record]:
    """One JSON object per line; row N is line N; blank lines skipped."""
    records = []
    for line_number, value in iter_json_objects(path, read_text(path)):
        refuse_lone_surrogates(value, path=path, row=line_number)
        records.append(Record(value, line_number))
    if not records:
        raise InputError("has no JSON lines", path=str(path))
    return records


def read_records(path: str | Path) -> list[Record]:
    """Rows of a .csv/.tsv or .jsonl/.ndjson file; any other extension is an InputError."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in CSV_SUFFIXES:
        return read_csv_records(path, delimiter=CSV_SUFFIXES[suffix])[1]
    if suffix in JSONL_SUFFIXES:
        return read_jsonl_records(path)
    raise InputError(f"unknown extension {path.suffix or '(none)'!r}; expected one of "
                     f"{sorted([*CSV_SUFFIXES, *JSONL_SUFFIXES])}", path=str(path))


# -- values ----------------------------------------------------------------------------
def is_blank(value: Any) -> bool:
    """None, NaN or an all-whitespace string: a cell with nothing in it."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+(\.0*)?")  # ASCII digits: int() also takes "١٢"
# a number as files write it: ASCII digits, a point, an exponent; none of the extras Python's
# float() also takes ("1_000", "0_5", "١٢" and other scripts' digits)
PLAIN_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_NAN_OR_INF = re.compile(r"[+-]?(nan|inf|infinity)", re.IGNORECASE)


def number_from_text(text: str) -> float | None:
    """The number a cell's text writes (``PLAIN_NUMBER``, or NaN and infinities by name),
    spaces around it ignored; None for any other text."""
    text = text.strip()
    if PLAIN_NUMBER.fullmatch(text) or _NAN_OR_INF.fullmatch(text):
        return float(text)
    return None


def as_int(value: Any, *, path: Path, row: int | None, field: str) -> int:
    """An integer from a CSV cell or JSON value; 3, "3", "3.0" and 3.0 are fine, 3.5 is not.
    It must fit in 64 bits (what Parquet and pandas store): a longer one is named, not parsed
    (Python refuses to parse integers of more than 4,300 digits at all)."""
    if isinstance(value, bool):
        raise InputError(f"expected an integer, got {value!r}", path=str(path), row=row, field=field)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 2 ** 63:
        return int(value)
    if isinstance(value, str) and _INTEGER_TEXT.fullmatch(value.strip()):
        digits = value.strip().split(".")[0]
        if len(digits.lstrip("+-")) > 19:
            raise _out_of_range(digits, path, row, field)
        value = int(digits)
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise _out_of_range(str(value), path, row, field)
        return value
    raise InputError(f"expected an integer, got {_short(value)}", path=str(path), row=row, field=field)


def _out_of_range(digits: str, path: Path, row: int | None, field: str) -> InputError:
    shown = digits if len(digits) <= 30 else f"{digits[:12]}...({len(digits.lstrip('+-')):,} digits)"
    return InputError(f"integer {shown} is out of range (at most 19 digits: {INT64_MIN:,} to "
                      f"{INT64_MAX:,})", path=str(path), row=row, field=field)


def _short(value: Any) -> str:
    """``repr`` of a value, cut to 60 characters (an error quotes it on one line)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def number_or_none(value: Any) -> float | None:
    """A CSV cell or JSON/Parquet value read as a float (NaN and infinities included), or
    None when it is not a number (other text, ``1_000`` included; booleans, containers)."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    if isinstance(value, str):
        return number_from_text(value)
    return None


def as_float(value: Any, *, path: Path, row: int | None, field: str) -> float:
    """A number from a CSV cell or JSON value (NaN allowed, infinities not)."""
    number = number_or_none(value)
    if number is None or math.isinf(number):
        raise InputError(f"expected a number, got {value!r}", path=str(path), row=row, field=field)
    return number


def as_text(value: Any, *, path: Path, row: int | None, field: str) -> str:
    """Text from a CSV cell or JSON value; numbers are accepted as ids and written as text."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise InputError(f"expected text, got {type(value).__name__} {value!r}", path=str(path),
                     row=row, field=field)
