"""One writer per folder, and one paid call per distinct request.

* Every command that writes a folder (``run``, ``judge``, ``pilot``, ``dataset build``) is
  refused in one line while another process writes it: the holder here is a second process
  inside ``RunStore`` (what ``run`` holds), so the refusal is across processes as in use.
* Single flight: requests identical to one in flight wait for its answer. 88 rubric items of
  which 72 are distinct texts cost 72 calls, at concurrency 1 and 8; ``judge quality
  --per-round`` on a debate whose debaters repeat themselves pays once per distinct request.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main
from engine.corpus import Corpus
from engine.errors import InputError
from engine.llm import ScriptedBackend
from engine.llm.cache import CachedBackend
from engine.runs.runner import run_grid

ROOT = Path(__file__).resolve().parents[3]
GRID = {"name": "w", "model": "scripted", "seed": 0, "tasks": ["plastic_waste"],
        "conditions": [{"method": "homo_mad", "agents": 2, "rounds": 1, "replicates": 4}]}
BUSY = "another run, judge, pilot or dataset build is writing to this folder"


def debater(messages):
    """Every debater gives the same answer in a round: the per-round items repeat texts."""
    prompt = messages[-1]["content"]
    if "Answer only 'Response N'" in prompt:
        return "Response 1"
    return "plain idea r1" if "Your previous answer" in prompt else "plain idea r0"


@pytest.fixture
def run_dir(tmp_path):
    run_grid(GRID, tmp_path / "run", backend=ScriptedBackend(responder=debater), progress=False, cache=False)
    return tmp_path / "run"


class Holder:
    """Another process writing ``folder``: it sits inside ``RunStore`` until stopped."""

    def __init__(self, folder: Path):
        code = ("import sys, time\nfrom engine.runs.run_folder import RunStore\n"
                "with RunStore(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(120)\n")
        self.process = subprocess.Popen([sys.executable, "-c", code, str(folder)], cwd=ROOT,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "held"

    def stop(self):
        self.process.kill()
        self.process.wait(timeout=30)


def judge_backend(calls):
    def reply(messages):
        calls.append(messages[-1]["content"])
        return "Score: 6"

    def make_backend(model="local", base_url=None, cache=None, concurrency=8, **_):
        inner = ScriptedBackend(responder=reply, model="judge", delay=0.01, concurrency=concurrency)
        return CachedBackend(inner, cache)

    return make_backend


def test_a_judge_is_refused_while_another_process_writes_the_folder(run_dir, monkeypatch, capsys):
    calls = []
    import engine.llm

    monkeypatch.setattr(engine.llm, "make_backend", judge_backend(calls))
    holder = Holder(run_dir)
    try:
        code = main(["judge", "quality", "--samples", "1", str(run_dir), "--judge-model", "judge", "--base-url", "http://127.0.0.1:9"])
    finally:
        holder.stop()
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and BUSY in err[-1] and f"(run (pid {holder.process.pid}))" in err[-1]
    assert calls == [] and not (run_dir / "quality.jsonl").exists()
    # the folder free again: the judge runs
    assert main(["judge", "quality", "--samples", "1", str(run_dir), "--judge-model", "judge", "--base-url",
                 "http://127.0.0.1:9"]) == 0


def test_dataset_build_and_pilot_are_refused_on_a_folder_being_written(run_dir, tmp_path, capsys):
    out = tmp_path / "dataset"
    holder = Holder(out)
    try:
        assert main(["dataset", "build", str(run_dir), "--out", str(out)]) == 2
        assert BUSY in capsys.readouterr().err
        assert not (out / "manifest.json").exists()
    finally:
        holder.stop()
    from engine.diagnosis.prescribe import prescribe_and_verify
    from tests.engine.diagnosis.test_pilot import FakeEmbedder, synthetic_reference

    pilot_out = tmp_path / "pilot"
    holder = Holder(pilot_out)
    backend = ScriptedBackend(responder=debater)
    try:
        with pytest.raises(InputError, match=BUSY):
            prescribe_and_verify(pilot_out, backend=backend, embedder=FakeEmbedder(), reference=synthetic_reference(),
                            progress=False, say=lambda _: None)
    finally:
        holder.stop()
    assert backend.history == [] and not (pilot_out / "pilot").exists()


@pytest.mark.parametrize("concurrency", [1, 8])
def test_identical_requests_in_flight_are_sent_once(tmp_path, concurrency):
    from engine.judging import quality
    from engine.tasks import get_task

    texts = [f"idea number {i}" for i in range(72)]
    items = [quality.Item(f"c{i}", "plastic_waste", texts[i % 72], round=i // 72) for i in range(88)]
    inner = ScriptedBackend(responder=lambda m: "Score: 7", model="judge", delay=0.01, concurrency=concurrency)
    judge = CachedBackend(inner, tmp_path / "cache.sqlite")
    store = quality.QualityStore(tmp_path)
    done = asyncio.run(quality.arubric(items, {"plastic_waste": get_task("plastic_waste")}, judge, store, samples=1))
    assert done == 88 and len(store.records) == 88
    assert len(inner.history) == 72  # one call per distinct request
    assert inner.usage.calls == 72 and inner.usage.cache_hits == 16


def test_judge_per_round_pays_once_per_distinct_request(run_dir, monkeypatch, capsys):
    from engine.judging import quality

    items = quality.rubric_items(Corpus.from_jsonl(run_dir / "corpus.jsonl"), per_round=True)
    distinct = {(item.task, item.text) for item in items}
    assert (len(items), len(distinct)) == (4 * (1 + 2 * 2), 2)  # 20 items, two texts
    calls = []
    import engine.llm

    monkeypatch.setattr(engine.llm, "make_backend", judge_backend(calls))
    assert main(["judge", "quality", "--samples", "1", str(run_dir), "--per-round", "--concurrency", "1", "--judge-model",
                 "judge", "--base-url", "http://127.0.0.1:9"]) == 0
    assert len(calls) == len(distinct)
    assert '"rubric_rounds": {"items": 16' in capsys.readouterr().out
