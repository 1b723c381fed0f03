"""Discursive diversity: how far apart the team members' positions are, on average.

Lix, Goldberg, Srivastava & Valentine (2022), "Aligning differences: discursive diversity
and team performance", Management Science 68, 8430-8448. Each speaker's centroid c_s is the
mean of that speaker's unit-length turn embeddings; discursive diversity is the mean of
1 - cos(c_a, c_b) over all pairs of distinct speakers. Undefined (NaN) with fewer than two
speakers. Lix et al. compute it per time window of a team's chat; here, as for paper A's
nine features, over the whole discussion's turns.
"""

from __future__ import annotations

import math

import numpy as np

from engine.measures.feature import Chunk, Feature


def discursive_diversity(chunk: Chunk) -> np.ndarray:
    """Mean pairwise cosine distance of the speakers' centroids, per conversation (batch,)."""
    out = np.full(chunk.batch, math.nan)
    for b, speakers in enumerate(chunk.speakers):
        labels = np.asarray([str(s) for s in speakers])
        if len(labels) != chunk.n:
            raise ValueError(f"{len(labels)} speaker labels for a conversation of {chunk.n} turns")
        names = np.unique(labels)
        if len(names) < 2:
            continue
        centroids = np.stack([chunk.unit[b, labels == name].mean(axis=0) for name in names])
        norms = np.sqrt(np.einsum("sd,sd->s", centroids, centroids))
        cosines = (centroids @ centroids.T) / (norms[:, None] * norms[None, :])
        first, second = np.triu_indices(len(names), k=1)
        out[b] = (1.0 - cosines[first, second]).mean()
    return out


DISCURSIVE_DIVERSITY = Feature(
    "discursive_diversity", "Discursive diversity", discursive_diversity,
    "Lix et al. (2022), Management Science 68:8430-8448",
    min_turns=2, needs_speakers=True,
    description="mean cosine distance between the speakers' centroids of unit turn embeddings")
