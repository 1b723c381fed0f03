"""Reading and writing text and JSON-lines files; read errors name the file and the line.

Shared by the corpus reader and writer, the run folder, the transcript and ConvoKit
importers and the tasks file. One JSON value is one physical line: the writer escapes the
characters that other line readers split on (U+0085, U+2028, U+2029; control characters are
escaped by ``json`` already) and lone surrogates (which UTF-8 cannot encode), and the reader
splits on ``"\\n"`` only, so any text a model or a file can hold is read back identically.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Iterator

from engine.errors import InputError


def read_text(path: str | Path, *, max_bytes: int | None = None) -> str:
    """The file's text (UTF-8, BOM allowed); unreadable, not a regular file (a FIFO, a
    device), larger than ``max_bytes`` (default ``engine.storage.files.MAX_FILE_BYTES``) or non-UTF-8
    -> InputError. A bad byte is reported with the physical line it is on, as ``row``.
    """
    from engine.storage import files

    path = Path(path)
    data = files.read_bytes(path, max_bytes=files.MAX_FILE_BYTES if max_bytes is None else max_bytes)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text: byte 0x{data[error.start]:02x} at offset "
                         f"{error.start} (line {line} of the file)", path=str(path),
                         row=line) from None


# -- numbers in JSON: Python reads any integer and turns 1e400 into inf; files here hold
# integers that fit in 64 bits (what Parquet, NumPy and pandas store) and finite numbers
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


class NumberOutOfRange(ValueError):
    """A JSON number that does not fit: an integer beyond 64 bits or a float beyond ±1.8e308."""


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 19 or not INT64_MIN <= int(text) <= INT64_MAX:
        shown = text if len(text) <= 30 else f"{text[:12]}...({len(text.lstrip('-')):,} digits)"
        raise NumberOutOfRange(f"integer {shown} is out of range (integers must fit in 64 bits, "
                               f"{INT64_MIN:,} to {INT64_MAX:,})")
    return int(text)


def _bounded_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        shown = text if len(text) <= 30 else text[:12] + "..."
        raise NumberOutOfRange(f"number {shown} is too large for a 64-bit float (at most about 1.8e308)")
    return value


def out_of_range_field(text: str) -> str | None:
    """Where in the JSON ``text`` the first out-of-range number is (``a.b[2]``), or None."""
    marker = object()

    def as_int(digits: str):
        return marker if len(digits.lstrip("-")) > 19 or not INT64_MIN <= int(digits) <= INT64_MAX else 0

    def as_float(literal: str):
        return marker if float(literal) in (float("inf"), float("-inf")) else 0.0

    try:
        value = json.loads(text, parse_int=as_int, parse_float=as_float)
    except (ValueError, RecursionError):
        return None
    stack: list[tuple[object, str]] = [(value, "")]
    while stack:
        item, where = stack.pop(0)
        if item is marker:
            return where or None
        if isinstance(item, dict):
            stack += [(v, f"{where}.{k}" if where else str(k)) for k, v in item.items()]
        elif isinstance(item, list):
            stack += [(v, f"{where}[{i}]") for i, v in enumerate(item)]
    return None


def loads(text: str):
    """``json.loads`` with numbers bounded (``NumberOutOfRange``, a ValueError); ``NaN`` and
    ``Infinity`` literals (written by Python's own ``json``) are still read."""
    return json.loads(text, parse_int=_bounded_int, parse_float=_bounded_float)


# Raw, these break a line-oriented reader (str.splitlines splits on the first three) or
# cannot be encoded as UTF-8 at all (lone surrogates); as \uXXXX escapes they are plain JSON.
_UNSAFE_IN_A_LINE = re.compile("[\u0085\u2028\u2029\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def to_json(value: Any, *, indent: int | None = None,
            default: Callable[[Any], Any] | None = None) -> str:
    """JSON text (non-ASCII kept readable) that is safe to encode as UTF-8 and to split on
    ``"\\n"``; without ``indent`` it is exactly one line."""
    text = json.dumps(value, ensure_ascii=False, indent=indent, default=default)
    return _UNSAFE_IN_A_LINE.sub(_escape, text)


def to_json_line(value: Any) -> str:
    """One JSON-lines record (without its ``"\\n"``)."""
    return to_json(value)


def split_lines(text: str) -> list[str]:
    """Physical lines of a JSON-lines text: split on ``"\\n"`` only (a ``"\\r"`` before it is
    dropped), never on U+2028/U+2029/U+0085 that an older writer may have left raw."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def iter_json_objects(path: str | Path, text: str | None = None) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for each non-blank line; row N in errors is line N."""
    path = Path(path)
    for line_number, line in enumerate(split_lines(read_text(path) if text is None else text),
                                       start=1):
        if not line.strip():
            continue
        try:
            value = loads(line)
        except json.JSONDecodeError as error:
            # json's own messages may end in "at" ("Unterminated string starting at")
            raise InputError(f"not valid JSON ({error.msg.removesuffix(' at')} at column "
                             f"{error.colno})",
                             path=str(path), row=line_number) from None
        except NumberOutOfRange as error:
            raise InputError(str(error), path=str(path), row=line_number,
                             field=out_of_range_field(line)) from None
        except RecursionError:
            raise InputError("JSON nested too deeply", path=str(path), row=line_number) from None
        if not isinstance(value, dict):
            raise InputError(f"expected a JSON object, got {type(value).__name__}",
                             path=str(path), row=line_number)
        yield line_number, value


def refuse_lone_surrogates(value, *, path: str | Path, row: int, field: str = "") -> None:
    """InputError naming the field when a decoded JSON value holds a lone surrogate.

    For foreign files (transcripts, ConvoKit): ``"\\ud800"`` escapes to a character that is
    not text (no UTF-8 file, Parquet column or tokenizer can hold it), so it is refused at
    the door; the project's own files keep such characters from model replies escaped.
    Nesting deeper than Python's recursion limit is refused too."""
    try:
        _refuse_lone_surrogates(value, path, row, field)
    except RecursionError:
        raise InputError("JSON nested too deeply", path=str(path), row=row) from None


def _refuse_lone_surrogates(value, path, row: int, field: str) -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            raise InputError(f"holds a lone surrogate escape (U+{ord(value[error.start]):04X}), "
                             "which is not a character", path=str(path), row=row,
                             field=field or None) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_lone_surrogates(key, path, row, field)
            _refuse_lone_surrogates(item, path, row, f"{field}.{key}" if field else str(key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            _refuse_lone_surrogates(item, path, row, f"{field}[{position}]")
