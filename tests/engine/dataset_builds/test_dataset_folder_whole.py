"""A dataset folder is one whole: the shipped datasets record the SHA-256 of their files in their
manifest (``engine.datasets.check_whole``) and a ``dataset-build.json`` naming every file
(``engine.dataset_builds.output_folder``); digests here are computed with hashlib, apart from
the code under test."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from engine.dataset_builds.output_folder import check_target
from engine.datasets import Dataset

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ("local_smollm2", "local_smollm2_fidelity", "local_smollm2_paper_b", "local_smollm2_steered",
           "paper_release")
CORE = ("conversations.parquet", "corpus.parquet", "turn_embeddings.npy", "turn_index.parquet")


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_dataset_records_its_files_and_loads_whole(name):
    folder = ROOT / "cached_runs" / name
    manifest = json.loads((folder / "manifest.json").read_text())
    present = [n for n in CORE if (folder / n).exists()]
    assert manifest["files_sha256"] == {n: hashlib.sha256((folder / n).read_bytes()).hexdigest()
                                        for n in present}
    marker = json.loads((folder / "dataset-build.json").read_text())
    assert marker["files"] == sorted(p.name for p in folder.iterdir()
                                     if p.name not in ("dataset-build.json", ".run.lock"))
    check_target(folder)  # a rebuild (make cached-runs) may replace it
    assert len(Dataset.load(folder, with_corpus=False).conversations) == manifest["n_conversations"]


def test_a_dataset_saved_before_digests_were_recorded_still_loads(tmp_path):
    import pandas as pd

    folder = tmp_path / "old"
    folder.mkdir()
    pd.DataFrame({"conversation_id": ["a", "b"]}).to_parquet(folder / "conversations.parquet")
    (folder / "manifest.json").write_text('{"name": "old"}')
    assert list(Dataset.load(folder).conversations["conversation_id"]) == ["a", "b"]
