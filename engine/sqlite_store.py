"""One way to open the project's SQLite caches (embeddings, LLM responses)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_store(path: Path, schema: str) -> sqlite3.Connection:
    """Open (creating folders and ``schema``) a WAL-mode database shared across threads.

    WAL lets readers and one writer work at once, so concurrent sessions and processes
    can share a cache; callers still serialise their own writes with a lock.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, check_same_thread=False, timeout=60)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute(schema)
    connection.commit()
    return connection
