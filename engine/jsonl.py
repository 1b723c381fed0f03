"""Reading text and JSON-lines files with errors that name the file and the line.

Shared by the corpus reader, the transcript and ConvoKit importers and the tasks file.
"""

from __future__ import annotations

import json
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
            raise InputError(f"not valid JSON ({error.msg} at column {error.colno})",
                             path=str(path), row=line_number) from None
        except RecursionError:
            raise InputError("JSON nested too deeply", path=str(path), row=line_number) from None
        if not isinstance(value, dict):
            raise InputError(f"expected a JSON object, got {type(value).__name__}",
                             path=str(path), row=line_number)
        yield line_number, value
