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

A feature that reads more of each turn than its embedding declares the turn fields it needs
(``needs``: names of ``engine.corpus.Turn`` fields, e.g. ``("speaker",)`` or ``("text",)``);
they are loaded only when a chosen feature asks, and it reads them as ``chunk.turns[field]``
(``chunk.speakers`` and ``chunk.texts`` for short): one sequence of values per conversation,
aligned with its embedded turns. ``needs_speakers=True`` is kept as another way to say
``needs=("speaker",)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Mapping, Sequence

import numpy as np

# what a feature may declare it needs: the fields of ``engine.corpus.Turn`` (a test checks it)
TURN_FIELDS = ("speaker", "text", "round", "phase", "tokens", "latency_s", "prompt_hash", "meta")


@dataclass(frozen=True)
class Feature:
    """One registered conversation measure (see ``engine.measures.registry``)."""

    name: str  # the column it is written under
    label: str  # what a chart or picker says
    compute: Callable[["Chunk"], np.ndarray]
    reference: str  # the paper and its table or equation
    min_turns: int = 2  # below this a conversation gets ``short_value``
    short_value: float = math.nan
    needs_speakers: bool = False  # the same as "speaker" in ``needs`` (kept for older plugins)
    grows_with_length: bool = False  # tends to grow with the number of turns: compare at equal lengths
    paper_a: bool = False  # one of paper A's nine (Table 19): regressions, published numbers
    description: str = ""
    needs: tuple[str, ...] = ()  # turn fields read beside the embeddings (``TURN_FIELDS``)
    version: str = "1"  # changed when ``compute`` gives other values: values cached at read are keyed by it

    def __post_init__(self):
        needs = (self.needs,) if isinstance(self.needs, str) else tuple(self.needs)
        needs += ("speaker",) if self.needs_speakers and "speaker" not in needs else ()
        object.__setattr__(self, "needs", needs)
        object.__setattr__(self, "needs_speakers", "speaker" in needs)
        unknown = [n for n in needs if n not in TURN_FIELDS]
        if unknown:
            raise ValueError(f"feature {self.name!r}: needs {unknown}, not turn fields; "
                             f"known: {', '.join(TURN_FIELDS)}")
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
                 speakers: Sequence[Sequence[str]] | None = None,
                 turns: Mapping[str, Sequence[Sequence]] | None = None):
        self.x = x
        self.batch, self.n, self.dim = x.shape
        self.kmeans = kmeans
        self.turns = dict(turns or {})  # turn field -> one sequence per conversation
        if speakers is not None:
            self.turns["speaker"] = speakers

    @property
    def speakers(self) -> Sequence[Sequence[str]] | None:
        return self.turns.get("speaker")

    @property
    def texts(self) -> Sequence[Sequence[str]] | None:
        return self.turns.get("text")

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
