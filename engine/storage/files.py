"""Reading a file a person named: regular files only, of a bounded size, never a wait.

A path given on the command line or in a grid may be anything: ``/dev/zero`` (endless: read
whole, it fills the memory), a FIFO (opening it waits for a writer that never comes), a
socket, a folder. Every reader of user files goes through ``check_regular`` (a ``stat``,
which never blocks) or ``read_bytes`` (opened without blocking, checked on the open file, so
the file cannot be swapped for a FIFO in between, and read to at most ``max_bytes``).
Refusals are InputErrors naming the file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from engine.errors import InputError

GB = 1 << 30
MB = 1 << 20
MAX_FILE_BYTES = 2 * GB  # any data file read whole (a corpus, a table), as bytes and then as text
MAX_TASKS_BYTES = 64 * MB  # a tasks file: prompts, not data


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "is a folder, expected a file"
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO), not a regular file: refused (it could wait forever)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a regular file: refused (it may never end)"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file: refused"
    return "is not a regular file: refused"


def _check(path: Path, result: os.stat_result, max_bytes: int | None) -> os.stat_result:
    if not stat.S_ISREG(result.st_mode):
        raise InputError(_kind(result.st_mode), path=str(path))
    if max_bytes is not None and result.st_size > max_bytes:
        raise InputError(f"is {result.st_size:,} bytes; at most {max_bytes:,} are read here",
                         path=str(path))
    return result


def check_regular(path: str | Path, *, max_bytes: int | None = MAX_FILE_BYTES) -> os.stat_result:
    """The file's ``stat`` when ``path`` is an existing regular file (symbolic links followed)
    of at most ``max_bytes``; else an InputError naming it."""
    path = Path(path)
    try:
        result = path.stat()
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot read ({error.strerror or error})", path=str(path)) from None
    return _check(path, result, max_bytes)


def read_bytes(path: str | Path, *, max_bytes: int | None = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (see ``check_regular``); the file is
    opened without blocking and checked on the open descriptor."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a folder, expected a file", path=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot read ({error.strerror or error})", path=str(path)) from None
    try:
        _check(path, os.fstat(fd), max_bytes)
        chunks, total = [], 0
        limit = max_bytes if max_bytes is not None else None
        while True:
            chunk = os.read(fd, 1 << 24)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if limit is not None and total > limit:  # it grew while being read
                raise InputError(f"grew past {limit:,} bytes while being read", path=str(path))
        return b"".join(chunks)
    except OSError as error:
        raise InputError(f"cannot read ({error.strerror or error})", path=str(path)) from None
    finally:
        os.close(fd)


def first_line(path: str | Path, *, limit: int = 1_000_000) -> str:
    """The first line of a regular file (at most ``limit`` bytes, decoded leniently), ended by
    ``\\n``, ``\\r\\n`` or a lone ``\\r`` (old Mac files): what a header sniffer needs."""
    path = Path(path)
    check_regular(path, max_bytes=None)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        _check(path, os.fstat(fd), None)
        head = os.read(fd, limit)
    finally:
        os.close(fd)
    text = head.decode("utf-8-sig", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n", 1)[0]


def universal_newlines(text: str) -> str:
    """``text`` with a file's old-Mac line ends (``\\r`` alone, no ``\\n`` anywhere) read as line
    ends; a text that has ``\\n`` is left as it is (a ``\\r`` there is inside a cell)."""
    if "\r" in text and "\n" not in text:
        return text.replace("\r", "\n")
    return text
