"""A large dataset for tests of the map past what a browser draws as points: the cached local
runs' real conversations repeated ``copies`` times (ids suffixed ``~k``), each copy's turn
embeddings moved by a little seeded Gaussian noise so the copies do not sit on one another."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
LOCAL = REPO / "cached_runs" / "local_smollm2"


def tiled_dataset(folder: Path, copies: int, noise: float = 0.02, seed: int = 0) -> Path:
    """``folder`` holding the local runs repeated ``copies`` times (see the module docstring)."""
    from engine.corpus import Corpus
    from engine.datasets import Dataset

    source = Dataset.load(LOCAL)
    rng = np.random.default_rng(seed)
    conversations, indexes, blocks, corpus = [], [], [], Corpus(name="tiled")
    for copy in range(copies):
        rename = lambda cid: f"{cid}~{copy}"  # noqa: E731
        conversations.append(source.conversations.assign(conversation_id=source.conversations["conversation_id"].map(rename)))
        indexes.append(source.turn_index.assign(conversation_id=source.turn_index["conversation_id"].map(rename)))
        blocks.append(source.turn_embeddings + rng.normal(0, noise, source.turn_embeddings.shape).astype(np.float32))
        for conversation in source.corpus:
            corpus.add(dataclasses.replace(conversation, conversation_id=rename(conversation.conversation_id)))
    manifest = {**source.manifest, "name": folder.name,
                "description": f"test data: the local runs repeated {copies} times with embedding noise {noise}"}
    Dataset(name=folder.name, conversations=pd.concat(conversations, ignore_index=True), manifest=manifest,
            corpus=corpus, turn_embeddings=np.vstack(blocks),
            turn_index=pd.concat(indexes, ignore_index=True)).save(folder)
    return folder
