"""CSV cells a spreadsheet shows as text, never evaluates as a formula, and their reading back.

A spreadsheet evaluates a CSV cell that starts with ``=``, ``+``, ``-`` or ``@`` (and, in some,
a tab or carriage return before one of them) as a formula: ``=HYPERLINK(...)``, ``+cmd|...``,
``@SUM(...)``, ``-2+3``. OWASP's guidance on CSV injection: prefix such a cell with a single
quote, which the spreadsheet shows as text. Numbers stay numbers: a cell that is a plain
decimal number (``-0.5``, ``+3``, ``1e-4``) is written as it is.

So that every file the project writes reads back as the text it held, the prefix is also added
to a cell that already starts with quotes before one of those characters (``'=x`` is written
``''=x``). Reading back (``unescape_cell``) removes exactly one quote from a cell of that shape:
``unescape_cell(escape_cell(text)) == text`` for every text. The project's CSV readers
(``engine.storage.records.read_csv_records``, the paper release's and the dashboard's uploads'
readers) apply it, so a cell ``'=x`` in any CSV they read is taken as ``=x``, as a spreadsheet
takes it.
"""

from __future__ import annotations

import re

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_ESCAPED = re.compile(r"^'*[=+\-@\t\r]")
_WRITTEN_ESCAPED = re.compile(r"^'+[=+\-@\t\r]")
_PLAIN_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


def escape_cell(value):
    """``value`` safe for a spreadsheet: a text that would start a formula gets a leading
    quote; anything else (numbers, missing values, other text) is returned unchanged."""
    if not isinstance(value, str) or not _ESCAPED.match(value) or _PLAIN_NUMBER.match(value):
        return value
    return "'" + value


def unescape_cell(value):
    """The text ``escape_cell`` was given: one leading quote off a cell written escaped."""
    if isinstance(value, str) and _WRITTEN_ESCAPED.match(value):
        return value[1:]
    return value


def escaped_frame(table):
    """A copy of a pandas table with every text cell, column name and index label escaped."""
    frame = table.copy()
    for name in frame.columns:
        if _holds_text(frame[name]):
            frame[name] = frame[name].astype(object).map(escape_cell)
    frame.columns = _escaped_labels(frame.columns)
    frame.index = _escaped_labels(frame.index)
    return frame


def _holds_text(values) -> bool:
    """Whether a column or index may hold text (object, string or categorical dtype)."""
    import pandas as pd

    dtype = values.dtype
    return (pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)
            or isinstance(dtype, pd.CategoricalDtype))


def _escaped_labels(labels):
    import pandas as pd

    if isinstance(labels, pd.MultiIndex):
        return pd.MultiIndex.from_tuples([tuple(escape_cell(v) for v in key) for key in labels],
                                         names=[escape_cell(n) for n in labels.names])
    if not _holds_text(labels):
        return labels.rename(escape_cell(labels.name))
    return pd.Index([escape_cell(v) for v in labels], name=escape_cell(labels.name), dtype=object)


def safe_csv(table, *, index: bool = False) -> str:
    """The CSV text of a pandas table, every cell that a spreadsheet would evaluate escaped.

    Rows end in CRLF (RFC 4180): Python's writer quotes a cell holding any character of the
    line ending, so a cell with a carriage return in it is quoted too (with ``\n`` endings a
    lone CR went out bare, and a spreadsheet started a new row, and a formula, at it)."""
    return escaped_frame(table).to_csv(index=index, lineterminator="\r\n")


def unescape_frame(frame):
    """A table read by pandas from a CSV, with ``unescape_cell`` applied to every text cell
    and column name (the inverse of ``escaped_frame`` on the cells ``read_csv`` returns)."""
    out = frame.copy()
    for name in out.columns:
        if _holds_text(out[name]):
            out[name] = out[name].astype(object).map(unescape_cell)
    out.columns = [unescape_cell(c) for c in out.columns]
    return out
