"""UMAP's compiled code loaded in the background when the dashboard starts.

A fresh process that draws its first UMAP map loads umap-learn and its compiled numba code
(from the on-disk cache of ``engine.maps.compiled_cache``, or compiling it the first time on
a machine). ``warm_up_in_background`` does that once per process in a daemon thread while the
first page renders, with a small seeded fit and transform that call the same compiled
functions as ``engine.maps.projection`` on a dataset of the cached runs' size (cosine metric,
15 neighbours, fewer than 4,096 turns: umap-learn's exact-distance path), so the page's own
UMAP finds them loaded. Larger fits also need pynndescent's graph construction, which numba
cannot keep on disk ("uses dynamic globals") and which takes tens of seconds to compile: the
warm-up does not compile it, so that it never holds numba's compiler lock while a page waits.
"""

from __future__ import annotations

import os
import threading
import warnings

from engine.maps.compiled_cache import import_umap

_LOCK = threading.Lock()
WARM_UP_TURNS = 300  # below umap-learn's 4,096-row exact-distance shortcut, as the cached datasets


def warm_up(dim: int = 16, seed: int = 0) -> float:
    """A small UMAP fit and transform, as ``engine.maps.projection`` runs them (cosine, 15
    neighbours, seeded), so every compiled function a projection calls is loaded (or compiled
    once and written to the cache). Returns the seconds it took."""
    import time

    import numpy as np

    started = time.perf_counter()
    umap = import_umap()
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(WARM_UP_TURNS + 64, dim)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*n_jobs value.*")
        warnings.filterwarnings("ignore", message=".*Cannot cache compiled function.*")
        fitted = umap.UMAP(n_components=2, n_neighbors=15, min_dist=0.1, metric="cosine",
                           random_state=seed, n_epochs=20).fit(points[:WARM_UP_TURNS])
        fitted.transform(points[WARM_UP_TURNS:])
    return time.perf_counter() - started


_BACKGROUND: list[threading.Thread] = []


def warm_up_in_background() -> threading.Thread:
    """``warm_up`` in a daemon thread, started once per process (later calls return the same
    thread): a dashboard calls it at start so a page's first UMAP finds the code loaded.
    ``CDL_UMAP_WARMUP=0`` turns it off. A failure is kept on the thread (``error``), never raised
    into the page: the page's own UMAP call then reports it."""
    with _LOCK:
        if _BACKGROUND:
            return _BACKGROUND[0]

        def run():
            try:
                thread.seconds = warm_up()
            except Exception as error:  # noqa: BLE001 - reported by the page's own call
                thread.error = error

        thread = threading.Thread(target=run, name="umap-warm-up", daemon=True)
        thread.seconds, thread.error = None, None
        if os.environ.get("CDL_UMAP_WARMUP", "1") != "0":
            thread.start()
        _BACKGROUND.append(thread)
        return thread


if __name__ == "__main__":  # ``make install``: fill the machine's compiled-code folder once
    from engine.maps.compiled_cache import cached_function_files, compiled_cache_dir

    seconds = warm_up()
    print(f"UMAP's compiled code: {len(cached_function_files())} functions in {compiled_cache_dir()} "
          f"({seconds:.0f} s)")
