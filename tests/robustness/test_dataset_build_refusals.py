"""``python -m engine dataset build`` as an unfriendly user runs it: ``--out`` on the run folder or
on someone's files, a run of another model, a run with no finished session, ``--kind steered``
on a run without the steered discussion, a bad ``--embedding-model``, a rebuild cut short and a
dataset folder mixing two builds. Each refusal is one line, exit 2, nothing written; expected
texts and counts come from the grid written here and the files on disk, not from the builder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmarks.loopback_server import shaped_reply
from engine.dataset_builds import output_folder
from engine.dataset_builds.run_folder import DESCRIPTIONS, NOTE
from engine.datasets import Dataset
from engine.errors import InputError
from engine.llm import ScriptedBackend
from engine.runs.runner import run_grid
from tests.support.cli_run import cli, refused

GRID = {"name": "t", "model": "scripted", "seed": 5, "concurrency": 2, "tasks": ["plastic_waste"],
        "defaults": {"max_tokens": 40},
        "conditions": [{"method": "open", "agents": 2, "turn_limit": 3, "replicates": 2}]}


def make_run(folder: Path, replicates: int) -> Path:
    grid = {**GRID, "conditions": [{**GRID["conditions"][0], "replicates": replicates}]}
    run_grid(grid, folder, backend=ScriptedBackend(responder=lambda m: shaped_reply(m, None)),
             progress=False, cache=False)
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("builds")
    return {"two": make_run(base / "two", 2), "three": make_run(base / "three", 3)}


def snapshot(folder: Path, *, lock: bool = True) -> dict[str, bytes]:
    """Every file's bytes (with ``lock=False``, the lock file a build leaves, holding no data, left out)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if lock or p.name != ".run.lock"}


def session_ids(run: Path) -> list[str]:
    lines = [json.loads(line) for line in (run / "corpus.jsonl").read_text().splitlines() if line.strip()]
    return sorted(r["conversation_id"] for r in lines if "__corpus__" not in r)


def test_out_on_the_run_folder_is_refused_and_its_manifest_kept(runs, tmp_path):
    # before: exit 0 and the run's manifest.json replaced by the dataset's
    run = tmp_path / "run"
    shutil.copytree(runs["two"], run)
    before = snapshot(run)
    refused(cli(["dataset", "build", run, "--out", run]), "--out is the run folder itself", str(run))
    assert snapshot(run) == before
    assert not list(tmp_path.glob(".*dataset-build"))


def test_out_on_another_run_folder_is_refused(runs, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(runs["three"], other)
    before = snapshot(other)
    refused(cli(["dataset", "build", runs["two"], "--out", other]), "--out is a run folder (corpus.jsonl")
    assert snapshot(other) == before


def test_out_on_a_folder_of_the_users_files_is_refused(runs, tmp_path):
    # before: both files overwritten silently
    user = tmp_path / "mine"
    user.mkdir()
    (user / "manifest.json").write_text('{"mine": true}')
    (user / "conversations.parquet").write_bytes(b"my table")
    line = refused(cli(["dataset", "build", runs["two"], "--out", user]),
                   "no dataset build wrote", "conversations.parquet, manifest.json", "dataset-build.json")
    assert "nothing was written" in line
    assert snapshot(user) == {"conversations.parquet": b"my table", "manifest.json": b'{"mine": true}'}


def test_a_rebuild_replaces_the_dataset_whole_and_names_its_files(runs, tmp_path):
    out = tmp_path / "ds"
    assert cli(["dataset", "build", runs["two"], "--out", out]).code == 0
    assert cli(["dataset", "build", runs["three"], "--out", out]).code == 0
    dataset = Dataset.load(out)
    assert sorted(dataset.conversations["conversation_id"]) == session_ids(runs["three"])
    marker = json.loads((out / "dataset-build.json").read_text())
    assert marker["files"] == sorted(p.name for p in out.iterdir() if p.name not in
                                     ("dataset-build.json", ".run.lock"))
    assert {"manifest.json", "conversations.parquet", "corpus.parquet"} <= set(marker["files"])
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]  # no staging folder left beside it


def test_a_file_the_marker_does_not_name_stops_a_rebuild(runs, tmp_path):
    out = tmp_path / "ds"
    assert cli(["dataset", "build", runs["two"], "--out", out]).code == 0
    (out / "notes.txt").write_text("mine")
    before = snapshot(out)
    refused(cli(["dataset", "build", runs["three"], "--out", out]), "does not name (notes.txt)")
    assert snapshot(out) == before


def test_a_build_cut_short_leaves_the_old_dataset_whole(runs, tmp_path):
    out = tmp_path / "ds"
    assert cli(["dataset", "build", runs["two"], "--out", out]).code == 0
    before = snapshot(out)
    with pytest.raises(KeyboardInterrupt):
        with output_folder.staged(out, "test") as folder:
            (folder / "conversations.parquet").write_bytes(b"half of a new build")
            raise KeyboardInterrupt  # a kill between two files
    assert snapshot(out, lock=False) == before
    assert sorted(Dataset.load(out).conversations["conversation_id"]) == session_ids(runs["two"])


def test_a_folder_mixing_two_builds_is_refused_naming_the_file(runs, tmp_path):
    # before: conversations of one run loaded with the manifest and embeddings of the other
    for name in ("two", "three"):
        assert cli(["dataset", "build", runs[name], "--out", tmp_path / name]).code == 0
    own = (tmp_path / "two" / "conversations.parquet").read_bytes()
    shutil.copy(tmp_path / "three" / "conversations.parquet", tmp_path / "two" / "conversations.parquet")
    with pytest.raises(InputError) as error:
        Dataset.load(tmp_path / "two")
    assert str(error.value).startswith(f"file {tmp_path / 'two' / 'conversations.parquet'}: does not "
                                       f"belong with manifest.json")
    # its own table back, the other build's embeddings and index: named (corpus not read, still checked)
    (tmp_path / "two" / "conversations.parquet").write_bytes(own)
    for name in ("turn_embeddings.npy", "turn_index.parquet"):
        shutil.copy(tmp_path / "three" / name, tmp_path / "two" / name)
    with pytest.raises(InputError) as error:
        Dataset.load(tmp_path / "two", with_corpus=False)
    assert str(error.value).startswith(f"file {tmp_path / 'two' / 'turn_embeddings.npy'}: does not belong")
    # a file the manifest names, gone: refused, named
    (tmp_path / "two" / "turn_embeddings.npy").unlink()
    with pytest.raises(InputError, match="missing: manifest.json names it"):
        Dataset.load(tmp_path / "two", with_corpus=False)


def test_a_run_of_another_model_is_described_from_its_manifest(runs, tmp_path):
    # before: "run on the local SmolLM2-135M ... rated by the same model", "not a finding",
    # regenerate "make cached-runs"
    assert cli(["dataset", "build", runs["two"], "--out", tmp_path / "ds"]).code == 0
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    assert "SmolLM2" not in manifest["description"] and "note" not in manifest
    assert manifest["regenerate"] != "make cached-runs"
    text = manifest["description"]
    assert text.startswith("2 finished session(s) (0 failed, left out) of open on plastic_waste")
    assert "sessions' model(s): scripted (backend: scripted); judge: none" in text


def test_a_run_of_the_local_smollm2_keeps_the_fixed_description(runs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(runs["two"], run)
    manifest = json.loads((run / "manifest.json").read_text())
    local = {"backend": "local", "model": "SmolLM2-135M-Instruct.Q4_1"}
    (run / "manifest.json").write_text(json.dumps({**manifest, "backend": local, "judge": local}))
    assert cli(["dataset", "build", run, "--out", tmp_path / "ds"]).code == 0
    built = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    assert built["description"] == DESCRIPTIONS[False] and built["note"] == NOTE


def test_a_run_of_failed_sessions_only_is_refused(runs, tmp_path):
    # before: a dataset of 0 conversations described as the full grid
    run = tmp_path / "failed_run"
    run.mkdir()
    lines = (runs["two"] / "corpus.jsonl").read_text().splitlines()
    header = [line for line in lines if "__corpus__" in line]
    (run / "corpus.jsonl").write_text("\n".join(header) + "\n")
    shutil.copy(runs["two"] / "manifest.json", run / "manifest.json")
    failed = [json.dumps({**json.loads(line), "status": "failed", "error": "boom"}) for line in lines
              if "__corpus__" not in line]
    (run / "failed.jsonl").write_text("\n".join(failed) + "\n")
    line = refused(cli(["dataset", "build", run, "--out", tmp_path / "ds"]),
                   "0 finished sessions (2 failed)", str(run))
    assert "nothing to build" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["failed_run"]


def test_steered_kind_on_a_run_without_the_steered_discussion_is_refused(runs, tmp_path):
    # before: exit 0, a dataset of the run's open sessions under the steered description
    refused(cli(["dataset", "build", runs["two"], "--out", tmp_path / "ds", "--kind", "steered"]),
            "0 finished sessions of the steered discussion", str(runs["two"]))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("model", ["/nonexistent", "no-such-embedding-model-xyz"])
def test_an_embedding_model_that_does_not_load_is_one_line(runs, tmp_path, model):
    # before: a RuntimeError traceback from sentence-transformers
    refused(cli(["dataset", "build", runs["two"], "--out", tmp_path / "ds", "--embedding-model", model]),
            "--embedding-model", model)
    assert list(tmp_path.iterdir()) == []


def test_out_inside_the_run_folder_is_refused(runs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(runs["two"], run)
    before = snapshot(run)
    refused(cli(["dataset", "build", run, "--out", run / "ds"]), "--out is inside the run folder")
    assert snapshot(run) == before


def test_a_build_killed_midway_leaves_the_old_dataset_and_the_next_build_runs(runs, tmp_path):
    import subprocess
    import sys

    out = tmp_path / "ds"
    assert cli(["dataset", "build", runs["two"], "--out", out]).code == 0
    before = snapshot(out, lock=False)
    script = ("import os, signal, sys; from pathlib import Path; "
              "from engine.dataset_builds.output_folder import staged\n"
              "with staged(Path(sys.argv[1]), 'killed build') as folder:\n"
              "    (folder / 'conversations.parquet').write_bytes(b'half')\n"
              "    os.kill(os.getpid(), signal.SIGKILL)\n")
    root = Path(__file__).resolve().parents[2]
    killed = subprocess.run([sys.executable, "-c", script, str(out)], cwd=root, timeout=120)
    assert killed.returncode == -9
    assert snapshot(out, lock=False) == before  # the old dataset, whole
    assert sorted(Dataset.load(out).conversations["conversation_id"]) == session_ids(runs["two"])
    # the kill's staging folder is cleared by the next build, which replaces the dataset whole
    assert cli(["dataset", "build", runs["three"], "--out", out]).code == 0
    assert sorted(Dataset.load(out).conversations["conversation_id"]) == session_ids(runs["three"])
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]


def test_release_refuses_a_folder_of_the_users_files(tmp_path):
    (tmp_path / "manifest.json").write_text('{"mine": true}')
    refused(cli(["dataset", "release", "--out", tmp_path]), "no dataset build wrote (manifest.json")
    assert snapshot(tmp_path) == {"manifest.json": b'{"mine": true}'}
