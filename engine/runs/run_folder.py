"""The output folder of a run: a Corpus file appended session by session, crash-safe.

* ``corpus.jsonl``: a Corpus (``read_run_corpus`` reads it): a header line, then one
  finished session per line, appended whole or not at all (``engine.storage.durable.append_line``:
  a full disk leaves the file as it was and says so in one line); a line cut short by a
  kill, or by an older writer on a full disk, is left out when read and set aside into
  ``corpus.jsonl.torn`` on the next open, so no partial session survives or hides the others.
* ``failed.jsonl``: sessions that failed on their latest attempt (with their turns and the
  reason); rewritten atomically; they are retried on the next run.
* ``manifest.json``: configuration, backend, versions, seeds and usage; rewritten atomically.
One writer per folder (``engine.storage.folder_lock``): a second run, judge or pilot on the same
folder is refused.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from engine.storage import durable
from engine.corpus import Conversation, Corpus, atomic_write_text
from engine.errors import InputError
from engine.storage.folder_lock import LOCK_FILE, FolderLock  # noqa: F401  (LOCK_FILE re-exported)
from engine.storage.files import read_bytes as read_regular
from engine.storage.jsonl import NumberOutOfRange, to_json, to_json_line
from engine.storage.jsonl import loads as bounded_loads
from engine.llm.secrets import scrub

CORPUS_FILE = "corpus.jsonl"
FAILED_FILE = "failed.jsonl"
MANIFEST_FILE = "manifest.json"


def session_prompts_in(folder: str | Path) -> dict[str, tuple[str | None, str | None, bool]]:
    """``{conversation id: (task id, SHA-256 of its task prompt or None, finished)}`` of the
    sessions of a run folder (finished ones in the corpus, failed ones in ``failed.jsonl``),
    read without locking or creating anything (``--dry-run`` uses it too); a record cut
    short (a running or killed run, a full disk) is not counted. None: written before
    prompts were recorded."""
    sessions: dict[str, tuple[str | None, str | None, bool]] = {}
    for name, finished in ((FAILED_FILE, False), (CORPUS_FILE, True)):
        path = Path(folder) / name
        if not path.is_file():
            continue
        for _, record in durable.scan(path).records:
            if isinstance(record.get("conversation_id"), str):
                meta = record.get("meta") if isinstance(record.get("meta"), dict) else {}
                sessions[record["conversation_id"]] = (record.get("task"),
                                                       meta.get("task_prompt_sha256"), finished)
    return sessions


def read_run_corpus(folder: str | Path) -> Corpus:
    """The Corpus of a run folder's ``corpus.jsonl``; records cut short are left out and
    reported in one line each (``engine.storage.durable.read_records``), never fatal."""
    path = Path(folder) / CORPUS_FILE
    return Corpus.from_jsonl(path, durable.read_records(path))


def read_manifest(path: str | Path) -> dict[str, Any]:
    """A folder's ``manifest.json`` as a dict ({} when there is none); anything that is not
    a readable JSON object is an InputError naming the file."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return {}
    data = read_regular(path)  # a folder, a FIFO or a device is refused, never waited on
    try:
        value = bounded_loads(data.decode("utf-8"))
    except NumberOutOfRange as error:
        raise InputError(str(error), path=str(path)) from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise InputError("not valid JSON (damaged or cut short)", path=str(path)) from None
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON object, got {type(value).__name__}", path=str(path))
    return value


def finished_ids_in(folder: str | Path) -> set[str]:
    """Ids of the finished sessions of a run folder (see ``session_prompts_in``)."""
    return {cid for cid, (_, _, finished) in session_prompts_in(folder).items() if finished}


def task_record(task) -> dict[str, Any]:
    """What a run's manifest keeps of a task (``tasks`` in ``manifest.json``): the prompt the
    sessions answered, its SHA-256, and the title and benchmark the judge's rubric depends on."""
    return {"prompt": task.prompt, "prompt_sha256": task.prompt_sha256, "title": task.title,
            "benchmark": task.benchmark}


def recorded_tasks(folder: str | Path, manifest: dict[str, Any], corpus: Corpus,
                   *, say=None) -> dict[str, Any]:
    """``{task id: Task}`` of the finished sessions, as the run recorded them.

    The prompt is the one in the manifest's ``tasks``, else the one a session recorded
    (``meta.task_prompt``), else a built-in task's; never the tasks file, benchmark file or
    grid read again (they may have changed, moved or be relative to another folder). Each session's own record of its
    prompt (``meta.task_prompt_sha256``) must match: a session that answered another text
    is refused, not rated against a prompt it never saw."""
    from engine.tasks import TASKS, Task

    folder = Path(folder)
    where = str(folder / MANIFEST_FILE)
    entries = manifest.get("tasks") if isinstance(manifest.get("tasks"), dict) else {}
    lacking_benchmark = []
    tasks: dict[str, Task] = {}
    for conversation in corpus:
        task_id = conversation.task
        if task_id in tasks or task_id is None:
            continue
        entry = entries.get(task_id)
        answered = (conversation.meta or {}).get("task_prompt")
        if not (isinstance(entry, dict) and isinstance(entry.get("prompt"), str)) and isinstance(answered, str):
            entry = {"prompt": answered, "prompt_sha256": conversation.meta.get("task_prompt_sha256")}
        if isinstance(entry, dict) and isinstance(entry.get("prompt"), str):
            task = Task(id=task_id, prompt=entry["prompt"], title=str(entry.get("title") or ""),
                        benchmark=str(entry.get("benchmark") or ""))
            if entry.get("prompt_sha256") not in (None, task.prompt_sha256):
                raise InputError(f"the prompt recorded for task {task_id!r} does not match its recorded "
                                 f"SHA-256 (the manifest was edited?)", path=where, field=f"tasks.{task_id}")
            if "benchmark" not in entry:
                lacking_benchmark.append(task_id)
        elif task_id in TASKS:
            task = TASKS[task_id]
        else:
            raise InputError(f"the run did not record the prompt of task {task_id!r} (no tasks.{task_id} "
                             f"in the manifest): its sessions cannot be rated against the prompt they "
                             f"answered", path=where)
        tasks[task_id] = task
    for conversation in corpus:
        answered = (conversation.meta or {}).get("task_prompt_sha256")
        task = tasks.get(conversation.task)
        if task is not None and answered is not None and answered != task.prompt_sha256:
            raise InputError(f"session {conversation.conversation_id!r} answered another prompt of task "
                             f"{conversation.task!r} (sha256 {str(answered)[:12]}) than the one recorded "
                             f"(sha256 {task.prompt_sha256[:12]})", path=where)
    if lacking_benchmark:
        _benchmarks_of_older_runs(tasks, lacking_benchmark, manifest, say)
    return tasks


def _benchmarks_of_older_runs(tasks: dict, ids: list[str], manifest: dict, say) -> None:
    """Runs made before the manifest kept each task's benchmark: the benchmark (which picks
    the judge's rubric) is taken from the grid's own files only where they still hold the
    very prompt recorded; otherwise the general rubric is used and said."""
    import dataclasses

    config = manifest.get("config")
    if not isinstance(config, dict) or not (config.get("benchmark") or config.get("tasks_file")):
        return
    try:
        from engine.runs.grid import grid_tasks, load_grid

        current = grid_tasks(load_grid(config))
    except (InputError, OSError):
        current = {}
    unknown = []
    for task_id in ids:
        now = current.get(task_id)
        if now is not None and now.prompt_sha256 == tasks[task_id].prompt_sha256:
            tasks[task_id] = dataclasses.replace(tasks[task_id], benchmark=now.benchmark, title=now.title)
        else:
            unknown.append(task_id)
    if unknown and say is not None:
        say(f"note: the run did not record the benchmark of {len(unknown)} task(s) ({', '.join(unknown[:3])}"
            f"{', ...' if len(unknown) > 3 else ''}) and its files no longer hold their prompts: the "
            f"general rubric is used for them")


class RunStore:
    def __init__(self, folder: str | Path, *, name: str = "run", meta: dict[str, Any] | None = None,
                 command: str = "run"):
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise InputError("output path exists and is not a folder", path=str(self.folder))
        self.corpus_path = self.folder / CORPUS_FILE
        self.failed_path = self.folder / FAILED_FILE
        self.manifest_path = self.folder / MANIFEST_FILE
        self._lock = threading.Lock()
        self._folder_lock = FolderLock(self.folder, command)
        self._held = False
        self._name, self._meta = name, meta or {}
        self.failed: dict[str, dict] = {}

    # -- locking -------------------------------------------------------------------------
    def __enter__(self) -> "RunStore":
        self._folder_lock.__enter__()
        self._held = True
        try:
            self._repair()
            self.failed = self._read_failed()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        if self._held:
            self._folder_lock.__exit__()
            self._held = False

    # -- reading -------------------------------------------------------------------------
    def _repair(self) -> None:
        """Create the corpus file with its header, or set aside records cut short by a kill
        or a full disk (``engine.storage.durable.repair``)."""
        if not self.corpus_path.exists() or self.corpus_path.stat().st_size == 0:
            header = to_json_line({"__corpus__": {"name": self._name, "meta": self._meta}})
            atomic_write_text(self.corpus_path, header + "\n")
            return
        durable.repair(self.corpus_path)

    def finished_ids(self) -> set[str]:
        return {record["conversation_id"] for _, record in durable.read_records(self.corpus_path)
                if "conversation_id" in record}

    def read_corpus(self) -> Corpus:
        return read_run_corpus(self.folder)

    def _read_failed(self) -> dict[str, dict]:
        if not self.failed_path.exists():
            return {}
        failed = {}
        for row, record in durable.read_records(self.failed_path):
            if not isinstance(record.get("conversation_id"), str):
                raise InputError("missing", path=str(self.failed_path), row=row,
                                 field="conversation_id")
            failed[record["conversation_id"]] = record
        return failed

    def read_manifest(self) -> dict[str, Any]:
        return read_manifest(self.manifest_path)

    # -- writing -------------------------------------------------------------------------
    def append(self, conversation: Conversation) -> None:
        """Add one finished session: one whole line, fsynced, or the file as it was."""
        line = to_json_line(conversation.to_dict())
        with self._lock:
            durable.append_line(self.corpus_path, line)
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
