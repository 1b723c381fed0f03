"""Errors meant for people: each names the file, the row and the field at fault."""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input (a file, a column, a value) described so a person can fix it.

    ``row`` is 1-based as a person counts data rows (the header is not a data row);
    any of ``path``, ``row`` and ``field`` may be missing when they do not apply.
    """

    def __init__(self, message: str, *, path: str | None = None, row: int | None = None,
                 field: str | None = None):
        self.path = None if path is None else str(path)
        self.row = row
        self.field = field
        self.reason = message
        where = []
        if self.path:
            where.append(f"file {self.path}")
        if row is not None:
            where.append(f"row {row}")
        if field:
            where.append(f"field '{field}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)
