"""A run folder's own files that are not what they should be: a named pipe where
``corpus.jsonl``, ``manifest.json`` or ``quality.jsonl`` should be (opening it would wait for a
writer forever), or an integer beyond 64 bits in a corpus line or the manifest (Python refuses
to parse integers of more than 4,300 digits). Each is one line naming the file (and the line
and field, when there is one), exit 2, and the folder left as it was.
"""

from __future__ import annotations

import os
import re

import pytest

from engine.llm import ScriptedBackend
from engine.runs.runner import run_grid
from tests.support.cli_run import cli, refused

pytestmark = pytest.mark.timeout(60)  # a reader waiting on a FIFO fails here instead of hanging
HUGE = "9" * 5000


@pytest.fixture
def run(tmp_path):
    out = tmp_path / "run"
    grid = {"name": "f", "model": "scripted", "tasks": ["plastic_waste"],
            "conditions": [{"method": "homo_mad", "agents": 2, "rounds": 1, "replicates": 2}]}
    run_grid(grid, out, backend=ScriptedBackend(responder=lambda _messages: "an idea"), progress=False,
             cache=False)
    return out


@pytest.mark.parametrize("name", ["corpus.jsonl", "manifest.json", "quality.jsonl"])
@pytest.mark.parametrize("command", [["judge", "quality"], ["judge", "pairwise"]])
def test_a_named_pipe_in_a_run_folder_is_refused_not_waited_on(run, name, command):
    (run / name).unlink(missing_ok=True)
    os.mkfifo(run / name)
    line = refused(cli([*command, run, "--dry-run"]), str(run / name), "named pipe")
    assert line.startswith(f"error: file {run / name}: is a named pipe (FIFO)")
    assert sorted(p.name for p in run.iterdir()) == sorted({".run.lock", "corpus.jsonl", "manifest.json", name})


def test_a_corpus_line_with_a_5000_digit_integer_names_its_line_and_field(run):
    corpus = run / "corpus.jsonl"
    lines = corpus.read_text().splitlines()
    lines[1], count = re.subn(r'"replicate": \d+', '"replicate": ' + HUGE, lines[1], count=1)
    assert count == 1
    corpus.write_text("\n".join(lines) + "\n")
    before = corpus.read_bytes()
    line = refused(cli(["judge", "quality", run, "--dry-run"]), f"file {corpus}, row 2, field 'replicate'",
                   "(5,000 digits) is out of range")
    assert len(line) < 300
    assert corpus.read_bytes() == before


def test_a_manifest_with_a_5000_digit_integer_is_one_line(run):
    manifest = run / "manifest.json"
    manifest.write_text('{"seed": ' + HUGE + "}")
    refused(cli(["judge", "quality", run, "--dry-run"]), f"file {manifest}", "(5,000 digits) is out of range")
    assert manifest.read_text() == '{"seed": ' + HUGE + "}"
