"""Paper B's four creative benchmarks (section 6) read from a copy the user downloaded.

This project ships none of their data (no network access here, and each has its own
licence): ``load_benchmark(name, path)`` turns the public file into tasks, each tagged
with its benchmark so the judge uses that benchmark's rubric (``rubric_for``). Formats,
as published (a differently named field can be mapped with ``mapping``, e.g. ``{"id": "uid"}``):

* ``liveideabench`` (scientific ideation; Hugging Face ``6cf/liveideabench``, Apache-2.0
  per its dataset card): a CSV/JSONL/Parquet table with a ``keywords`` (or ``keyword``)
  column; one task per distinct keyword, in order of first appearance: propose a
  scientific idea involving the keyword.
* ``aae`` (Argumentative Essays, Stab & Gurevych): the corpus folder of ``essayNNN.txt``
  files whose first line is the essay's prompt/title (the ``.ann`` files are not needed),
  or a table with a ``title`` (or ``prompt``) column; task: write an argumentative essay.
* ``macgyver`` (MacGyver, Tian et al.; GitHub ``allenai/MacGyver``): a table with a
  ``Problem`` column (case-insensitive) and an optional ``id``; task: solve the problem
  with the items it lists.
* ``arena_hard_creative`` (Arena-Hard v2.0 creative writing; GitHub
  ``lmarena/arena-hard-auto``, ``data/arena-hard-v2.0/question.jsonl``): JSON lines with
  ``uid``, ``category`` and ``prompt`` (older files: ``question_id`` and
  ``turns[0].content``); rows whose category is creative writing.
The prompts wrapped around a benchmark item and the rubrics are this project's own words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from engine.errors import InputError
from engine.prompts import RUBRIC
from engine.tasks import Task

GENERAL_RUBRIC = tuple(RUBRIC)


@dataclass(frozen=True)
class Benchmark:
    name: str
    title: str
    source: str
    licence: str
    rubric: tuple[str, ...]
    reader: Callable[[Path, dict], list[Task]]


def _table(path: Path) -> pd.DataFrame:
    """A CSV/TSV/JSON/JSONL/Parquet table; any other file is an InputError naming it."""
    if not path.exists():
        raise InputError("no such file", path=str(path))
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            return pd.read_csv(path, dtype=str, keep_default_na=False)
        if suffix == ".tsv":
            return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
        if suffix == ".jsonl":
            return pd.read_json(path, lines=True, dtype=False)
        if suffix == ".json":
            return pd.read_json(path, dtype=False)
        if suffix == ".parquet":
            return pd.read_parquet(path)
    except (ValueError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the table ({error})", path=str(path)) from None
    raise InputError("expected a .csv, .tsv, .json, .jsonl or .parquet file", path=str(path))


def _column(table: pd.DataFrame, path: Path, wanted: Sequence[str], mapping: dict, field: str) -> str | None:
    if field in mapping:
        if mapping[field] not in table.columns:
            raise InputError(f"no column {mapping[field]!r} (from --map {field}=...)", path=str(path),
                             field=mapping[field])
        return mapping[field]
    lower = {str(c).lower(): c for c in table.columns}
    return next((lower[w] for w in wanted if w in lower), None)


def _text(value, path: Path, row: int, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError("missing or empty", path=str(path), row=row, field=field)
    return " ".join(value.split())


def _safe_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", str(text)).strip("_")[:64] or "item"


def _read_liveideabench(path: Path, mapping: dict) -> list[Task]:
    table = _table(path)
    column = _column(table, path, ("keywords", "keyword"), mapping, "prompt")
    if column is None:
        raise InputError("no 'keywords' column (LiveIdeaBench's keyword field; --map prompt=COLUMN)",
                         path=str(path), field="keywords")
    tasks, seen = [], set()
    for row, value in enumerate(table[column].tolist(), start=2):
        keyword = _text(value, path, row, column)
        if keyword.lower() in seen:
            continue
        seen.add(keyword.lower())
        tasks.append(Task(id=f"lib-{_safe_id(keyword)}", title=keyword, benchmark="liveideabench",
                          prompt=(f"Scientific ideation. Propose one original, testable scientific idea "
                                  f"that involves the keyword \"{keyword}\": say what the idea is, what "
                                  f"makes it new, and how it could be tested."),
                          meta={"keyword": keyword}))
    return tasks


def _read_aae(path: Path, mapping: dict) -> list[Task]:
    if path.is_dir():
        files = sorted(path.glob("essay*.txt"))
        if not files:
            raise InputError("no essayNNN.txt files in the folder (the AAE corpus's brat folder)", path=str(path))
        items = []
        for file in files:
            lines = [line.strip() for line in file.read_text(encoding="utf-8-sig").splitlines() if line.strip()]
            if not lines:
                raise InputError("empty essay file", path=str(file), row=1)
            items.append((file.stem, lines[0]))
    else:
        table = _table(path)
        column = _column(table, path, ("title", "prompt", "topic"), mapping, "prompt")
        if column is None:
            raise InputError("no 'title' column (--map prompt=COLUMN)", path=str(path), field="title")
        ids = _column(table, path, ("id", "essay_id", "essay"), mapping, "id")
        items = [(str(table[ids].iat[i]) if ids else f"essay{i + 1:03d}",
                  _text(table[column].iat[i], path, i + 2, column)) for i in range(len(table))]
    return [Task(id=f"aae-{_safe_id(essay_id)}", title=title, benchmark="aae",
                 prompt=(f"Argumentative writing. Write a short argumentative essay that takes a clear "
                         f"position on this topic and defends it with reasons: {title}"))
            for essay_id, title in items]


def _read_macgyver(path: Path, mapping: dict) -> list[Task]:
    table = _table(path)
    column = _column(table, path, ("problem", "question", "prompt"), mapping, "prompt")
    if column is None:
        raise InputError("no 'Problem' column (--map prompt=COLUMN)", path=str(path), field="Problem")
    ids = _column(table, path, ("id", "problem_id", "index"), mapping, "id")
    tasks = []
    for i in range(len(table)):
        problem = _text(table[column].iat[i], path, i + 2, column)
        item_id = str(table[ids].iat[i]) if ids else str(i + 1)
        tasks.append(Task(id=f"macgyver-{_safe_id(item_id)}", title=problem[:60], benchmark="macgyver",
                          prompt=(f"Creative problem solving. {problem} Propose one concrete solution that "
                                  f"uses only what the situation provides.")))
    return tasks


def _read_arena_hard_creative(path: Path, mapping: dict) -> list[Task]:
    table = _table(path)
    category = _column(table, path, ("category",), mapping, "category")
    ids = _column(table, path, ("uid", "question_id", "id"), mapping, "id")
    prompt = _column(table, path, ("prompt",), mapping, "prompt")
    turns = "turns" if "turns" in table.columns else None
    if ids is None:
        raise InputError("no 'uid' column (--map id=COLUMN)", path=str(path), field="uid")
    if prompt is None and turns is None:
        raise InputError("no 'prompt' (or 'turns') column (--map prompt=COLUMN)", path=str(path), field="prompt")
    tasks = []
    for i in range(len(table)):
        if category is not None:
            label = str(table[category].iat[i]).lower().replace("-", "_").replace(" ", "_")
            if "creative_writing" not in label:
                continue
        if prompt is not None:
            text = table[prompt].iat[i]
        else:
            value = table[turns].iat[i]
            text = value[0].get("content") if isinstance(value, list) and value and isinstance(value[0], dict) else None
        text = _text(text, path, i + 1, prompt or "turns")
        tasks.append(Task(id=f"arena-{_safe_id(table[ids].iat[i])}", title=text[:60],
                          benchmark="arena_hard_creative", prompt=text))
    if not tasks:
        raise InputError("no creative-writing rows (category 'creative_writing')", path=str(path),
                         field=category or "category")
    return tasks


BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in (
    Benchmark("liveideabench", "LiveIdeaBench (scientific ideation)",
              "https://huggingface.co/datasets/6cf/liveideabench", "Apache-2.0 (dataset card)",
              ("originality of the scientific idea", "feasibility: could it be tested with today's means",
               "scientific soundness", "clarity and specificity"), _read_liveideabench),
    Benchmark("aae", "Argumentative Essays (argumentative writing)",
              "Stab & Gurevych, Argument Annotated Essays corpus (TU Darmstadt)",
              "not verified here: read the licence that comes with your copy",
              ("a clear, consistent position", "strength of the reasons and evidence",
               "handling of counter-arguments", "organisation and coherence", "originality of the argument"),
              _read_aae),
    Benchmark("macgyver", "MacGyver (creative physical problem solving)",
              "https://github.com/allenai/MacGyver",
              "not verified here: read the licence that comes with your copy",
              ("uses only the items and conditions the problem allows", "physical feasibility",
               "solves the stated problem", "unconventional use of objects", "clarity of the steps"),
              _read_macgyver),
    Benchmark("arena_hard_creative", "Arena-Hard v2.0, creative-writing subset",
              "https://github.com/lmarena/arena-hard-auto (data/arena-hard-v2.0/question.jsonl)",
              "not verified here: read the licence that comes with your copy",
              ("follows every instruction of the prompt", "originality", "craft: style, voice, imagery",
               "coherence and structure", "emotional or intellectual impact"), _read_arena_hard_creative),
)}


def load_benchmark(name: str, path: str | Path, *, mapping: dict[str, str] | None = None,
                   limit: int | None = None) -> list[Task]:
    """The benchmark's tasks from a downloaded copy (first ``limit`` of them if given)."""
    if name not in BENCHMARKS:
        raise InputError(f"unknown benchmark {name!r}; choose one of: {', '.join(BENCHMARKS)}",
                         field="benchmark")
    tasks = BENCHMARKS[name].reader(Path(path), dict(mapping or {}))
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise InputError(f"two items give the same task id {duplicate!r}", path=str(path), field="id")
    return tasks[:limit] if limit else tasks


def rubric_for(task: Task | None) -> tuple[str, ...]:
    """The judge's rubric criteria for a task: its benchmark's, else the general one."""
    if task is not None and task.benchmark in BENCHMARKS:
        return BENCHMARKS[task.benchmark].rubric
    return GENERAL_RUBRIC
