"""Paper B's four creative benchmarks (section 6): two shipped, two read from the user's copy.

``load_benchmark(name, path)`` turns the public file into tasks, each tagged with its
benchmark so the judge uses that benchmark's rubric (``rubric_for``). MacGyver and
Arena-Hard v2.0 are Apache-2.0 and shipped in ``engine/tasks/benchmark_data/<name>/`` (the
source file as published, its LICENSE and a README with source commit, SHA-256 and
citation): without ``path`` those are read (``shipped_path``). LiveIdeaBench and the
Argumentative Essays stay download-yourself. Formats, as published (a differently named
field can be mapped with ``mapping``, e.g. ``{"id": "uid"}``):

* ``liveideabench`` (scientific ideation; Hugging Face ``6cf/liveideabench``, Apache-2.0
  per its dataset card): a CSV/JSONL/Parquet table with a ``keywords`` (or ``keyword``)
  column; one task per distinct keyword, in order of first appearance: propose a
  scientific idea involving the keyword.
* ``aae`` (Argumentative Essays, Stab & Gurevych): the corpus folder of ``essayNNN.txt``
  files whose first line is the essay's prompt/title (the ``.ann`` files are not needed),
  or a table with a ``title`` (or ``prompt``) column; task: write an argumentative essay.
* ``macgyver`` (MacGyver, Tian et al.; GitHub ``allenai/MacGyver``,
  ``data/MacGyver/problem_solution_pair.xlsx``): a table (the published Excel file, or
  CSV/JSONL/Parquet) with a ``Problem`` column (case-insensitive) and an optional ``ID``;
  one task per row (each row of the published file is a distinct problem); task: solve
  the problem with the items it lists.
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
from engine.tasks import BENCHMARK_NAMES, Task

GENERAL_RUBRIC = tuple(RUBRIC)


@dataclass(frozen=True)
class Benchmark:
    name: str
    title: str
    source: str
    licence: str
    rubric: tuple[str, ...]
    reader: Callable[[Path, dict], list[Task]]


@dataclass
class _Rows:
    """A benchmark table read for people: its columns and ``(row number, values)`` pairs,
    rows counted as everywhere here (CSV: data rows under the header; JSON lines: lines)."""

    path: Path
    columns: list[str]
    rows: list[tuple[int, dict]]


EXCEL_SUFFIXES = (".xlsx", ".xlsm")
TABLE_SUFFIXES = (".csv", ".tsv", ".json", ".jsonl", ".parquet", *EXCEL_SUFFIXES)
SHIPPED_DIR = Path(__file__).with_name("benchmark_data")
SHIPPED = {"macgyver": "macgyver/problem_solution_pair.xlsx",
           "arena_hard_creative": "arena_hard_creative/question.jsonl"}


def shipped_path(name: str) -> Path:
    """The shipped copy of a benchmark (see ``benchmark_data/<name>/README.md``); a benchmark
    that is not shipped is an InputError saying to give the user's own copy."""
    if name not in SHIPPED:
        raise InputError(f"{name!r} is not shipped with this project (see its licence); give your "
                         f"downloaded copy (--benchmark-file PATH, or 'path' in a grid's benchmark)",
                         field="benchmark_file")
    return SHIPPED_DIR / SHIPPED[name]


def _excel(path: Path) -> _Rows:
    """The first sheet of an Excel workbook (openpyxl, cached cell values, not formulas): row 1
    is the header, data row N is spreadsheet row N + 1; wholly empty rows are skipped (they
    keep their numbers, so every error names the row a person sees in Excel, minus one)."""
    import zipfile

    import openpyxl

    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError) as error:
        raise InputError(f"not a readable Excel workbook ({type(error).__name__})", path=str(path)) from None
    try:
        sheet = book.worksheets[0]
        lines = sheet.iter_rows(values_only=True)
        header = next(lines, None)
        if header is None or all(cell is None for cell in header):
            raise InputError(f"sheet {sheet.title!r} has no header row", path=str(path), row=None)
        columns = [str(cell).strip() if cell is not None else "" for cell in header]
        rows = []
        for number, cells in enumerate(lines, start=1):
            if all(cell is None or (isinstance(cell, str) and not cell.strip()) for cell in cells):
                continue
            rows.append((number, {c: v for c, v in zip(columns, cells) if c}))
    finally:
        book.close()
    return _Rows(path, [c for c in columns if c], rows)


def excel_row_note(path: Path) -> str:
    """How an Excel error's row is counted, naming the sheet that was read."""
    import openpyxl

    try:
        book = openpyxl.load_workbook(path, read_only=True)
        title = book.worksheets[0].title
        book.close()
    except Exception:  # the note is a courtesy; the error itself already names the file
        title = "1"
    return f"sheet {title!r}: row N = data row N, spreadsheet row N+1"


def _table(path: Path) -> _Rows:
    """A CSV/TSV/JSON/JSONL/Parquet/Excel table; anything else (another extension, a folder, a
    FIFO, a device) is an InputError naming it."""
    from engine.storage.files import check_regular
    from engine.storage.records import read_csv_records

    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        if not path.exists():
            raise InputError("no such file", path=str(path))
        raise InputError("expected a .csv, .tsv, .json, .jsonl, .parquet or .xlsx file", path=str(path))
    check_regular(path)
    if suffix in EXCEL_SUFFIXES:
        return _excel(path)
    if suffix in (".csv", ".tsv"):
        header, records = read_csv_records(path, delimiter="," if suffix == ".csv" else "\t")
        return _Rows(path, header, [(r.row, r.values) for r in records])
    if suffix == ".jsonl":
        from engine.storage.records import read_jsonl_records

        rows = [(r.row, r.values) for r in read_jsonl_records(path)]
    elif suffix == ".json":
        rows = _json_list(path)
    else:
        try:
            frame = pd.read_parquet(path)
        except Exception as error:  # pyarrow raises several types for a broken file
            raise InputError(f"not a readable Parquet file ({type(error).__name__})", path=str(path)) from None
        rows = [(i + 1, record) for i, record in enumerate(frame.to_dict(orient="records"))]
    columns = list(dict.fromkeys(str(k) for _, values in rows for k in values))
    return _Rows(path, columns, rows)


def _json_list(path: Path) -> list[tuple[int, dict]]:
    """A .json file holding a list of objects; row N is its N-th object."""
    import json

    from engine.storage.jsonl import NumberOutOfRange, loads, read_text

    try:
        value = loads(read_text(path))
    except (json.JSONDecodeError, NumberOutOfRange, RecursionError) as error:
        raise InputError(f"not valid JSON ({getattr(error, 'msg', error)})", path=str(path)) from None
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise InputError("expected a JSON list of objects (or use .jsonl)", path=str(path))
    return [(i + 1, item) for i, item in enumerate(value)]


def _column(table: _Rows, wanted: Sequence[str], mapping: dict, field: str) -> str | None:
    if field in mapping:
        if mapping[field] not in table.columns:
            raise InputError(f"no column {mapping[field]!r} (from --map {field}=...)", path=str(table.path),
                             field=mapping[field])
        return mapping[field]
    lower = {str(c).lower(): c for c in table.columns}
    return next((lower[w] for w in wanted if w in lower), None)


def _text(value, path: Path, row: int, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError("missing or empty" if value is None or isinstance(value, str)
                         else f"expected text, got {type(value).__name__}", path=str(path), row=row, field=field)
    return " ".join(value.split())


def _raw_id(value, path: Path, row: int, field: str) -> str:
    """An item's id as written (text or a whole number); a list, an object or a blank is refused."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or \
            (isinstance(value, float) and not value.is_integer()) or not str(value).strip():
        raise InputError(f"expected an id (text or a whole number), got {value!r}"[:120], path=str(path),
                         row=row, field=field)
    return str(int(value)) if isinstance(value, float) else str(value).strip()


def _safe_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", str(text)).strip("_")[:64] or "item"


def unique_ids(prefix: str, raws: Sequence[str]) -> list[str]:
    """``prefix-<readable id>`` per item; where readable ids collide (``C++`` and ``C#`` both
    read ``C``, every CJK keyword ``item``, ``a b`` and ``a_b``), each item whose readable id
    is not its own text exactly gets ``-<first 8 hex digits of the text's SHA-256>``. An id
    depends only on its own text and the benchmark file, so it is the same on every run."""
    import hashlib
    from collections import Counter

    readable = [_safe_id(raw) for raw in raws]
    counts = Counter(readable)
    ids = []
    for raw, name in zip(raws, readable):
        if counts[name] > 1 and raw != name:
            digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:8]
            name = f"{name[:48]}-{digest}"
        ids.append(f"{prefix}-{name}")
    return ids


def _read_liveideabench(path: Path, mapping: dict) -> list[Task]:
    table = _table(path)
    column = _column(table, ("keywords", "keyword"), mapping, "prompt")
    if column is None:
        raise InputError("no 'keywords' column (LiveIdeaBench's keyword field; --map prompt=COLUMN)",
                         path=str(path), field="keywords")
    keywords, seen = [], set()
    for row, values in table.rows:
        keyword = _text(values.get(column), path, row, column)
        if keyword.lower() in seen:
            continue
        seen.add(keyword.lower())
        keywords.append(keyword)
    return [Task(id=task_id, title=keyword, benchmark="liveideabench",
                 prompt=(f"Scientific ideation. Propose one original, testable scientific idea "
                         f"that involves the keyword \"{keyword}\": say what the idea is, what "
                         f"makes it new, and how it could be tested."),
                 meta={"keyword": keyword})
            for task_id, keyword in zip(unique_ids("lib", keywords), keywords)]


def _essay_title(file: Path) -> str:
    """The first non-blank line of an ``essayNNN.txt`` (a regular UTF-8 file)."""
    from engine.storage.jsonl import read_text

    try:
        text = read_text(file, max_bytes=10 << 20)
    except InputError as error:
        if error.reason.startswith("not UTF-8"):
            raise InputError(error.reason + "; convert it to UTF-8 (e.g. iconv -f latin1 -t utf-8)",
                             path=error.path, row=error.row) from None
        raise
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise InputError("empty essay file", path=str(file), row=1)
    return lines[0]


def _read_aae(path: Path, mapping: dict) -> list[Task]:
    if path.is_dir():
        files = sorted(path.glob("essay*.txt"))
        if not files:
            raise InputError("no essayNNN.txt files in the folder (the AAE corpus's brat folder)", path=str(path))
        items = [(file.stem, _essay_title(file)) for file in files]
    else:
        table = _table(path)
        column = _column(table, ("title", "prompt", "topic"), mapping, "prompt")
        if column is None:
            raise InputError("no 'title' column (--map prompt=COLUMN)", path=str(path), field="title")
        ids = _column(table, ("id", "essay_id", "essay"), mapping, "id")
        items = [(_raw_id(values.get(ids), path, row, ids) if ids else f"essay{row:03d}",
                  _text(values.get(column), path, row, column)) for row, values in table.rows]
    return [Task(id=task_id, title=title, benchmark="aae",
                 prompt=(f"Argumentative writing. Write a short argumentative essay that takes a clear "
                         f"position on this topic and defends it with reasons: {title}"))
            for task_id, (_, title) in zip(unique_ids("aae", [i for i, _ in items]), items)]


def _read_macgyver(path: Path, mapping: dict) -> list[Task]:
    table = _table(path)
    column = _column(table, ("problem", "question", "prompt"), mapping, "prompt")
    if column is None:
        raise InputError("no 'Problem' column (--map prompt=COLUMN)", path=str(path), field="Problem")
    ids = _column(table, ("id", "problem_id", "index"), mapping, "id")
    items = [(_raw_id(values.get(ids), path, row, ids) if ids else str(row),
              _text(values.get(column), path, row, column)) for row, values in table.rows]
    return [Task(id=task_id, title=problem[:60], benchmark="macgyver",
                 prompt=(f"Creative problem solving. {problem} Propose one concrete solution that "
                         f"uses only what the situation provides."))
            for task_id, (_, problem) in zip(unique_ids("macgyver", [i for i, _ in items]), items)]


def _read_arena_hard_creative(path: Path, mapping: dict) -> list[Task]:
    table = _table(path)
    category = _column(table, ("category",), mapping, "category")
    ids = _column(table, ("uid", "question_id", "id"), mapping, "id")
    prompt = _column(table, ("prompt",), mapping, "prompt")
    turns = "turns" if "turns" in table.columns else None
    if ids is None:
        raise InputError("no 'uid' column (--map id=COLUMN)", path=str(path), field="uid")
    if prompt is None and turns is None:
        raise InputError("no 'prompt' (or 'turns') column (--map prompt=COLUMN)", path=str(path), field="prompt")
    items = []
    for row, values in table.rows:
        if category is not None:
            label = str(values.get(category)).lower().replace("-", "_").replace(" ", "_")
            if "creative_writing" not in label:
                continue
        if prompt is not None:
            text = values.get(prompt)
        else:
            value = values.get(turns)
            if hasattr(value, "tolist"):  # a Parquet list column
                value = value.tolist()
            text = value[0].get("content") if isinstance(value, list) and value and isinstance(value[0], dict) else None
        items.append((_raw_id(values.get(ids), path, row, ids), _text(text, path, row, prompt or "turns")))
    if not items:
        raise InputError("no creative-writing rows (category 'creative_writing')", path=str(path),
                         field=category or "category")
    return [Task(id=task_id, title=text[:60], benchmark="arena_hard_creative", prompt=text)
            for task_id, (_, text) in zip(unique_ids("arena", [i for i, _ in items]), items)]


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
              "https://github.com/allenai/MacGyver (data/MacGyver/problem_solution_pair.xlsx)",
              "Apache-2.0 (repository LICENSE; shipped in engine/tasks/benchmark_data/macgyver)",
              ("uses only the items and conditions the problem allows", "physical feasibility",
               "solves the stated problem", "unconventional use of objects", "clarity of the steps"),
              _read_macgyver),
    Benchmark("arena_hard_creative", "Arena-Hard v2.0, creative-writing subset",
              "https://github.com/lmarena/arena-hard-auto (data/arena-hard-v2.0/question.jsonl)",
              "Apache-2.0 (repository LICENSE; shipped in engine/tasks/benchmark_data/arena_hard_creative)",
              ("follows every instruction of the prompt", "originality", "craft: style, voice, imagery",
               "coherence and structure", "emotional or intellectual impact"), _read_arena_hard_creative),
)}


assert tuple(BENCHMARKS) == BENCHMARK_NAMES  # the names a tasks file may give (engine.tasks)


def load_benchmark(name: str, path: str | Path | None = None, *, mapping: dict[str, str] | None = None,
                   limit: int | None = None) -> list[Task]:
    """The benchmark's tasks from the user's copy at ``path``, or from the shipped copy when
    ``path`` is None (MacGyver, Arena-Hard; first ``limit`` of them if given)."""
    if name not in BENCHMARKS:
        raise InputError(f"unknown benchmark {name!r}; choose one of: {', '.join(BENCHMARKS)}",
                         field="benchmark")
    from engine.storage.records import explain_row

    path = shipped_path(name) if path is None else Path(path)
    try:
        tasks = BENCHMARKS[name].reader(path, dict(mapping or {}))
    except InputError as error:
        if error.row is not None and error.path and Path(error.path).suffix.lower() in EXCEL_SUFFIXES:
            raise InputError(f"{error.reason} ({excel_row_note(Path(error.path))})", path=error.path,
                             row=error.row, field=error.field) from None
        raise explain_row(error) from None  # says how its rows are counted
    seen: dict[str, int] = {}
    for position, task in enumerate(tasks, start=1):
        if task.id in seen:  # the same id written twice in the file: not a collision of names
            raise InputError(f"items {seen[task.id]} and {position} have the same id {task.id!r}",
                             path=str(path), field="id")
        seen[task.id] = position
    return tasks[:limit] if limit else tasks


def rubric_for(task: Task | None) -> tuple[str, ...]:
    """The judge's rubric criteria for a task: its benchmark's, else the general one."""
    if task is not None and isinstance(task.benchmark, str) and task.benchmark in BENCHMARKS:
        return BENCHMARKS[task.benchmark].rubric
    return GENERAL_RUBRIC
