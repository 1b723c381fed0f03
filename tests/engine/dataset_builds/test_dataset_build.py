"""``python -m engine dataset build|release``: the datasets the dashboard reads, built by the
engine. Expected values come from reading the inputs directly (the release CSV with pandas, the
run folder's JSON lines), not from the builder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.loopback_server import shaped_reply
from engine.datasets import Dataset
from engine.llm import ScriptedBackend
from engine.runs.runner import run_grid

ROOT = Path(__file__).resolve().parents[3]
RELEASE = ROOT.parent / "shared" / "data" / "paper_release"
GRID = {"name": "t", "model": "scripted", "seed": 5, "concurrency": 2, "tasks": ["plastic_waste"],
        "defaults": {"max_tokens": 40},
        "conditions": [{"method": "open", "agents": 2, "turn_limit": 4, "replicates": 2},
                       {"method": "homo_mad", "agents": 2, "rounds": 1, "replicates": 1}]}


def engine(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.skipif(not (RELEASE / "comprehensive_trajectory_metrics.csv").exists(),
                    reason="paper release not beside the project")
def test_release_dataset_holds_every_conversation_of_the_release(tmp_path):
    result = engine("dataset", "release", "--out", str(tmp_path / "release"))
    assert result.returncode == 0, result.stderr
    raw = pd.read_csv(RELEASE / "comprehensive_trajectory_metrics.csv")
    dataset = Dataset.load(tmp_path / "release", with_corpus=False)
    # one row per (conversation file, question) of the release, human teams among them
    assert len(dataset.conversations) == len(raw.drop_duplicates(["file_id", "question_id"])) == 4010
    assert dataset.manifest["n_human"] == 308 and dataset.manifest["made_by"] == "python -m engine dataset release"
    assert f"{dataset.manifest['n_llm']} LLM + 308 human" in result.stdout
    # the same numbers as the cached dataset the dashboard opens on
    cached = Dataset.load(ROOT / "cached_runs" / "paper_release", with_corpus=False).conversations
    ours = dataset.conversations.sort_values("conversation_id").reset_index(drop=True)
    theirs = cached.sort_values("conversation_id").reset_index(drop=True)
    pd.testing.assert_frame_equal(ours, theirs, check_dtype=False)


def test_build_turns_a_run_folder_into_a_dataset(tmp_path):
    run = tmp_path / "run"
    result = run_grid(GRID, run, backend=ScriptedBackend(responder=lambda m: shaped_reply(m, None)),
                      progress=False, cache=False)
    assert result.ok == 3
    done = engine("dataset", "build", str(run), "--out", str(tmp_path / "ds"))
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (run / "corpus.jsonl").read_text().splitlines() if line.strip()]
    records = [r for r in records if "__corpus__" not in r]  # the header line names the corpus
    dataset = Dataset.load(tmp_path / "ds")
    assert sorted(dataset.conversations["conversation_id"]) == sorted(r["conversation_id"] for r in records)
    # every spoken turn embedded once, in 384 dimensions (all-MiniLM-L6-v2)
    assert dataset.turn_embeddings.shape[1] == 384
    assert len(dataset.turn_index) == dataset.turn_embeddings.shape[0] > 0
    assert np.isfinite(dataset.conversations["path_length"]).all()
    assert dataset.manifest["made_by"] == "python -m engine dataset build run"
    assert dataset.manifest["n_failed_sessions"] == 0


def test_build_refuses_a_folder_that_is_not_a_run_in_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    result = engine("dataset", "build", str(tmp_path / "empty"), "--out", str(tmp_path / "ds"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "no corpus.jsonl: not a run folder" in result.stderr and "empty" in result.stderr
    assert not (tmp_path / "ds").exists()


def test_grid_option_belongs_to_the_steered_kind(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "corpus.jsonl").write_text("")
    (run / "manifest.json").write_text("{}")
    result = engine("dataset", "build", str(run), "--out", str(tmp_path / "ds"), "--grid", "x.yaml")
    assert result.returncode == 2 and "--grid applies to --kind steered only" in result.stderr


def test_build_describes_a_run_of_both_fidelities(tmp_path):
    # open in both modes (2 sessions each) with the scripted echo: the manifest says what was run
    # and counts replies per fidelity (open asks no reply again: zeros, from meta["replies"])
    grid = {**GRID, "conditions": [{"method": "open", "agents": 2, "turn_limit": 3, "replicates": 2,
                                    "fidelity": mode} for mode in ("paper", "release")]}
    run = tmp_path / "run"
    run_grid(grid, run, backend=ScriptedBackend(responder=lambda m: shaped_reply(m, None)),
             progress=False, cache=False)
    done = engine("dataset", "build", str(run), "--out", str(tmp_path / "ds"))
    assert done.returncode == 0, done.stderr
    dataset = Dataset.load(tmp_path / "ds", with_corpus=False)
    assert dataset.manifest["description"].startswith("Paper A's open, instructed and iterative structures in both")
    # open, 3 turns + 1 synthesis = 4 calls a session
    assert dataset.manifest["fidelity"]["sessions"] == [
        {"structure": "open", "fidelity": "paper", "n": 2, "chat_calls": 8},
        {"structure": "open", "fidelity": "release", "n": 2, "chat_calls": 8}]
    assert dataset.manifest["has"]["ratings"] is False  # no judge in this run
    assert sorted(dataset.conversations["fidelity"]) == ["paper"] * 2 + ["release"] * 2
