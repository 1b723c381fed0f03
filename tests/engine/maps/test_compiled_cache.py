"""umap-learn's compiled code on disk: a second process loads it instead of compiling, and the
coordinates are the same bit for bit as without the cache (engine.maps.compiled_cache)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]

# One UMAP projection in a fresh process; prints the coordinates and, for two functions
# umap-learn declares without cache=True, numba's count of loads from the cache and of
# compilations in that process.
CHILD = """
import json, sys
import numpy as np, pandas as pd
if sys.argv[1] == "plain":
    import umap  # imported before the project's importer: its functions stay uncached
from engine.maps.projection import project_turns
rng = np.random.default_rng(3)
x = rng.normal(size=(300, 12)).astype(np.float32)
index = pd.DataFrame({"conversation_id": [f"c{i // 10}" for i in range(300)], "turn": np.arange(300) % 10})
out = project_turns(x, index, method="umap", use_cache=False, max_fit_turns=200)
import umap.umap_ as umap_module
stats = {name: list(getattr(umap_module, name).stats[1:]) for name in ("smooth_knn_dist", "fuzzy_simplicial_set")
         if hasattr(getattr(umap_module, name), "stats")}
print(json.dumps({"xy": out[["x", "y"]].to_numpy().tolist(), "stats": {k: [sum(v[0].values()), sum(v[1].values())]
                  for k, v in stats.items()}}))
"""


def _start(mode: str, cache_root: Path) -> subprocess.Popen:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_root / "numba"), "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", CHILD, mode], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _answer(child: subprocess.Popen) -> dict:
    try:
        out, err = child.communicate(timeout=900)
    except subprocess.TimeoutExpired:
        child.kill()
        raise
    assert child.returncode == 0, err[-2000:]
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.slow  # three fresh processes, two compiling UMAP's code (side by side): about a minute
def test_a_second_process_loads_the_compiled_code_and_places_turns_identically(tmp_path):
    # the first process (an empty cache) and the plain import compile independently: run at once
    first, plain = _start("cached", tmp_path), _start("plain", tmp_path / "unused")
    first, plain = _answer(first), _answer(plain)
    index_files = list((tmp_path / "numba").rglob("*.nbi"))
    # umap-learn itself declares ~10 functions cacheable; the project's importer makes every one it runs so
    assert len(index_files) > 20
    assert any("smooth_knn_dist" in f.name for f in index_files)
    second = _answer(_start("cached", tmp_path))
    # smooth_knn_dist is jitted without cache=True in umap-learn: loaded from disk, not compiled
    hits, misses = second["stats"]["smooth_knn_dist"]
    assert (hits, misses) == (1, 0)
    assert first["stats"]["smooth_knn_dist"][1] == 1  # the first process compiled it
    assert plain["stats"]["smooth_knn_dist"] == [0, 1]  # the plain import compiles it, loads nothing
    assert np.array_equal(np.array(first["xy"]), np.array(plain["xy"]))
    assert np.array_equal(np.array(second["xy"]), np.array(plain["xy"]))


def test_the_compiled_code_folder_is_the_machines_not_the_data_caches(monkeypatch, tmp_path):
    """A test or a session pointing $CDL_CACHE_DIR elsewhere keeps the machine's compiled code:
    $NUMBA_CACHE_DIR first, else $XDG_CACHE_HOME/creativity-dynamics-lab/numba."""
    from engine.maps.compiled_cache import compiled_cache_dir

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compiled_cache_dir() == tmp_path / "xdg" / "creativity-dynamics-lab" / "numba"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert compiled_cache_dir() == tmp_path / "numba"
