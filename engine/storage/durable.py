"""Files that survive a full disk and a kill: appended records and whole-file writes.

* ``append_line``: one record appended to a JSON-lines file as one whole line. Every byte is
  written (a short write is continued, never ignored), the length checked, the file
  ``fsync``ed; on any error the file is truncated back to its size before the record, so it
  holds exactly the records it held, and the error is one line
  (``engine.errors.write_error``: "disk full while writing FILE; nothing was lost, ...").
  A tail that a dead writer left without its ``"\\n"`` is set aside into ``FILE.torn``
  before the new record is written, so the two are never glued together.
* ``atomic_write_bytes``: a whole file written to a temp file in the same folder, fsynced
  and renamed over the old one; on any error the old file is untouched and the temp removed.
* ``read_records``: the records of an appended file. A record cut short is left out and
  reported in one line, never fatal and never hiding the whole records: the last line when
  it has no ``"\\n"`` (a kill, or a write that failed and could not be undone), or a fragment
  glued in front of a whole record (an older writer kept appending after a short write).
  Anything else that is not a JSON object is an ``InputError`` naming the line, as before.
  ``repair`` rewrites such a file without the fragments (kept in ``FILE.torn``).

Tests replace ``_write`` and ``_fsync`` to simulate a disk that fills after K bytes.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from engine.errors import InputError, WriteError, write_error
from engine.storage.files import read_bytes as read_regular
from engine.storage.jsonl import NumberOutOfRange, out_of_range_field
from engine.storage.jsonl import loads as bounded_loads

_write = os.write
_fsync = os.fsync
TORN_SUFFIX = ".torn"


def _say(text: str) -> None:
    print(text, file=sys.stderr)


# -- writing ------------------------------------------------------------------------------------
def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` (continuing after short writes); a write that makes no
    progress is a full disk."""
    view = memoryview(data)
    done = 0
    while done < len(view):
        written = _write(fd, view[done:])
        if not written or written < 0:
            import errno

            raise OSError(errno.ENOSPC, "No space left on device (a write made no progress)")
        done += written


def append_line(path: str | Path, line: str) -> None:
    """Append ``line`` (one JSON-lines record, without its ``"\\n"``) whole, or not at all."""
    path = Path(path)
    data = line.encode("utf-8") + b"\n"
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as error:
        raise write_error(path, error) from None
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            size = _set_aside_tail(path, fd, size)
        try:
            write_all(fd, data)
            if os.fstat(fd).st_size != size + len(data):
                import errno

                raise OSError(errno.EIO, "the file did not grow by the record's length")
            _fsync(fd)
        except OSError as error:
            _truncate_back(path, fd, size)
            raise write_error(path, error) from None
    finally:
        os.close(fd)


def _truncate_back(path: Path, fd: int, size: int) -> None:
    """Undo a failed append. If even that fails, the partial line stays at the end of the
    file without its ``"\\n"``, and ``read_records`` leaves it out as never written."""
    try:
        os.ftruncate(fd, size)
        _fsync(fd)
    except OSError:
        pass


def _set_aside_tail(path: Path, fd: int, size: int) -> int:
    """Move the bytes after the file's last ``"\\n"`` (a record cut short) to ``FILE.torn``;
    returns the new size."""
    keep = size
    chunk = 1 << 16
    while keep > 0:  # find the last newline, reading backwards
        start = max(0, keep - chunk)
        block = os.pread(fd, keep - start, start)
        at = block.rfind(b"\n")
        if at >= 0:
            keep = start + at + 1
            break
        keep = start
    tail = os.pread(fd, size - keep, keep)
    _keep_fragment(path, tail)
    try:
        os.ftruncate(fd, keep)
        _fsync(fd)
    except OSError as error:
        raise write_error(path, error) from None
    _say(f"note: file {path}: a last record cut short by an earlier write ({len(tail)} bytes) was "
         f"never complete; set aside into {path.name}{TORN_SUFFIX}")
    return keep


def _keep_fragment(path: Path, fragment: bytes) -> None:
    torn = path.with_name(path.name + TORN_SUFFIX)
    try:
        fd = os.open(torn, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            write_all(fd, fragment + b"\n")
            _fsync(fd)
        finally:
            os.close(fd)
    except OSError as error:
        raise write_error(torn, error) from None


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _temp_prefix(path: Path) -> str:
    return f".{path.name}.tmp-"


def remove_stale_temp_files(path: str | Path) -> int:
    """Delete temp files of ``path`` left by a writer that was killed (its process is gone);
    returns how many. A temp name carries its writer's process id: ``.NAME.tmp-PID-XXXX``."""
    path = Path(path)
    removed = 0
    for candidate in path.parent.glob(_temp_prefix(path) + "*"):
        pid_text = candidate.name[len(_temp_prefix(path)):].split("-", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        try:
            os.kill(int(pid_text), 0)
            continue  # the writer is still running
        except ProcessLookupError:
            pass
        except PermissionError:
            continue  # another user's live process
        try:
            candidate.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write bytes to a temp file in the same folder, fsync, rename over ``path``; temp files
    of earlier writers that were killed are removed afterwards. Any ``OSError`` (a full
    disk, a read-only or immutable file, a folder in the way) leaves ``path`` as it was and
    becomes one ``WriteError`` naming it."""
    path = Path(path)
    temp_name = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            raise WriteError("is a folder, expected a file", path=str(path))
        fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f"{_temp_prefix(path)}{os.getpid()}-")
        try:
            os.chmod(temp_name, 0o666 & ~_current_umask())  # as a plain open() would create it
            write_all(fd, data)
            _fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp_name, path)
    except WriteError:
        raise
    except OSError as error:
        raise write_error(path, error) from None
    finally:
        if temp_name is not None and os.path.exists(temp_name):
            try:
                os.unlink(temp_name)
            except OSError:
                pass
    remove_stale_temp_files(path)
    return path


# -- reading --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Torn:
    """A record cut short: its physical line and how many bytes of it were there."""

    line: int
    size: int
    glued: bool  # a whole record followed it on the same line

    def describe(self, path) -> str:
        where = ("in front of the record on that line" if self.glued else "at the end of the file")
        return (f"note: file {path}, line {self.line}: a record cut short ({self.size} bytes, {where}) "
                f"was never completely written: left out; the complete records are read")


@dataclass
class Scan:
    records: list[tuple[int, dict]]
    torn: list[Torn]
    lines: list[bytes]  # the complete lines kept (a glued line: its whole record only)
    fragments: list[bytes]


def _read_bytes(path: Path) -> bytes:
    """A regular file's bytes: a FIFO in a run folder is refused, never waited on."""
    return read_regular(path)


def _loads(raw: bytes, *, first: bool):
    text = raw.decode("utf-8-sig" if first else "utf-8")
    if text.endswith("\r"):
        text = text[:-1]
    return bounded_loads(text)  # an integer beyond 64 bits is NumberOutOfRange, never parsed


def scan(path: str | Path, data: bytes | None = None) -> Scan:
    """Every record of an appended JSON-lines file and every record cut short (see the module
    docstring); a line that is neither is an ``InputError`` naming it."""
    path = Path(path)
    data = _read_bytes(path) if data is None else data
    pieces = data.split(b"\n")
    tail = pieces.pop()  # after the last "\n": empty, or a record cut short
    result = Scan([], [], [], [])
    for number, raw in enumerate(pieces, start=1):
        if not raw.strip():
            result.lines.append(raw)
            continue
        try:
            value = _loads(raw, first=number == 1)
        except NumberOutOfRange as error:
            raise InputError(str(error), path=str(path), row=number,
                             field=out_of_range_field(raw.decode("utf-8-sig"))) from None
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
            start = _glued_start(raw)
            if start is None:
                raise _line_error(path, number, raw, error) from None
            value = _loads(raw[start:], first=False)
            result.torn.append(Torn(number, start, True))
            result.fragments.append(raw[:start])
            raw = raw[start:]
        if not isinstance(value, dict):
            raise InputError(f"expected a JSON object, got {type(value).__name__}", path=str(path),
                             row=number)
        result.records.append((number, value))
        result.lines.append(raw)
    if tail.strip():
        result.torn.append(Torn(len(pieces) + 1, len(tail), False))
        result.fragments.append(tail)
    return result


def _glued_start(raw: bytes) -> int | None:
    """Where a whole JSON object begins after a fragment on the same line, if one does.

    Inside a JSON string a quote is escaped, so ``{"`` only ever starts an object; the first
    start whose rest of the line parses as one whole object is the record that followed the
    fragment (an object starting inside the fragment would leave a brace unclosed)."""
    at = raw.find(b'{"', 1)
    while at > 0:
        try:
            if isinstance(_loads(raw[at:], first=False), dict):
                return at
        except (UnicodeDecodeError, ValueError, RecursionError):  # JSONDecodeError, NumberOutOfRange
            pass
        at = raw.find(b'{"', at + 1)
    return None


def _line_error(path: Path, number: int, raw: bytes, error: Exception) -> InputError:
    if isinstance(error, UnicodeDecodeError):
        return InputError(f"not UTF-8 text: byte 0x{raw[error.start]:02x}", path=str(path), row=number)
    if isinstance(error, RecursionError):
        return InputError("JSON nested too deeply", path=str(path), row=number)
    return InputError(f"not valid JSON ({error.msg.removesuffix(' at')} at column {error.colno})",
                      path=str(path), row=number)


def read_records(path: str | Path, *, say: Callable[[str], None] | None = _say) -> list[tuple[int, dict]]:
    """``(line number, record)`` of every complete record; each record cut short is reported
    through ``say`` (one line each) and left out."""
    found = scan(path)
    for torn in found.torn:
        if say is not None:
            say(torn.describe(path))
    return found.records


def repair(path: str | Path) -> list[Torn]:
    """Rewrite an appended file without its records cut short (kept in ``FILE.torn``); the
    caller holds the folder's lock. Returns what was left out (nothing: the file is untouched)."""
    path = Path(path)
    data = _read_bytes(path)
    found = scan(path, data)
    if not found.torn:
        return []
    for fragment in found.fragments:
        _keep_fragment(path, fragment)
    atomic_write_bytes(path, b"".join(line + b"\n" for line in found.lines))
    for torn in found.torn:
        _say(torn.describe(path).replace("left out;", f"set aside into {path.name}{TORN_SUFFIX};"))
    return found.torn
