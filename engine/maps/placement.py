"""Placing turns on a fitted UMAP map: neighbours in the fitted turns, then their weighted mean.

UMAP's ``transform`` (McInnes et al. 2018, §3 and umap-learn's ``UMAP.transform``) places
a new point by (1) finding its k nearest neighbours among the fitted points, (2) turning
their distances into membership strengths ``w_j = exp(-(d_j - rho) / sigma)`` with ``sigma``
solved so the strengths sum to ``log2(k)`` (``smooth_knn_dist``), (3) starting it at the
strength-weighted mean of its neighbours' map positions, and (4) moving it for 30 epochs of
attraction to those neighbours and repulsion from random fitted points (the fitted points
stay fixed). ``place_turns`` does (1)-(3), and (4) only when ``n_epochs > 0``.

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
in Python, about 20 µs a turn).
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


def place_turns(fitted, rows: np.ndarray, epsilon: float = SEARCH_EPSILON) -> np.ndarray:
    """``(n, 2)`` map positions of ``rows`` on the fitted UMAP map (steps 1-3 above)."""
    indices, distances = neighbours(fitted, rows, epsilon)
    strengths = membership_strengths(distances, indices.shape[1])
    return weighted_positions(indices, strengths, np.asarray(fitted.embedding_))
