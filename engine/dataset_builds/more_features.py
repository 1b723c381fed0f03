"""Registered features a dataset's table lacks, computed from its own turn embeddings.

A dataset built before a feature was registered (a new built-in measure, or a plugin's
installed since) gains that feature's column with ``add_features``: each conversation's
stored turn embeddings, in turn order, and the speakers of those turns from the dataset's
corpus go through ``engine.measures.compute.features_for_corpus``. Columns the table already
has are never recomputed or changed (paper A's nine stay bit for bit what the build wrote);
asking for one is an error. The manifest records what was added and, for a plugin's feature,
the plugin's name and version (and the table's new SHA-256, ``engine.datasets.check_whole``).
Both files are written into a copy of the folder swapped in whole
(``engine.dataset_builds.output_folder.rewritten``): a crash leaves the dataset as it was.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Sequence

import numpy as np

from engine.datasets import Dataset
from engine.errors import InputError
from engine.measures.compute import features_for_corpus
from engine.measures.registry import FEATURES, feature, feature_sources, named_features


def turn_arrays(dataset: Dataset) -> tuple[list[np.ndarray], list[list[str]] | None]:
    """Per row of the table: its turn embeddings in turn order, and the speakers of those turns
    (None when the corpus cannot name every one)."""
    index = dataset.turn_index
    dim = dataset.turn_embeddings.shape[1]
    rows = {cid: group.sort_values("turn") for cid, group in index.groupby("conversation_id", sort=False)}
    by_id = {c.conversation_id: c for c in dataset.corpus} if dataset.corpus is not None else {}
    arrays, speakers = [], []
    for cid in dataset.conversations["conversation_id"]:
        group = rows.get(cid)
        if group is None:
            arrays.append(np.zeros((0, dim), dtype=np.float32))
            speakers.append([])
            continue
        arrays.append(dataset.turn_embeddings[group.index.to_numpy()])
        turns = by_id[cid].turns if cid in by_id else None
        positions = group["turn"].to_numpy()
        if turns is None or (len(positions) and positions.max() >= len(turns)):
            speakers.append(None)
        else:
            speakers.append([turns[int(p)].speaker for p in positions])
    return arrays, (None if any(s is None for s in speakers) else speakers)


def missing_features(dataset: Dataset, names: Sequence[str] | None, with_speakers: bool) -> list[str]:
    """The names to compute: those given (each registered, none already a column) or every
    registered feature the table lacks (speaker measures only when speakers are known)."""
    columns = set(dataset.conversations.columns)
    if names is None:
        return [n for n in FEATURES.names() if n not in columns
                and (with_speakers or not feature(n).needs_speakers)]
    named_features(",".join(names))  # each one registered
    for name in names:
        if name in columns:
            raise InputError(f"the table already has {name!r}; a column is never recomputed",
                             path=str(dataset.path), field=name)
        if feature(name).needs_speakers and not with_speakers:
            raise InputError(f"{name!r} needs the speaker of every turn; the dataset's corpus "
                             f"does not name them", path=str(dataset.path), field=name)
    return list(names)


def add_features(folder: str | Path, names: Sequence[str] | None = None) -> list[str]:
    """Compute the features (see ``missing_features``) into the dataset at ``folder``;
    returns the names added (empty: nothing to do, nothing written)."""
    from engine.dataset_builds.output_folder import rewritten
    from engine.datasets import CONVERSATIONS, DIGESTS, file_digests, write_manifest, write_parquet

    dataset = Dataset.load(folder)
    if dataset.turn_embeddings is None:
        raise InputError("has no turn embeddings to compute features from", path=str(folder))
    arrays, speakers = turn_arrays(dataset)
    names = missing_features(dataset, names, speakers is not None)
    if not names:
        return []
    values = features_for_corpus(arrays, speakers=speakers if any(feature(n).needs_speakers for n in names)
                                 else None, names=names)
    table = dataset.conversations.copy()
    for name in names:
        table[name] = values[name].to_numpy()
    manifest = dict(dataset.manifest)
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    manifest["features_added"] = {**manifest.get("features_added", {}),
                                  **{name: {"when": stamp, "from": "turn_embeddings.npy"} for name in names}}
    plugins = {**manifest.get("feature_plugins", {}), **feature_sources(names)}
    if plugins:
        manifest["feature_plugins"] = plugins
    with rewritten(Path(folder), "python -m engine dataset features") as copy:
        write_parquet(table, copy / CONVERSATIONS)
        if DIGESTS in manifest:  # the table changed: so does its digest
            manifest[DIGESTS] = {**manifest[DIGESTS], **file_digests(copy, [CONVERSATIONS])}
        write_manifest(copy, manifest)
    return names
