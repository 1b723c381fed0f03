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


class WriteError(InputError, OSError):
    """A file could not be written (disk full, read-only, a folder in the way), said in one
    line. It is an ``OSError`` too, so code that already handles ``OSError`` keeps working."""


def disk_full_message(path) -> str:
    return f"disk full while writing {path}; nothing was lost, re-run when there is space"


def write_error(path, error: OSError) -> WriteError:
    """The one-line error for an ``OSError`` met while writing ``path``: a full disk (or
    quota) in the words docs/reference/errors.md gives; anything else with the system's reason."""
    import errno

    if getattr(error, "errno", None) in (errno.ENOSPC, errno.EDQUOT):
        failure = WriteError(disk_full_message(path))
    else:
        reason = getattr(error, "strerror", None) or type(error).__name__
        failure = WriteError(f"cannot write ({reason})", path=str(path))
    failure.errno = getattr(error, "errno", None)
    return failure
