"""``python -m benchmarks``: run every benchmark in turn, each printing its own ratios.

``bench_embed_cache`` embeds 50,000 texts for real before timing the cached pass (about
25 minutes on 2 cores); skip it with ``--skip embed_cache``. ``bench_scale`` grows a synthetic
corpus to 64,000 conversations (about half an hour on 2 cores, 3 GB of disk in $TMPDIR).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

BENCHMARKS = ("features", "div_bleu", "stats", "runner", "dashboard", "browser", "embed_cache", "scale")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=BENCHMARKS, help="run just these")
    parser.add_argument("--skip", nargs="*", choices=BENCHMARKS, default=[], help="leave these out")
    args = parser.parse_args(argv)
    chosen = [b for b in (args.only or BENCHMARKS) if b not in args.skip]
    for name in chosen:
        print(f"\n=== benchmarks.bench_{name} ===", flush=True)
        module = importlib.import_module(f"benchmarks.bench_{name}")
        start = time.perf_counter()
        main_function = module.main
        main_function([]) if main_function.__code__.co_argcount else main_function()
        print(f"(bench_{name} took {time.perf_counter() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
