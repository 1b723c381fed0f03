"""The nine semantic-trajectory features of paper A, Table 19.

A conversation is an ordered ``(n_turns, dim)`` array of turn embeddings; ``d_cos`` is the
cosine distance ``1 - u.v / (|u| |v|)``. Conventions for short conversations follow the
authors' released script (``scripts/compute_trajectory_metrics.py`` in
pitehu/llm_multiagent_creativity), so our numbers line up with the release:

=====================  =====================================================  ==========
feature                definition (Table 19)                                   NaN when
=====================  =====================================================  ==========
local_coherence        mean_i (1 - d_cos(e_i, e_i+1))                          n < 2
global_coherence       mean_i (1 - d_cos(e_i, centroid))                       n < 2
path_length            sum_i d_cos(e_i, e_i+1)                                 never (0 if n < 2)
convergence_ratio      (D_first_half - D_second_half) / D_first_half,          n < 4
                       D = mean pairwise d_cos, halves split at n // 2;
                       0 when D_first_half is 0
max_distance           max_{i<j} d_cos(e_i, e_j)                               n < 2
trajectory_curvature   mean_i arccos(cos angle(Δ_i, Δ_i+1)) in radians,        n < 3, or no
                       Δ_i = e_i+1 - e_i; zero-length steps are skipped        usable step pair
topic_switching_rate   label changes / (n - 1), k-means k=3 (random_state=42,  n < 4
                       n_init=10) on the raw embeddings
revisit_score          max_{i in late, j in early} (1 - d_cos(e_i, e_j)),      n < 6
                       early/late = first/last int(0.3 n) turns
semantic_spread        population SD of |e_i - centroid|_2                     n < 2
=====================  =====================================================  ==========

``trajectory_features`` computes one conversation (k-means by scikit-learn, as the paper);
``features_for_corpus`` computes many at once, batching conversations of equal length
through numpy and running k-means for the whole batch in kernel space (see
``batched_kmeans_labels``). Both give the same numbers; batched k-means finds the same
partition as scikit-learn on all but rare ties (pass ``kmeans="sklearn"`` for exact).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Sequence

import numpy as np

FEATURE_NAMES = (
    "local_coherence", "global_coherence", "path_length", "convergence_ratio", "max_distance",
    "trajectory_curvature", "topic_switching_rate", "revisit_score", "semantic_spread",
)
N_CLUSTERS = 3
KMEANS_SEED = 42
KMEANS_INITS = 10
REVISIT_FRACTION = 0.3


def trajectory_features(embeddings: np.ndarray) -> dict[str, float]:
    """The nine Table 19 features of one conversation, an ``(n_turns, dim)`` array."""
    x = _as_matrix(embeddings)
    labels = _sklearn_labels(x) if len(x) >= N_CLUSTERS + 1 else None
    batch = _features_same_length(x[None], None if labels is None else labels[None])
    return {name: float(batch[name][0]) for name in FEATURE_NAMES}


def features_for_corpus(conversations: Sequence[np.ndarray] | Iterable[np.ndarray], *,
                        kmeans: str = "batched", progress: bool = False) -> "pandas.DataFrame":
    """Table 19 features for many conversations; one row per input, in input order.

    ``kmeans`` is ``"batched"`` (fast, numpy, equal partitions to scikit-learn except on
    rare ties) or ``"sklearn"`` (scikit-learn's KMeans per conversation, as the paper).
    """
    import pandas as pd

    arrays = [_as_matrix(e) for e in conversations]
    if kmeans not in ("batched", "sklearn"):
        raise ValueError(f"kmeans must be 'batched' or 'sklearn', got {kmeans!r}")
    out = np.full((len(arrays), len(FEATURE_NAMES)), np.nan)
    by_shape: dict[tuple[int, int], list[int]] = defaultdict(list)
    for position, array in enumerate(arrays):
        by_shape[array.shape].append(position)
    groups = sorted(by_shape.items())
    iterator = groups
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(groups, desc="features (length groups)", unit="group")
    for (n_turns, _), positions in iterator:
        stacked = np.stack([arrays[p] for p in positions])
        labels = None
        if n_turns >= N_CLUSTERS + 1:
            if kmeans == "sklearn":
                labels = np.stack([_sklearn_labels(x) for x in stacked])
            else:
                labels = batched_kmeans_labels(stacked)
        values = _features_same_length(stacked, labels)
        for column, name in enumerate(FEATURE_NAMES):
            out[positions, column] = values[name]
    return pd.DataFrame(out, columns=list(FEATURE_NAMES))


def _as_matrix(embeddings) -> np.ndarray:
    x = np.asarray(embeddings, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected an (n_turns, dim) array, got shape {x.shape}")
    return x


def _features_same_length(x: np.ndarray, labels: np.ndarray | None) -> dict[str, np.ndarray]:
    """All nine features for a batch ``x`` of shape (batch, n, dim), vectorised."""
    batch, n, _ = x.shape
    nan = np.full(batch, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        norms = np.linalg.norm(x, axis=2)
        unit = x / norms[..., None]
        similarity = unit @ unit.transpose(0, 2, 1)  # cosine similarity, (batch, n, n)
        centroid = x.mean(axis=1) if n else np.full((batch, x.shape[2]), np.nan)

        if n >= 2:
            step_similarity = np.diagonal(similarity, offset=1, axis1=1, axis2=2)
            local = step_similarity.mean(axis=1)
            path = (1.0 - step_similarity).sum(axis=1)
            centroid_norm = np.linalg.norm(centroid, axis=1)
            to_centroid = np.einsum("bnd,bd->bn", unit, centroid) / centroid_norm[:, None]
            global_ = to_centroid.mean(axis=1)
            upper = np.triu_indices(n, k=1)
            max_distance = (1.0 - similarity[:, upper[0], upper[1]]).max(axis=1)
            spread = np.linalg.norm(x - centroid[:, None, :], axis=2).std(axis=1)
        else:
            local = global_ = max_distance = spread = nan
            path = np.zeros(batch)

        convergence = nan
        if n >= 4:
            mid = n // 2
            early = _mean_pairwise_distance(similarity[:, :mid, :mid])
            late = _mean_pairwise_distance(similarity[:, mid:, mid:])
            convergence = np.where(early > 0, (early - late) / np.where(early > 0, early, 1.0), 0.0)

        curvature = nan
        if n >= 3:
            steps = np.diff(x, axis=1)
            step_norms = np.linalg.norm(steps, axis=2)
            usable = (step_norms[:, :-1] > 1e-10) & (step_norms[:, 1:] > 1e-10)
            safe = np.where(step_norms > 1e-10, step_norms, 1.0)
            cosines = np.einsum("bnd,bnd->bn", steps[:, :-1], steps[:, 1:]) / (safe[:, :-1] * safe[:, 1:])
            angles = np.where(usable, np.arccos(np.clip(cosines, -1.0, 1.0)), 0.0)
            counts = usable.sum(axis=1)
            curvature = np.where(counts > 0, angles.sum(axis=1) / np.maximum(counts, 1), np.nan)

        revisit = nan
        if n >= 6:
            window = int(n * REVISIT_FRACTION)
            revisit = similarity[:, n - window:, :window].reshape(batch, -1).max(axis=1)

        switching = nan
        if labels is not None:
            switching = (labels[:, 1:] != labels[:, :-1]).sum(axis=1) / (n - 1)

    return {"local_coherence": local, "global_coherence": global_, "path_length": path,
            "convergence_ratio": convergence, "max_distance": max_distance,
            "trajectory_curvature": curvature, "topic_switching_rate": switching,
            "revisit_score": revisit, "semantic_spread": spread}


def _mean_pairwise_distance(similarity_block: np.ndarray) -> np.ndarray:
    m = similarity_block.shape[1]
    upper = np.triu_indices(m, k=1)
    return (1.0 - similarity_block[:, upper[0], upper[1]]).mean(axis=1)


def _sklearn_labels(x: np.ndarray) -> np.ndarray:
    """k-means labels exactly as the paper computed them (scikit-learn, k=3, seed 42)."""
    import warnings

    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return KMeans(n_clusters=N_CLUSTERS, random_state=KMEANS_SEED,
                      n_init=KMEANS_INITS).fit_predict(x)


def batched_kmeans_labels(x: np.ndarray, n_clusters: int = N_CLUSTERS, n_init: int = KMEANS_INITS,
                          max_iter: int = 300, seed: int = KMEANS_SEED) -> np.ndarray:
    """Lloyd's k-means for a batch of equal-length conversations at once, in kernel space.

    ``x`` is (batch, n, dim). Squared distances to centroids come from the Gram matrix
    ``G = X X^T``: ``|x_i - c_j|^2 = G_ii - 2 mean_{l in C_j} G_il + mean_{l,m in C_j} G_lm``,
    so an iteration costs O(n^2 k) per conversation instead of O(n k dim).

    The seeding replays scikit-learn's: each conversation gets a fresh
    ``RandomState(seed)``, so every conversation sees the same stream of uniforms, and
    greedy k-means++ (2 + log k local trials per centre) consumes them in the same order
    (one draw for the first centre, then one per local trial). Restarts run to label
    stability and the lowest inertia wins, as in ``sklearn.cluster.KMeans``.
    Returns labels (batch, n).
    """
    batch, n, _ = x.shape
    trials = 2 + int(np.log(n_clusters))
    stream = np.random.RandomState(seed)
    draws = [(stream.random_sample(), [stream.uniform(size=trials) for _ in range(n_clusters - 1)])
             for _ in range(n_init)]
    centred = x - x.mean(axis=1, keepdims=True)
    gram = centred @ centred.transpose(0, 2, 1)
    sq_norms = np.einsum("bii->bi", gram)
    best_labels = np.zeros((batch, n), dtype=np.int64)
    best_inertia = np.full(batch, np.inf)
    for first_draw, trial_draws in draws:
        labels = _kmeans_plus_plus_labels(gram, sq_norms, n_clusters, first_draw, trial_draws)
        for _ in range(max_iter):
            new_labels = _kernel_distances(gram, sq_norms, labels, n_clusters).argmin(axis=2)
            if np.array_equal(new_labels, labels):
                break
            labels = new_labels
        distances = _kernel_distances(gram, sq_norms, labels, n_clusters)
        inertia = np.take_along_axis(distances, labels[..., None], axis=2)[..., 0].sum(axis=1)
        better = inertia < best_inertia * (1.0 - 1e-12)
        best_inertia[better] = inertia[better]
        best_labels[better] = labels[better]
    return best_labels


def _kernel_distances(gram, sq_norms, labels, n_clusters):
    one_hot = (labels[..., None] == np.arange(n_clusters)).astype(gram.dtype)  # (b, n, k)
    counts = one_hot.sum(axis=1)  # (b, k)
    safe = np.where(counts > 0, counts, 1.0)
    cross = gram @ one_hot  # (b, n, k): sum over members of G_il
    within = np.einsum("bnk,bnk->bk", one_hot, cross)  # sum over members l, m of G_lm
    distances = sq_norms[..., None] - 2.0 * cross / safe[:, None, :] + (within / safe**2)[:, None, :]
    return np.where(counts[:, None, :] > 0, np.maximum(distances, 0.0), np.inf)


def _kmeans_plus_plus_labels(gram, sq_norms, n_clusters, first_draw, trial_draws):
    """Greedy k-means++ seeding driven by given uniforms; returns the initial labels."""
    batch, n = sq_norms.shape
    rows = np.arange(batch)
    cdf = np.full(n, 1.0 / n).cumsum()
    cdf /= cdf[-1]
    first = int(cdf.searchsorted(first_draw, side="right"))
    centers = np.empty((batch, n_clusters), dtype=np.int64)
    centers[:, 0] = first

    def distance_to(index):  # squared distance of every point to point ``index`` (b, n)
        return np.maximum(sq_norms - 2.0 * gram[rows, index] + sq_norms[rows, index][:, None], 0.0)

    closest = distance_to(centers[:, 0])
    for c in range(1, n_clusters):
        potential = closest.sum(axis=1)
        cumulative = np.cumsum(closest, axis=1)
        targets = np.asarray(trial_draws[c - 1])[None, :] * potential[:, None]
        candidates = np.minimum((cumulative[:, None, :] < targets[..., None]).sum(axis=2), n - 1)
        best_candidate = candidates[:, 0]
        best_potential = np.full(batch, np.inf)
        best_closest = closest
        for t in range(candidates.shape[1]):
            trial_closest = np.minimum(closest, distance_to(candidates[:, t]))
            trial_potential = trial_closest.sum(axis=1)
            better = trial_potential < best_potential
            best_potential = np.where(better, trial_potential, best_potential)
            best_candidate = np.where(better, candidates[:, t], best_candidate)
            best_closest = np.where(better[:, None], trial_closest, best_closest)
        centers[:, c] = best_candidate
        closest = best_closest
    center_distances = np.stack([distance_to(centers[:, c]) for c in range(n_clusters)], axis=2)
    return center_distances.argmin(axis=2)
