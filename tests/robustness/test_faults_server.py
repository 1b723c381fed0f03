"""The fault suite: every way a real server misbehaves, against the loopback server.

* each fault alone: retried to the right answer (or the reply kept as it is, for the reply
  variants with U+2028/U+2029/U+0085 and lone surrogates);
* a grid at 20% and 50% fault rates: every session ends ok or recorded as failed, and a
  re-run finishes the failed ones with exactly their calls (zero for finished work);
* SIGKILL of ``engine run`` at random moments: the finished corpus equals an uninterrupted
  run's, with no session lost, duplicated or corrupted, and no temp file left.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.loopback_server import FAULTS, NOT_ERRORS, SEPARATORS, LoopbackServer, shaped_reply
from engine.corpus import Corpus
from engine.runs.grid import load_grid, plan
from engine.llm import RetryPolicy
from engine.llm.openai_backend import OpenAIBackend
from engine.protocols import expected_calls
from engine.runs.runner import run_grid

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-faults-FAKE-0"  # fake
MESSAGES = [{"role": "user", "content": "Give one creative idea."}]
ERRORS = tuple(f for f in FAULTS if f not in NOT_ERRORS)
FAST = dict(timeout_sleep=3.0, drip_interval=0.2, retry_after=0.02, retry_after_date=0.5)


def backend_for(server, *, attempts=3, timeout=0.6) -> OpenAIBackend:
    return OpenAIBackend("loop-model", base_url=server.base_url, api_key=KEY, timeout=timeout,
                         retry=RetryPolicy(max_attempts=attempts, base_delay=0.01, max_delay=0.02,
                                           max_retry_after=1.0))


@pytest.mark.parametrize("fault", ERRORS)
def test_each_fault_is_retried_to_the_right_answer(fault):
    with LoopbackServer(script=[fault, "ok"], **FAST) as server:
        backend = backend_for(server)
        result = backend.chat(MESSAGES, seed=5)
        assert server.by_outcome == {fault: 1, "ok": 1}
    assert result.text == shaped_reply(MESSAGES, 5)
    assert backend.usage.retries == 1 and backend.usage.calls == 1


def test_replies_with_separators_and_lone_surrogates_are_kept_safely():
    with LoopbackServer(script=["separators", "surrogate"], **FAST) as server:
        backend = backend_for(server)
        kept = backend.chat(MESSAGES, seed=5)
        replaced = backend.chat(MESSAGES, seed=5)
    reply = shaped_reply(MESSAGES, 5)
    assert kept.text == reply[:20] + SEPARATORS + reply[20:]
    assert replaced.text == reply[:20] + " \ufffd " + reply[20:]
    assert replaced.lone_surrogates_replaced == 1 and backend.usage.lone_surrogates_replaced == 1
    assert backend.usage.retries == 0


GRID = {"name": "faults", "model": "loop-model", "seed": 4, "concurrency": 3,
        "tasks": ["plastic_waste", "sorry_pandemic"], "defaults": {"max_tokens": 40},
        "conditions": [{"method": "homo_mad", "agents": 2, "rounds": 1, "replicates": 3}]}


def run_at_fault_rate(tmp_path, rate: float, seed: int) -> dict:
    """One grid through faults (every kind equally likely), then a clean re-run."""
    kinds = ERRORS + NOT_ERRORS
    rates = {kind: rate / len(kinds) for kind in kinds}
    specs = plan(load_grid(GRID))
    with LoopbackServer(fault_rates=rates, seed=seed, **FAST) as server:
        first = run_grid(GRID, tmp_path, backend=backend_for(server), progress=False, cache=False)
        faults = sum(n for kind, n in server.by_outcome.items() if kind in ERRORS)
    assert first.ok + first.failed == len(specs)
    failed_path = tmp_path / "failed.jsonl"
    failed_file = ([json.loads(line) for line in failed_path.read_text().splitlines()]
                   if failed_path.exists() else [])
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    failed_ids = sorted(record["conversation_id"] for record in failed_file)
    assert manifest["sessions"]["failed_ids"] == failed_ids and len(failed_ids) == first.failed
    assert all(record["status"] == "failed" and record["error"] for record in failed_file)
    assert manifest["status"] == ("complete" if not failed_ids else "incomplete")

    with LoopbackServer(**FAST) as clean:
        second = run_grid(GRID, tmp_path, backend=backend_for(clean), progress=False, cache=False)
        rerun_calls = clean.requests
    needed = sum(expected_calls(s.config) for s in specs if s.conversation_id in failed_ids)
    assert rerun_calls == needed  # the failed sessions' calls, none for finished work
    assert (second.skipped, second.ok, second.failed) == (first.ok, first.failed, 0)
    corpus = Corpus.from_jsonl(tmp_path / "corpus.jsonl")
    ids = [c.conversation_id for c in corpus]
    assert sorted(ids) == sorted(s.conversation_id for s in specs)
    assert all(c.status == "ok" and c.meta["calls"] == expected_calls(specs[0].config) for c in corpus)
    assert not failed_path.exists() or failed_path.read_text() == ""
    return {"ok": first.ok, "failed": first.failed, "faults": faults, "rerun_calls": rerun_calls}


@pytest.mark.parametrize("rate, seed", [(0.2, 1), (0.5, 2)])
def test_grid_through_fault_rates_then_a_rerun_finishes_only_the_failed(tmp_path, rate, seed):
    numbers = run_at_fault_rate(tmp_path, rate, seed)
    assert numbers["faults"] > 0
    if rate == 0.5:
        assert numbers["failed"] > 0  # at 50% with 3 attempts some sessions do fail


@pytest.mark.slow
@pytest.mark.parametrize("rate, seed", [(0.2, s) for s in range(3, 6)] + [(0.5, s) for s in range(6, 9)])
def test_grid_through_fault_rates_more_seeds(tmp_path, rate, seed):
    run_at_fault_rate(tmp_path, rate, seed)


# -- SIGKILL ---------------------------------------------------------------------------------
def _cli(args):
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "engine", "run", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _lines(path: Path) -> int:
    """Whole lines in a file (a header plus finished sessions for a corpus)."""
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _texts(corpus: Corpus) -> dict[str, list[str]]:
    return {c.conversation_id: c.texts for c in corpus}


def kill_and_resume(tmp_path, kills: int, seed: int, monkeypatch) -> dict:
    """Kill ``engine run`` ``kills`` times at random moments, then let it finish."""
    from engine.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rng = random.Random(seed)
    out = tmp_path / "killed"
    args = ["--method", "homo_mad", "--agents", "2", "--rounds", "1", "--replicates", "4",
            "--task", "plastic_waste", "--task", "supply_chain", "--model", "loop-model",
            "--concurrency", "2", "--max-tokens", "40", "--timeout", "2", "--no-progress"]
    with LoopbackServer(delay=0.08) as server:
        reference = tmp_path / "reference"  # uninterrupted, in this process
        assert main(["run", *args, "--base-url", server.base_url, "--out", str(reference)]) == 0
        trials = []
        for _ in range(kills):
            process = _cli([*args, "--base-url", server.base_url, "--out", str(out)])
            # a random point: after a random number of sessions are written, plus a random
            # fraction of a session (mid-call, mid-write or between sessions)
            already = max(_lines(out / "corpus.jsonl") - 1, 0)
            target = already + rng.randint(0, max(0, 8 - already - 3))
            deadline = time.time() + 60
            while process.poll() is None and time.time() < deadline:
                if _lines(out / "corpus.jsonl") >= target + 1:
                    break
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.25))
            process.send_signal(signal.SIGKILL)
            process.wait()
            trials.append(max(_lines(out / "corpus.jsonl") - 1, 0))
        runs = 0
        while True:
            runs += 1
            finished = _cli([*args, "--base-url", server.base_url, "--out", str(out)])
            stdout, stderr = finished.communicate(timeout=120)
            if finished.returncode == 0 or runs == 3:
                break
        assert finished.returncode == 0, stderr
    assert any(done < 8 for done in trials)  # at least one kill landed mid-run
    corpus = Corpus.from_jsonl(out / "corpus.jsonl")
    ids = [c.conversation_id for c in corpus]
    assert len(ids) == len(set(ids)) == 8
    assert _texts(corpus) == _texts(Corpus.from_jsonl(reference / "corpus.jsonl"))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["sessions"]["ok"] == 8
    leftovers = [p.name for p in out.iterdir() if ".tmp-" in p.name]
    assert leftovers == []
    for path in out.iterdir():
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    return {"sessions_done_at_each_kill": trials,
            "skipped_on_final_run": json.loads(stdout.strip().splitlines()[-1])["skipped_done"]}


def test_sigkill_at_random_moments_loses_duplicates_and_corrupts_nothing(tmp_path, monkeypatch):
    kill_and_resume(tmp_path, kills=2, seed=0, monkeypatch=monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 4))
def test_sigkill_trials_more_seeds(tmp_path, seed, monkeypatch):
    kill_and_resume(tmp_path, kills=3, seed=seed, monkeypatch=monkeypatch)
