"""Benchmark: a fresh process's first UMAP against the same projection in a warm process.

    python -m benchmarks.bench_umap_start [--dataset local_smollm2] [--repeats 2]

Each child process loads the dataset's turn embeddings, runs ``project_turns(method="umap",
use_cache=False)`` twice and reports both wall times: the first call pays for importing
umap-learn and loading (or compiling) its numba code, the second is the warm time. Three
cases: ``compiled`` (numba's cache folder empty: every function compiled, as a machine's
first run), ``cached`` (the folder ``engine.maps.compiled_cache`` filled by an earlier process)
and ``warmed`` (``engine.maps.warm_up.warm_up_in_background`` started with the process, as the
dashboard does, the projection asked 5 s later, as a page would). The ratio first / warm is
the point (the target is at most 2.5); absolute times depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
started = time.perf_counter()
import numpy as np, pandas as pd
if sys.argv[2] == "warmed":
    from engine.maps.warm_up import warm_up_in_background
    thread = warm_up_in_background()
    time.sleep(5.0)  # the page's own work before the user switches the map to UMAP
from engine.maps.projection import project_turns
folder = sys.argv[1]
x = np.load(f"{folder}/turn_embeddings.npy")
index = pd.read_parquet(f"{folder}/turn_index.parquet")
times = []
for _ in range(2):
    t = time.perf_counter()
    project_turns(x, index, method="umap", use_cache=False)
    times.append(time.perf_counter() - t)
print(json.dumps({"first_s": times[0], "warm_s": times[1], "turns": len(x)}))
"""


def run_child(dataset: Path, case: str, cache_root: Path) -> dict:
    env = {**os.environ, "CDL_CACHE_DIR": str(cache_root), "PYTHONPATH": str(REPO)}
    env.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", CHILD, str(dataset), case], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=1800)
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="local_smollm2")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    dataset = REPO / "cached_runs" / args.dataset
    print(f"{'case':<9} {'first s':>8} {'warm s':>7} {'first/warm':>10}   ({args.dataset}, UMAP uncached)")
    with tempfile.TemporaryDirectory() as scratch:
        for repeat in range(args.repeats):
            cases = [("compiled", Path(scratch) / f"empty{repeat}"), ("cached", Path(scratch) / "filled"),
                     ("warmed", Path(scratch) / "filled")]
            if repeat == 0:
                run_child(dataset, "cached", Path(scratch) / "filled")  # fills the cache folder (not shown)
            for case, root in cases:
                row = run_child(dataset, case, root)
                print(f"{case:<9} {row['first_s']:8.2f} {row['warm_s']:7.2f} {row['first_s'] / row['warm_s']:10.2f}",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
