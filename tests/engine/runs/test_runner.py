"""The runner: pilot callbacks, grid resume without duplicates, failures retried, crash safety."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.loopback_server import LoopbackServer, shaped_reply
from engine.corpus import Corpus
from engine.errors import InputError
from engine.runs.grid import load_grid, plan
from engine.llm import BackendError, ScriptedBackend
from engine.runs.runner import run_grid, run_pilot

ROOT = Path(__file__).resolve().parents[3]
KEY = "sk-runner-SECRET-ab"  # fake


def echo_backend(**kw):
    return ScriptedBackend(responder=lambda m: shaped_reply(m, None), **kw)


def test_pilot_streams_turns_and_sessions_and_judges():
    seen_turns, seen_sessions = [], []
    def rate_batch(messages):  # the final ideas are shown together (consensual assessment)
        shown = re.findall(r"^Idea (\d+): (.*)$", messages[-1]["content"], re.M)
        return "\n".join(f"Idea {n}: Novelty 7, Usefulness 3" if "gold" in text
                         else f"Idea {n}: Novelty 2, Usefulness 5" for n, text in shown)

    judge = ScriptedBackend(responder=rate_batch)
    answers = iter(["gold idea a", "tin idea b", "Response 1", "tin idea c", "tin idea d", "Response 2"])
    backend = ScriptedBackend(responder=lambda m: next(answers))
    corpus = run_pilot("voting", "plastic_waste", 2, None, 2, backend, concurrency=1, judge_backend=judge,
                       on_turn=lambda cid, turn: seen_turns.append((cid, turn.speaker)),
                       on_session=lambda c: seen_sessions.append(c.conversation_id))
    ids = [c.conversation_id for c in corpus]
    assert len(ids) == 2 and ids[0].endswith("-r0") and seen_sessions == ids
    assert [s for _, s in seen_turns] == ["Agent 1", "Agent 2", "judge"] * 2
    first, second = corpus.conversations
    assert first.final_idea == "gold idea a" and second.final_idea == "tin idea d"
    # raw (7,3) and (2,5): scaled novelty 1, 0; usefulness 0, 1; creativity 0, 0
    assert first.outcomes["novelty"] == 1.0 and second.outcomes["usefulness"] == 1.0
    assert first.outcomes["creativity"] == 0.0 and first.outcomes["rater"] == "llm:scripted"
    # paper A's panel by default: five samples of the judge, one batch each
    assert len(judge.history) == 5 and corpus.meta["judge"]["raters"] == [f"scripted#{r}" for r in range(1, 6)]


def test_pilot_failure_keeps_turns_and_hides_key():
    backend = ScriptedBackend(["idea one", BackendError(f"HTTP 401 bad key {KEY}")])
    from engine.llm.secrets import remember_secret

    remember_secret(KEY)
    corpus = run_pilot("voting", "plastic_waste", 2, None, 1, backend, concurrency=1)
    c = corpus.conversations[0]
    assert c.status == "failed" and len(c.turns) == 1 and KEY not in c.error and "401" in c.error


GRID = {"name": "t", "model": "scripted", "seed": 3, "concurrency": 3, "tasks": ["plastic_waste", "sorry_pandemic"],
        "defaults": {"max_tokens": 50},
        "conditions": [{"method": "homo_mad", "agents": 3, "rounds": 1, "replicates": 2},
                       {"method": "instructed", "agents": 2, "turn_limit": 3, "replicates": 1,
                        "ideas_per_agent": 2, "tasks": ["plastic_waste"]}]}


def test_grid_plan_ids_are_stable_and_distinct():
    specs = plan(load_grid(GRID))
    assert len(specs) == 2 * 2 + 1
    assert [s.conversation_id for s in specs] == [s.conversation_id for s in plan(load_grid(GRID))]
    assert len({s.seed for s in specs}) == 5


def test_grid_runs_resumes_without_duplicates_and_zero_calls(tmp_path):
    backend = echo_backend()
    result = run_grid(GRID, tmp_path, backend=backend, progress=False, cache=False)
    assert (result.planned, result.ok, result.failed) == (5, 5, 0)
    calls = len(backend.history)
    assert result.usage["calls"] == calls
    homo = [c for c in Corpus.from_jsonl(tmp_path / "corpus.jsonl") if c.protocol == "homo_mad"]
    assert [c.meta["calls"] for c in homo] == [3 * (1 + 1) + 1] * 4
    corpus = Corpus.from_jsonl(tmp_path / "corpus.jsonl")
    assert len(corpus) == 5 and all(c.status == "ok" for c in corpus)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["sessions"]["ok"] == 5 and manifest["status"] == "complete"
    assert manifest["usage_total"]["calls"] == calls

    again = echo_backend()
    second = run_grid(GRID, tmp_path, backend=again, progress=False, cache=False)
    assert again.history == [] and second.skipped == 5 and second.ok == 0
    assert len(Corpus.from_jsonl(tmp_path / "corpus.jsonl")) == 5


def test_failed_sessions_are_recorded_then_retried(tmp_path):
    def flaky(messages):
        if "sorry" in messages[0]["content"]:
            raise BackendError("HTTP 400 bad request")
        return shaped_reply(messages, None)

    grid = {**GRID, "conditions": [GRID["conditions"][0]]}
    result = run_grid(grid, tmp_path, backend=ScriptedBackend(responder=flaky), progress=False, cache=False)
    assert (result.ok, result.failed) == (2, 2)
    failed = [json.loads(line) for line in (tmp_path / "failed.jsonl").read_text().splitlines()]
    assert len(failed) == 2 and all("HTTP 400" in f["error"] for f in failed)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["status"] == "incomplete" and len(manifest["sessions"]["failed_ids"]) == 2

    result = run_grid(grid, tmp_path, backend=echo_backend(), progress=False, cache=False)
    assert (result.skipped, result.ok, result.failed) == (2, 2, 0)
    assert (tmp_path / "failed.jsonl").read_text() == ""
    assert len(Corpus.from_jsonl(tmp_path / "corpus.jsonl")) == 4


def test_partial_last_line_from_a_kill_is_dropped(tmp_path):
    grid = {**GRID, "conditions": [GRID["conditions"][0]]}
    run_grid(grid, tmp_path, backend=echo_backend(), progress=False, cache=False)
    path = tmp_path / "corpus.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # cut the last session
    backend = echo_backend()
    result = run_grid(grid, tmp_path, backend=backend, progress=False, cache=False)
    assert result.ok == 1 and result.skipped == 3
    corpus = Corpus.from_jsonl(path)
    assert len(corpus) == 4


def test_grid_judge_scales_within_task(tmp_path):
    def judge(messages):
        prompt = messages[-1]["content"]
        if "Score:" in prompt:
            return "Score: 6"
        return f"Novelty: {len(prompt) % 9 + 1}\nUsefulness: {len(prompt) % 7 + 1}"

    grid = {**GRID, "conditions": [GRID["conditions"][0]], "judge": {"model": "scripted", "mode": "alone"}}
    run_grid(grid, tmp_path, backend=echo_backend(), judge_backend=ScriptedBackend(responder=judge),
             progress=False, cache=False)
    corpus = Corpus.from_jsonl(tmp_path / "corpus.jsonl")
    for task in ("plastic_waste", "sorry_pandemic"):
        rated = [c.outcomes for c in corpus if c.task == task]
        raws = [o["novelty_raw"] for o in rated]
        lo, hi = min(raws), max(raws)
        for o in rated:
            expected = None if hi == lo else (o["novelty_raw"] - lo) / (hi - lo)
            assert o["novelty"] == expected and o["rubric_score"] == 6.0


def together_scores(text):
    """The scripted rater's verdict on 'plan N ...': 0 (irrelevant) when N % 18 == 16,
    else novelty N % 9 + 1 and usefulness N % 7 + 1."""
    n = int(re.search(r"plan (\d+)", text).group(1))
    return (0, 0) if n % 18 == 16 else (n % 9 + 1, n % 7 + 1)


def test_grid_judge_rates_the_ideas_of_a_task_together(tmp_path):
    judge_calls, counter = [], iter(range(1, 1000))

    def team(messages):  # every answer is a new 'plan N'; the consensus picks Agent 1's answer
        return "Response 1" if "Answer only 'Response N'" in messages[-1]["content"] else \
            f"plan {next(counter)} with a deposit scheme"

    def judge(messages):
        prompt = messages[-1]["content"]
        if "Score:" in prompt:
            return "Score: 6"
        judge_calls.append(prompt)
        shown = re.findall(r"^Idea (\d+): (.*)$", prompt, re.M)
        return "\n".join("Idea {}: Novelty {}, Usefulness {}".format(n, *together_scores(t))
                         for n, t in shown)

    condition = {**GRID["conditions"][0], "replicates": 3}
    grid = {**GRID, "concurrency": 1, "conditions": [condition],
            "judge": {"model": "scripted", "samples": 2, "batch_size": 2}}
    assert run_grid(grid, tmp_path / "plan", dry_run=True)["judge_calls"] == 2 * 2 * 2 + 6
    run_grid(grid, tmp_path, backend=ScriptedBackend(responder=team),
             judge_backend=ScriptedBackend(responder=judge), progress=False, cache=False)
    # 3 ideas per task in batches of 2 -> 2 batches per task and rater; 2 raters, 2 tasks: 8
    assert len(judge_calls) == 8
    corpus = Corpus.from_jsonl(tmp_path / "corpus.jsonl")
    # 6 plans a session (3 agents x 2 rounds; the consensus answers 'Response 1'), one
    # session at a time: the finals are Agent 1's debate answers, plans 4, 10, 16
    # (plastic_waste) and 22, 28, 34. plastic_waste: novelty 5, 2, irrelevant (16) -> scaled
    # over 2..5: 1, 0 (with the 0 kept in the range: 1, .4); sorry_pandemic: 5, 2, irrelevant.
    finals = {c.final_idea.split()[1]: c.outcomes for c in corpus}
    assert sorted(finals, key=int) == ["4", "10", "16", "22", "28", "34"]
    assert [finals[n]["novelty"] for n in ("4", "10", "22", "28")] == [1.0, 0.0, 1.0, 0.0]
    assert finals["16"]["irrelevant"] is True and finals["16"]["novelty"] is None
    assert finals["4"]["novelty_raw"] == 5.0 and finals["4"]["raters_read"] == 2
    assert all(o["rubric_score"] == 6.0 for o in finals.values())
    summary = json.loads((tmp_path / "manifest.json").read_text())["judge_summary"]
    assert summary["status"] == "ok" and summary["raters"] == ["scripted#1", "scripted#2"]
    assert summary["ideas"] == 6 and summary["irrelevant"] == 2 and summary["unreadable_verdicts"] == 0


def test_dry_run_counts_calls(tmp_path, capsys):
    grid = {**GRID, "conditions": [{"method": "homo_mad", "agents": 5, "rounds": 2, "replicates": 3}],
            "tasks": ["plastic_waste"]}
    budget = run_grid(grid, tmp_path / "never", dry_run=True)
    assert budget["sessions"] == 3 and budget["calls"] == 3 * (5 * 3 + 1)
    assert budget["completion_tokens"] == 48 * 50
    assert not (tmp_path / "never").exists()
    assert "48 chat calls" in capsys.readouterr().err


@pytest.mark.parametrize("grid, field", [
    ({"conditions": [{"method": "open", "turn_limt": 3}]}, "conditions[0].turn_limt"),
    ({"conditions": [{"method": "open"}], "modle": "x"}, "modle"),
    ({"conditions": [{"method": "open", "tasks": ["nope"]}]}, "conditions[0].tasks"),
    ({"conditions": []}, "conditions"),
    ({"conditions": [{"method": "flood"}]}, "conditions[0].method"),
])
def test_bad_grid_names_the_key(grid, field):
    with pytest.raises(InputError) as caught:
        plan(load_grid(grid))
    assert caught.value.field == field


def test_bad_yaml_names_the_line(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("name: x\nconditions:\n  - method: open\n   bad: [\n")
    with pytest.raises(InputError) as caught:
        load_grid(path)
    assert caught.value.path == str(path) and caught.value.row is not None


def _cli(args, env):
    return subprocess.Popen([sys.executable, "-m", "engine", "run", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_sigkill_mid_grid_resumes_without_loss_or_duplicates(tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    with LoopbackServer(delay=0.02) as server:
        args = ["--method", "homo_mad", "--agents", "3", "--rounds", "1", "--replicates", "6", "--task",
                "plastic_waste", "--task", "supply_chain", "--model", "loop-model", "--base-url",
                server.base_url, "--concurrency", "2", "--out", str(out), "--no-progress"]
        process = _cli(args, env)
        corpus = out / "corpus.jsonl"
        deadline = time.time() + 60
        while time.time() < deadline:
            if corpus.exists() and corpus.read_text().count("\n") >= 4:  # header + 3 sessions
                break
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        done_before = len(Corpus.from_jsonl(corpus))
        assert 3 <= done_before < 12
        finished = _cli(args, env)
        stdout, stderr = finished.communicate(timeout=120)
        assert finished.returncode == 0, stderr
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["skipped_done"] == done_before and summary["ok"] == 12 - done_before
    ids = [c.conversation_id for c in Corpus.from_jsonl(corpus)]
    assert len(ids) == len(set(ids)) == 12
    for path in out.iterdir():
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in stderr


def test_grid_completes_through_random_server_faults(tmp_path):
    from engine.llm import RetryPolicy
    from engine.llm.openai_backend import OpenAIBackend

    rates = {"429": 0.08, "500": 0.08, "empty": 0.05, "malformed": 0.05}
    grid = {**GRID, "conditions": [GRID["conditions"][0]]}
    with LoopbackServer(fault_rates=rates, seed=11) as server:
        backend = OpenAIBackend("loop-model", base_url=server.base_url, api_key=KEY,
                                retry=RetryPolicy(max_attempts=8, base_delay=0.005, max_delay=0.01))
        result = run_grid(grid, tmp_path, backend=backend, progress=False, cache=False)
        outcomes = server.by_outcome
    assert (result.ok, result.failed) == (4, 0)
    faults = sum(v for k, v in outcomes.items() if k != "ok")
    assert faults > 0 and outcomes["ok"] == 4 * 7 and backend.usage.retries == faults
    for path in tmp_path.iterdir():
        assert KEY.encode() not in path.read_bytes()


def test_a_folder_of_another_model_or_a_busy_folder_is_refused(tmp_path):
    grid = {**GRID, "conditions": [GRID["conditions"][0]], "tasks": ["plastic_waste"]}
    run_grid(grid, tmp_path, backend=echo_backend(), progress=False, cache=False)
    with pytest.raises(InputError, match="holds a run of model 'scripted'"):
        run_grid({**grid, "model": "other"}, tmp_path, backend=echo_backend(), progress=False, cache=False)
    from engine.runs.run_folder import RunStore

    with RunStore(tmp_path / "busy"):
        with pytest.raises(InputError, match="another run"):
            run_grid(grid, tmp_path / "busy", backend=echo_backend(), progress=False, cache=False)


def test_cli_builds_the_grid_and_rejects_mixed_options(tmp_path, capsys):
    from engine.cli import main

    code = main(["run", "--method", "homo_mad", "--task-text", "Invent a new sport.", "--task-id", "sport",
                 "--agents", "3", "--rounds", "2", "--replicates", "4", "--out", str(tmp_path), "--dry-run"])
    assert code == 0 and "4 sessions, at most 40 chat calls" in capsys.readouterr().err
    grid = tmp_path / "g.yaml"
    grid.write_text("conditions: [{method: direct}]\n")
    assert main(["run", "--grid", str(grid), "--agents", "3", "--out", str(tmp_path)]) == 2
    assert "--agents cannot be combined with --grid" in capsys.readouterr().err
    assert main(["run", "--method", "open", "--out", str(tmp_path)]) == 2
    assert "give --task" in capsys.readouterr().err


def test_cli_judge_options_reach_the_grid():
    import argparse

    from engine.cli import run as cli_run

    parser = argparse.ArgumentParser()
    cli_run.register(parser.add_subparsers())
    base = ["run", "--method", "voting", "--task", "plastic_waste", "--out", "x", "--judge-model", "local"]
    grid = cli_run.grid_from_args(parser.parse_args(base + ["--judge-samples", "5", "--judge-batch-size",
                                                            "8", "--judge-models", "a, b"]))
    assert grid["judge"]["samples"] == 5 and grid["judge"]["batch_size"] == 8
    assert grid["judge"]["models"] == ["a", "b"]
    assert load_grid(grid).judge.mode == "together"
    with pytest.raises(InputError, match="judge-model"):
        cli_run.grid_from_args(parser.parse_args(base[:-2] + ["--judge-samples", "3"]))
