"""Synthetic turn embeddings for the benchmarks: conversations that hop between topics.

Each conversation has three random topic directions; every turn stays on the current
topic or, with probability 0.3, jumps to a random one, and adds noise; turns are unit
length. Written block by block, so 64,000 conversations x 30 turns x 384 dims (2.9 GB of
float32) can go straight into a memory-mapped ``.npy`` without being held in memory.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

BLOCK = 2000


def topic_hopping_block(count: int, n_turns: int = 30, dim: int = 384, *,
                        rng: np.random.Generator) -> np.ndarray:
    """A float32 array (count, n_turns, dim) of unit-length turns."""
    topics = rng.normal(size=(count, 3, dim)).astype(np.float32)
    current = np.zeros(count, dtype=np.int64)
    out = np.empty((count, n_turns, dim), dtype=np.float32)
    rows = np.arange(count)
    for turn in range(n_turns):
        jump = rng.random(count) < 0.3
        current = np.where(jump, rng.integers(3, size=count), current)
        out[:, turn] = topics[rows, current] + 0.8 * rng.normal(size=(count, dim)).astype(np.float32)
    out /= np.linalg.norm(out, axis=2, keepdims=True)
    return out


def synthetic_turns(count: int, n_turns: int = 30, dim: int = 384, seed: int = 0) -> np.ndarray:
    """``count`` conversations in memory, float32 (count, n_turns, dim)."""
    rng = np.random.default_rng(seed)
    blocks = [topic_hopping_block(min(BLOCK, count - start), n_turns, dim, rng=rng)
              for start in range(0, count, BLOCK)]
    return np.concatenate(blocks) if blocks else np.zeros((0, n_turns, dim), np.float32)


def write_synthetic_npy(path: str | Path, count: int, n_turns: int = 30, dim: int = 384,
                        seed: int = 0) -> Path:
    """The same conversations as ``synthetic_turns`` written to a ``.npy`` block by block."""
    path = Path(path)
    rng = np.random.default_rng(seed)
    mapped = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32,
                                       shape=(count, n_turns, dim))
    for start in range(0, count, BLOCK):
        stop = min(count, start + BLOCK)
        mapped[start:stop] = topic_hopping_block(stop - start, n_turns, dim, rng=rng)
    mapped.flush()
    del mapped
    return path
