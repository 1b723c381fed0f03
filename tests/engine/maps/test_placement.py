"""Placing turns on a fitted UMAP map (engine.maps.placement)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.maps.placement import membership_strengths, weighted_positions


def test_a_turn_starts_at_the_strength_weighted_mean_of_its_neighbours():
    embedding = np.array([[0.0, 0.0], [3.0, 6.0], [9.0, 9.0]])
    indices = np.array([[0, 1], [2, -1], [1, 2]])
    strengths = np.array([[0.5, 0.25], [0.4, 0.9], [0.3, 1.0]], dtype=np.float32)
    placed = weighted_positions(indices, strengths, embedding)
    # by hand: (0.5 * (0, 0) + 0.25 * (3, 6)) / 0.75 = (1, 2); a missing neighbour (-1) counts
    # nothing; a neighbour of strength 1 (the same point) is taken as it is
    np.testing.assert_allclose(placed, [[1.0, 2.0], [9.0, 9.0], [9.0, 9.0]])


def test_strengths_sum_to_log2_k_as_umap_solves_sigma():
    distances = np.array([[0.1, 0.2, 0.3, 0.5, 0.8], [0.05, 0.06, 0.4, 0.41, 0.9]], dtype=np.float32)
    strengths = membership_strengths(distances, 5)
    # smooth_knn_dist finds sigma with sum_{j >= 2} exp(-(d_j - rho) / sigma) = log2(k) (its sum
    # skips the first neighbour, the point itself in a fit; umap-learn's transform keeps that);
    # rho = 0 here, so the first strength is exp(-d_1 / sigma) with the same sigma
    np.testing.assert_allclose(strengths[:, 1:].sum(axis=1), np.log2(5), rtol=1e-3)
    sigma = -distances[:, 1] / np.log(strengths[:, 1])
    np.testing.assert_allclose(strengths[:, 0], np.exp(-distances[:, 0] / sigma), rtol=1e-4)
    assert (np.diff(strengths, axis=1) <= 0).all()  # nearer neighbours are stronger


@pytest.mark.slow  # a UMAP fit of 4,200 turns (numba code from its disk cache, or compiled)
def test_placement_keeps_neighbours_as_well_as_umap_learns_transform():
    """Trustworthiness at k = 15 (cosine, on the turns of 40 seeded conversations, fitted turns
    at their fitted positions) within 0.02 of umap-learn's own transform with the same map."""
    import warnings

    from sklearn.manifold import trustworthiness

    from benchmarks.synthetic import synthetic_turns
    from engine.maps import projection

    x = synthetic_turns(300, seed=300).reshape(-1, 384)
    fit_mask = projection.fit_sample(np.ones(len(x), dtype=bool), 4_200, 42)
    fitted = projection.fit_umap(x[fit_mask], {"seed": 42, "n_neighbors": 15, "min_dist": 0.1, "metric": "cosine"})
    assert projection.uses_own_placement(fitted)
    rest = np.flatnonzero(~fit_mask)
    ours, theirs = np.empty((len(x), 2)), np.empty((len(x), 2))
    ours[fit_mask] = theirs[fit_mask] = fitted.embedding_
    ours[rest] = projection.place(fitted, x[rest])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*n_jobs value.*")
        theirs[rest] = fitted.transform(x[rest])
    rows = (np.random.default_rng(7).choice(300, 40, replace=False)[:, None] * 30 + np.arange(30)).ravel()
    trust_ours = trustworthiness(x[rows], ours[rows], n_neighbors=15, metric="cosine")
    trust_theirs = trustworthiness(x[rows], theirs[rows], n_neighbors=15, metric="cosine")
    assert trust_theirs > 0.8  # the map keeps the conversations' topics together at all
    assert abs(trust_ours - trust_theirs) <= 0.02, (trust_ours, trust_theirs)
