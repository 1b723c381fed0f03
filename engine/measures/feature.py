"""What a conversation measure is: a ``Feature`` record and the ``Chunk`` it is computed from.

A feature is computed for a chunk of conversations of one length at a time (``engine.
measures.compute`` makes the chunks). ``Chunk`` holds the float64 turn embeddings of the
chunk, shape ``(batch, n, dim)``, and derives, once and only when first asked, what several
features share: the Gram matrix ``G = X X^T``, the turn norms, the cosine similarities
``G_ij / sqrt(G_ii G_jj)`` (SciPy's formula), the row means of ``G`` (``x_i . centroid``),
the centroid, and the unit-length turns. A feature's ``compute`` takes the chunk and returns
one value per conversation, shape ``(batch,)``; the caller has already handled
conversations shorter than ``min_turns`` (they get ``short_value``) and silenced numpy's
divide/invalid warnings (a zero vector gives NaN, as in SciPy).

A feature that needs who spoke each turn (``needs_speakers``) reads ``chunk.speakers``: one
sequence of speaker labels per conversation, aligned with its turns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Sequence

import numpy as np


@dataclass(frozen=True)
class Feature:
    """One registered conversation measure (see ``engine.measures.registry``)."""

    name: str  # the column it is written under
    label: str  # what a chart or picker says
    compute: Callable[["Chunk"], np.ndarray]
    reference: str  # the paper and its table or equation
    min_turns: int = 2  # below this a conversation gets ``short_value``
    short_value: float = math.nan
    needs_speakers: bool = False
    grows_with_length: bool = False  # tends to grow with the number of turns: compare at equal lengths
    paper_a: bool = False  # one of paper A's nine (Table 19): regressions, published numbers
    description: str = ""

    def __post_init__(self):
        if not self.name.isidentifier():
            raise ValueError(f"feature name {self.name!r} must be an identifier (a column name)")
        if not callable(self.compute):
            raise TypeError(f"feature {self.name!r}: compute must be callable")
        if self.min_turns < 0:
            raise ValueError(f"feature {self.name!r}: min_turns must be at least 0")


class Chunk:
    """Conversations of one length, shape ``(batch, n, dim)`` in float64, and what features
    share of them, each computed on first use."""

    def __init__(self, x: np.ndarray, *, kmeans: str = "batched",
                 speakers: Sequence[Sequence[str]] | None = None):
        self.x = x
        self.batch, self.n, self.dim = x.shape
        self.kmeans = kmeans
        self.speakers = speakers

    @cached_property
    def gram(self) -> np.ndarray:
        return self.x @ self.x.transpose(0, 2, 1)

    @cached_property
    def norms(self) -> np.ndarray:
        return np.sqrt(np.einsum("bii->bi", self.gram))

    @cached_property
    def similarity(self) -> np.ndarray:
        """Cosine similarity of every pair of turns, (batch, n, n)."""
        return self.gram / (self.norms[:, :, None] * self.norms[:, None, :])

    @cached_property
    def step_similarity(self) -> np.ndarray:
        """Cosine similarity of each turn with the next, (batch, n - 1)."""
        return np.diagonal(self.similarity, offset=1, axis1=1, axis2=2)

    @cached_property
    def row_means(self) -> np.ndarray:
        """Row means of the Gram matrix: ``x_i . centroid``, (batch, n)."""
        return self.gram.mean(axis=2)

    @cached_property
    def upper(self) -> tuple[np.ndarray, np.ndarray]:
        """Indices of the pairs ``i < j``."""
        return np.triu_indices(self.n, k=1)

    @cached_property
    def unit(self) -> np.ndarray:
        """The turns scaled to unit length, (batch, n, dim); a zero turn gives NaN."""
        return self.x / self.norms[:, :, None]
