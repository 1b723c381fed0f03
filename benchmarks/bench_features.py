"""Benchmark: batched Table 19 features vs a per-conversation SciPy + scikit-learn loop.

Issue 2 target: ``features_for_corpus`` on 4,000 conversations x 30 turns x 384 dims at
least 20x faster than the loop, with identical values (topic switching identical on at
least 99% of conversations). The loop is timed on a subset (``--reference``
conversations, default 400) and its per-conversation cost compared with the batched
per-conversation cost; both run in this process, now. ``python -m benchmarks.bench_features``
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.spatial.distance import cosine, pdist
from sklearn.cluster import KMeans

from engine.features import FEATURE_NAMES, features_for_corpus


def synthetic_conversations(count: int, n_turns: int = 30, dim: int = 384, seed: int = 0):
    """Unit-length turns that hop between three topic directions of each conversation."""
    rng = np.random.default_rng(seed)
    conversations = []
    for _ in range(count):
        topics = rng.normal(size=(3, dim))
        topic, turns = 0, []
        for _ in range(n_turns):
            if rng.random() < 0.3:
                topic = int(rng.integers(3))
            turns.append(topics[topic] + 0.8 * rng.normal(size=dim))
        x = np.array(turns)
        conversations.append(x / np.linalg.norm(x, axis=1, keepdims=True))
    return conversations


def loop_reference(x: np.ndarray) -> list[float]:
    """One conversation the slow way: SciPy distances and scikit-learn's KMeans."""
    n, c = len(x), x.mean(axis=0)
    steps = [cosine(x[i], x[i + 1]) for i in range(n - 1)]
    mid, w = n // 2, int(0.3 * n)
    early, late = pdist(x[:mid], "cosine").mean(), pdist(x[mid:], "cosine").mean()
    angles = []
    for i in range(n - 2):
        a, b = x[i + 1] - x[i], x[i + 2] - x[i + 1]
        angles.append(np.arccos(np.clip(a @ b / np.linalg.norm(a) / np.linalg.norm(b), -1, 1)))
    labels = KMeans(n_clusters=3, random_state=42, n_init=10).fit_predict(x)
    values = {
        "local_coherence": 1 - np.mean(steps), "global_coherence": np.mean([1 - cosine(e, c) for e in x]),
        "path_length": sum(steps), "convergence_ratio": (early - late) / early,
        "max_distance": pdist(x, "cosine").max(), "trajectory_curvature": np.mean(angles),
        "topic_switching_rate": np.mean(labels[1:] != labels[:-1]),
        "revisit_score": max(1 - cosine(a, b) for a in x[-w:] for b in x[:w]),
        "semantic_spread": np.std([np.linalg.norm(e - c) for e in x]),
    }
    return [values[name] for name in FEATURE_NAMES]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=4000)
    parser.add_argument("--reference", type=int, default=400,
                        help="conversations timed through the slow loop (all of them if >= --conversations)")
    args = parser.parse_args(argv)
    conversations = synthetic_conversations(args.conversations)

    start = time.perf_counter()
    batched = features_for_corpus(conversations).to_numpy()
    batched_seconds = time.perf_counter() - start

    subset = conversations[: args.reference]
    start = time.perf_counter()
    reference = np.array([loop_reference(x) for x in subset])
    loop_seconds = time.perf_counter() - start

    per_batched = batched_seconds / len(conversations)
    per_loop = loop_seconds / len(subset)
    switching = FEATURE_NAMES.index("topic_switching_rate")
    others = [i for i in range(len(FEATURE_NAMES)) if i != switching]
    max_difference = float(np.nanmax(np.abs(batched[: len(subset), others] - reference[:, others])))
    same_switching = float(np.mean(np.isclose(batched[: len(subset), switching], reference[:, switching])))
    print(f"batched features_for_corpus: {len(conversations)} conversations x 30 turns x 384 dims "
          f"in {batched_seconds:.2f} s ({per_batched * 1e3:.3f} ms/conversation)")
    print(f"SciPy + sklearn loop: {len(subset)} conversations in {loop_seconds:.2f} s "
          f"({per_loop * 1e3:.2f} ms/conversation)")
    print(f"speed-up (per conversation): {per_loop / per_batched:.1f}x  (target >= 20x)")
    print(f"largest difference on the eight distance features: {max_difference:.2e}")
    print(f"topic switching identical on {same_switching:.1%} of {len(subset)} conversations "
          f"(target >= 99%)")
    if not math.isfinite(max_difference):
        raise SystemExit("non-finite difference")


if __name__ == "__main__":
    main()
