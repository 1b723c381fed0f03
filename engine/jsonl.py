"""Reading text and JSON-lines files with errors that name the file and the line.

Shared by the corpus reader, the transcript and ConvoKit importers and the tasks file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterator

from engine.errors import InputError


def read_text(path: str | Path) -> str:
    """The file's text (UTF-8, BOM allowed); unreadable or non-UTF-8 -> InputError.

    A bad byte is reported with the physical line it is on, as ``row``.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("no such file", path=str(path))
    if path.is_dir():
        raise InputError("is a folder, expected a file", path=str(path))
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read ({error.strerror})", path=str(path)) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text: byte 0x{data[error.start]:02x} at offset "
                         f"{error.start} (line {line} of the file)", path=str(path),
                         row=line) from None


def iter_json_objects(path: str | Path, text: str | None = None) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for each non-blank line; row N in errors is line N."""
    path = Path(path)
    for line_number, line in enumerate((read_text(path) if text is None else text).splitlines(),
                                       start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            # json's own messages may end in "at" ("Unterminated string starting at")
            raise InputError(f"not valid JSON ({error.msg.removesuffix(' at')} at column "
                             f"{error.colno})",
                             path=str(path), row=line_number) from None
        except RecursionError:
            raise InputError("JSON nested too deeply", path=str(path), row=line_number) from None
        if not isinstance(value, dict):
            raise InputError(f"expected a JSON object, got {type(value).__name__}",
                             path=str(path), row=line_number)
        if _SURROGATE_ESCAPE.search(line):
            try:
                refuse_lone_surrogates(value, path=path, row=line_number)
            except RecursionError:
                raise InputError("JSON nested too deeply", path=str(path), row=line_number) from None
        yield line_number, value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def refuse_lone_surrogates(value, *, path: str | Path, row: int, field: str = "") -> None:
    """InputError naming the field when a decoded JSON value holds a lone surrogate
    (``"\\ud800"`` escapes to a character no UTF-8 file can hold, so it could not be saved)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            raise InputError(f"holds a lone surrogate escape (U+{ord(value[error.start]):04X}), "
                             "which is not a character", path=str(path), row=row,
                             field=field or None) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            refuse_lone_surrogates(key, path=path, row=row, field=field)
            refuse_lone_surrogates(item, path=path, row=row,
                                   field=f"{field}.{key}" if field else str(key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            refuse_lone_surrogates(item, path=path, row=row, field=f"{field}[{position}]")
