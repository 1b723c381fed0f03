"""Turn embeddings on disk, read per conversation: an embeddings ``.npy`` and its index.

``embed`` writes a ``(turns, dim)`` array and an index parquet naming each row's
``conversation_id``, ``turn`` and ``speaker``; ``load_embeddings`` memory-maps the array and
returns ``TurnBlocks``, which hands out one conversation's rows at a time, so a corpus larger
than memory streams through the features (``engine.measures.compute``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from typing import TYPE_CHECKING

from engine.errors import InputError

if TYPE_CHECKING:  # numpy is imported where it is used: the CLI's parser loads this module
    import numpy as np


def default_index_path(embeddings_path: Path) -> Path:
    stem = embeddings_path.stem
    name = stem.replace("embeddings", "index") if "embeddings" in stem else f"{stem}_index"
    return embeddings_path.with_name(name + ".parquet")


def split_rows(vectors: np.ndarray, lengths: list[int]) -> list[np.ndarray]:
    import numpy as np

    bounds = np.cumsum([0, *lengths])
    return [vectors[bounds[i]:bounds[i + 1]] for i in range(len(lengths))]


class TurnBlocks:
    """Per-conversation blocks of a (turns, dim) array, read only when asked for.

    Conversation i is rows ``starts[i]:starts[i] + lengths[i]`` of ``vectors`` or, when the
    file's rows are not in (conversation, turn) order, those positions of ``order``. Rows in
    order (how ``embed`` writes them) give slices, so on a memory-mapped array nothing is
    read or copied until the features reach that conversation.
    """

    def __init__(self, vectors: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                 order: np.ndarray | None):
        self.vectors, self.starts, self.lengths, self.order = vectors, starts, lengths, order
        self.speakers: list[list[str]] | None = None  # per conversation, when the index has them

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, i: int) -> np.ndarray:
        start, stop = int(self.starts[i]), int(self.starts[i] + self.lengths[i])
        if self.order is None:
            return self.vectors[start:stop]
        return self.vectors[self.order[start:stop]]

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def load_embeddings(path: Path, index_path: Path | None) -> tuple[list[str], TurnBlocks]:
    """(conversation ids, per-conversation arrays in turn order) from ``embed``'s output.

    The ``.npy`` is memory-mapped: a corpus larger than memory streams through ``features``.
    """
    import numpy as np
    import pandas as pd

    from engine.embedding.embedder import read_embeddings

    index_path = index_path or default_index_path(path)
    vectors, index, verified = read_embeddings(path, index_path, mmap=True)
    if not verified:
        print(f"warning: {index_path} records no hash of its embeddings (written by an older "
              f"version): that it belongs to {path.name} is not verified; run `embed` again "
              f"to check it", file=sys.stderr)
    for column in ("conversation_id", "turn"):
        if column not in index.columns:
            raise InputError("missing column", path=str(index_path), field=column)
    duplicated = index.duplicated(["conversation_id", "turn"])
    if duplicated.any():
        row = int(np.flatnonzero(duplicated.to_numpy())[0]) + 1
        raise InputError("duplicate (conversation_id, turn)", path=str(index_path), row=row,
                         field="turn")
    codes, ids = pd.factorize(index["conversation_id"], sort=False)  # ids in order of appearance
    order = np.lexsort((index["turn"].to_numpy(), codes))
    lengths = np.bincount(codes, minlength=len(ids))
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    in_place = bool(np.array_equal(order, np.arange(len(order))))
    blocks = TurnBlocks(vectors, starts, lengths, None if in_place else order)
    if "speaker" in index.columns:  # one label per turn, in each conversation's turn order
        labels = index["speaker"].astype(str).to_numpy()[order]
        blocks.speakers = [labels[s:s + n].tolist() for s, n in zip(starts, lengths)]
    return [str(i) for i in ids], blocks
