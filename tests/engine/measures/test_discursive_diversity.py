"""Discursive diversity (Lix et al. 2022, ``engine.measures.discursive_diversity``) against
hand-worked values and a loop written here from its definition."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from engine.measures.compute import features_for_corpus


def cosine_distance(u, v) -> float:
    return 1.0 - float(np.dot(u, v)) / (math.sqrt(float(np.dot(u, u))) * math.sqrt(float(np.dot(v, v))))


def discursive_diversity_by_definition(turns, speakers) -> float:
    """Lix et al. (2022): mean pairwise cosine distance of the speakers' centroids of unit turns."""
    centroids = {}
    for vector, speaker in zip(turns, speakers):
        unit = np.asarray(vector, float) / math.sqrt(float(np.dot(vector, vector)))
        centroids.setdefault(speaker, []).append(unit)
    means = [np.mean(vectors, axis=0) for _, vectors in sorted(centroids.items())]
    pairs = [(a, b) for i, a in enumerate(means) for b in means[i + 1:]]
    if not pairs:
        return math.nan
    return sum(cosine_distance(a, b) for a, b in pairs) / len(pairs)


def one(turns, speakers=None) -> pd.Series:
    table = features_for_corpus([np.asarray(turns, float)],
                                speakers=None if speakers is None else [speakers])
    return table.iloc[0]


def test_discursive_diversity_by_hand():
    # A says (1,0) twice, B says (0,1): centroids orthogonal, distance 1
    row = one([[1, 0], [0, 1], [1, 0]], ["A", "B", "A"])
    assert row["discursive_diversity"] == pytest.approx(1.0, abs=1e-12)
    # three speakers at (1,0), (0,1), (-1,0): pairs 1, 2, 1 -> 4/3
    row = one([[1, 0], [0, 1], [-1, 0]], ["A", "B", "C"])
    assert row["discursive_diversity"] == pytest.approx(4 / 3, abs=1e-12)
    # turns are made unit before averaging: A = unit(2,0) and unit(0,1) -> (0.5, 0.5); B = (0,1)
    row = one([[2, 0], [0, 1], [0, 3]], ["A", "A", "B"])
    assert row["discursive_diversity"] == pytest.approx(1 - 1 / math.sqrt(2), abs=1e-12)
    # one speaker: undefined; two turns, two speakers saying the same: 0 (a tie)
    assert math.isnan(one([[1, 0], [0, 1], [1, 1]], ["A", "A", "A"])["discursive_diversity"])
    assert one([[1, 2], [2, 4]], ["A", "B"])["discursive_diversity"] == pytest.approx(0.0, abs=1e-12)


def test_it_equals_the_definition_on_many_conversations_to_1e_9():
    rng = np.random.default_rng(11)
    conversations, speakers = [], []
    for _ in range(300):
        n = int(rng.integers(1, 14))
        conversations.append(rng.normal(size=(n, 12)))
        speakers.append([f"agent {int(s)}" for s in rng.integers(0, int(rng.integers(1, 4)), size=n)])
    table = features_for_corpus(conversations, speakers=speakers, names=["discursive_diversity"], chunk=7)
    expected = np.array([discursive_diversity_by_definition(c, s) for c, s in zip(conversations, speakers)])
    np.testing.assert_allclose(table["discursive_diversity"], expected, rtol=0, atol=1e-9)
    assert np.isnan(table["discursive_diversity"]).sum() == np.isnan(expected).sum() > 0  # one-speaker talks


def test_its_facts():
    from engine.measures.registry import feature

    diversity = feature("discursive_diversity")
    assert diversity.needs == ("speaker",) and diversity.needs_speakers and not diversity.paper_a
    assert diversity.grows_with_length is False  # a mean over pairs of speakers
    with pytest.raises(ValueError, match="discursive_diversity needs the speaker of every turn"):
        features_for_corpus([np.eye(3)], names=["discursive_diversity"])
