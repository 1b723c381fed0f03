"""One writer per folder: every command that writes a run, pilot or dataset folder holds it.

``FolderLock(folder, "judge quality")`` takes an exclusive ``flock`` on ``FOLDER/.run.lock``
(the lock ``engine.runs.run_folder`` has always used, so ``run``, ``judge``, ``pilot`` and
``dataset build`` exclude each other on one folder) without waiting; a second writer is
refused in one line naming the command and process that holds the folder. The lock goes
with the process: a killed writer leaves no stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from engine.errors import InputError, write_error

LOCK_FILE = ".run.lock"


class FolderLock:
    def __init__(self, folder: str | Path, command: str):
        self.folder = Path(folder)
        self.command = command
        self._fd: int | None = None

    def __enter__(self) -> "FolderLock":
        if self.folder.exists() and not self.folder.is_dir():
            raise InputError("output path exists and is not a folder", path=str(self.folder))
        path = self.folder / LOCK_FILE
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise write_error(path, error) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise InputError(f"another run, judge, pilot or dataset build is writing to this "
                             f"folder{holder}; wait for it to finish (one writer per folder)",
                             path=str(self.folder)) from None
        self._fd = fd
        try:  # who holds it, for the message a second writer gets (best effort)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{self.command} (pid {os.getpid()})\n".encode("utf-8", "replace"), 0)
        except OSError:
            pass
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return f" ({text})" if text else ""
