"""Forward flow: how far each turn moves from everything said before it.

Gray, Anderson, Chen, Kelly, Christian, Patrick, Huang, Kenett & Lewis (2019), "Forward flow:
a new measure to quantify free thought and predict creativity", American Psychologist 74,
539-554. With d(i, j) = 1 - cos(e_i, e_j) over a conversation's turn embeddings e_1..e_n, the
flow of turn t >= 2 is the mean of d(t, i) over the earlier turns i < t, and the
conversation's forward flow is the mean of those flows over t = 2..n. Undefined (NaN) below
two turns. Gray et al. apply it to chains of free associations; here the chain is the
team's turns, the same turns as paper A's nine features.
"""

from __future__ import annotations

import numpy as np

from engine.measures.feature import Chunk, Feature


def forward_flow(chunk: Chunk) -> np.ndarray:
    """Mean over t = 2..n of mean_{i<t} (1 - cos(e_t, e_i)), per conversation (batch,)."""
    n = chunk.n
    distance = 1.0 - chunk.similarity
    earlier = np.tril(np.ones((n, n), dtype=bool), k=-1)  # i < t in row t
    flows = np.where(earlier, distance, 0.0).sum(axis=2)[:, 1:] / np.arange(1, n)
    return flows.mean(axis=1)


FORWARD_FLOW = Feature(
    "forward_flow", "Forward flow", forward_flow,
    "Gray et al. (2019), American Psychologist 74:539-554",
    min_turns=2,
    description="mean over turns t >= 2 of the mean cosine distance of turn t to every "
                "earlier turn")
