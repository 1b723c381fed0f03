"""Benchmark: how time and memory grow from 1k to 64k conversations (paper A has ~4.7k).

    python -m benchmarks.bench_scale [--sizes 1000 4000 16000 64000] [--stages ...]
    python -m benchmarks.bench_scale --sizes 4000 16000 64000 --stages umap   (120k, 480k, 1.92M turns)
    python -m benchmarks.bench_scale --ray [--texts 1000] [--conversations 2000]   (benchmarks.bench_ray)

Synthetic conversations of 30 turns x 384 dims (``benchmarks.synthetic``: topic-hopping
unit vectors, float32, written to a ``.npy`` block by block) go through each stage:

Imports and first calls (UMAP's numba compilation) happen in a small untimed warm-up.

* ``features``: the nine Table 19 features from the memory-mapped ``.npy`` (one thread);
* ``cache``: a fully cached ``embed`` pass (the CLI's ``embed_texts``: hash every turn,
  read its vector from the SQLite embedding cache, assemble the array); filling the cache
  beforehand is not timed;
* ``pca``: ``engine.maps.projection.project_turns`` on every turn, uncached;
* ``umap``: UMAP as ``project_turns`` runs it (fitted on a seeded sample of
  ``engine.maps.projection.MAX_FIT_TURNS`` turns, every other turn placed by
  ``engine.maps.placement``), timed per placed turn beside umap-learn's own ``transform`` on a
  seeded subset of placed turns, with the trustworthiness of both (``_umap_stage``);
* ``table24``: the 45 Table 24 fits (``engine.stats.manipulability``) on N conversations
  whose design factors and features are rows of the paper release drawn with replacement;
* ``dashboard``: every page rendered by a new AppTest session on a dataset of N such
  conversations with the synthetic turn embeddings, cold then warm; the slowest warm page.

Each (stage, N) runs in its own process, which reports its wall time, its peak RSS
(``ru_maxrss``) and its RSS when the stage started (imports and data opened). The growth
exponent of a stage is the least-squares slope of log(time) on log(N): 1 is linear. Stages
too slow for a 2-core machine at the largest sizes are skipped by default (``--max-umap``,
``--max-dashboard``, ``--max-cache``) and the table says so.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SIZES = (1000, 4000, 16000, 64000)
STAGES = ("features", "cache", "pca", "umap", "table24", "dashboard")
N_TURNS, DIM = 30, 384


# -- the child: one stage at one size ------------------------------------------------------
def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _turn_index(n: int):
    import pandas as pd

    ids = np.array([f"c{i:06d}" for i in range(n)], dtype=object)
    return pd.DataFrame({"conversation_id": np.repeat(ids, N_TURNS), "turn": np.tile(np.arange(N_TURNS), n)})


def _release_rows(n: int, seed: int = 0):
    """``n`` conversations: rows of the paper release's LLM sample drawn with replacement."""
    import pandas as pd

    table = pd.read_parquet(REPO / "cached_runs" / "paper_release" / "conversations.parquet")
    table = table[table["source"] == "llm"]
    sample = table.sample(n=n, replace=True, random_state=seed).reset_index(drop=True)
    sample["conversation_id"] = [f"c{i:06d}" for i in range(n)]
    sample["n_turns"] = N_TURNS
    return sample


def run_stage(stage: str, n: int, workdir: Path) -> dict:
    """Run one stage; returns seconds, RSS at start, peak RSS and the input size (MB)."""
    from threadpoolctl import threadpool_limits

    data = workdir / f"turns_{n}.npy"
    extra: dict = {}
    if stage == "features":
        from engine.measures.compute import features_for_corpus

        turns = np.load(data, mmap_mode="r")
        features_for_corpus(turns[:8])  # warm-up: imports, first calls
        start_rss = _rss_mb()
        with threadpool_limits(1):
            started = time.perf_counter()
            table = features_for_corpus(turns)
            seconds = time.perf_counter() - started
        extra["rows"] = len(table)
        input_mb = data.stat().st_size / 2**20
    elif stage == "cache":
        from engine.embedding.in_chunks import embed_texts
        from engine.embedding.embedder import Embedder, EmbeddingCache, text_key

        texts = [f"turn {i} of the synthetic corpus" for i in range(n * N_TURNS)]
        cache = EmbeddingCache(workdir / f"cache_{n}.sqlite")
        turns = np.load(data, mmap_mode="r").reshape(-1, DIM)
        block = 50_000
        for first in range(0, len(texts), block):  # fill (not timed)
            cache.put_many("synthetic-model", {text_key(t): turns[first + i]
                                               for i, t in enumerate(texts[first:first + block])})
        embedder = Embedder("synthetic-model", cache=cache, progress=False)
        start_rss = _rss_mb()
        started = time.perf_counter()
        vectors, hits = embed_texts(embedder, texts, progress=False)
        seconds = time.perf_counter() - started
        assert embedder.model_calls == 0 and hits == len(texts) and vectors.shape == (len(texts), DIM)
        cache.close()
        input_mb = (workdir / f"cache_{n}.sqlite").stat().st_size / 2**20
        for suffix in ("", "-wal", "-shm"):
            (workdir / f"cache_{n}.sqlite{suffix}").unlink(missing_ok=True)
    elif stage == "pca":
        from engine.maps.projection import project_turns

        turns = np.load(data, mmap_mode="r").reshape(-1, DIM)
        index = _turn_index(n)
        warm = min(len(index), 600)  # warm-up (imports), not timed
        project_turns(np.asarray(turns[:warm]), index.iloc[:warm], method=stage, use_cache=False)
        start_rss = _rss_mb()
        started = time.perf_counter()
        projected = project_turns(turns, index, method=stage, use_cache=False)
        seconds = time.perf_counter() - started
        extra["rows"] = len(projected)
        input_mb = data.stat().st_size / 2**20
    elif stage == "umap":
        seconds, extra, start_rss = _umap_stage(n, data)
        input_mb = data.stat().st_size / 2**20
    elif stage == "table24":
        from engine.stats import manipulability

        table = _release_rows(n)
        manipulability(_release_rows(600, seed=1))  # warm-up
        start_rss = _rss_mb()
        with threadpool_limits(1):
            started = time.perf_counter()
            result = manipulability(table)
            seconds = time.perf_counter() - started
        extra["fits"] = int(result.size)
        input_mb = table.memory_usage(deep=True).sum() / 2**20
    elif stage == "dashboard":
        seconds, extra, input_mb, start_rss = _dashboard(n, workdir, data)
    else:
        raise SystemExit(f"unknown stage {stage}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"stage": stage, "n": n, "seconds": seconds, "start_rss_mb": start_rss,
            "peak_rss_mb": peak, "input_mb": input_mb, **extra}


UMAP_REFERENCE_TURNS = 65_536  # umap-learn's transform is timed on this many placed turns (one block)
TRUST_CONVERSATIONS = 170  # trustworthiness on 170 x 30 = 5,100 turns of seeded conversations


def _umap_stage(n: int, data: Path):
    """UMAP at ``n`` conversations, as ``project_turns`` runs it: fit on the seeded sample of
    ``MAX_FIT_TURNS`` turns, every other turn placed by ``engine.maps.placement`` in blocks of
    ``TRANSFORM_CHUNK`` (timed: seconds per placed turn); umap-learn's own ``transform`` with the
    same fitted map on a seeded subset of ``UMAP_REFERENCE_TURNS`` placed turns (one block: the
    whole corpus would take it about 40 minutes at 1.92 million turns); trustworthiness at
    k = 15 (``sklearn.manifold.trustworthiness``, cosine on the embeddings) of both on the turns of
    ``TRUST_CONVERSATIONS`` seeded conversations (their fitted turns at their fitted positions)."""
    import warnings

    from sklearn.manifold import trustworthiness

    from engine.maps import projection
    from engine.maps.warm_up import warm_up

    warm_up()  # imports, compiled code loaded: not timed
    small = np.random.default_rng(0).normal(size=(4_300, 16)).astype(np.float32)  # and the nndescent
    projection.place(projection.fit_umap(small[:4_200], {"seed": 0, "n_neighbors": 15, "min_dist": 0.1,
                                                         "metric": "cosine"}), small[4_200:])  # path compiled
    turns = np.load(data, mmap_mode="r").reshape(-1, DIM)
    start_rss = _rss_mb()
    params = {"seed": 42, "n_neighbors": 15, "min_dist": 0.1, "metric": "cosine"}
    fit_mask = projection.fit_sample(np.ones(len(turns), dtype=bool), projection.MAX_FIT_TURNS, 42)
    started = time.perf_counter()
    fitted = projection.fit_umap(np.asarray(turns[fit_mask]), params)
    fit_s = time.perf_counter() - started
    rest = np.flatnonzero(~fit_mask)
    ours = np.full((len(turns), 2), np.nan)
    ours[fit_mask] = fitted.embedding_
    started = time.perf_counter()
    for first in range(0, len(rest), projection.TRANSFORM_CHUNK):
        block = rest[first:first + projection.TRANSFORM_CHUNK]
        ours[block] = projection.place(fitted, turns[block])
    place_s = time.perf_counter() - started
    rng = np.random.default_rng(7)
    trust_rows = (rng.choice(n, TRUST_CONVERSATIONS, replace=False)[:, None] * N_TURNS
                  + np.arange(N_TURNS)).ravel()
    trust_rows.sort()
    trust_placed = trust_rows[~fit_mask[trust_rows]]
    others = np.setdiff1d(rest, trust_placed)
    subset = np.sort(np.concatenate([trust_placed, rng.choice(others, min(len(others), UMAP_REFERENCE_TURNS
                                                                           - len(trust_placed)), replace=False)]))
    reference = np.full((len(turns), 2), np.nan)
    reference[fit_mask] = fitted.embedding_
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*n_jobs value.*")
        started = time.perf_counter()
        reference[subset] = fitted.transform(np.asarray(turns[subset]))
        reference_s = time.perf_counter() - started
    started = time.perf_counter()
    ours_subset = projection.place(fitted, np.asarray(turns[subset]))
    ours_subset_s = time.perf_counter() - started
    sample = np.asarray(turns[trust_rows])
    trust = {name: float(trustworthiness(sample, coordinates[trust_rows], n_neighbors=15, metric="cosine"))
             for name, coordinates in (("ours", ours), ("umap_transform", reference))}
    extra = {"fitted_turns": int(fit_mask.sum()), "placed_turns": len(rest), "fit_s": fit_s, "place_s": place_s,
             "ours_ms_per_turn": place_s / len(rest) * 1e3, "reference_turns": len(subset),
             "umap_transform_ms_per_turn": reference_s / len(subset) * 1e3,
             "ours_ms_per_turn_on_reference_turns": ours_subset_s / len(subset) * 1e3,
             "trust_ours": trust["ours"], "trust_umap_transform": trust["umap_transform"],
             "trust_turns": len(trust_rows), "placement": projection.placement_name(fitted)}
    return fit_s + place_s, extra, start_rss


def _dashboard(n: int, workdir: Path, data: Path):
    import statistics

    from benchmarks.bench_dashboard import PAGES, quiet_streamlit, render
    from engine.datasets import Dataset

    root = workdir / f"runs_{n}"
    if not (root / "synthetic" / "manifest.json").exists():
        turns = np.load(data, mmap_mode="r").reshape(-1, DIM)
        Dataset(name="synthetic", conversations=_release_rows(n),
                manifest={"description": f"{n} synthetic conversations (bench_scale)",
                          "embedding_model": "synthetic"},
                turn_embeddings=np.asarray(turns), turn_index=_turn_index(n)).save(root / "synthetic")
    os.environ["CDL_CACHED_RUNS"] = str(root)
    os.environ["CDL_CACHE_DIR"] = str(workdir / "cache_dir")
    sys.path.insert(0, str(REPO))
    quiet_streamlit()
    start_rss = _rss_mb()
    pages = {}
    started = time.perf_counter()
    for page in PAGES:
        cold = render(page, "synthetic")[0]  # wall-clock seconds (render gives wall, CPU)
        warm = statistics.median(render(page, "synthetic")[0] for _ in range(2))
        pages[page] = (round(cold, 2), round(warm, 2))
    total = time.perf_counter() - started
    slowest = max(pages, key=lambda p: pages[p][1])
    input_mb = sum(f.stat().st_size for f in (root / "synthetic").iterdir()) / 2**20
    return pages[slowest][1], {"slowest_page": slowest, "pages_cold_warm_s": pages,
                               "all_renders_s": round(total, 1)}, input_mb, start_rss


# -- the parent: sizes x stages, each in a subprocess ----------------------------------------
def growth_exponent(sizes: list[int], seconds: list[float]) -> float:
    """Least-squares slope of log(seconds) on log(size)."""
    if len(sizes) < 2:
        return float("nan")
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--ray" in argv:  # the cluster's benchmark: 1 and 2 loopback nodes (benchmarks.bench_ray)
        from benchmarks.bench_ray import main as ray_main

        return ray_main([a for a in argv if a != "--ray"])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES))
    parser.add_argument("--max-umap", type=int, default=64000, help="largest N for UMAP (default 64000)")
    parser.add_argument("--max-dashboard", type=int, default=16000,
                        help="largest N for the dashboard pages (default 16000)")
    parser.add_argument("--max-cache", type=int, default=64000, help="largest N for the cache pass")
    parser.add_argument("--workdir", default=str(Path(os.environ.get("TMPDIR", "/tmp")) / "cdl_bench_scale"))
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per stage")
    parser.add_argument("--child", nargs=2, metavar=("STAGE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    if args.child:
        print(json.dumps(run_stage(args.child[0], int(args.child[1]), workdir)))
        return 0

    from benchmarks.synthetic import write_synthetic_npy

    limits = {"umap": args.max_umap, "dashboard": args.max_dashboard, "cache": args.max_cache}
    results: list[dict] = []
    skipped: list[str] = []
    print(f"{'stage':<10} {'N':>7} {'seconds':>9} {'ms/conv':>8} {'peak RSS MB':>12} "
          f"{'start MB':>9} {'input MB':>9}", flush=True)
    for n in sorted(args.sizes):
        data = workdir / f"turns_{n}.npy"
        if not data.exists():
            write_synthetic_npy(data, n, N_TURNS, DIM, seed=n)
        for stage in args.stages:
            if n > limits.get(stage, math.inf):
                skipped.append(f"{stage} at N={n}")
                continue
            child = subprocess.run([sys.executable, "-m", "benchmarks.bench_scale", "--workdir", str(workdir),
                                    "--child", stage, str(n)], cwd=REPO, capture_output=True, text=True,
                                   timeout=args.timeout)
            if child.returncode:
                print(f"{stage:<10} {n:>7} FAILED: {child.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            row = json.loads(child.stdout.strip().splitlines()[-1])
            results.append(row)
            print(f"{stage:<10} {n:>7} {row['seconds']:9.2f} {row['seconds'] / n * 1e3:8.3f} "
                  f"{row['peak_rss_mb']:12.0f} {row['start_rss_mb']:9.0f} {row['input_mb']:9.0f}"
                  + (f"  slowest page: {row['slowest_page']}" if "slowest_page" in row else ""), flush=True)
            if stage == "umap":
                print(f"{'':<18} fit {row['fit_s']:.0f} s on {row['fitted_turns']:,} turns; ours placed "
                      f"{row['placed_turns']:,} turns in {row['place_s']:.0f} s = {row['ours_ms_per_turn']:.3f} ms a turn; "
                      f"umap-learn transform {row['umap_transform_ms_per_turn']:.3f} ms a turn on a seeded subset of "
                      f"{row['reference_turns']:,} placed turns (ours on the same: "
                      f"{row['ours_ms_per_turn_on_reference_turns']:.3f}; ratio umap-learn / ours "
                      f"{row['umap_transform_ms_per_turn'] / row['ours_ms_per_turn_on_reference_turns']:.1f}); "
                      f"trustworthiness k=15 on {row['trust_turns']:,} turns of {TRUST_CONVERSATIONS} seeded "
                      f"conversations: ours {row['trust_ours']:.4f}, umap-learn {row['trust_umap_transform']:.4f} "
                      f"(difference {row['trust_ours'] - row['trust_umap_transform']:+.4f})", flush=True)
            if "pages_cold_warm_s" in row:
                print(f"{'':<18} pages (cold s, warm s): {row['pages_cold_warm_s']}", flush=True)
    print("\ngrowth exponents (slope of log time on log N; 1 = linear):")
    for stage in args.stages:
        rows = [r for r in results if r["stage"] == stage]
        exponent = growth_exponent([r["n"] for r in rows], [r["seconds"] for r in rows])
        sizes = ", ".join(f"{r['n'] // 1000}k" for r in rows)
        target = "  (target <= 1.1)" if stage == "features" else ""
        print(f"  {stage:<10} {exponent:5.2f}  over N = {sizes}{target}")
    umap_rows = [r for r in results if r["stage"] == "umap"]
    if len(umap_rows) > 1:
        placed = [r["placed_turns"] for r in umap_rows]
        print(f"  umap placement (ours, seconds vs placed turns) "
              f"{growth_exponent(placed, [r['place_s'] for r in umap_rows]):5.2f}; per placed turn (ms): "
              + ", ".join(f"{r['n'] * N_TURNS:,} turns {r['ours_ms_per_turn']:.3f}" for r in umap_rows)
              + "; umap-learn transform (ms, its subset): "
              + ", ".join(f"{r['umap_transform_ms_per_turn']:.3f}" for r in umap_rows))
    if skipped:
        print("skipped (too slow or too big for this machine by default): " + "; ".join(skipped))
    (workdir / "results.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
