"""Where a dataset build writes: a folder it made itself, replaced whole.

A build (``python -m engine dataset build|release``) never writes into a run folder of
``python -m engine run`` (``engine.runs.run_folder``: ``corpus.jsonl``, ``failed.jsonl``, its
``manifest.json``) nor over files it did not write. Every folder a build writes holds a marker,
``dataset-build.json``, naming the files the build wrote; ``check_target`` accepts a new or
empty folder, or one whose every file its marker names, and refuses anything else in one line
before anything is written.

``staged`` builds the dataset in a staging folder beside the target
(``.NAME.dataset-build/``, locked with ``engine.storage.folder_lock`` so two builds of one
target exclude each other) and swaps it in whole: the old folder is moved aside, the new one
renamed into place, the old one deleted. A build killed at any point leaves the old dataset
as it was, or (killed between the two renames) no dataset and the old one in the staging
folder, never files of two builds in one folder; the next build clears the staging folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Iterator

from engine.errors import InputError, write_error
from engine.storage.folder_lock import LOCK_FILE, FolderLock
from engine.runs.run_folder import CORPUS_FILE, FAILED_FILE, MANIFEST_FILE

MARKER = "dataset-build.json"
RUN_FILES = (CORPUS_FILE, FAILED_FILE)  # a folder holding either is a run's, whatever else it holds
IGNORED = (LOCK_FILE,)  # the lock another writer left (it holds no data)


def staging_folder(target: Path) -> Path:
    return target.parent / f".{target.name}.dataset-build"


def marker_files(folder: Path) -> list[str] | None:
    """The files the marker of ``folder`` names (None: no readable marker)."""
    try:
        value = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = value.get("files") if isinstance(value, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return files


def check_target(target: Path, run_dir: Path | None = None) -> None:
    """Refuse (one InputError naming ``--out``) a target a build may not write: the run folder
    itself, a run folder, a file, or a folder holding anything its marker does not name."""
    target = Path(target)
    where = str(target)
    if run_dir is not None and target.resolve() == Path(run_dir).resolve():
        raise InputError("--out is the run folder itself: a dataset build never writes into a run "
                         "folder; choose a new folder", path=where)
    if run_dir is not None and Path(run_dir).resolve() in target.resolve().parents:
        raise InputError(f"--out is inside the run folder {run_dir}: a dataset build never writes into "
                         f"a run folder; choose a folder outside it", path=where)
    if not target.exists() and not target.is_symlink():
        return
    if not target.is_dir() or target.is_symlink():
        raise InputError("--out exists and is not a folder the build made", path=where)
    present = sorted(p.name for p in target.iterdir() if p.name not in IGNORED)
    run_files = [name for name in RUN_FILES if name in present]
    if run_files:
        raise InputError(f"--out is a run folder ({', '.join(run_files)}): a dataset build never "
                         f"writes into one; choose a new folder", path=where)
    if not present:
        return
    named = marker_files(target)
    if named is None:
        shown = ", ".join(present[:4]) + (", ..." if len(present) > 4 else "")
        raise InputError(f"--out holds files no dataset build wrote ({shown}; no {MARKER}); "
                         f"nothing was written: choose a new or empty folder", path=where)
    foreign = [name for name in present if name not in named and name != MARKER]
    if foreign:
        shown = ", ".join(foreign[:4]) + (", ..." if len(foreign) > 4 else "")
        raise InputError(f"--out holds files its {MARKER} does not name ({shown}); nothing was "
                         f"written: move them or choose another folder", path=where)


def write_marker(folder: Path, command: str) -> None:
    """Name every file now in ``folder`` as written by this build."""
    files = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name not in IGNORED + (MARKER,))
    text = json.dumps({"written_by": command, "files": files}, indent=2) + "\n"
    (folder / MARKER).write_text(text, encoding="utf-8")


def _busy(lock_file: Path) -> bool:
    """Whether another process holds the lock file (probed read-only: nothing written)."""
    import fcntl

    try:
        fd = os.open(lock_file, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO in its place never waits
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


@contextlib.contextmanager
def staged(target: Path, command: str, run_dir: Path | None = None) -> Iterator[Path]:
    """Check ``target``, yield an empty folder to build into, then swap it in whole (see the
    module's text). An exception inside leaves the target as it was."""
    target = Path(target)
    stage = staging_folder(target)
    with contextlib.ExitStack() as locks:
        if _busy(target / LOCK_FILE):  # one writer: a run still writing there is named as such
            locks.enter_context(FolderLock(target, command))  # (refused before writing anything)
        check_target(target, run_dir)  # refused: nothing written (not even a lock file)
        if target.is_dir():
            locks.enter_context(FolderLock(target, command))
        locks.enter_context(FolderLock(stage, command))
        build = stage / "new" / target.name  # the dataset's name is its folder's
        old = stage / "old"
        try:
            for leftover in (build.parent, old):  # a killed build's, lock released with its process
                if leftover.exists():
                    shutil.rmtree(leftover)
            build.mkdir(parents=True)
        except OSError as error:
            raise write_error(stage, error) from None
        try:
            yield build
            write_marker(build, command)
            check_target(target, run_dir)  # nothing foreign arrived meanwhile
            moved = target.exists()
            if moved:
                os.rename(target, old)
            try:
                os.rename(build, target)
            except OSError:
                if moved:  # the old dataset goes back where it was
                    os.rename(old, target)
                raise
        except OSError as error:
            raise write_error(target, error) from None
        finally:  # the staging folder goes too (its lock file with it, still held)
            shutil.rmtree(stage, ignore_errors=True)


@contextlib.contextmanager
def rewritten(folder: Path, command: str) -> Iterator[Path]:
    """Yield a copy of the dataset ``folder`` to change, then swap it in whole, as ``staged``
    does: a crash leaves the dataset as it was (its manifest's digests still match)."""
    folder = Path(folder)
    stage = staging_folder(folder)
    with FolderLock(folder, command), FolderLock(stage, command):
        copy = stage / "new" / folder.name
        old = stage / "old"
        try:
            for leftover in (copy.parent, old):
                if leftover.exists():
                    shutil.rmtree(leftover)
            copy.parent.mkdir(parents=True)
            shutil.copytree(folder, copy, ignore=shutil.ignore_patterns(*IGNORED))
        except OSError as error:
            raise write_error(stage, error) from None
        try:
            yield copy
            os.rename(folder, old)
            try:
                os.rename(copy, folder)
            except OSError:
                os.rename(old, folder)
                raise
        except OSError as error:
            raise write_error(folder, error) from None
        finally:
            shutil.rmtree(stage, ignore_errors=True)
