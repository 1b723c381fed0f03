"""One way to open the project's SQLite caches (embeddings, LLM responses)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_store(path: Path, schema: str) -> sqlite3.Connection:
    """Open (creating folders and ``schema``) a WAL-mode database shared across threads.

    WAL lets readers and one writer work at once, so concurrent sessions and processes
    can share a cache; callers still serialise their own writes with a lock. A store that
    cannot be created (a full disk, a folder in the way) is one ``WriteError``.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, check_same_thread=False, timeout=60)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute(schema)
        connection.commit()
    except OSError as error:
        from engine.errors import write_error

        raise write_error(path, error) from None
    except sqlite3.OperationalError as error:
        raise sqlite_write_error(path, error) from None
    return connection


def sqlite_write_error(path: Path, error: sqlite3.Error):
    """The one-line error of a SQLite store that cannot write: "database or disk is full"
    is a full disk (``engine.errors.write_error``); anything else names the file and
    SQLite's reason. SQLite rolls the failed transaction back: nothing stored is lost."""
    import errno

    from engine.errors import write_error

    text = str(error)
    code = errno.ENOSPC if "full" in text.lower() else errno.EIO
    return write_error(path, OSError(code, text))
