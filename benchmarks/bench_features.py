"""Benchmark: Table 19 features, ours against the authors' code and a SciPy + sklearn loop.

Both sides single-threaded (``threadpoolctl``: BLAS and OpenMP at one thread), in this
process, now; ratios are per conversation. Target: ``features_for_corpus`` at least 20x the
authors' own per-conversation code (``TrajectoryAnalyzer`` in their
``scripts/compute_trajectory_metrics.py``, its nine Table 19 methods), with the same values
(topic switching identical on at least 99% of conversations).

The authors' file is not part of this project: it is read at run time from a local clone
of pitehu/llm_multiagent_creativity (``--authors-repo``, a work tree or a bare git dir;
default ``$CDL_AUTHORS_REPO``). Without it only the SciPy + sklearn loop (our own
reimplementation of the same per-conversation computation) is timed.
``python -m benchmarks.bench_features [--conversations 4000] [--reference 300]``
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import time
import types
from pathlib import Path

import numpy as np
from scipy.spatial.distance import cosine, pdist
from sklearn.cluster import KMeans

from benchmarks.synthetic import synthetic_turns
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.measures.compute import features_for_corpus

AUTHORS_FILE = "scripts/compute_trajectory_metrics.py"
# our feature name -> the authors' TrajectoryAnalyzer method
AUTHORS_METHODS = {name: name for name in PAPER_A_FEATURES} | {"max_distance": "max_pairwise_distance"}


def synthetic_conversations(count: int, n_turns: int = 30, dim: int = 384, seed: int = 0):
    """``count`` float32 (n_turns, dim) conversations (see ``benchmarks.synthetic``)."""
    return list(synthetic_turns(count, n_turns, dim, seed))


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
    return [values[name] for name in PAPER_A_FEATURES]


def load_authors_analyzer(repo: str | None):
    """The authors' ``TrajectoryAnalyzer`` class, read from their repository, or None."""
    if not repo:
        return None
    root = Path(repo)
    if (root / AUTHORS_FILE).exists():
        source = (root / AUTHORS_FILE).read_text()
    else:  # a bare clone: read the file from its HEAD commit
        result = subprocess.run(["git", f"--git-dir={root}", "show", f"HEAD:{AUTHORS_FILE}"],
                                capture_output=True, text=True)
        if result.returncode:
            return None
        source = result.stdout
    module = types.ModuleType("authors_compute_trajectory_metrics")
    exec(compile(source, f"{repo}/{AUTHORS_FILE}", "exec"), module.__dict__)
    return module.TrajectoryAnalyzer


def authors_reference(analyzer, x: np.ndarray) -> list[float]:
    """The nine Table 19 features through the authors' per-conversation methods."""
    trajectory = analyzer(x)
    return [getattr(trajectory, AUTHORS_METHODS[name])() for name in PAPER_A_FEATURES]


def compare(ours: np.ndarray, reference: np.ndarray) -> tuple[float, float]:
    """Largest difference on the eight distance features; share of equal switching rates."""
    switching = PAPER_A_FEATURES.index("topic_switching_rate")
    others = [i for i in range(len(PAPER_A_FEATURES)) if i != switching]
    difference = float(np.nanmax(np.abs(ours[:, others] - reference[:, others])))
    same = float(np.mean(np.isclose(ours[:, switching], reference[:, switching])))
    return difference, same


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=4000)
    parser.add_argument("--reference", type=int, default=300,
                        help="conversations timed through each per-conversation loop")
    parser.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (default 1)")
    parser.add_argument("--authors-repo", default=os.environ.get("CDL_AUTHORS_REPO"),
                        help="clone of pitehu/llm_multiagent_creativity (work tree or git dir)")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    turns = synthetic_turns(args.conversations)  # float32, as `embed` writes them
    subset = [x.astype(np.float64) for x in turns[: args.reference]]
    analyzer = load_authors_analyzer(args.authors_repo)
    with threadpool_limits(args.threads):
        start = time.perf_counter()
        ours = features_for_corpus(turns, names=PAPER_A_FEATURES).to_numpy()  # the nine the loops compute
        per_ours = (time.perf_counter() - start) / len(turns)
        start = time.perf_counter()
        every = features_for_corpus(turns)  # every registered feature computable without speakers
        per_every = (time.perf_counter() - start) / len(turns)
        start = time.perf_counter()
        loop = np.array([loop_reference(x) for x in subset])
        per_loop = (time.perf_counter() - start) / len(subset)
        per_authors = authors = None
        if analyzer is not None:
            start = time.perf_counter()
            authors = np.array([authors_reference(analyzer, x) for x in subset])
            per_authors = (time.perf_counter() - start) / len(subset)

    print(f"{args.conversations} synthetic conversations x 30 turns x 384 dims (float32), "
          f"{args.threads} thread(s)")
    print(f"ours, features_for_corpus: {per_ours * 1e3:.3f} ms/conversation")
    print(f"ours, every registered feature ({len(every.columns)}): {per_every * 1e3:.3f} ms/conversation "
          f"({per_every / per_ours:.2f}x the nine)")
    print(f"SciPy + sklearn loop ({len(subset)} conversations): {per_loop * 1e3:.2f} ms/conversation"
          f" -> ours {per_loop / per_ours:.1f}x faster")
    difference, same = compare(ours[: len(subset)], loop)
    print(f"  vs loop: largest difference {difference:.2e} on the eight distance features; "
          f"topic switching identical on {same:.1%}")
    if authors is None:
        print("authors' code: not timed (no clone given: --authors-repo or $CDL_AUTHORS_REPO)")
    else:
        print(f"authors' TrajectoryAnalyzer, nine methods ({len(subset)} conversations): "
              f"{per_authors * 1e3:.2f} ms/conversation -> ours {per_authors / per_ours:.1f}x "
              f"faster (target >= 20x)")
        difference, same = compare(ours[: len(subset)], authors)
        print(f"  vs authors: largest difference {difference:.2e} on the eight distance features; "
              f"topic switching identical on {same:.1%} (target >= 99%)")
    if not math.isfinite(difference):
        raise SystemExit("non-finite difference")


if __name__ == "__main__":
    main()
