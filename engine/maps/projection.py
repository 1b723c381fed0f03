"""2-D projections of turn embeddings, so a conversation can be drawn as a path (paper A, Fig. 4).

``project_turns`` fits PCA (as the paper's Figure 4) or UMAP on the turns of a chosen set
of conversations (``fit_on``; default all) and places every turn with that fit, returning
``conversation_id, turn, x, y`` in input order. Results are seeded and cached on disk under
a key hashed from the embeddings, the index, the method, its parameters, the seed and the
library version, so the same input gives the same picture and a second call is a file read.

UMAP's fit grows faster than linearly and holds its neighbour graph in memory (30,000 turns:
227 s on 2 cores), so it is fitted on at most ``max_fit_turns`` turns: above the cap, a
uniform sample of the fit set's turns drawn without replacement by a generator seeded with
``seed``, and every other turn placed with the fitted map's ``transform``, ``TRANSFORM_CHUNK``
turns at a time. Turns, not whole conversations: turns of one conversation lie close together,
so for the same budget independent turns cover more of the space the transform must place
points in (more conversations represented), and the fitted count is exactly the cap. The
cap and the sample are in the cache key; the counts are in the result's ``attrs``.

The blocks can be placed by several processes at once (``transform_workers``; umap-learn
runs single-threaded once ``random_state`` is set): each worker receives the fitted map
once, and each block's coordinates depend only on the map and the block (``transform``
starts from the map's own ``transform_seed`` on every call), so they are bit-identical to
one process's and the cache key does not include the number of workers.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from engine.errors import InputError

METHODS = ("pca", "umap")
CACHE_FORMAT = 2  # 2: turns outside a fit with a search index placed by engine.maps.placement
TRANSFORM_CHUNK = 65_536  # turns placed per step once a fit is made
MAX_FIT_TURNS = 20_000  # UMAP is fitted on at most this many turns (a seeded sample above it)


def default_cache_dir() -> Path:
    """``$CDL_CACHE_DIR/projections`` or ``~/.cache/creativity-dynamics-lab/projections``."""
    root = os.environ.get("CDL_CACHE_DIR") or Path.home() / ".cache" / "creativity-dynamics-lab"
    return Path(root) / "projections"


def project_turns(embeddings, index_df: pd.DataFrame, method: str = "pca", fit_on: Iterable[str] | None = None,
                  seed: int = 42, cache_dir: str | Path | None = None, progress: bool | Callable[[str], None] = False,
                  *, use_cache: bool = True, n_neighbors: int = 15, min_dist: float = 0.1,
                  metric: str = "cosine", max_fit_turns: int | None = None,
                  transform_workers: int = 1) -> pd.DataFrame:
    """Per-turn 2-D coordinates: DataFrame ``conversation_id, turn, x, y`` (input row order).

    ``embeddings`` is ``(n_turns_total, dim)`` with ``index_df`` naming each row
    (``conversation_id``, ``turn``). ``fit_on`` restricts the fit to those conversations;
    every turn is then transformed with the fitted map. ``progress`` is ``True`` (messages
    and UMAP's epoch bar on stderr) or a callable receiving stage messages. UMAP parameters
    (``n_neighbors``, ``min_dist``, ``metric``, ``max_fit_turns``) are ignored by PCA.

    ``attrs`` of the result: the parameters, and for UMAP ``fit_set_turns`` (turns in the fit
    set), ``fitted_turns`` (turns the map was fitted on: the fit set, or its seeded sample of
    ``max_fit_turns`` turns when larger; default ``MAX_FIT_TURNS``), ``placed_turns`` (turns placed by ``transform``) and
    ``fit_sampled``. ``transform_workers``: processes placing the blocks of ``TRANSFORM_CHUNK``
    turns outside the fit at once (UMAP; the same coordinates as one process).
    """
    report = _reporter(progress)
    if method not in METHODS:
        raise InputError(f"projection method must be one of {list(METHODS)}, got {method!r}", field="method")
    x, index = _validate(embeddings, index_df)
    fit_mask = _fit_mask(index, fit_on)
    params = {"method": method, "seed": int(seed)}
    fit_set_turns = int(fit_mask.sum())
    if method == "umap":
        max_fit_turns = MAX_FIT_TURNS if max_fit_turns is None else max_fit_turns
        if int(transform_workers) < 1:
            raise InputError(f"transform_workers must be at least 1, got {transform_workers}",
                             field="transform_workers")
        if int(max_fit_turns) < 3:
            raise InputError(f"max_fit_turns must be at least 3, got {max_fit_turns}", field="max_fit_turns")
        if fit_set_turns > max_fit_turns:
            fit_mask = fit_sample(fit_mask, int(max_fit_turns), int(seed))
            params["max_fit_turns"] = int(max_fit_turns)  # only when it binds: under it, results are unchanged
        params.update(n_neighbors=int(min(n_neighbors, int(fit_mask.sum()) - 1)), min_dist=float(min_dist), metric=metric)
    key = _cache_key(x, index, fit_mask, params) if use_cache else None
    path = Path(cache_dir or default_cache_dir()) / f"projection-{method}-{key}.parquet" if key else None
    if path is not None and path.exists():
        try:
            cached = pd.read_parquet(path)
            report(f"projection: cached result {path.name}")
            return cached
        except Exception:  # a damaged cache file is recomputed, never trusted
            pass
    started = time.perf_counter()
    sampled = " (seeded sample of the fit set)" if "max_fit_turns" in params else ""
    report(f"projection: {method.upper()} fitted on {int(fit_mask.sum()):,} of {len(x):,} turns{sampled}")
    if method == "pca":
        coordinates, extra = _pca(x, fit_mask, seed)
    else:
        coordinates, extra = _umap(x, fit_mask, params, progress, report, int(transform_workers))
    out = pd.DataFrame({"conversation_id": index["conversation_id"].to_numpy(),
                        "turn": index["turn"].to_numpy(), "x": coordinates[:, 0], "y": coordinates[:, 1]})
    if method == "umap":
        extra.update(fit_set_turns=fit_set_turns, fitted_turns=int(fit_mask.sum()),
                     placed_turns=int((~fit_mask).sum()), fit_sampled="max_fit_turns" in params)
    out.attrs.update(params, **extra)
    report(f"projection: done in {time.perf_counter() - started:.1f} s")
    if path is not None:
        from engine.corpus import atomic_write_bytes

        buffer = io.BytesIO()
        out.to_parquet(buffer, index=False)
        atomic_write_bytes(path, buffer.getvalue())
    return out


def trajectory_paths(projected: pd.DataFrame) -> pd.DataFrame:
    """Turns ordered within each conversation, with ``step`` (0..n-1) and ``progress`` in [0, 1].

    Drawing consecutive rows of one conversation as a line, coloured by ``progress``
    (early blue to late red), gives Figure 4's trajectory.
    """
    missing = [c for c in ("conversation_id", "turn", "x", "y") if c not in projected.columns]
    if missing:
        raise InputError(f"a projection needs column {missing[0]!r}", field=missing[0])
    ordered = projected.sort_values(["conversation_id", "turn"], kind="stable").reset_index(drop=True)
    step = ordered.groupby("conversation_id", sort=False).cumcount()
    length = ordered.groupby("conversation_id", sort=False)["turn"].transform("size")
    ordered["step"] = step
    ordered["progress"] = np.where(length > 1, step / (length - 1).clip(lower=1), 0.0)
    return ordered


def _reporter(progress) -> Callable[[str], None]:
    if callable(progress):
        return progress
    if progress:
        return lambda message: print(message, file=sys.stderr, flush=True)
    return lambda message: None


def _validate(embeddings, index_df) -> tuple[np.ndarray, pd.DataFrame]:
    try:
        x = np.asarray(embeddings, dtype=np.float32)
    except (TypeError, ValueError):
        raise InputError("embeddings must be a numeric (n_turns, dim) array") from None
    if x.ndim != 2:
        raise InputError(f"embeddings must be a 2-D (n_turns, dim) array, got shape {x.shape}")
    if not isinstance(index_df, pd.DataFrame):
        raise InputError("index_df must be a table with columns conversation_id and turn")
    missing = [c for c in ("conversation_id", "turn") if c not in index_df.columns]
    if missing:
        raise InputError(f"the turn index needs column {missing[0]!r}", field=missing[0])
    if len(index_df) != len(x):
        raise InputError(f"the turn index has {len(index_df)} rows but there are {len(x)} embeddings; "
                         "each embedding row needs one (conversation_id, turn)")
    if len(x) < 3:
        raise InputError(f"a projection needs at least 3 turns, got {len(x)}")
    for first in range(0, len(x), TRANSFORM_CHUNK):  # in blocks: no (n_turns, dim) mask at once
        block = x[first:first + TRANSFORM_CHUNK]
        if not np.isfinite(block).all():
            row = first + int(np.flatnonzero(~np.isfinite(block).all(axis=1))[0]) + 1
            raise InputError("embedding has a missing or infinite value", row=row)
    index = index_df[["conversation_id", "turn"]].reset_index(drop=True)
    if index.duplicated().any():
        row = int(np.flatnonzero(index.duplicated().to_numpy())[0]) + 1
        raise InputError(f"turn {index.turn[row - 1]!r} of {index.conversation_id[row - 1]!r} appears twice", row=row)
    return np.ascontiguousarray(x), index


def _fit_mask(index: pd.DataFrame, fit_on) -> np.ndarray:
    if fit_on is None:
        return np.ones(len(index), dtype=bool)
    wanted = {str(c) for c in ([fit_on] if isinstance(fit_on, str) else fit_on)}
    mask = index["conversation_id"].astype(str).isin(wanted).to_numpy()
    if mask.sum() < 3:
        raise InputError(f"fit_on names {len(wanted)} conversation(s) with {int(mask.sum())} turn(s) "
                         "in the index; the fit needs at least 3 turns", field="fit_on")
    return mask


def fit_sample(fit_mask: np.ndarray, cap: int, seed: int) -> np.ndarray:
    """``cap`` turns of the fit set drawn uniformly without replacement (``numpy`` generator
    seeded with ``seed``), as a mask over every turn."""
    rows = np.flatnonzero(fit_mask)
    chosen = np.random.default_rng(seed).choice(rows, size=cap, replace=False)
    sample = np.zeros_like(fit_mask)
    sample[chosen] = True
    return sample


def _cache_key(x: np.ndarray, index: pd.DataFrame, fit_mask: np.ndarray, params: dict) -> str:
    import sklearn

    digest = hashlib.blake2b(digest_size=16)
    digest.update(json.dumps({"format": CACHE_FORMAT, "shape": x.shape, "params": params,
                              "sklearn": sklearn.__version__, "umap": _umap_version()}, sort_keys=True).encode())
    digest.update(memoryview(x).cast("B"))  # the same bytes as x.tobytes(), without the copy
    digest.update(index["conversation_id"].astype(str).str.cat(sep="\x1f").encode())
    digest.update(np.asarray(index["turn"], dtype=np.int64).tobytes())
    digest.update(np.packbits(fit_mask).tobytes())
    return digest.hexdigest()


def _umap_version() -> str | None:
    if "umap" not in sys.modules:
        try:
            from importlib.metadata import version

            return version("umap-learn")
        except Exception:
            return None
    return getattr(sys.modules["umap"], "__version__", None)


def _pca(x: np.ndarray, fit_mask: np.ndarray, seed: int):
    from sklearn.decomposition import PCA

    # one float64 copy (of the fitted rows), fitted in place (copy=False), then every turn
    # transformed TRANSFORM_CHUNK rows at a time: the fit in float64 as before, without a
    # second float64 copy of every turn (11.6 GB at 1.9M turns x 384 dims before)
    fit_rows = np.asarray(x, dtype=np.float64) if fit_mask.all() else x[fit_mask].astype(np.float64)
    pca = PCA(n_components=2, random_state=seed, copy=False).fit(fit_rows)
    del fit_rows
    coordinates = np.empty((len(x), 2), dtype=np.float64)
    for first in range(0, len(x), TRANSFORM_CHUNK):
        block = np.asarray(x[first:first + TRANSFORM_CHUNK], dtype=np.float64)
        coordinates[first:first + len(block)] = pca.transform(block)
    return coordinates, {"explained_variance_ratio": [float(v) for v in pca.explained_variance_ratio_]}


UMAP_MIN_TURNS = 4


def _umap(x: np.ndarray, fit_mask: np.ndarray, params: dict, progress, report, workers: int = 1):
    import warnings

    if fit_mask.sum() < UMAP_MIN_TURNS:  # its spectral layout solves for 3 eigenvectors of n x n
        raise InputError(f"UMAP needs at least {UMAP_MIN_TURNS} turns to fit, got {int(fit_mask.sum())}; "
                         "PCA draws as few as 3")
    report("projection: loading UMAP (compiled code from its disk cache, or compiled on the machine's first call)")
    report("projection: nearest neighbours and layout")
    fitted = fit_umap(x[fit_mask], params, progress)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*n_jobs value.*")
        coordinates = np.empty((len(x), 2), dtype=np.float64)
        coordinates[fit_mask] = fitted.embedding_
        rest = np.flatnonzero(~fit_mask)
        if len(rest):
            report(f"projection: placing {len(rest):,} turns outside the fit")
            if len(rest) <= TRANSFORM_CHUNK:  # one call, as before the cap existed
                coordinates[rest] = place(fitted, x[rest])
            else:  # bounded memory: one block of rows (and its neighbour graph) at a time
                blocks = [rest[first:first + TRANSFORM_CHUNK] for first in range(0, len(rest), TRANSFORM_CHUNK)]
                place_blocks(fitted, x, blocks, coordinates, workers, report)
    return coordinates, {"placement": placement_name(fitted) if len(rest) else "none (every turn fitted)"}


def fit_umap(rows: np.ndarray, params: dict, progress=False):
    """``umap.UMAP`` (2 components, the projection's neighbours, distance, metric and seed)
    fitted on ``rows``; umap-learn imported with its compiled code cached on disk."""
    import warnings

    from engine.maps.compiled_cache import import_umap

    umap = import_umap()
    reducer = umap.UMAP(n_components=2, n_neighbors=params["n_neighbors"], min_dist=params["min_dist"],
                        metric=params["metric"], random_state=params["seed"], verbose=bool(progress is True),
                        tqdm_kwds={"disable": progress is not True, "file": sys.stderr})
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*n_jobs value.*")
        # pynndescent's graph construction is compiled in every process (engine.maps.compiled_cache)
        warnings.filterwarnings("ignore", message=".*Cannot cache compiled function.*")
        return reducer.fit(rows)


def uses_own_placement(fitted) -> bool:
    """A map fitted on 4,096 turns or more has a neighbour search index: its other turns are
    placed by ``engine.maps.placement``; smaller fits by umap-learn's ``transform`` (which
    then compares every placed turn with every fitted one)."""
    return hasattr(fitted, "_knn_search_index")


def placement_name(fitted) -> str:
    """How the turns outside the fit were placed, for the result's ``attrs``."""
    if uses_own_placement(fitted):
        from engine.maps.placement import SEARCH_EPSILON

        return (f"nearest fitted turns (search epsilon {SEARCH_EPSILON}), their weighted mean, then "
                f"umap-learn's transform epochs (engine.maps.placement)")
    return "umap-learn transform"


def place(fitted, rows: np.ndarray) -> np.ndarray:
    """Map positions of ``rows`` (see ``uses_own_placement``)."""
    if uses_own_placement(fitted):
        from engine.maps.placement import place_turns

        return place_turns(fitted, rows)
    return fitted.transform(rows)


def place_blocks(fitted, x: np.ndarray, blocks: list[np.ndarray], coordinates: np.ndarray,
                 workers: int, report: Callable[[str], None]) -> None:
    """``coordinates[block] = place(fitted, x[block])`` for every block, in this process
    or over ``workers`` processes (started fresh, ``spawn``: a fork after numba's threads
    started is unsafe), at most two blocks per worker in flight so memory stays bounded;
    a message per block placed. Blocks a worker that died did not return are placed in this
    process, and the message says so."""
    total, placed = sum(len(b) for b in blocks), 0
    workers = min(workers, len(blocks))
    if workers <= 1:
        for block in blocks:
            coordinates[block] = place(fitted, x[block])
            placed += len(block)
            report(f"projection: placed {placed:,} of {total:,} turns")
        return
    import multiprocessing
    import pickle
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    report(f"projection: {workers} processes place the blocks (each loads the fitted map once)")
    # the map travels without its progress-bar settings (they hold this process's stderr)
    saved = getattr(fitted, "tqdm_kwds", None), getattr(fitted, "verbose", False)
    fitted.tqdm_kwds, fitted.verbose = {"disable": True}, False
    try:
        payload = pickle.dumps(fitted)
    finally:
        fitted.tqdm_kwds, fitted.verbose = saved
    queue, pending = list(blocks), {}
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=_worker_receives, initargs=(payload,)) as pool:
            while queue or pending:
                while queue and len(pending) < 2 * workers:
                    block = queue.pop(0)
                    pending[pool.submit(_worker_places, np.ascontiguousarray(x[block]))] = block
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    block = pending[future]
                    coordinates[block] = future.result()
                    del pending[future]
                    placed += len(block)
                    report(f"projection: placed {placed:,} of {total:,} turns")
    except BrokenProcessPool:
        # a worker died (killed, out of memory): the blocks it had not returned are placed here,
        # with the same result (``transform`` depends only on the map and the block)
        queue = list(pending.values()) + queue
        report(f"projection: a worker process ended abruptly; the {len(queue)} blocks not yet "
               f"returned are placed in this process")
        for block in queue:
            coordinates[block] = place(fitted, x[block])
            placed += len(block)
            report(f"projection: placed {placed:,} of {total:,} turns")


_WORKER_MAP: dict = {}


def _worker_receives(fitted_bytes: bytes) -> None:
    import pickle
    import warnings

    warnings.filterwarnings("ignore", message=".*n_jobs value.*")
    _WORKER_MAP["fitted"] = pickle.loads(fitted_bytes)


def _worker_places(block: np.ndarray) -> np.ndarray:
    return place(_WORKER_MAP["fitted"], block)
