"""The six creative problem-solving tasks of paper A (Table 3) and user-defined tasks.

Every built-in prompt is the task's core premise followed by the shared closing
instruction of Table 3: "You are collaborating with other team members to come up with one
creative idea to [goal]. The idea will be evaluated on its creativity (i.e., it should be
both novel and useful)." Table 3 gives the premises but not each task's goal; premises and
goals are those the authors' agents were given (``generation/prompts.py``, ``PS_QUESTIONS``,
GitHub ``pitehu/llm_multiagent_creativity``), including two details where the release
differs from the paper's typesetting and wording: the straight quotes around "sorry" (the
paper prints curly ones) and the employee-attrition goal "improve access to stop voluntary
employee attrition", as the release words it.

User tasks come from ``--task-text`` or a JSONL file of ``{"id": ..., "prompt": ...}`` lines
(``--tasks-file``): other field names are mapped with ``mapping`` (``--map id=uid``), and
fields beyond id, prompt, title and benchmark are an error unless ``extra`` says to ``ignore`` them or ``keep`` them (in ``Task.meta``). A task
may name the ``benchmark`` it comes from (``engine.tasks.benchmark_tasks``), which picks its judge rubric.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

from engine.errors import InputError
from engine.storage.jsonl import iter_json_objects, refuse_lone_surrogates

# paper B's four benchmarks, the names a tasks file may give (``engine.tasks.benchmark_tasks``
# reads them; kept here so reading a tasks file loads none of its readers)
BENCHMARK_NAMES = ("liveideabench", "aae", "macgyver", "arena_hard_creative")

CLOSING = ("You are collaborating with other team members to come up with one creative idea to "
           "{goal}. The idea will be evaluated on its creativity (i.e., it should be both novel "
           "and useful).")


@dataclass(frozen=True)
class Task:
    """A task: an id (used in corpora), a title and the full prompt given to every agent."""

    id: str
    prompt: str
    title: str = ""
    premise: str = ""
    goal: str = ""
    benchmark: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def prompt_sha256(self) -> str:
        """The prompt's SHA-256 (hex): part of every session id, recorded in corpus and manifest,
        so an edited prompt is never answered from the old prompt's sessions."""
        return hashlib.sha256(self.prompt.encode("utf-8", "surrogatepass")).hexdigest()


def _builtin(id: str, title: str, premise: str, goal: str) -> Task:
    return Task(id=id, title=title, premise=premise, goal=goal,
                prompt=f"{premise} {CLOSING.format(goal=goal)}")


TASKS: dict[str, Task] = {task.id: task for task in (
    _builtin("plastic_waste", "Plastic Waste",
             "Plastic waste is one of the biggest environmental problems of our lifetime.",
             "reduce plastic pollution"),
    _builtin("supply_chain", "Supply Chain",
             "Vulnerabilities within a supply chain could lead to uncontrolled costs and "
             "inefficient delivery schedules.", "tackle supply chain security"),
    _builtin("sorry_pandemic", "Sorry Pandemic",
             'Imagine a new pandemic has emerged that is transmitted by saying the word "sorry".',
             "reduce its spread"),
    _builtin("education_inequality", "Educational Inequality",
             "Educational inequality is the unequal distribution of academic resources to "
             "disadvantaged and marginalised groups.", "overcome inequality in education"),
    _builtin("employee_attrition", "Employee Attrition",
             "Voluntary attrition happens when an employee decides to leave the company, resulting "
             "in the reduction of valued talent in the workforce.",
             "improve access to stop voluntary employee attrition"),
    _builtin("singing_shower", "Singing in Shower",
             "Imagine a new research study discovers that singing in the shower for 20 minutes or "
             "more is good for health.", "encourage people to do this"),
)}
TASK_IDS = tuple(TASKS)
_ID = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def get_task(task: "str | Task") -> Task:
    """A built-in task by id (or a Task unchanged); an unknown id names the known ones."""
    if isinstance(task, Task):
        return task
    if task in TASKS:
        return TASKS[task]
    raise InputError(f"unknown task {task!r}; built-in tasks: {', '.join(TASK_IDS)} "
                     f"(or use --task-text / --tasks-file)", field="task")


def task_from_text(text: str, id: str = "custom") -> Task:
    """A user task from free text; the text is used as the prompt as given."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("task text is empty", field="task_text")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:  # bytes that are not UTF-8 on the command line
        raise InputError(f"not UTF-8 text (character {error.start + 1} cannot be encoded)",
                         field="task_text") from None
    if not _ID.match(id):
        raise InputError(f"task id {id!r} must be 1-64 letters, digits, '_', '-' or '.'", field="id")
    return Task(id=id, prompt=text.strip(), title=id)


TASK_FIELDS = ("id", "prompt", "title", "benchmark")
EXTRA_CHOICES = ("error", "ignore", "keep")


def load_tasks_file(path: str | Path, *, mapping: dict[str, str] | None = None,
                    extra: str = "error") -> list[Task]:
    """Tasks from a JSONL file: one ``{"id": ..., "prompt": ...}`` object per line.

    ``mapping`` names the file's field for each task field (``{"id": "uid"}``); ``extra``:
    ``error`` (default) stops at a field it does not know, ``ignore`` drops such fields,
    ``keep`` stores them in ``Task.meta``.
    """
    path = Path(path)
    mapping = dict(mapping or {})
    bad = sorted(set(mapping) - set(TASK_FIELDS))
    if bad:
        raise InputError(f"--map names unknown task field(s) {bad}; task fields: {', '.join(TASK_FIELDS)}",
                         field="map")
    if extra not in EXTRA_CHOICES:
        raise InputError(f"extra must be one of {', '.join(EXTRA_CHOICES)}", field="extra")
    from engine.storage.files import MAX_TASKS_BYTES
    from engine.storage.jsonl import read_text

    tasks, seen = [], set()
    for row, raw in iter_json_objects(path, read_text(path, max_bytes=MAX_TASKS_BYTES)):
        refuse_lone_surrogates(raw, path=path, row=row)  # a prompt must be text a model can take
        record = {name: raw.get(mapping.get(name, name)) for name in TASK_FIELDS
                  if mapping.get(name, name) in raw}
        task_id = record.get("id")
        if isinstance(task_id, bool) or (task_id is not None and not isinstance(task_id, (str, int))):
            # true would file the sessions under task "True", 1.5 under "1.5"
            raise InputError(f"a task id is text or a whole number, got {type(task_id).__name__} {task_id!r}",
                             path=str(path), row=row, field=mapping.get("id", "id"))
        if isinstance(task_id, int):
            record["id"] = str(task_id)
        for name in ("id", "prompt"):
            if not isinstance(record.get(name), str) or not record[name].strip():
                raise InputError("missing or empty", path=str(path), row=row, field=mapping.get(name, name))
        unknown = sorted(set(raw) - {mapping.get(name, name) for name in TASK_FIELDS})
        if unknown and extra == "error":
            raise InputError(f"unknown field(s) {unknown} (use --map to name the task fields, or "
                             f"--extra-fields ignore|keep)", path=str(path), row=row, field=unknown[0])
        if not _ID.match(record["id"]):
            raise InputError("must be 1-64 letters, digits, '_', '-' or '.'", path=str(path), row=row,
                             field="id")
        if record["id"] in seen:
            raise InputError(f"duplicate task id {record['id']!r}", path=str(path), row=row, field="id")
        seen.add(record["id"])
        for name in ("title", "benchmark"):  # text if given: a dict or a list here is not a name
            value = record.get(name)
            if value is not None and not isinstance(value, str):
                raise InputError(f"expected text, got {type(value).__name__}", path=str(path), row=row,
                                 field=mapping.get(name, name))
        if record.get("benchmark"):
            if record["benchmark"] not in BENCHMARK_NAMES:  # a typo would silently pick the general rubric
                raise InputError(f"unknown benchmark {record['benchmark']!r}; one of: {', '.join(BENCHMARK_NAMES)} "
                                 "(or leave it out for the general rubric)", path=str(path), row=row,
                                 field=mapping.get("benchmark", "benchmark"))
        kept = {name: raw[name] for name in unknown} if extra == "keep" else {}
        tasks.append(Task(id=record["id"], prompt=record["prompt"].strip(),
                          title=record.get("title") or record["id"],
                          benchmark=record.get("benchmark") or "", meta=kept))
    if not tasks:
        raise InputError("no tasks in file", path=str(path))
    return tasks
