"""Benchmark loaders on small hand-made files shaped like the public ones (tests/data/benchmarks),
tasks files with --map and explicit extra fields, and benchmark rubrics reaching the judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.tasks.benchmark_tasks import BENCHMARKS, GENERAL_RUBRIC, load_benchmark, rubric_for
from engine.errors import InputError
from engine.runs.grid import load_grid, plan
from engine.tasks import load_tasks_file

DATA = Path(__file__).resolve().parents[2] / "data" / "benchmarks"


def test_arena_hard_keeps_creative_writing_rows_with_uid_ids():
    tasks = load_benchmark("arena_hard_creative", DATA / "arena_hard_v2_sample.jsonl")
    assert [t.id for t in tasks] == ["arena-a1b2c3", "arena-g7h8i9"]
    assert tasks[0].prompt == "Write a sonnet about a lighthouse keeper who is afraid of the dark."
    assert tasks[0].benchmark == "arena_hard_creative"
    assert rubric_for(tasks[0]) == BENCHMARKS["arena_hard_creative"].rubric


def test_liveideabench_one_task_per_distinct_keyword():
    tasks = load_benchmark("liveideabench", DATA / "liveideabench_sample.csv")
    assert [t.title for t in tasks] == ["photosynthesis", "quantum dots"]
    assert [t.id for t in tasks] == ["lib-photosynthesis", "lib-quantum_dots"]
    assert '"quantum dots"' in tasks[1].prompt and "scientific idea" in tasks[1].prompt


def test_macgyver_and_aae():
    tasks = load_benchmark("macgyver", DATA / "macgyver_sample.csv")
    assert [t.id for t in tasks] == ["macgyver-17", "macgyver-18"]
    assert "tent pole snapped" in tasks[0].prompt
    essays = load_benchmark("aae", DATA / "aae_brat")
    assert [t.id for t in essays] == ["aae-essay001", "aae-essay002"]
    assert essays[1].title == "Is technology making people more isolated?"
    assert load_benchmark("aae", DATA / "aae_brat", limit=1)[0].id == "aae-essay001"


def test_benchmark_errors_name_file_and_field(tmp_path):
    with pytest.raises(InputError, match="unknown benchmark"):
        load_benchmark("nope", DATA)
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"question_id": "x", "category": "creative_writing", "prompt": ""}\n')
    with pytest.raises(InputError) as error:
        load_benchmark("arena_hard_creative", bad, mapping={"id": "question_id"})
    assert "q.jsonl" in str(error.value) and "prompt" in str(error.value) and "row 1" in str(error.value)
    with pytest.raises(InputError, match="Problem"):
        load_benchmark("macgyver", DATA / "liveideabench_sample.csv")


def test_tasks_file_map_and_extra_fields():
    path = DATA / "tasks_with_uid.jsonl"
    with pytest.raises(InputError, match="id"):
        load_tasks_file(path)  # no 'id' field without --map
    with pytest.raises(InputError, match="unknown field"):
        load_tasks_file(path, mapping={"id": "uid"})  # extra fields are an error by default
    ignored = load_tasks_file(path, mapping={"id": "uid"}, extra="ignore")
    assert [t.id for t in ignored] == ["t-1", "t-2"] and ignored[0].meta == {}
    kept = load_tasks_file(path, mapping={"id": "uid"}, extra="keep")
    assert kept[1].meta == {"source": "hand-made", "difficulty": 3}
    with pytest.raises(InputError, match="unknown task field"):
        load_tasks_file(path, mapping={"uuid": "uid"})


def test_run_command_line_with_benchmark_and_map(tmp_path, capsys):
    from engine.cli import main

    code = main(["run", "--method", "homo_mad", "--benchmark", "arena_hard_creative", "--benchmark-file",
                 str(DATA / "arena_hard_v2_sample.jsonl"), "--replicates", "15", "--out", str(tmp_path),
                 "--dry-run"])
    assert code == 0
    # 2 creative-writing prompts x 15 runs x (5 agents x 3 turns + 1 judge pick)
    assert capsys.readouterr().err.startswith("30 sessions, at most 480 chat calls")
    code = main(["run", "--method", "direct", "--tasks-file", str(DATA / "tasks_with_uid.jsonl"), "--map",
                 "id=uid", "--extra-fields", "ignore", "--out", str(tmp_path / "t"), "--dry-run"])
    assert code == 0 and capsys.readouterr().err.startswith("2 sessions, at most 2 chat calls")
    assert main(["run", "--method", "direct", "--tasks-file", str(DATA / "tasks_with_uid.jsonl"), "--map",
                 "id", "--out", str(tmp_path), "--dry-run"]) == 2


def test_grid_with_benchmark_and_rubric_prompt():
    from engine import prompts

    grid = load_grid({"benchmark": {"name": "macgyver", "path": str(DATA / "macgyver_sample.csv")},
                      "conditions": [{"method": "direct", "replicates": 2}]})
    specs = plan(grid)
    assert [s.task.id for s in specs] == ["macgyver-17"] * 2 + ["macgyver-18"] * 2
    messages = prompts.judge_rubric(specs[0].task.prompt, "an answer", criteria=rubric_for(specs[0].task))
    assert "physical feasibility" in messages[-1]["content"]
    assert rubric_for(None) == GENERAL_RUBRIC
