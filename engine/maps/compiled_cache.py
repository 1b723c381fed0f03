"""umap-learn imported with its compiled code kept on disk, so a fresh process does not recompile it.

UMAP (McInnes et al. 2018; the map of paper A, Fig. 4, drawn with it instead of PCA) runs
as numba code that is compiled on a process's first call: about 12 s of a fresh process's
15 s for 1,248 turns on a 2-core machine, against 2.5-3 s in a warm process. numba can keep
compiled machine code in files (``cache=True``), but umap-learn and pynndescent ask for it on
only a few of their ~470 jitted functions. ``import_umap`` imports them with ``cache=True``
as the default of ``numba.njit``/``numba.jit`` while their modules are first imported, and
numba's cache folder pointed at ``compiled_cache_dir()`` (unless ``NUMBA_CACHE_DIR`` is set),
so the second process on the machine loads the machine code instead of compiling it.

numba keys each cached function by its source file, its modification time and the argument
types, and recompiles when any changes; the compiled code is the same code, so coordinates
are bit-identical with or without the cache (``tests/engine/maps/test_compiled_cache.py``).
Functions numba cannot cache (closures over other compiled functions) are compiled as before.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from pathlib import Path

_LOCK = threading.Lock()


def compiled_cache_dir() -> Path:
    """``$NUMBA_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/creativity-dynamics-lab/numba``
    (``~/.cache/...`` without it).

    Not under ``$CDL_CACHE_DIR``, the folder of the data caches (embeddings, projections,
    model answers) that a session or a test points elsewhere: this one holds machine code
    keyed by the library's source files, the same for every dataset, so every process of the
    machine shares it (``make install`` fills it once)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "creativity-dynamics-lab" / "numba"


def import_umap():
    """The ``umap`` module, imported (once per process) with numba's on-disk cache on.

    If ``umap`` was already imported elsewhere, it is returned as it is (its functions were
    decorated then; a process that imports it through here first gets the cache)."""
    with _LOCK:
        if "umap" in sys.modules:
            return sys.modules["umap"]
        import numba

        folder = compiled_cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        numba.config.CACHE_DIR = str(folder)  # read when a cacheable function is decorated
        plain_njit, plain_jit = numba.njit, numba.jit

        def cached_njit(*args, **options):
            options.setdefault("cache", True)
            return plain_njit(*args, **options)

        def cached_jit(*args, **options):
            options.setdefault("cache", True)
            return plain_jit(*args, **options)

        numba.njit, numba.jit = cached_njit, cached_jit
        try:
            with warnings.catch_warnings():
                # "cannot cache ... as it uses dynamic globals/lifted code": compiled as before
                warnings.filterwarnings("ignore", message=".*[Cc]annot cache.*")
                import umap
        finally:
            numba.njit, numba.jit = plain_njit, plain_jit
        return umap


def cached_function_files(folder: str | Path | None = None) -> list[Path]:
    """numba's index files (``*.nbi``) under the cache folder: one per cached function."""
    return sorted(Path(folder or compiled_cache_dir()).rglob("*.nbi"))

