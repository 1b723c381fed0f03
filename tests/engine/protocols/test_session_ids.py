"""The ids of the cached runs' sessions recompute, unchanged, from the options they recorded.

A session's id is ``method-task-<options hash>-<prompt hash>-r<replicate>``
(``engine.runs.grid.session_stem``); resuming a run finds its finished sessions by it, so no
change to the options' model (``engine.protocols.config``: a method's own options model, the
shared ``ProtocolConfig``, ``LATER_OPTIONS``) may change the id of an existing configuration.
Each ``cached_runs/local_smollm2*`` dataset keeps the grid it was run from (its manifest's
``run.config``) and the ids its runs wrote; planning that grid again must give them back.

Two kinds of recorded id are older than today's: ids written before the prompt hash was part
of them (``method-task-<options hash>-r<replicate>``), compared without it; and paper A's
structures run before ``fidelity`` existed (their meta has no ``fidelity``), whose ids changed
on purpose when it came in (the comment on ``LATER_OPTIONS``): those, and only those, differ.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from engine.names import PAPER_A
from engine.runs.grid import load_grid, plan

ROOT = Path(__file__).resolve().parents[3]
DATASETS = sorted(p.parent for p in (ROOT / "cached_runs").glob("local_smollm2*/manifest.json"))
PROMPT_HASH = re.compile(r"-[0-9a-f]{8}(-r\d+)$")


def test_there_are_cached_runs_to_check():
    assert len(DATASETS) >= 5, DATASETS


@pytest.mark.parametrize("folder", DATASETS, ids=lambda p: p.name)
def test_recorded_session_ids_recompute_from_the_recorded_grid(folder):
    corpus = pd.read_parquet(folder / "corpus.parquet", columns=["conversation_id", "protocol", "meta"])
    grid = json.loads((folder / "manifest.json").read_text())["run"]["config"]
    planned = {spec.conversation_id for spec in plan(load_grid(grid))}
    without_prompt_hash = {PROMPT_HASH.sub(r"\1", cid) for cid in planned}
    differ = {cid for cid in corpus["conversation_id"] if cid not in planned and cid not in without_prompt_hash}
    before_fidelity = {row.conversation_id for row in corpus.itertuples()
                       if row.protocol in PAPER_A and "fidelity" not in json.loads(row.meta)}
    assert differ == before_fidelity
    assert len(differ) < len(corpus)  # most ids are checked
