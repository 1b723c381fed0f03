"""Placing turns on a fitted UMAP map: neighbours in the fitted turns, then their weighted mean.

UMAP's ``transform`` (McInnes et al. 2018, §3 and umap-learn's ``UMAP.transform``) places
a new point by (1) finding its k nearest neighbours among the fitted points, (2) turning
their distances into membership strengths ``w_j = exp(-(d_j - rho) / sigma)`` with ``sigma``
solved so the strengths sum to ``log2(k)`` (``smooth_knn_dist``), (3) starting it at the
strength-weighted mean of its neighbours' map positions, and (4) moving it for 30 epochs of
attraction to those neighbours and repulsion from random fitted points (the fitted points
stay fixed). ``place_turns`` does the same four steps, with two changes.

What it changes and why: umap-learn searches the neighbour graph with ``epsilon=0.24`` (its
angular-tree default). When a turn is far from every fitted turn (a conversation none of
whose turns were in the fitted sample, so its topics were never seen), all fitted turns are
at about the same distance, the search's bound ``(1 + epsilon) x`` the k-th distance admits
almost all of them, and it visits most of the graph: the per-turn cost then grows with the
share of such turns, which grows with the corpus once the fit is capped
(``engine.maps.projection.MAX_FIT_TURNS``). ``SEARCH_EPSILON`` (0.1) bounds that growth; the
neighbours found for turns near fitted turns are the same or nearly (the trustworthiness at
k = 15 is compared with umap-learn's own ``transform`` in ``benchmarks.bench_scale`` and in
``tests/engine/maps/test_placement.py``). Step (3) is vectorised (umap-learn loops over rows
in Python, about 20 µs a turn). Without step (4) the turns sit at their neighbours' weighted
means, pulled together: trustworthiness fell from 0.88 to 0.69 on a synthetic test, so the
30 epochs stay.
"""

from __future__ import annotations

import numpy as np

from engine.maps.compiled_cache import import_umap

SEARCH_EPSILON = 0.1  # umap-learn's transform uses 0.24 with angular trees (cosine)
SEARCH_ROWS = 8_192  # turns per neighbour query: bounded memory for the query's heaps


def neighbours(fitted, rows: np.ndarray, epsilon: float = SEARCH_EPSILON) -> tuple[np.ndarray, np.ndarray]:
    """Indices and distances (n, k) of each row's ``fitted.n_neighbors`` nearest fitted turns,
    by the fitted map's own search index (pynndescent, the map's metric)."""
    index = fitted._knn_search_index  # noqa: SLF001 - umap-learn keeps its query index here
    k = int(fitted._n_neighbors)  # noqa: SLF001 - the k it was fitted with (capped by its size)
    found_indices = np.empty((len(rows), k), dtype=np.int32)
    found_distances = np.empty((len(rows), k), dtype=np.float32)
    for first in range(0, len(rows), SEARCH_ROWS):
        part = np.ascontiguousarray(rows[first:first + SEARCH_ROWS], dtype=np.float32)
        indices, distances = index.query(part, k, epsilon=epsilon)
        found_indices[first:first + len(part)] = indices
        found_distances[first:first + len(part)] = distances
    return found_indices, found_distances


def membership_strengths(distances: np.ndarray, k: int) -> np.ndarray:
    """``exp(-(d - rho) / sigma)`` per neighbour, as umap-learn's transform computes them
    (``smooth_knn_dist`` with local connectivity 0, so ``rho = 0``)."""
    import_umap()  # umap-learn with its compiled code cached (engine.maps.compiled_cache)
    from umap.umap_ import smooth_knn_dist

    sigmas, rhos = smooth_knn_dist(distances, float(k), local_connectivity=0.0)
    excess = distances - rhos[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        strengths = np.exp(-excess / sigmas[:, None])
    # umap-learn's compute_membership_strengths: strength 1 at or below rho, or when sigma is 0
    strengths[(excess <= 0.0) | (sigmas[:, None] == 0.0)] = 1.0
    return strengths.astype(np.float32)


def weighted_positions(indices: np.ndarray, strengths: np.ndarray, embedding: np.ndarray) -> np.ndarray:
    """Each row at the strength-weighted mean of its neighbours' positions; a row with a
    neighbour of strength 1 exactly (the same point) at that neighbour, as umap-learn does."""
    strengths = np.where(indices < 0, 0.0, strengths)
    neighbour_xy = embedding[np.maximum(indices, 0)].astype(np.float64)  # (n, k, 2)
    total = strengths.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        positions = (strengths[:, :, None] * neighbour_xy).sum(axis=1) / total
    same = strengths == 1.0
    has_same = same.any(axis=1)
    if has_same.any():
        first_same = same.argmax(axis=1)
        positions[has_same] = neighbour_xy[has_same, first_same[has_same]]
    return positions


def transform_epochs(n_rows: int) -> int:
    """umap-learn's transform: 100 epochs for at most 10,000 new points, 30 above."""
    return 100 if n_rows <= 10_000 else 30


def refine(fitted, positions: np.ndarray, indices: np.ndarray, strengths: np.ndarray,
           n_epochs: int) -> np.ndarray:
    """Step (4): umap-learn's layout optimiser moving only the new points (attraction along
    their neighbour edges, repulsion from sampled fitted points), with the transform's settings:
    edges weaker than max/n_epochs dropped, a quarter of the fit's learning rate, the map's
    ``transform_seed``, single-threaded."""
    from umap.layouts import optimize_layout_euclidean
    from umap.umap_ import make_epochs_per_sample

    rows = np.repeat(np.arange(len(indices)), indices.shape[1])
    weights = np.where(indices < 0, 0.0, strengths).ravel().astype(np.float32)
    keep = weights >= weights.max() / float(n_epochs)
    head, tail, weights = rows[keep].astype(np.int32), indices.ravel()[keep].astype(np.int32), weights[keep]
    state = np.random.RandomState(fitted.transform_seed)
    rng_state = state.randint(np.iinfo(np.int32).min + 1, np.iinfo(np.int32).max - 1, 3).astype(np.int64)
    return optimize_layout_euclidean(
        positions.astype(np.float32), np.asarray(fitted.embedding_, dtype=np.float32).copy(), head, tail,
        n_epochs, len(fitted.embedding_), make_epochs_per_sample(weights, n_epochs), fitted._a, fitted._b,  # noqa: SLF001
        rng_state, fitted.repulsion_strength, fitted._initial_alpha / 4.0,  # noqa: SLF001
        fitted.negative_sample_rate, False, verbose=False, tqdm_kwds={"disable": True})


def place_turns(fitted, rows: np.ndarray, epsilon: float = SEARCH_EPSILON,
                n_epochs: int | None = None) -> np.ndarray:
    """``(n, 2)`` map positions of ``rows`` on the fitted UMAP map (steps 1-4 above; epochs as
    umap-learn's transform unless ``n_epochs`` is given; no step 4 when it is 0)."""
    n_epochs = transform_epochs(len(rows)) if n_epochs is None else int(n_epochs)
    indices, distances = neighbours(fitted, rows, epsilon)
    strengths = membership_strengths(distances, indices.shape[1])
    positions = weighted_positions(indices, strengths, np.asarray(fitted.embedding_))
    if n_epochs <= 0:
        return positions
    return refine(fitted, positions, indices, strengths, n_epochs).astype(np.float64)
