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

Each feature is a registered ``Feature`` (``engine.measures.feature``) computed from a chunk
of equal-length conversations: one Gram matrix per conversation gives every distance, and
the k-means kernel (see ``batched_kmeans_labels``). ``PAPER_A`` holds the nine records;
``PAPER_A_FEATURES`` their names, which the release importer, the statistics, the diagnosis
and the published comparisons use (``engine.measures.registry`` holds every feature computed,
``engine.measures.compute`` computes a corpus). ``trajectory_features`` computes one
conversation with scikit-learn's k-means, as the paper; batched k-means finds the same
partition on all but rare ties. Values are computed in float64 whatever the input dtype, so
float32 embeddings give the same features as SciPy on the same vectors.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from engine.measures.feature import Chunk, Feature

N_CLUSTERS = 3
KMEANS_SEED = 42
KMEANS_INITS = 10
REVISIT_FRACTION = 0.3


def trajectory_features(embeddings: np.ndarray) -> dict[str, float]:
    """The nine Table 19 features of one conversation, an ``(n_turns, dim)`` array
    (k-means by scikit-learn, as the paper)."""
    x = np.asarray(embeddings, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected an (n_turns, dim) array, got shape {x.shape}")
    values = compute_features(Chunk(x[None], kmeans="sklearn"), PAPER_A)
    return {feature.name: float(values[0, i]) for i, feature in enumerate(PAPER_A)}


def compute_features(chunk: Chunk, features: Sequence[Feature]) -> np.ndarray:
    """The values (batch, len(features)) of a chunk: a conversation shorter than a feature's
    ``min_turns`` gets its ``short_value``; numpy's divide/invalid warnings are silenced (a
    zero vector gives NaN, as in SciPy)."""
    out = np.empty((chunk.batch, len(features)))
    with np.errstate(invalid="ignore", divide="ignore"):
        for column, feature in enumerate(features):
            if chunk.n < feature.min_turns:
                out[:, column] = feature.short_value
            else:
                out[:, column] = feature.compute(chunk)
    return out


# -- the nine features of Table 19, each from the chunk's shared Gram matrix -------------------
def _local_coherence(chunk: Chunk) -> np.ndarray:
    return chunk.step_similarity.mean(axis=1)


def _global_coherence(chunk: Chunk) -> np.ndarray:
    centroid_norm = np.sqrt(chunk.row_means.mean(axis=1))
    return (chunk.row_means / (chunk.norms * centroid_norm[:, None])).mean(axis=1)


def _path_length(chunk: Chunk) -> np.ndarray:
    return (1.0 - chunk.step_similarity).sum(axis=1)


def _convergence_ratio(chunk: Chunk) -> np.ndarray:
    mid = chunk.n // 2
    early = _mean_pairwise_distance(chunk.similarity[:, :mid, :mid])
    late = _mean_pairwise_distance(chunk.similarity[:, mid:, mid:])
    return np.where(early > 0, (early - late) / np.where(early > 0, early, 1.0), 0.0)


def _max_distance(chunk: Chunk) -> np.ndarray:
    upper = chunk.upper
    return (1.0 - chunk.similarity[:, upper[0], upper[1]]).max(axis=1)


def _trajectory_curvature(chunk: Chunk) -> np.ndarray:
    """Step angles from the vectors themselves (differences of Gram entries would lose the
    zero-length steps); a conversation with no usable pair of steps is NaN."""
    x = chunk.x
    steps = x[:, 1:] - x[:, :-1]
    step_norms = np.sqrt(np.einsum("bnd,bnd->bn", steps, steps))
    usable = (step_norms[:, :-1] > 1e-10) & (step_norms[:, 1:] > 1e-10)
    safe = np.where(step_norms > 1e-10, step_norms, 1.0)
    cosines = np.einsum("bnd,bnd->bn", steps[:, :-1], steps[:, 1:]) / (safe[:, :-1] * safe[:, 1:])
    del steps
    angles = np.where(usable, np.arccos(np.clip(cosines, -1.0, 1.0)), 0.0)
    counts = usable.sum(axis=1)
    return np.where(counts > 0, angles.sum(axis=1) / np.maximum(counts, 1), np.nan)


def _topic_switching_rate(chunk: Chunk) -> np.ndarray:
    if chunk.kmeans == "sklearn":
        labels = np.stack([_sklearn_labels(conversation) for conversation in chunk.x])
    else:
        labels = _kernel_kmeans_labels(_double_centred(chunk.gram, chunk.row_means))
    return (labels[:, 1:] != labels[:, :-1]).sum(axis=1) / (chunk.n - 1)


def _revisit_score(chunk: Chunk) -> np.ndarray:
    n = chunk.n
    window = int(n * REVISIT_FRACTION)
    return chunk.similarity[:, n - window:, :window].reshape(chunk.batch, -1).max(axis=1)


def _semantic_spread(chunk: Chunk) -> np.ndarray:
    """Distances to the centroid from the vectors themselves (Gram differences would lose the
    zero spread of repeated turns)."""
    offsets = chunk.x - chunk.x.mean(axis=1)[:, None, :]
    return np.sqrt(np.einsum("bnd,bnd->bn", offsets, offsets)).std(axis=1)


_TABLE_19 = "paper A, Table 19"
PAPER_A = (
    Feature("local_coherence", "Local Coherence", _local_coherence, _TABLE_19, paper_a=True,
            description="mean cosine similarity of consecutive turns"),
    Feature("global_coherence", "Global Coherence", _global_coherence, _TABLE_19, paper_a=True,
            description="mean cosine similarity of each turn to the centroid"),
    Feature("path_length", "Path Length", _path_length, _TABLE_19, short_value=0.0,
            grows_with_length=True, paper_a=True,
            description="sum of cosine distances between consecutive turns"),
    Feature("convergence_ratio", "Convergence Ratio", _convergence_ratio, _TABLE_19, min_turns=4,
            paper_a=True, description="(D_first_half - D_second_half) / D_first_half, D the mean "
                                      "pairwise cosine distance; 0 when D_first_half is 0"),
    Feature("max_distance", "Max Distance", _max_distance, _TABLE_19, grows_with_length=True, paper_a=True,
            description="largest cosine distance between two turns"),
    Feature("trajectory_curvature", "Trajectory Curvature", _trajectory_curvature, _TABLE_19,
            min_turns=3, paper_a=True,
            description="mean angle (radians) between consecutive steps e_i+1 - e_i"),
    Feature("topic_switching_rate", "Topic Switching Rate", _topic_switching_rate, _TABLE_19,
            min_turns=N_CLUSTERS + 1, grows_with_length=True, paper_a=True,
            description="k-means (k=3) label changes per step"),
    Feature("revisit_score", "Revisit Score", _revisit_score, _TABLE_19, min_turns=6, grows_with_length=True, paper_a=True,
            description="largest similarity of a late turn to an early one (first/last 30%)"),
    Feature("semantic_spread", "Semantic Spread", _semantic_spread, _TABLE_19, paper_a=True,
            description="population SD of the turns' distances to the centroid"),
)
# Paper A's nine, in its release's column order: the importers, the statistics, the diagnosis
# and the published comparisons use exactly these (every computed feature: engine.measures.registry)
PAPER_A_FEATURES = tuple(feature.name for feature in PAPER_A)


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
    """k-means labels (batch, n) for a batch ``x`` (batch, n, dim) of equal-length
    conversations, as scikit-learn's ``KMeans(n_clusters, random_state=seed, n_init)``
    would find them (see ``_kernel_kmeans_labels``)."""
    x = np.asarray(x, dtype=np.float64)
    gram = x @ x.transpose(0, 2, 1)
    return _kernel_kmeans_labels(_double_centred(gram, gram.mean(axis=2)), n_clusters, n_init,
                                 max_iter, seed)


def _double_centred(gram: np.ndarray, row_means: np.ndarray) -> np.ndarray:
    """Gram matrix of the mean-centred vectors, ``K_ij = G_ij - m_i - m_j + m`` (``m_i`` the
    row means of ``G``, ``m`` their mean); scikit-learn also centres before k-means."""
    total = row_means.mean(axis=1)
    return gram - row_means[:, :, None] - row_means[:, None, :] + total[:, None, None]


def _kernel_kmeans_labels(kernel: np.ndarray, n_clusters: int = N_CLUSTERS, n_init: int = KMEANS_INITS,
                          max_iter: int = 300, seed: int = KMEANS_SEED) -> np.ndarray:
    """Lloyd's k-means for a batch of conversations at once, in kernel space.

    ``kernel`` is the (batch, n, n) Gram matrix of the centred vectors. Squared distances
    to centroids come from it: ``|x_i - c_j|^2 = K_ii - 2 mean_{l in C_j} K_il +
    mean_{l,m in C_j} K_lm``, so an iteration costs O(n^2 k) per conversation, not O(n k dim).

    The seeding replays scikit-learn's: each conversation gets a fresh
    ``RandomState(seed)``, so every conversation sees the same stream of uniforms, and
    greedy k-means++ (2 + log k local trials per centre) consumes them in the same order
    (one draw for the first centre, then one per local trial). All ``n_init`` restarts run
    side by side (one matrix product per iteration covers them all), each to label
    stability; a conversation leaves the loop once none of its restarts changes. The
    lowest inertia wins, the first one on ties, as in ``sklearn.cluster.KMeans``.
    """
    batch, n, _ = kernel.shape
    trials = 2 + int(np.log(n_clusters))
    stream = np.random.RandomState(seed)
    first_draws = np.empty(n_init)
    trial_draws = np.empty((n_init, n_clusters - 1, trials))
    for restart in range(n_init):
        first_draws[restart] = stream.random_sample()
        for c in range(n_clusters - 1):
            trial_draws[restart, c] = stream.uniform(size=trials)
    sq_norms = np.einsum("bii->bi", kernel)
    # labels are kept (batch, n, restarts): one-hot columns and distances then need no copy
    labels = np.ascontiguousarray(
        _kmeans_plus_plus_labels(kernel, sq_norms, n_clusters, first_draws, trial_draws).transpose(0, 2, 1))
    active = np.arange(batch)
    for _ in range(max_iter):
        current = labels[active]
        new_labels = _kernel_distances(kernel[active], sq_norms[active], current, n_clusters).argmin(axis=3)
        changed = (new_labels != current).any(axis=(1, 2))
        labels[active] = new_labels
        active = active[changed]
        if not len(active):
            break
    distances = _kernel_distances(kernel, sq_norms, labels, n_clusters)
    inertia = np.take_along_axis(distances, labels[..., None], axis=3)[..., 0].sum(axis=1)  # (b, r)
    best = np.zeros(batch, dtype=np.int64)
    best_inertia = inertia[:, 0].copy()
    for restart in range(1, n_init):
        better = inertia[:, restart] < best_inertia * (1.0 - 1e-12)
        best_inertia[better] = inertia[better, restart]
        best[better] = restart
    return labels[np.arange(batch), :, best]


def _kernel_distances(kernel, sq_norms, labels, n_clusters):
    """Squared distances (batch, n, restarts, k) of every point to every centroid, given
    labels (batch, n, restarts); an empty cluster is infinitely far."""
    batch, n, restarts = labels.shape
    one_hot = (labels[..., None] == np.arange(n_clusters)).reshape(batch, n, restarts * n_clusters)
    one_hot = one_hot.astype(kernel.dtype)
    counts = one_hot.sum(axis=1)  # (b, r*k)
    safe = np.where(counts > 0, counts, 1.0)
    cross = kernel @ one_hot  # (b, n, r*k): sum over members of K_il
    within = np.einsum("bnc,bnc->bc", one_hot, cross)  # sum over members l, m of K_lm
    distances = sq_norms[..., None] - 2.0 * cross / safe[:, None, :] + (within / safe**2)[:, None, :]
    distances = np.where(counts[:, None, :] > 0, np.maximum(distances, 0.0), np.inf)
    return distances.reshape(batch, n, restarts, n_clusters)


def _kmeans_plus_plus_labels(kernel, sq_norms, n_clusters, first_draws, trial_draws):
    """Greedy k-means++ seeding of every restart, driven by given uniforms; returns the
    initial labels (batch, restarts, n)."""
    batch, n = sq_norms.shape
    rows = np.arange(batch)[:, None]
    cdf = np.full(n, 1.0 / n).cumsum()
    cdf /= cdf[-1]
    first = cdf.searchsorted(first_draws, side="right")
    centers = np.empty((batch, len(first_draws), n_clusters), dtype=np.int64)
    centers[:, :, 0] = first[None, :]

    def distance_to(index):  # squared distance of every point to point ``index`` (b, r) -> (b, r, n)
        return np.maximum(sq_norms[:, None, :] - 2.0 * kernel[rows, index]
                          + sq_norms[rows, index][..., None], 0.0)

    closest = distance_to(centers[:, :, 0])
    for c in range(1, n_clusters):
        potential = closest.sum(axis=2)
        cumulative = np.cumsum(closest, axis=2)
        targets = trial_draws[None, :, c - 1, :] * potential[..., None]  # (b, r, trials)
        candidates = np.minimum((cumulative[:, :, None, :] < targets[..., None]).sum(axis=3), n - 1)
        best_candidate = candidates[..., 0]
        best_potential = np.full(potential.shape, np.inf)
        best_closest = closest
        for t in range(candidates.shape[2]):
            trial_closest = np.minimum(closest, distance_to(candidates[..., t]))
            trial_potential = trial_closest.sum(axis=2)
            better = trial_potential < best_potential
            best_potential = np.where(better, trial_potential, best_potential)
            best_candidate = np.where(better, candidates[..., t], best_candidate)
            best_closest = np.where(better[..., None], trial_closest, best_closest)
        centers[:, :, c] = best_candidate
        closest = best_closest
    center_distances = np.stack([distance_to(centers[:, :, c]) for c in range(n_clusters)], axis=3)
    return center_distances.argmin(axis=3)

