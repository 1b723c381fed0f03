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
``features_for_corpus`` computes many at once: it streams through its input in small chunks
of equal-length conversations (so memory stays bounded whatever the corpus size, and a
memory-mapped ``.npy`` is read chunk by chunk), computes one Gram matrix per conversation
and derives every distance, and the k-means kernel, from it (see ``batched_kmeans_labels``).
Both give the same numbers; batched k-means finds the same partition as scikit-learn on all
but rare ties (pass ``kmeans="sklearn"`` for exact). Values are computed in float64 whatever
the input dtype, so float32 embeddings give the same features as SciPy on the same vectors.
"""

from __future__ import annotations

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
# Conversations computed together: 128 x 30 turns x 384 dims of float64 is 12 MB, small
# enough that the passes over it stay in cache, large enough that numpy's per-call cost
# is spread thin (measured: 128-256 is fastest; 2,000 at once is 3x slower).
CHUNK_CONVERSATIONS = 128
# Turns held back waiting for more conversations of the same length, at most (streamed
# input with many distinct lengths): past this, the largest waiting group is computed.
MAX_WAITING_TURNS = 1 << 17


def trajectory_features(embeddings: np.ndarray) -> dict[str, float]:
    """The nine Table 19 features of one conversation, an ``(n_turns, dim)`` array."""
    x = _as_matrix(embeddings)
    batch = _chunk_features(x[None].astype(np.float64), "sklearn")
    return {name: float(batch[0, column]) for column, name in enumerate(FEATURE_NAMES)}


def features_for_corpus(conversations: Sequence[np.ndarray] | Iterable[np.ndarray] | np.ndarray, *,
                        kmeans: str = "batched", progress: bool = False,
                        chunk: int = CHUNK_CONVERSATIONS) -> "pandas.DataFrame":
    """Table 19 features for many conversations; one row per input, in input order.

    ``conversations`` is a sequence or any iterable of ``(n_turns, dim)`` arrays (views on
    a memory-mapped file are fine: each is read when its chunk is computed), or one
    ``(conversations, n_turns, dim)`` array. Memory used beyond the input is a few chunks.
    ``kmeans`` is ``"batched"`` (fast, numpy, equal partitions to scikit-learn except on
    rare ties) or ``"sklearn"`` (scikit-learn's KMeans per conversation, as the paper).
    """
    import pandas as pd

    if kmeans not in ("batched", "sklearn"):
        raise ValueError(f"kmeans must be 'batched' or 'sklearn', got {kmeans!r}")
    if chunk < 1:
        raise ValueError("chunk must be at least 1")
    total = len(conversations) if hasattr(conversations, "__len__") else None
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="features", unit="conversation")
    blocks = []  # (positions, values) per computed chunk
    if isinstance(conversations, np.ndarray) and conversations.ndim == 3:
        for start in range(0, len(conversations), chunk):
            x = np.asarray(conversations[start:start + chunk], dtype=np.float64)
            blocks.append((np.arange(start, start + len(x)), _chunk_features(x, kmeans)))
            if bar is not None:
                bar.update(len(x))
    else:
        for positions, x in equal_length_chunks(conversations, chunk):
            blocks.append((positions, _chunk_features(x, kmeans)))
            if bar is not None:
                bar.update(len(positions))
    if bar is not None:
        bar.close()
    count = sum(len(p) for p, _ in blocks)
    out = np.full((count, len(FEATURE_NAMES)), np.nan)
    for positions, values in blocks:
        out[positions] = values
    return pd.DataFrame(out, columns=list(FEATURE_NAMES))


def equal_length_chunks(conversations, chunk: int = CHUNK_CONVERSATIONS, *, as_float64: bool = True):
    """Yield ``(positions, array (m, n, dim))`` of at most ``chunk`` conversations of one
    shape, reading the input once, in order, holding few turns back; float64 unless
    ``as_float64`` is False (the input's own dtype: what a Ray shard ships,
    ``engine.cluster.features``). The chunks ``features_for_corpus`` computes, exactly."""
    waiting: dict[tuple[int, int], list[tuple[int, np.ndarray]]] = {}
    waiting_turns = 0
    for position, embeddings in enumerate(conversations):
        array = np.asarray(embeddings)
        if array.ndim != 2:
            raise ValueError(f"conversation {position}: expected an (n_turns, dim) array, "
                             f"got shape {array.shape}")
        group = waiting.setdefault(array.shape, [])
        group.append((position, array))
        waiting_turns += len(array)
        if len(group) == chunk:
            waiting_turns -= sum(len(a) for _, a in group)
            yield _stack(waiting.pop(array.shape), as_float64)
        elif waiting_turns > MAX_WAITING_TURNS:
            largest = max(waiting, key=lambda shape: shape[0] * len(waiting[shape]))
            waiting_turns -= largest[0] * len(waiting[largest])
            yield _stack(waiting.pop(largest), as_float64)
    for shape in sorted(waiting):
        yield _stack(waiting[shape], as_float64)


def chunk_features(x: np.ndarray, kmeans: str = "batched") -> np.ndarray:
    """The nine features (batch, 9) of one chunk from ``equal_length_chunks`` (any float dtype)."""
    return _chunk_features(np.asarray(x, dtype=np.float64), kmeans)


def _stack(group: list[tuple[int, np.ndarray]], as_float64: bool = True) -> tuple[np.ndarray, np.ndarray]:
    positions = np.fromiter((p for p, _ in group), dtype=np.int64, count=len(group))
    stacked = np.stack([a for _, a in group])
    return positions, stacked.astype(np.float64, copy=False) if as_float64 else stacked


def _as_matrix(embeddings) -> np.ndarray:
    x = np.asarray(embeddings, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected an (n_turns, dim) array, got shape {x.shape}")
    return x


def _chunk_features(x: np.ndarray, kmeans: str) -> np.ndarray:
    """The nine features (columns in ``FEATURE_NAMES`` order) of a float64 batch ``x`` of
    shape (batch, n, dim), all conversations of one length.

    One Gram matrix ``G = X X^T`` per conversation gives the cosine similarities
    ``G_ij / sqrt(G_ii G_jj)`` (SciPy's formula), the cosines to the centroid
    (``mean_j G_ij / (|x_i| |c|)``) and, double-centred, the k-means kernel. Step angles
    and distances to the centroid are taken from the vectors themselves (differences of
    Gram entries would lose the zero-length steps and the zero spread of repeated turns).
    """
    batch, n, dim = x.shape
    out = np.full((batch, len(FEATURE_NAMES)), np.nan)
    column = {name: i for i, name in enumerate(FEATURE_NAMES)}
    out[:, column["path_length"]] = 0.0
    if n < 2:
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        gram = x @ x.transpose(0, 2, 1)
        norms = np.sqrt(np.einsum("bii->bi", gram))
        similarity = gram / (norms[:, :, None] * norms[:, None, :])
        steps_similarity = np.diagonal(similarity, offset=1, axis1=1, axis2=2)
        out[:, column["local_coherence"]] = steps_similarity.mean(axis=1)
        out[:, column["path_length"]] = (1.0 - steps_similarity).sum(axis=1)
        row_means = gram.mean(axis=2)  # x_i . centroid
        centroid_norm = np.sqrt(row_means.mean(axis=1))
        out[:, column["global_coherence"]] = (row_means / (norms * centroid_norm[:, None])).mean(axis=1)
        upper = np.triu_indices(n, k=1)
        out[:, column["max_distance"]] = (1.0 - similarity[:, upper[0], upper[1]]).max(axis=1)
        centroid = x.mean(axis=1)
        offsets = x - centroid[:, None, :]
        out[:, column["semantic_spread"]] = np.sqrt(np.einsum("bnd,bnd->bn", offsets, offsets)).std(axis=1)
        del offsets  # chunk-sized: not kept alive beside the next one

        if n >= 3:
            steps = x[:, 1:] - x[:, :-1]
            step_norms = np.sqrt(np.einsum("bnd,bnd->bn", steps, steps))
            usable = (step_norms[:, :-1] > 1e-10) & (step_norms[:, 1:] > 1e-10)
            safe = np.where(step_norms > 1e-10, step_norms, 1.0)
            cosines = np.einsum("bnd,bnd->bn", steps[:, :-1], steps[:, 1:]) / (safe[:, :-1] * safe[:, 1:])
            del steps
            angles = np.where(usable, np.arccos(np.clip(cosines, -1.0, 1.0)), 0.0)
            counts = usable.sum(axis=1)
            out[:, column["trajectory_curvature"]] = np.where(
                counts > 0, angles.sum(axis=1) / np.maximum(counts, 1), np.nan)

        if n >= 4:
            mid = n // 2
            early = _mean_pairwise_distance(similarity[:, :mid, :mid])
            late = _mean_pairwise_distance(similarity[:, mid:, mid:])
            out[:, column["convergence_ratio"]] = np.where(
                early > 0, (early - late) / np.where(early > 0, early, 1.0), 0.0)

        if n >= 6:
            window = int(n * REVISIT_FRACTION)
            out[:, column["revisit_score"]] = similarity[:, n - window:, :window].reshape(batch, -1).max(axis=1)

        if n >= N_CLUSTERS + 1:
            if kmeans == "sklearn":
                labels = np.stack([_sklearn_labels(conversation) for conversation in x])
            else:
                labels = _kernel_kmeans_labels(_double_centred(gram, row_means))
            out[:, column["topic_switching_rate"]] = (labels[:, 1:] != labels[:, :-1]).sum(axis=1) / (n - 1)
    return out


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
