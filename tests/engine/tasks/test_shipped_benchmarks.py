"""The two shipped benchmarks of paper B (section 6): MacGyver (Excel) and Arena-Hard v2.0
creative writing (JSON lines). Counts are checked against the source files read here with
other readers (pandas.read_excel for the workbook, the json module for the lines), the files
against the SHA-256 their README records, ids across loads, the ``--dry-run`` plan without a
file, and the Excel reader's errors (file, sheet, row, column)."""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from engine.errors import InputError
from engine.runs.grid import load_grid, plan
from engine.tasks.benchmark_tasks import BENCHMARKS, SHIPPED_DIR, load_benchmark, shipped_path
from tests.support.cli_run import cli, refused

REPO = Path(__file__).resolve().parents[3]
MACGYVER = SHIPPED_DIR / "macgyver" / "problem_solution_pair.xlsx"
ARENA = SHIPPED_DIR / "arena_hard_creative" / "question.jsonl"
GRID = REPO / "cached_runs" / "grids" / "local_smollm2_paper_b_benchmarks.yaml"


def _readme_sha(folder: Path) -> str:
    match = re.search(r"file SHA-256 \| `([0-9a-f]{64})`", (folder / "README.md").read_text())
    assert match, "the README records the file's SHA-256"
    return match.group(1)


@pytest.mark.parametrize("data", [MACGYVER, ARENA])
def test_shipped_files_match_their_recorded_sha256_and_carry_the_apache_licence(data):
    assert hashlib.sha256(data.read_bytes()).hexdigest() == _readme_sha(data.parent)
    licence = (data.parent / "LICENSE").read_text()
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence


def test_arena_hard_creative_is_the_250_creative_writing_lines_of_the_file():
    lines = [json.loads(line) for line in ARENA.read_text(encoding="utf-8").split("\n") if line.strip()]
    assert len(lines) == 750  # the published v2.0 question file
    creative = [line["uid"] for line in lines if line["category"] == "creative_writing"]
    assert len(creative) == 250
    tasks = load_benchmark("arena_hard_creative")  # no path: the shipped copy
    assert [t.id for t in tasks] == [f"arena-{uid}" for uid in creative]
    assert {t.benchmark for t in tasks} == {"arena_hard_creative"}
    first = next(line for line in lines if line["category"] == "creative_writing")
    assert tasks[0].prompt == " ".join(first["prompt"].split())


def test_macgyver_is_one_task_per_problem_row_of_the_workbook():
    frame = pd.read_excel(MACGYVER, sheet_name=0, dtype=object)  # a second reader of the same file
    frame = frame.dropna(how="all")
    assert list(frame.columns[:2]) == ["ID", "Problem"]
    assert len(frame) == 1683 and frame["Problem"].notna().all()
    tasks = load_benchmark("macgyver")
    assert len(tasks) == len(frame)
    assert [t.id for t in tasks] == [f"macgyver-{i}" for i in frame["ID"].astype(str)]
    assert tasks[0].prompt.startswith("Creative problem solving. " + " ".join(frame["Problem"].iloc[0].split()))


@pytest.mark.parametrize("name", ["macgyver", "arena_hard_creative"])
def test_ids_and_prompts_are_the_same_on_every_load(name):
    first, second = load_benchmark(name), load_benchmark(name)
    assert [(t.id, t.prompt_sha256) for t in first] == [(t.id, t.prompt_sha256) for t in second]
    assert len({t.id for t in first}) == len(first)


def test_the_shipped_copy_equals_the_same_file_given_as_the_users_copy(tmp_path):
    mine = tmp_path / "mine.jsonl"
    mine.write_bytes(ARENA.read_bytes())
    assert [t.id for t in load_benchmark("arena_hard_creative", mine)] == \
        [t.id for t in load_benchmark("arena_hard_creative")]


@pytest.mark.parametrize("name, sessions", [("arena_hard_creative", 250), ("macgyver", 1683)])
def test_dry_run_without_a_file_plans_one_session_per_item(name, sessions):
    outcome = cli(["run", "--benchmark", name, "--method", "direct", "--dry-run"])
    assert outcome.code == 0, outcome.err
    assert re.search(rf"^{sessions} sessions, at most {sessions} chat calls", outcome.err, re.M), outcome.err


def test_benchmark_file_still_reads_the_users_copy(tmp_path):
    mine = tmp_path / "three.jsonl"
    mine.write_text("".join(json.dumps({"uid": f"u{i}", "category": "creative_writing", "prompt": f"Write {i}."}) + "\n"
                            for i in range(3)))
    outcome = cli(["run", "--benchmark", "arena_hard_creative", "--benchmark-file", mine, "--method", "direct",
                   "--dry-run"])
    assert outcome.code == 0 and re.search(r"^3 sessions", outcome.err, re.M), outcome.err


def test_an_unshipped_benchmark_without_a_file_is_refused_naming_the_option():
    refused(cli(["run", "--benchmark", "liveideabench", "--method", "direct", "--dry-run"]),
            "not shipped", "--benchmark-file")
    with pytest.raises(InputError, match="not shipped"):
        shipped_path("aae")


def test_a_real_run_still_needs_out():
    refused(cli(["run", "--benchmark", "macgyver", "--method", "direct", "--benchmark-limit", "1"]), "--out")


def _workbook(path: Path, rows: list[list], title: str = "Problems") -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = title
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def test_excel_empty_problem_cell_names_file_sheet_row_and_column(tmp_path):
    path = _workbook(tmp_path / "mine.xlsx", [["ID", "Problem"], [1, "Fix a chair with string."], [2, None],
                                              [3, "Light a fire with ice."]])
    with pytest.raises(InputError) as caught:
        load_benchmark("macgyver", path)
    error = caught.value
    assert (error.path, error.row, error.field) == (str(path), 2, "Problem"), str(error)
    assert "sheet 'Problems'" in str(error) and "spreadsheet row N+1" in str(error)


def test_excel_without_a_problem_column_is_refused(tmp_path):
    path = _workbook(tmp_path / "mine.xlsx", [["ID", "Question text"], [1, "x"]])
    with pytest.raises(InputError, match="no 'Problem' column") as caught:
        load_benchmark("macgyver", path)
    assert caught.value.path == str(path)


def test_excel_blank_rows_are_skipped_and_rows_keep_their_numbers(tmp_path):
    path = _workbook(tmp_path / "mine.xlsx", [["ID", "Problem"], [10, "Open a jar."], [None, None],
                                              [11, "Dry socks."], ["", "  "], [12, 7]])
    with pytest.raises(InputError) as caught:  # the number 7 is not a problem text: data row 5
        load_benchmark("macgyver", path)
    assert caught.value.row == 5
    path = _workbook(tmp_path / "ok.xlsx", [["ID", "Problem"], [10, "Open a jar."], [None, None], [11, "Dry socks."]])
    assert [t.id for t in load_benchmark("macgyver", path)] == ["macgyver-10", "macgyver-11"]


def test_a_file_that_is_not_a_workbook_is_refused(tmp_path):
    path = tmp_path / "fake.xlsx"
    path.write_text("ID,Problem\n1,x\n")
    with pytest.raises(InputError, match="not a readable Excel workbook"):
        load_benchmark("macgyver", path)


def test_shipped_benchmarks_say_their_licence():
    assert BENCHMARKS["macgyver"].licence.startswith("Apache-2.0")
    assert BENCHMARKS["arena_hard_creative"].licence.startswith("Apache-2.0")


def test_the_grid_runs_the_seeded_items_it_names_with_10_runs_per_method():
    grid = load_grid(GRID)
    specs = plan(grid)
    for spec, name in zip(grid.benchmark, ("macgyver", "arena_hard_creative")):
        ids = [t.id for t in load_benchmark(name)]
        assert spec.items == random.Random(2027).sample(ids, 2)  # the grid's comment: how they were drawn
    cells = pd.Series([(s.config.method, s.task.id) for s in specs]).value_counts()
    assert len(cells) == 3 * 4 and set(cells) == {10}  # 2 groups of 5 per method and item
    assert {s.task.benchmark for s in specs} == {"macgyver", "arena_hard_creative"}


def test_a_grid_item_that_is_not_in_the_benchmark_is_refused():
    with pytest.raises(InputError, match="no item 'macgyver-nope'") as caught:
        load_grid({"benchmark": [{"name": "macgyver", "items": ["macgyver-nope"]}],
                   "conditions": [{"method": "direct"}]})
    assert caught.value.field == "benchmark[0].items"
