"""Benchmark: what a Ray cluster buys, on 1 and 2 loopback nodes against one process.

    python -m benchmarks.bench_scale --ray [--texts 1000] [--conversations 2000]

In the same run: ``embed`` (the bundled MiniLM on ``--texts`` real turns of the cached runs,
fresh cache each time) and ``features`` (the nine Table 19 features of ``--conversations``
synthetic conversations of 30 turns x 384 dims) in one process, then on a real Ray cluster
of 1 node and of 2 nodes on 127.0.0.1 (``benchmarks.loopback_cluster``, one CPU each),
started inside a network namespace that has only loopback (``unshare``, as root). Each
cluster time includes what a user waits for: the actors starting and loading the model,
the shards travelling through the object store. Results are checked equal to one process'.

The ratios say the overhead on this machine (2 cores shared with whatever else runs: the
load average is printed); ``projection`` then scales the 2-node per-node throughput to N
nodes, and uses the local model's measured seconds per paper B session (the cached
``local_smollm2_paper_b`` run's wall time) for the full paper B design (1,170 sessions).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
PAPER_B_SESSIONS = 1170  # paper B's full design (sessions), as docs/howto/paper-b-debates.md and the issue state


def _texts(n: int) -> list[str]:
    from engine.corpus import Corpus

    texts: list[str] = []
    for name in ("local_smollm2", "local_smollm2_paper_b", "local_smollm2_steered"):
        path = REPO / "cached_runs" / name / "corpus.parquet"
        if path.exists():
            texts += [t.text for c in Corpus.from_parquet(path) for t in c.turns]
    unique = list(dict.fromkeys(texts))
    if len(unique) < n:
        unique += [f"{text} (variant {i})" for i, text in enumerate(unique)][: n - len(unique)]
    return unique[:n]


def _one_process(texts, blocks, workdir: Path) -> dict:
    from engine.embedding.embedder import Embedder
    from engine.measures.compute import features_for_corpus

    started = time.perf_counter()
    embedder = Embedder(cache=workdir / "one.sqlite", progress=False)
    vectors = embedder.encode(texts)
    embed_s = time.perf_counter() - started
    started = time.perf_counter()
    features = features_for_corpus(blocks)
    return {"embed_s": embed_s, "features_s": time.perf_counter() - started, "vectors": vectors,
            "features": features.to_numpy()}


def _on_cluster(nodes: int, texts, blocks, workdir: Path) -> dict:
    import ray

    from benchmarks.loopback_cluster import LoopbackCluster
    from engine.cluster.connection import connect, runtime_env
    from engine.cluster.embedding import RayEmbedder
    from engine.cluster.features import features_on_cluster

    started = time.perf_counter()
    with LoopbackCluster(nodes=nodes, cpus=1, object_store_mb=300) as cluster:
        ray.init(address=cluster.address, _temp_dir=cluster.head_temp_dir, logging_level="ERROR",
                 log_to_driver=False,
                 runtime_env=runtime_env())
        try:
            cluster.wait_for_nodes(nodes)
            up_s = time.perf_counter() - started
            with connect(cluster.address) as session:
                started = time.perf_counter()
                embedder = RayEmbedder(session, "all-MiniLM-L6-v2", cache=workdir / f"ray{nodes}.sqlite",
                                       progress=False)
                vectors = embedder.encode(texts)
                embed_s = time.perf_counter() - started
                started = time.perf_counter()
                features, work = features_on_cluster(session, blocks, shard_turns=15_000)
                features_s = time.perf_counter() - started
        finally:
            ray.shutdown()
    return {"up_s": up_s, "embed_s": embed_s, "features_s": features_s, "vectors": vectors,
            "features": features.to_numpy(), "embed_nodes": len(embedder.nodes),
            "feature_nodes": len(work["nodes"]), "shards": work["shards"]}


def _seconds_per_paper_b_session() -> tuple[float, int] | None:
    manifest = REPO / "cached_runs" / "local_smollm2_paper_b" / "manifest.json"
    if not manifest.exists():
        return None
    import datetime as dt

    run = json.loads(manifest.read_text())["run"]
    wall = (dt.datetime.fromisoformat(run["updated"]) - dt.datetime.fromisoformat(run["created"])).total_seconds()
    sessions = int(run["sessions"]["ok"])
    return wall / sessions, sessions


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--workdir", default=str(Path(os.environ.get("TMPDIR", "/tmp")) / "cdl_bench_ray"))
    args = parser.parse_args(argv)

    from benchmarks.loopback_cluster import NAMESPACE_ENV, in_loopback_namespace, only_loopback, unshare_problem

    if not os.environ.get(NAMESPACE_ENV):
        problem = unshare_problem()
        if problem:
            print(f"bench_scale --ray needs a loopback-only network namespace: {problem}", file=sys.stderr)
            return 2
        given = list(argv) if argv is not None else sys.argv[1:]
        return in_loopback_namespace([sys.executable, "-m", "benchmarks.bench_ray", *given], cwd=REPO).returncode
    assert only_loopback(), "not inside a loopback-only namespace"

    from benchmarks.synthetic import write_synthetic_npy
    from engine.embedding.turn_blocks import TurnBlocks

    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    for stale in workdir.glob("*.sqlite*"):
        stale.unlink()
    data = workdir / f"turns_{args.conversations}.npy"
    if not data.exists():
        write_synthetic_npy(data, args.conversations, 30, 384, seed=args.conversations)
    vectors = np.load(data, mmap_mode="r").reshape(-1, 384)  # (conversations x 30 turns, 384), mapped
    lengths = np.full(args.conversations, 30)
    blocks = TurnBlocks(vectors, np.arange(args.conversations) * 30, lengths, None)
    texts = _texts(args.texts)
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
          f"(1/5/15 min) at the start", flush=True)
    reference = _one_process(texts, blocks, workdir)
    rows = {"one process": reference}
    for nodes in args.nodes:
        rows[f"{nodes} node{'s' if nodes > 1 else ''}"] = result = _on_cluster(nodes, texts, blocks, workdir)
        result["embed_max_diff"] = float(np.abs(result["vectors"] - reference["vectors"]).max())
        result["features_equal"] = bool(np.array_equal(result["features"], reference["features"],
                                                       equal_nan=True))
    print(f"\n{'':<12} {'cluster up s':>12} {'embed s':>8} {'ratio':>6} {'features s':>11} {'ratio':>6} "
          f"{'embed max |diff|':>16} {'features equal':>14}")
    for name, row in rows.items():
        print(f"{name:<12} {row.get('up_s', 0):12.1f} {row['embed_s']:8.1f} "
              f"{row['embed_s'] / reference['embed_s']:6.2f} {row['features_s']:11.1f} "
              f"{row['features_s'] / reference['features_s']:6.2f} "
              f"{row.get('embed_max_diff', 0):16.1e} {str(row.get('features_equal', True)):>14}")
    print(f"(embed: {len(texts)} real turns; features: {args.conversations} synthetic conversations "
          f"x 30 turns; ratio = time / one process in this run; cluster times include actor starts)")
    two = rows.get("2 nodes")
    if two:
        per_node = len(texts) / two["embed_s"] / 2
        print(f"\nprojection from the 2-node run ({per_node:.1f} texts/s per 1-CPU node, starts included):")
        print(f"  {'nodes':>5} {'10M turns embedded':>20}")
        for n in (1, 8, 32, 128):
            print(f"  {n:>5} {10_000_000 / (per_node * n) / 3600:17.1f} h")
        per_session = _seconds_per_paper_b_session()
        if per_session:
            seconds, sessions = per_session
            print(f"  paper B's full design ({PAPER_B_SESSIONS} sessions) at {seconds:.1f} s per session "
                  f"(local SmolLM2 on 1 CPU, measured over {sessions} sessions of the cached run):")
            for n in (1, 8, 32, 128):
                print(f"  {n:>5} nodes: {PAPER_B_SESSIONS * seconds / n / 3600:6.2f} h")
    end = os.getloadavg()
    print(f"load average at the end {end[0]:.1f} / {end[1]:.1f} / {end[2]:.1f}")
    (workdir / "results.json").write_text(json.dumps(
        {name: {k: v for k, v in row.items() if k not in ("vectors", "features")} for name, row in rows.items()},
        indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
