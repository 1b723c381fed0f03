"""Build ``cached_runs/paper_release/``: paper A's released trajectory metrics as a dataset.

Reads the two metrics files of the public release (features from Qwen3-Embedding-0.6B and,
for the robustness check of Table 26, from Qwen3-Embedding-4B) through
``engine.importers.paper_release.read_metrics`` and writes one ``engine.datasets.Dataset``:
3,702 LLM and 308 human-team conversations, one row each. The 4B features sit beside the
0.6B ones as ``<feature>_4b`` columns. The manifest states the source, the CC BY-NC-SA 4.0
licence note and the SHA-256 of each input file. No turns, embeddings or ratings exist in
the release, so the dataset has none.

    python -m engine dataset release [--source DIR] [--out DIR]
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path

import pandas as pd

from engine.datasets import Dataset
from engine.importers.paper_release import (
    LICENCE_NOTE,
    METRICS_4B,
    SUFFIX_4B,
    read_release,
)
from engine.protocols.implementation import PAPER_RELEASE
from engine.stats.reference import RELEASE_EMBEDDING, RELEASE_EMBEDDING_4B

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SOURCE = REPO_ROOT.parent / "shared" / "data" / "paper_release"
DEFAULT_OUT = REPO_ROOT / "cached_runs" / "paper_release"
METRICS_06B = "comprehensive_trajectory_metrics.csv"


def build_table(source: Path) -> pd.DataFrame:
    """One row per conversation: design factors, 0.6B features, and ``*_4b`` features."""
    return read_release(source / METRICS_06B)


def build(source: Path = DEFAULT_SOURCE, out: Path = DEFAULT_OUT) -> Dataset:
    """Read the release in ``source`` and save the dataset into ``out``."""
    source, out = Path(source), Path(out)
    table = build_table(source)
    inputs = {name: _sha256(source / name) for name in (METRICS_06B, METRICS_4B)
              if (source / name).exists()}
    counts = table["source"].value_counts().to_dict()
    manifest = {
        "description": ("Paper A's released per-conversation trajectory metrics (nine Table 19 "
                        "features from Qwen3-Embedding-0.6B; *_4b columns from "
                        "Qwen3-Embedding-4B, Table 26). No turns, embeddings or ratings."),
        "source": "GitHub pitehu/llm_multiagent_creativity, data/ (public release of paper A)",
        "licence": "CC BY-NC-SA 4.0",
        "licence_note": LICENCE_NOTE,
        "made_by": "python -m engine dataset release",
        "inputs_sha256": inputs,
        "embedding_model": RELEASE_EMBEDDING,        # the nine feature columns
        "embedding_model_4b": RELEASE_EMBEDDING_4B,  # the *_4b columns
        "implementation": PAPER_RELEASE,  # the authors' code made the conversations
        "n_conversations": int(len(table)),
        "n_llm": int(counts.get("llm", 0)),
        "n_human": int(counts.get("human", 0)),
        "has": {"turns": False, "turn_embeddings": False, "ratings": False,
                "features_4b": any(c.endswith(SUFFIX_4B) for c in table.columns)},
        "versions": {p: _version(p) for p in ("pandas", "pyarrow")},
    }
    dataset = Dataset(name="paper_release", conversations=table, manifest=manifest)
    dataset.save(out)
    return dataset


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"
