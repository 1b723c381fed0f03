"""Registered features a stored dataset lacks, computed from its own turns when it is read.

A dataset built before a feature was registered (a new built-in, or a plugin installed since)
gets that feature's column when it is read (``engine.datasets.Dataset.load``): each
conversation's stored turn embeddings in turn order and, for a feature that ``needs`` them,
those turns' fields from the dataset's corpus (read only then) go through
``engine.measures.compute.features_for_corpus``. The values are cached on disk
(``$CDL_CACHE_DIR/features_at_read/``), one file per feature and build: keyed by the SHA-256
of the dataset's files, the feature's name and ``version``, and who made it (a plugin's name
and version, or this project's version), so a second read computes nothing and a rebuilt
dataset or a changed feature never reads stale values. Columns the table has are never
touched. Each computed column says where it comes from (``provenance``); a feature that cannot
be computed (no turn embeddings, as paper A's release; a corpus that does not hold the turn
field it needs) is named with the reason (``not_computed``).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from engine.measures.compute import features_for_corpus
from engine.measures.registry import FEATURES, feature

NO_EMBEDDINGS = "the dataset stores no turn embeddings, which every feature is computed from"
NO_IDS = "its conversation table has no conversation_id column naming each row's turns"


@dataclass
class ReadFeatures:
    """What reading added: the columns (table order), where each comes from, and the
    features left out with the reason."""

    values: pd.DataFrame
    provenance: dict[str, dict] = field(default_factory=dict)
    not_computed: dict[str, str] = field(default_factory=dict)


def cache_folder() -> Path:
    """``$CDL_CACHE_DIR/features_at_read`` (``~/.cache/creativity-dynamics-lab`` by default)."""
    root = os.environ.get("CDL_CACHE_DIR") or Path.home() / ".cache" / "creativity-dynamics-lab"
    return Path(root) / "features_at_read"


def made_by(name: str) -> dict:
    """Who computes a feature: its plugin's name and version, or this project's version."""
    import engine

    source = FEATURES.source(name)
    if source.plugin is not None:
        return source.record()
    return {"project": "creativity-dynamics-lab", "version": engine.__version__}


def cache_key(build: str, name: str) -> str:
    """The cache file's name of feature ``name`` on the dataset build ``build``."""
    said = json.dumps({"build": build, "feature": name, "version": feature(name).version,
                       "made_by": made_by(name)}, sort_keys=True)
    return hashlib.sha256(said.encode()).hexdigest()


def stored_turns(ids: Sequence[str], turn_embeddings: np.ndarray, turn_index: pd.DataFrame,
                 corpus, fields: Sequence[str] = ()) -> tuple[list[np.ndarray], dict[str, list | None]]:
    """Per conversation id: its turn embeddings in turn order, and for each of ``fields`` the
    values of those turns (None for a field the corpus cannot give for every turn)."""
    dim = turn_embeddings.shape[1]
    rows = {cid: group.sort_values("turn") for cid, group in turn_index.groupby("conversation_id", sort=False)}
    by_id = {c.conversation_id: c for c in corpus} if corpus is not None else {}
    arrays, values = [], {name: [] for name in fields}
    for cid in ids:
        group = rows.get(cid)
        if group is None:
            arrays.append(np.zeros((0, dim), dtype=turn_embeddings.dtype))
            for name in fields:
                values[name].append([])
            continue
        arrays.append(turn_embeddings[group.index.to_numpy()])
        turns = by_id[cid].turns if cid in by_id else None
        positions = group["turn"].to_numpy()
        known = turns is not None and not (len(positions) and positions.max() >= len(turns))
        for name in fields:
            values[name].append([getattr(turns[int(p)], name) for p in positions] if known else None)
    return arrays, {name: None if any(v is None for v in lists) else lists for name, lists in values.items()}


def features_at_read(table: pd.DataFrame, turn_embeddings: np.ndarray | None, turn_index: pd.DataFrame | None,
                     read_corpus: Callable[[], object], build: str, *,
                     embeddings_file: str = "turn_embeddings.npy", corpus_file: str = "corpus.parquet") -> ReadFeatures:
    """The registered features ``table`` lacks, from the stored turns (see the module);
    ``read_corpus()`` gives the dataset's corpus (or None) and is called only when a feature
    that needs a turn field is not in the cache."""
    lacking = [name for name in FEATURES.names() if name not in table.columns]
    out = ReadFeatures(pd.DataFrame(index=table.index))
    if not lacking:
        return out
    if turn_embeddings is None or turn_index is None:
        out.not_computed = {name: NO_EMBEDDINGS for name in lacking}
        return out
    if "conversation_id" not in table.columns:
        out.not_computed = {name: NO_IDS for name in lacking}
        return out
    ids = table["conversation_id"].tolist()
    folder = cache_folder()
    found = {name: cached_values(folder / f"{cache_key(build, name)}.parquet", ids) for name in lacking}
    to_compute = [name for name, values in found.items() if values is None]
    if to_compute:
        fields = tuple(dict.fromkeys(f for name in to_compute for f in feature(name).needs))
        arrays, given = stored_turns(ids, turn_embeddings, turn_index, read_corpus() if fields else None, fields)
        for name in list(to_compute):
            missing = [f for f in feature(name).needs if given.get(f) is None]
            if missing:
                out.not_computed[name] = (f"the dataset's corpus does not give the {', '.join(missing)} "
                                          f"of every embedded turn, which it needs")
                to_compute.remove(name)
        turns = {f: given[f] for f in fields if given.get(f) is not None}
        for name in to_compute:  # one at a time: a plugin's feature that fails costs only its column
            try:
                found[name] = features_for_corpus(arrays, turns=turns, names=[name])[name].to_numpy()
            except Exception as error:  # a feature's own code: any error it raises is said, not raised
                out.not_computed[name] = f"computing it failed ({type(error).__name__}: {error})"
                continue
            write_cached(folder / f"{cache_key(build, name)}.parquet", ids, found[name])
    for name in lacking:
        if found.get(name) is not None:
            out.values[name] = found[name]
            needs = feature(name).needs
            out.provenance[name] = {"from": embeddings_file + (f" and the turns' {', '.join(needs)} in {corpus_file}"
                                                               if needs else ""),
                                    "computed": "when the dataset was read", "by": made_by(name)}
    return out


def cached_values(path: Path, ids: list) -> np.ndarray | None:
    """The values cached at ``path`` when they are of these conversations, in this order."""
    try:
        frame = pd.read_parquet(path)
        if frame["conversation_id"].tolist() != [str(i) for i in ids]:
            return None
        return frame["value"].to_numpy(dtype=float)
    except Exception:  # absent, cut short or not ours: computed again (and rewritten)
        return None


def write_cached(path: Path, ids: list, values: np.ndarray) -> None:
    from engine.storage.durable import atomic_write_bytes

    buffer = io.BytesIO()
    pd.DataFrame({"conversation_id": [str(i) for i in ids],
                  "value": np.asarray(values, dtype=float)}).to_parquet(buffer, index=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, buffer.getvalue())
    except OSError:  # a full or read-only cache: the values are used, computed again next read
        pass
