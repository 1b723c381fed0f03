"""Every option is checked before anything is planned, ``--dry-run`` included: a value out of
range stops the command with exit 2 and one line naming the option, instead of being replaced
by a default (``--concurrency 0``), dropping work (``--per-round-limit -1``), recording every
score as missing (``--retries -1``) or reaching a model (``--idea-words abc``)."""

from __future__ import annotations

import json

import pytest

from engine.errors import InputError
from engine.runs.grid import load_grid
from engine.llm import ScriptedBackend
from engine.runs.runner import run_grid
from tests.support.cli_run import cli, refused

TASK = "plastic_waste"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("options") / "run"
    grid = {"name": "q", "model": "scripted", "tasks": [TASK],
            "conditions": [{"method": "homo_mad", "agents": 2, "rounds": 1, "replicates": 2},
                           {"method": "homo_mad", "agents": 2, "rounds": 1, "lenses": True, "replicates": 2}]}
    def reply(messages):
        return "Response 1" if "Answer only 'Response N'" in messages[-1]["content"] else "an idea"

    run_grid(grid, folder, backend=ScriptedBackend(responder=reply), progress=False, cache=False)
    return folder


@pytest.mark.parametrize("command, option, value", [
    ("quality", "--retries", "-1"), ("quality", "--retries", "21"), ("quality", "--retries", "two"),
    ("quality", "--concurrency", "0"), ("quality", "--concurrency", "-3"),
    ("quality", "--per-round-limit", "-1"), ("quality", "--per-round-limit", "0"),
    ("pairwise", "--retries", "-1"), ("pairwise", "--max-per-pair", "-1"), ("pairwise", "--max-per-pair", "0"),
    ("pairwise", "--concurrency", "0"), ("quality", "--base-url", ""), ("quality", "--base-url", " , "),
])
def test_judge_options_out_of_range_are_refused_even_on_a_dry_run(run_dir, command, option, value):
    extra = ["--per-round"] if option == "--per-round-limit" else []
    outcome = cli(["judge", command, run_dir, "--dry-run", *extra, option, value])
    refused(outcome, option)
    assert not (run_dir / "quality.jsonl").exists()


def test_judge_per_round_limit_without_per_round_is_refused(run_dir):
    refused(cli(["judge", "quality", run_dir, "--dry-run", "--per-round-limit", "2"]), "--per-round")


def test_judge_options_in_range_still_plan(run_dir):
    # 4 sessions: 4 final outputs, 5 raters each (the default panel); --retries 0: asked once, no retry
    outcome = cli(["judge", "quality", run_dir, "--dry-run", "--retries", "0", "--concurrency", "1"])
    assert outcome.code == 0, outcome.err
    assert "20 rubric calls (4 items x 5 raters; 0 already judged), each retried at most 0 times" in outcome.err
    # matched pairs: 2 replicates of 2 conditions -> 2 comparisons, each asked in both orders
    outcome = cli(["judge", "pairwise", run_dir, "--dry-run", "--max-per-pair", "1"])
    assert outcome.code == 0 and "2 pairwise calls (1 comparisons x 2 orders" in outcome.err


def test_the_python_api_refuses_the_same_values(run_dir):
    from engine.judging import quality
    from engine.corpus import Corpus
    from engine.judging.judge import rubric_scores

    corpus = Corpus.from_jsonl(run_dir / "corpus.jsonl")
    with pytest.raises(InputError, match="per_round_limit"):
        quality.rubric_items(corpus, per_round=True, per_round_limit=0)
    with pytest.raises(InputError, match="max_per_pair"):
        quality.pairwise_plan(list(corpus), max_per_pair=-1)
    with pytest.raises(InputError, match="retries"):
        rubric_scores(["an idea"], TASK, ScriptedBackend(["Score: 5"]), retries=-1)


RUN = ["run", "--method", "homo_mad", "--task", TASK, "--model", "local", "--dry-run"]


@pytest.mark.parametrize("option, value", [
    ("--max-requests", "-5"), ("--max-requests", "0"), ("--concurrency", "0"), ("--concurrency", "-1"),
    ("--seed", "-1"), ("--seed", "9" * 30), ("--timeout", "inf"), ("--timeout", "nan"), ("--timeout", "0"),
    ("--idea-words", "abc"), ("--idea-words", "100-80"), ("--idea-words", "0"), ("--idea-words", "80-100 words"),
    ("--temperature", "nan"), ("--benchmark-limit", "0"), ("--base-url", ""), ("--judge-base-url", ""),
    ("--embed-base-url", ""), ("--base-url", "localhost:8000/v1"), ("--agents", "1e3"),
])
def test_run_options_out_of_range_are_refused_on_a_dry_run(tmp_path, option, value):
    name = option.lstrip("-").replace("-", "_")
    outcome = cli([*RUN, "--out", tmp_path / "out", option, value])
    line = refused(outcome)
    assert option in line or name in line, line
    assert not (tmp_path / "out").exists()


def test_benchmark_limit_without_a_benchmark_is_refused(tmp_path):
    refused(cli([*RUN, "--out", tmp_path / "out", "--benchmark-limit", "3"]), "--benchmark")


def test_max_requests_is_checked_by_run_grid_too(tmp_path):
    grid = {"model": "scripted", "tasks": [TASK], "conditions": [{"method": "direct"}]}
    with pytest.raises(InputError, match="max_requests"):
        run_grid(grid, tmp_path / "out", dry_run=True, max_requests=-5)


def test_pilot_seed_and_url_are_checked(tmp_path):
    refused(cli(["pilot", "--model", "local", "--out", tmp_path / "p", "--dry-run", "--seed", "-1"]), "--seed")
    refused(cli(["pilot", "--model", "m", "--out", tmp_path / "p", "--dry-run", "--base-url", ""]), "--base-url")


GRID = "name: g\nmodel: local\n{body}\nconditions:\n  - {{method: homo_mad, replicates: 1, tasks: [plastic_waste]}}\n"


@pytest.mark.parametrize("body, field", [
    ("prices: {local: [.nan, 1.0]}", "prices"), ("prices: {local: [-1, 1.0]}", "prices"),
    ("prices: {local: [.inf, 1.0]}", "prices"), ("request_timeout: .inf", "request_timeout"),
    ("request_timeout: .nan", "request_timeout"), ("request_timeout: 1e9", "request_timeout"),
    ("seed: -5", "seed"), ("seed: '7'", "seed"), ("seed: 1.5", "seed"),
    ("judge: {model: local, temperature: .nan}", "judge.temperature"),
    ("judge: {model: local, temperature: -1}", "judge.temperature"),
    ("judge: {model: local, max_tokens: 100000000000}", "judge.max_tokens"),
    ("judge: {model: local, samples: yes}", "judge.samples"),
    ("tasks_extra: bogus", "tasks_extra"),
    ("defaults: {idea_words: abc}", "idea_words"), ("defaults: {rounds: yes}", "rounds"),
    ("defaults: {agents: '5'}", "agents"), ("defaults: {temperature: .nan}", "temperature"),
    ("defaults: {k: 1000}", "k"), ("defaults: {lenses: 'no'}", "lenses"),
])
def test_grid_keys_out_of_range_are_refused(tmp_path, body, field):
    path = tmp_path / "grid.yaml"
    path.write_text(GRID.format(body=body))
    with pytest.raises(InputError) as caught:
        load_grid(path)
    assert caught.value.path == str(path) and field in (caught.value.field or ""), str(caught.value)
    line = refused(cli(["run", "--grid", path, "--out", tmp_path / "out", "--dry-run"]), str(path))
    assert field.split(".")[-1] in line


def test_grid_values_in_range_are_kept_as_written(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text(GRID.format(body="prices: {local: [0, 2.5]}\nrequest_timeout: 30\nseed: 7\n"
                                     "defaults: {idea_words: '40', rounds: 1, temperature: 0.5}"))
    grid = load_grid(path)
    assert grid.prices["local"] == (0.0, 2.5) and grid.endpoint.timeout == 30.0 and grid.seed == 7
    from engine.runs.grid import condition_config

    options = condition_config(grid, 0)
    assert (options.idea_words, options.rounds, options.temperature) == ("40", 1, 0.5)


def test_argparse_errors_are_one_line(tmp_path):
    outcome = cli(["run", "--method", "nope", "--out", tmp_path])
    line = refused(outcome, "--method", "invalid choice")
    assert "usage:" not in outcome.err
    assert json.dumps(line)  # one line of text
