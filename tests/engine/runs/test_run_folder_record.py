"""The run folder is the record.

* The judge rates each session against the prompt the run recorded for it (the manifest's
  ``tasks``, each session's ``meta.task_prompt``), never the tasks file read again: edited,
  deleted, or relative to another working folder, the file does not matter; a session whose
  recorded prompt differs from the manifest's is refused in one line.
* Options that make a session but are not in its id (the seed, the model's server, the
  judge...) are refused when they change, before any call, never written over the manifest;
  the pilot keeps its model, budget, baseline and seed the same way.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from engine.cli import main
from engine.errors import InputError
from engine.llm import ScriptedBackend
from engine.llm.cache import CachedBackend
from engine.runs.runner import run_grid

SPORT = "Invent a new sport for two players that needs no equipment."
EDITED = "Invent a new board game for the whole family."


def judge_calls(monkeypatch):
    calls = []

    def reply(messages):
        calls.append(messages[-1]["content"])
        return "Score: 6"

    def make_backend(model="local", base_url=None, cache=None, **_):
        return CachedBackend(ScriptedBackend(responder=reply, model="judge"), cache)

    import engine.llm

    monkeypatch.setattr(engine.llm, "make_backend", make_backend)
    return calls


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    """A run whose task came from ``tasks.jsonl``, named relative to the working folder."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "tasks.jsonl").write_text(json.dumps({"id": "sport", "prompt": SPORT}) + "\n")
    monkeypatch.chdir(work)
    grid = {"name": "t", "model": "scripted", "seed": 0, "tasks_file": "tasks.jsonl",
            "conditions": [{"method": "direct", "replicates": 3}]}
    run_grid(grid, work / "run", backend=ScriptedBackend(responder=lambda m: "Idea: tag without a ball."),
             progress=False, cache=False)
    return work / "run"


JUDGE = ["--judge-model", "judge", "--base-url", "http://127.0.0.1:9"]


def test_the_judge_rates_against_the_recorded_prompt_after_the_tasks_file_is_edited(run_dir, monkeypatch):
    (run_dir.parent / "tasks.jsonl").write_text(json.dumps({"id": "sport", "prompt": EDITED}) + "\n")
    calls = judge_calls(monkeypatch)
    assert main(["judge", "quality", "--samples", "1", str(run_dir), *JUDGE]) == 0
    assert len(calls) == 1  # three sessions, one final idea text: one request
    assert SPORT in calls[0] and EDITED not in calls[0]


def test_the_judge_needs_no_tasks_file_and_no_working_folder(run_dir, monkeypatch, tmp_path):
    (run_dir.parent / "tasks.jsonl").unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    calls = judge_calls(monkeypatch)
    assert main(["judge", "pairwise", str(run_dir), "--dry-run"]) == 0
    assert main(["judge", "quality", "--samples", "1", str(run_dir), *JUDGE]) == 0
    assert len(calls) == 1 and SPORT in calls[0]


def test_a_session_that_answered_another_prompt_is_refused(run_dir, monkeypatch, capsys):
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["tasks"]["sport"] = {"prompt": EDITED, "prompt_sha256": None}  # hand-edited manifest
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    calls = judge_calls(monkeypatch)
    assert main(["judge", "quality", "--samples", "1", str(run_dir), *JUDGE]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "answered another prompt of task 'sport'" in err[0] and calls == []


def test_without_the_manifest_record_the_sessions_own_prompt_is_used(run_dir, monkeypatch):
    manifest = json.loads((run_dir / "manifest.json").read_text())
    del manifest["tasks"]  # a run folder written before the manifest kept the prompts
    manifest["config"]["tasks_file"] = "gone.jsonl"
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    calls = judge_calls(monkeypatch)
    assert main(["judge", "quality", "--samples", "1", str(run_dir), *JUDGE]) == 0
    assert SPORT in calls[0]


# -- options that make a session -------------------------------------------------------------------
GRID = {"name": "s", "model": "scripted", "seed": 0, "tasks": ["plastic_waste"],
        "conditions": [{"method": "direct", "replicates": 2}]}


def test_resume_with_another_seed_is_refused_and_the_manifest_keeps_its_seed(tmp_path, capsys):
    run_grid(GRID, tmp_path, backend=ScriptedBackend(responder=lambda m: "idea"), progress=False, cache=False)
    before = (tmp_path / "manifest.json").read_bytes()
    backend = ScriptedBackend(responder=lambda m: "idea")
    with pytest.raises(InputError, match=r"made with seed 0, this run has 7.*use another --out, or --seed"):
        run_grid({**GRID, "seed": 7}, tmp_path, backend=backend, progress=False, cache=False)
    assert backend.history == [] and (tmp_path / "manifest.json").read_bytes() == before
    assert json.loads(before)["seed"] == 0
    with pytest.raises(InputError, match="seed"):  # --dry-run says the same before anything runs
        run_grid({**GRID, "seed": 7}, tmp_path, dry_run=True)
    # the same seed resumes (nothing to do), a judge added afterwards is refused too
    assert run_grid(GRID, tmp_path, backend=backend, progress=False, cache=False).skipped == 2
    with pytest.raises(InputError, match="judge"):
        run_grid({**GRID, "judge": {"model": "scripted", "mode": "alone"}}, tmp_path, backend=backend,
                 progress=False, cache=False)
    assert backend.history == []


def test_cli_resume_with_another_seed_is_one_line(tmp_path, capsys):
    args = ["run", "--method", "direct", "--task", "plastic_waste", "--out", str(tmp_path)]
    run_grid({**GRID, "name": "direct", "model": "local", "conditions": [{"method": "direct", "replicates": 1}]},
             tmp_path, backend=ScriptedBackend(responder=lambda m: "idea", model="local"), progress=False,
             cache=False)
    assert main([*args, "--dry-run"]) == 0
    assert main([*args, "--seed", "7", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"error: file {tmp_path}: this folder's sessions were made with seed 0")


@pytest.fixture(scope="module")
def pilot_study(tmp_path_factory):
    from engine.diagnosis.prescribe import BUDGETS, Budget, prescribe_and_verify
    from tests.engine.diagnosis.test_pilot import FakeEmbedder, scripted_backend, synthetic_reference

    BUDGETS["tiny"] = Budget("tiny", ("plastic_waste",), 2, 3, dict(BUDGETS["small"].defaults),
                             BUDGETS["small"].designs)
    out = tmp_path_factory.mktemp("pilot")
    reference = synthetic_reference()
    study = prescribe_and_verify(out, budget="tiny", backend=scripted_backend(), embedder=FakeEmbedder(),
                            reference=reference, progress=False, say=lambda _: None)
    yield out, study.report, reference
    BUDGETS.pop("tiny", None)


def test_a_pilot_with_another_seed_is_refused_before_any_call(pilot_study, tmp_path):
    from engine.diagnosis.prescribe import prescribe_and_verify
    from tests.engine.diagnosis.test_pilot import FakeEmbedder

    source, _, reference = pilot_study
    out = tmp_path / "pilot"
    shutil.copytree(source, out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    for change in ({"seed": 7}, {"baseline": "iterative"}, {"model": "other"}):
        backend = ScriptedBackend(responder=lambda m: "idea")
        with pytest.raises(InputError, match=re.escape(f"made with {next(iter(change))}")):
            prescribe_and_verify(out, budget="tiny", backend=backend, embedder=FakeEmbedder(), reference=reference,
                            progress=False, say=lambda _: None, **change)
        assert backend.history == []
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
