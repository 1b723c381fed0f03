"""Benchmark: render time of every dashboard page on every cached dataset.

    python -m benchmarks.bench_dashboard [--dataset NAME ...] [--page NAME ...] [--repeat 3]

For each page, a fresh AppTest session (a new browser tab, in effect) renders it: *cold* is
the first render in this process (imports, dataset load, statistics, projections computed or
read from disk), *warm* the median of ``--repeat`` later first renders in new sessions, with
the process caches filled as in a running server. The reference is a bare Streamlit page
(``st.title`` + ``st.write``) rendered by AppTest in the same run; ratios are page / bare.
Each render is also measured in CPU seconds of this process (AppTest runs the page in a thread
of it): on a machine shared with other work, ``cpu x bare`` moves much less than the wall-clock
ratio, which the other processes' load stretches unevenly.
Target: every page's warm first render <= 3 s. The Trajectories page is also
measured with UMAP (cached on disk after its first computation).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from dashboard import pages

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "dashboard" / "app.py")
PAGES = pages.keys()  # every page of the registry (``dashboard.pages``), in the sidebar's order
TARGET_S = 3.0


def quiet_streamlit() -> None:
    import logging

    for name in ("streamlit", "streamlit.runtime.scriptrunner_utils.script_run_context",
                 "streamlit.runtime.caching.cache_data_api"):
        logging.getLogger(name).setLevel(logging.ERROR)


def render(page: str, dataset: str, umap: bool = False) -> tuple[float, float]:
    """(wall-clock, CPU) seconds for a new session to render ``page`` with ``dataset`` chosen in
    the sidebar."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=600)
    at.session_state["dataset_choice"] = dataset
    if umap:
        at.session_state["traj_method"] = "umap"
    if not pages.page(page).default:
        at.run()
        at.switch_page(pages.page(page).script)
    started, cpu = time.perf_counter(), time.process_time()
    at.run()
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    if at.exception:
        raise RuntimeError(f"{page} on {dataset} raised: {at.exception[0].value}")
    return elapsed, cpu


def bare_render() -> tuple[float, float]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string("import streamlit as st\nst.title('bare')\nst.write('reference page')\n")
    started, cpu = time.perf_counter(), time.process_time()
    at.run()
    return time.perf_counter() - started, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(REPO))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", action="append", help="dataset name(s) in cached_runs/ (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="warm renders per page (median reported)")
    parser.add_argument("--page", action="append", choices=PAGES,
                        help="page(s) to measure (default: all; the UMAP case comes with trajectories)")
    args = parser.parse_args(argv)
    quiet_streamlit()
    from dashboard.page_data.datasets import cached_runs_root
    from engine.datasets import list_datasets

    datasets = args.dataset or [p.name for p in list_datasets(cached_runs_root())]
    if not datasets:
        print("no dataset in cached_runs/; build one first (python -m engine.dataset_builds.paper_release)")
        return 2
    bare_render()  # warm the Streamlit runtime itself
    bares = [bare_render() for _ in range(5)]
    bare = statistics.median(b[0] for b in bares)
    bare_cpu = statistics.median(b[1] for b in bares)
    print(f"reference: bare Streamlit page render {bare * 1000:.0f} ms, {bare_cpu * 1000:.0f} ms CPU (median of 5)\n")
    print(f"{'dataset':<18} {'page':<20} {'cold s':>7} {'warm s':>7} {'x bare':>8} {'cpu s':>7} {'cpu x bare':>10}"
          f"  target <= {TARGET_S:.0f} s")
    worst = 0.0
    for dataset in datasets:
        measured = [page for page in PAGES if not args.page or page in args.page]
        cases = [(page, False) for page in measured] + ([("trajectories", True)] if "trajectories" in measured else [])
        for page, umap in cases:
            cold = render(page, dataset, umap)[0]
            warms = [render(page, dataset, umap) for _ in range(max(1, args.repeat))]
            warm = statistics.median(w[0] for w in warms)
            cpu = statistics.median(w[1] for w in warms)
            worst = max(worst, warm)
            label = page + (" (umap)" if umap else "")
            verdict = "ok" if warm <= TARGET_S else "SLOW"
            print(f"{dataset:<18} {label:<20} {cold:7.2f} {warm:7.2f} {warm / bare:8.1f} {cpu:7.2f} "
                  f"{cpu / bare_cpu:10.2f}  {verdict}")
    print(f"\nslowest warm first render: {worst:.2f} s ({worst / bare:.1f} x bare); "
          f"{'meets' if worst <= TARGET_S else 'MISSES'} the {TARGET_S:.0f} s target")
    return 0 if worst <= TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
