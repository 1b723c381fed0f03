"""The output folder of a run: a Corpus file appended session by session, crash-safe.

* ``corpus.jsonl``: a Corpus (``Corpus.from_jsonl`` reads it): a header line, then one
  finished session per line. Each line is written with one ``write`` and fsynced; a line
  cut short by a kill is removed on the next open, so no partial session survives.
* ``failed.jsonl``: sessions that failed on their latest attempt (with their turns and the
  reason); rewritten atomically; they are retried on the next run.
* ``manifest.json``: configuration, backend, versions, seeds and usage; rewritten atomically.
A lock file stops two runs from writing the same folder at once.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from pathlib import Path
from typing import Any

from engine.corpus import Conversation, Corpus, atomic_write_text
from engine.errors import InputError
from engine.jsonl import iter_json_objects, read_text, to_json, to_json_line
from engine.llm.secrets import scrub

CORPUS_FILE = "corpus.jsonl"
FAILED_FILE = "failed.jsonl"
MANIFEST_FILE = "manifest.json"
LOCK_FILE = ".run.lock"


def session_prompts_in(folder: str | Path) -> dict[str, tuple[str | None, str | None, bool]]:
    """``{conversation id: (task id, SHA-256 of its task prompt or None, finished)}`` of the
    sessions of a run folder (finished ones in the corpus, failed ones in ``failed.jsonl``),
    read without locking or creating anything (``--dry-run`` uses it too); a partial last
    line of a running or killed run is not counted. None: written before prompts were
    recorded."""
    sessions: dict[str, tuple[str | None, str | None, bool]] = {}
    for name, finished in ((FAILED_FILE, False), (CORPUS_FILE, True)):
        path = Path(folder) / name
        if not path.is_file():
            continue
        text = read_text(path)
        text = text[: text.rfind("\n") + 1]
        for _, record in iter_json_objects(path, text):
            if "conversation_id" in record:
                meta = record.get("meta") if isinstance(record.get("meta"), dict) else {}
                sessions[record["conversation_id"]] = (record.get("task"),
                                                       meta.get("task_prompt_sha256"), finished)
    return sessions


def finished_ids_in(folder: str | Path) -> set[str]:
    """Ids of the finished sessions of a run folder (see ``session_prompts_in``)."""
    return {cid for cid, (_, _, finished) in session_prompts_in(folder).items() if finished}


class RunStore:
    def __init__(self, folder: str | Path, *, name: str = "run", meta: dict[str, Any] | None = None):
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise InputError("output path exists and is not a folder", path=str(self.folder))
        self.folder.mkdir(parents=True, exist_ok=True)
        self.corpus_path = self.folder / CORPUS_FILE
        self.failed_path = self.folder / FAILED_FILE
        self.manifest_path = self.folder / MANIFEST_FILE
        self._lock = threading.Lock()
        self._lock_handle = None
        self._name, self._meta = name, meta or {}
        self.failed: dict[str, dict] = {}

    # -- locking -------------------------------------------------------------------------
    def __enter__(self) -> "RunStore":
        handle = open(self.folder / LOCK_FILE, "w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise InputError("another run is writing to this folder", path=str(self.folder)) from None
        self._lock_handle = handle
        self._repair()
        self.failed = self._read_failed()
        return self

    def __exit__(self, *exc) -> None:
        if self._lock_handle:
            fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
            self._lock_handle.close()
            self._lock_handle = None

    # -- reading -------------------------------------------------------------------------
    def _repair(self) -> None:
        """Create the corpus file with its header, or cut a partial last line left by a kill."""
        if not self.corpus_path.exists() or self.corpus_path.stat().st_size == 0:
            header = to_json_line({"__corpus__": {"name": self._name, "meta": self._meta}})
            atomic_write_text(self.corpus_path, header + "\n")
            return
        data = self.corpus_path.read_bytes()
        if not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with open(self.corpus_path, "r+b") as handle:
                handle.truncate(keep)
                handle.flush()
                os.fsync(handle.fileno())

    def finished_ids(self) -> set[str]:
        return {record["conversation_id"] for _, record in iter_json_objects(self.corpus_path)
                if "conversation_id" in record}

    def read_corpus(self) -> Corpus:
        return Corpus.from_jsonl(self.corpus_path)

    def _read_failed(self) -> dict[str, dict]:
        if not self.failed_path.exists():
            return {}
        failed = {}
        for row, record in iter_json_objects(self.failed_path):
            if not isinstance(record.get("conversation_id"), str):
                raise InputError("missing", path=str(self.failed_path), row=row,
                                 field="conversation_id")
            failed[record["conversation_id"]] = record
        return failed

    def read_manifest(self) -> dict[str, Any]:
        if not self.manifest_path.exists():
            return {}
        try:
            return json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            raise InputError("manifest is not valid JSON", path=str(self.manifest_path)) from None

    # -- writing -------------------------------------------------------------------------
    def append(self, conversation: Conversation) -> None:
        """Add one finished session: a single write of one whole line, then fsync."""
        line = (to_json_line(conversation.to_dict()) + "\n").encode("utf-8")
        with self._lock:
            fd = os.open(self.corpus_path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
            if self.failed.pop(conversation.conversation_id, None) is not None:
                self._write_failed()

    def record_failure(self, conversation: Conversation) -> None:
        with self._lock:
            self.failed[conversation.conversation_id] = conversation.to_dict()
            self._write_failed()

    def _write_failed(self) -> None:
        lines = [to_json_line(record) for record in self.failed.values()]
        atomic_write_text(self.failed_path, "\n".join(lines) + ("\n" if lines else ""))

    def rewrite_corpus(self, corpus: Corpus) -> None:
        """Replace the corpus file whole (used to add within-task scaled judge ratings)."""
        with self._lock:
            corpus.to_jsonl(self.corpus_path)

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        # scrubbed as a whole too: no registered key or URL credential reaches the file
        atomic_write_text(self.manifest_path, scrub(to_json(manifest, indent=2, default=str)) + "\n")
