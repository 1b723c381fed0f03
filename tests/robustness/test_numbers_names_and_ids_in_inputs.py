"""Grid numbers, model names, task ids and numbers in files, tried as an unfriendly user would.

Each case was taken before and is refused now, in one line naming the file, row and field
(exit 2 and nothing written where it goes through the CLI):

* whole numbers given as text or booleans (``reply_attempts: yes`` was 1 attempt, ``"3"`` was
  3; ``candidates: "2"``; ``judge.paraphrase_max_tokens: "100"``);
* model names that name no model: ``''`` (sent as the model; a judge ``{model: ''}`` without
  a server went to api.openai.com), ``'   '`` (sent as is), ``--judge-paraphrase ''`` (meant
  "no paraphrase"), a URL (that is the server);
* a tasks file id ``true`` (its sessions were filed under task ``True``);
* ``1_000`` and ``0_5`` in a ratings file or a transcript (Python's ``float`` reads them as
  1000 and 5).
"""

from __future__ import annotations

import pytest

from engine.errors import InputError
from engine.importers.ratings import read_ratings
from engine.storage.records import number_or_none
from engine.importers.transcripts import read_transcripts
from engine.runs.grid import load_grid
from engine.tasks import load_tasks_file
from tests.support.cli_run import cli, refused

TASK = "plastic_waste"


def _grid_file(tmp_path, text: str):
    path = tmp_path / "g.yaml"
    path.write_text(f"tasks: [{TASK}]\n{text}")
    return path


def _run_dry(tmp_path, path):
    return cli(["run", "--grid", path, "--out", tmp_path / "out", "--dry-run"])


@pytest.mark.parametrize("text, field", [
    ("conditions: [{method: instructed, reply_attempts: yes}]\n", "reply_attempts"),
    ("conditions: [{method: instructed, reply_attempts: '3'}]\n", "reply_attempts"),
    ("conditions: [{method: instructed, reply_attempts: true}]\n", "reply_attempts"),
    ("conditions: [{method: direct, candidates: '2'}]\n", "candidates"),
    ("conditions: [{method: direct, candidates: no}]\n", "candidates"),
    ("judge: {model: local, paraphrase: local, paraphrase_max_tokens: '100'}\n"
     "conditions: [{method: direct}]\n", "judge.paraphrase_max_tokens"),
])
def test_grid_whole_numbers_as_text_or_booleans_are_refused(tmp_path, text, field):
    path = _grid_file(tmp_path, text)
    line = refused(_run_dry(tmp_path, path), str(path), field, "whole number")
    assert not (tmp_path / "out").exists(), line


@pytest.mark.parametrize("text, field", [
    ("request_timeout: '30'\nconditions: [{method: direct}]\n", "request_timeout"),
    ("request_timeout: yes\nconditions: [{method: direct}]\n", "request_timeout"),
    ("judge: {model: local, temperature: '0.5'}\nconditions: [{method: direct}]\n", "judge.temperature"),
    ("defaults: {temperature: yes}\nconditions: [{method: direct}]\n", "conditions[0].temperature"),
    ("conditions: [{method: direct, temperature: '0.7'}]\n", "conditions[0].temperature"),
    ("prices: {m: ['0.5', 1.5]}\nconditions: [{method: direct}]\n", "prices.m.0"),
    ("conditions: [{method: steered, steering: {coherence_max: 'high'}}]\n", "conditions[0].steering"),
])
def test_grid_numbers_as_text_or_booleans_are_refused(tmp_path, text, field):
    """The same for numbers that need not be whole: ``yes`` was 1.0, ``'0.7'`` was 0.7."""
    path = _grid_file(tmp_path, text)
    refused(_run_dry(tmp_path, path), str(path), field, "expected a number")
    assert not (tmp_path / "out").exists()


def test_grid_whole_numbers_as_numbers_still_hold(tmp_path):
    """The same keys as numbers (and a whole float) are taken, with the values given."""
    grid = load_grid({"tasks": [TASK], "judge": {"paraphrase": "local", "paraphrase_max_tokens": 100.0},
                      "conditions": [{"method": "instructed", "reply_attempts": 3},
                                     {"method": "direct", "candidates": 2}]})
    assert grid.judge.paraphrase_max_tokens == 100
    assert [c.model_extra for c in grid.conditions] == [{"reply_attempts": 3}, {"candidates": 2}]


@pytest.mark.parametrize("text, field, words", [
    ("model: ''\n", "model", "empty model name"),
    ("model: '   '\n", "model", "empty model name"),
    ("model: ' gpt-4.1 '\n", "model", "spaces around"),
    ("model: 'https://api.openai.com/v1'\n", "model", "base_url"),
    ("judge: {model: ''}\n", "judge.model", "empty model name"),
    ("judge: {model: 'http://127.0.0.1:8000/v1'}\n", "judge.model", "base_url"),
    ("judge: {model: local, paraphrase: ''}\n", "judge.paraphrase", "empty model name"),
    ("judge: {model: local, paraphrase: '   '}\n", "judge.paraphrase", "empty model name"),
    ("judge: {model: local, models: [local, ' ']}\n", "judge.models.1", "empty model name"),
    ("embed_base_url: 'http://127.0.0.1:9/v1'\nembed_model: ''\n", "embed_model", "empty model name"),
])
def test_grid_model_names_that_name_no_model_are_refused(tmp_path, text, field, words):
    path = _grid_file(tmp_path, text + ("conditions: [{method: direct}]\n" if "conditions" not in text else ""))
    refused(_run_dry(tmp_path, path), str(path), f"'{field}'", words)
    assert not (tmp_path / "out").exists()


def test_a_condition_model_that_is_blank_is_refused(tmp_path):
    path = _grid_file(tmp_path, "conditions: [{method: hetero_mad, agents: 2, models: [local, '  ']}]\n")
    refused(_run_dry(tmp_path, path), str(path), "conditions[0]", "empty model name")


@pytest.mark.parametrize("options, option, words", [
    (["--judge-model", "local", "--judge-paraphrase", ""], "judge.paraphrase", "empty model name"),
    (["--judge-model", "local", "--judge-paraphrase", "   "], "judge.paraphrase", "empty model name"),
    (["--judge-model", ""], "judge.model", "empty model name"),   # was: no judge at all
    (["--model", ""], "model", "empty model name"),                # was: the local model
    (["--model", "http://127.0.0.1:8000/v1"], "model", "--base-url"),
    (["--judge-model", "local", "--judge-models", " , "], "judge_models", "no model name"),
])
def test_command_line_model_names_that_name_no_model_are_refused(tmp_path, options, option, words):
    outcome = cli(["run", "--method", "direct", "--task", TASK, *options, "--out", tmp_path / "out",
                   "--dry-run"])
    refused(outcome, option, words)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value, shown", [("true", "bool True"), ("false", "bool False"), ("1.5", "float 1.5"),
                                          ("[1]", "list [1]"), ("{}", "dict {}")])
def test_a_tasks_file_id_that_is_not_text_is_refused(tmp_path, value, shown):
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "ok", "prompt": "A first task."}\n'
                    f'{{"id": {value}, "prompt": "Propose a way to reuse glass."}}\n')
    with pytest.raises(InputError) as caught:
        load_tasks_file(path)
    assert (caught.value.path, caught.value.row, caught.value.field) == (str(path), 2, "id")
    assert shown in caught.value.reason


def test_a_tasks_file_whole_number_id_is_still_its_text(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": 7, "prompt": "Propose a way to reuse glass."}\n')
    assert [t.id for t in load_tasks_file(path)] == ["7"]


def test_a_run_with_a_boolean_task_id_is_refused_and_writes_nothing(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": true, "prompt": "Propose a way to reuse glass."}\n')
    outcome = cli(["run", "--method", "direct", "--tasks-file", tasks, "--out", tmp_path / "out", "--dry-run"])
    refused(outcome, str(tasks), "row 1", "'id'", "bool")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("text, number", [
    ("1_000", None), ("0_5", None), ("1__0", None), ("_1", None), ("١٢", None), ("0x10", None),
    ("1000", 1000.0), (" 0.5 ", 0.5), ("-2.", -2.0), (".5", 0.5), ("1e3", 1000.0), ("+3E-1", 0.3),
])
def test_numbers_in_files_are_plain_numbers_only(text, number):
    assert number_or_none(text) == number


@pytest.mark.parametrize("cell", ["0_1", "1_0", "0_5"])
def test_a_ratings_file_number_with_underscores_is_refused(tmp_path, cell):
    """Before: ``float("0_1")`` is 1.0, within the scale, and was taken (``0_5``, 5.0, was
    refused only as out of range); now each is not a number."""
    path = tmp_path / "ideas_with_ratings_clean.csv"
    path.write_text("file_id,question_id,avg_novelty_rating,avg_usefulness_rating,avg_creativity_rating\n"
                    "f1,plastic_waste,0.5,0.5,0.25\n"
                    f"f2,plastic_waste,{cell},0.5,0.25\n")
    with pytest.raises(InputError) as caught:
        read_ratings(path)
    # row 1 is the first under the header
    assert (caught.value.path, caught.value.row, caught.value.field) == (str(path), 2, "avg_novelty_rating")
    assert caught.value.reason.startswith(f"expected a number, got {cell!r}")


def test_a_ratings_file_with_plain_numbers_reads_them(tmp_path):
    path = tmp_path / "ideas_with_ratings_clean.csv"
    path.write_text("file_id,question_id,avg_novelty_rating,avg_usefulness_rating,avg_creativity_rating\n"
                    "f1,plastic_waste,0.5,.25,1e-1\n")
    row = read_ratings(path).iloc[0]
    assert (row["novelty"], row["usefulness"], row["creativity"]) == (0.5, 0.25, 0.1)


@pytest.mark.parametrize("column, cell", [("novelty", "0_1"), ("creativity", "0_5"), ("latency_s", "1_000")])
def test_a_transcript_number_with_underscores_is_refused(tmp_path, column, cell):
    path = tmp_path / "t.csv"
    path.write_text(f"conversation_id,turn,speaker,text,{column}\n"
                    f"c1,1,A,First idea,0.5\n"
                    f"c1,2,B,Second idea,{cell}\n")
    with pytest.raises(InputError) as caught:
        read_transcripts(path)
    assert (caught.value.path, caught.value.row, caught.value.field) == (str(path), 2, column)
    assert caught.value.reason.startswith(f"expected a number, got {cell!r}")
