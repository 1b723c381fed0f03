"""Benchmark loaders: task ids unique and stable (a short hash of the item's own text where the
readable ids would collide), files that are not what they seem refused in one line, rows
counted as everywhere else (a JSON-lines error on line 1 says row 1), and a tasks file whose
``benchmark`` field is not a benchmark's name refused before the judge reads it."""

from __future__ import annotations

import hashlib
import json

import pytest

from engine.tasks.benchmark_tasks import load_benchmark, rubric_for
from engine.errors import InputError
from engine.llm import ScriptedBackend
from engine.runs.runner import run_grid
from engine.tasks import Task
from tests.support.cli_run import cli, refused


def short(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def test_colliding_readable_ids_get_a_hash_of_their_own_text(tmp_path):
    path = tmp_path / "lib.csv"
    path.write_text("keywords\nC++\nC#\n量子\n光合作用\na b\na_b\nquantum dots\nphotosynthesis\n", encoding="utf-8")
    ids = [t.id for t in load_benchmark("liveideabench", path)]
    assert ids == [f"lib-C-{short('C++')}", f"lib-C-{short('C#')}", f"lib-item-{short('量子')}",
                   f"lib-item-{short('光合作用')}", f"lib-a_b-{short('a b')}", "lib-a_b",
                   "lib-quantum_dots", "lib-photosynthesis"]  # no collision: readable ids as before
    # stable: the same item keeps its id when the file is cut (--benchmark-limit) or reordered
    assert [t.id for t in load_benchmark("liveideabench", path, limit=2)] == ids[:2]
    path.write_text("keywords\nphotosynthesis\nC#\nC++\n")
    assert [t.id for t in load_benchmark("liveideabench", path)] == ["lib-photosynthesis", ids[1], ids[0]]


def test_unique_ids_by_hand():
    from engine.tasks.benchmark_tasks import unique_ids

    assert unique_ids("x", ["a", "b"]) == ["x-a", "x-b"]
    assert unique_ids("x", ["a/b", "a?b", "a_b"]) == [f"x-a_b-{short('a/b')}", f"x-a_b-{short('a?b')}", "x-a_b"]
    long_a, long_b = "k" * 70 + "1", "k" * 70 + "2"  # readable ids cut at 64 characters collide
    assert unique_ids("x", [long_a, long_b]) == [f"x-{'k' * 48}-{short(long_a)}", f"x-{'k' * 48}-{short(long_b)}"]


def test_an_id_written_twice_in_the_file_is_refused(tmp_path):
    path = tmp_path / "mac.csv"
    path.write_text("id,Problem\n7,Fix a chair with string.\n7,Light a fire with ice.\n")
    with pytest.raises(InputError, match="items 1 and 2 have the same id 'macgyver-7'"):
        load_benchmark("macgyver", path)


@pytest.mark.parametrize("name, content, row, field", [
    ("liveideabench", '{"keywords": ""}\n{"keywords": "x"}\n', 1, "keywords"),
    ("macgyver", '{"Problem": "p1", "id": 1}\n\n{"Problem": "p2", "id": {"a": 1}}\n', 3, "id"),
    ("arena_hard_creative", '{"uid": "u1", "category": "creative_writing", "prompt": 5}\n', 1, "prompt"),
])
def test_json_lines_errors_count_line_one_as_row_one(tmp_path, name, content, row, field):
    path = tmp_path / "items.jsonl"
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        load_benchmark(name, path)
    assert (caught.value.row, caught.value.field) == (row, field), str(caught.value)
    assert "row N = line N of the file" in str(caught.value)


def test_csv_errors_count_data_rows_under_the_header(tmp_path):
    path = tmp_path / "lib.csv"
    path.write_text("keywords,model\nphotosynthesis,m1\n,m2\n")
    with pytest.raises(InputError) as caught:
        load_benchmark("liveideabench", path)
    assert caught.value.row == 2 and "N-th data row under the header" in str(caught.value)


def test_files_that_are_not_what_they_seem_are_refused_in_one_line(tmp_path):
    (tmp_path / "x.csv").mkdir()
    refused(cli(["run", "--method", "direct", "--benchmark", "macgyver", "--benchmark-file", tmp_path / "x.csv",
                 "--out", tmp_path / "o", "--dry-run"]), "x.csv", "is a folder")
    corpus = tmp_path / "aae"
    (corpus / "essay001.txt").mkdir(parents=True)
    refused(cli(["run", "--method", "direct", "--benchmark", "aae", "--benchmark-file", corpus,
                 "--out", tmp_path / "o", "--dry-run"]), "essay001.txt", "is a folder")
    latin = tmp_path / "latin"
    latin.mkdir()
    (latin / "essay001.txt").write_bytes("Café culture helps cities\n\nBody.".encode("latin-1"))
    refused(cli(["run", "--method", "direct", "--benchmark", "aae", "--benchmark-file", latin,
                 "--out", tmp_path / "o", "--dry-run"]), "essay001.txt", "row 1", "not UTF-8", "0xe9")


@pytest.mark.parametrize("value", [{"name": "aae"}, ["aae"], 3, "aee"])
def test_a_benchmark_field_that_is_not_a_benchmark_name_is_refused(tmp_path, value):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "t1", "prompt": "Write an essay on rain.", "benchmark": value}) + "\n")
    refused(cli(["run", "--method", "direct", "--tasks-file", tasks, "--out", tmp_path / "o", "--dry-run"]),
            str(tasks), "row 1", "benchmark")


def test_the_judge_of_a_run_whose_tasks_file_now_holds_a_dict_stops_in_one_line(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "t1", "prompt": "Write an essay on rain.", "benchmark": "aae"}) + "\n")
    grid = {"model": "scripted", "tasks_file": str(tasks), "conditions": [{"method": "direct", "replicates": 2}]}
    run_grid(grid, tmp_path / "run", backend=ScriptedBackend(["one essay", "another essay"]),
             progress=False, cache=False)
    tasks.write_text(json.dumps({"id": "t1", "prompt": "Write an essay on rain.", "benchmark": {"x": 1}}) + "\n")
    outcome = cli(["judge", "quality", tmp_path / "run", "--dry-run"])
    assert outcome.code in (0, 2) and "Traceback" not in outcome.err, outcome.err
    if outcome.code == 2:
        refused(outcome, "benchmark")
    assert rubric_for(Task("t1", "p", benchmark={"x": 1})) == rubric_for(None)  # never a crash
