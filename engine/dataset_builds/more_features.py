"""Registered features a dataset's table lacks, computed from its own turn embeddings.

A dataset built before a feature was registered (a new built-in measure, or a plugin's
installed since) gains that feature's column in the table itself with ``add_features`` (reading
it computes the column too, ``engine.measures.at_read``, without writing): each conversation's
stored turn embeddings, in turn order, and the turn fields a feature ``needs`` (speakers,
texts) from the dataset's corpus go through ``engine.measures.compute.features_for_corpus``. Columns the table already
has are never recomputed or changed (paper A's nine stay bit for bit what the build wrote);
asking for one is an error. The manifest records what was added and, for a plugin's feature,
the plugin's name and version (and the table's new SHA-256, ``engine.datasets.check_whole``).
Both files are written into a copy of the folder swapped in whole
(``engine.dataset_builds.output_folder.rewritten``): a crash leaves the dataset as it was.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Mapping, Sequence

from engine.datasets import Dataset
from engine.errors import InputError
from engine.measures.at_read import stored_turns
from engine.measures.compute import features_for_corpus
from engine.measures.registry import FEATURES, feature, feature_sources, named_features


def missing_features(dataset: Dataset, names: Sequence[str] | None, given: Mapping[str, object]) -> list[str]:
    """The names to compute: those given (each registered, none already a column, each one's
    turn fields known) or every registered feature the table lacks whose turn fields are known
    (``given``: turn field -> values, None when the corpus cannot name every turn's)."""
    columns = set(dataset.conversations.columns)

    def lacking(name: str) -> list[str]:
        return [f for f in feature(name).needs if given.get(f) is None]

    if names is None:
        return [n for n in FEATURES.names() if n not in columns and not lacking(n)]
    named_features(",".join(names))  # each one registered
    for name in names:
        if name in columns:
            raise InputError(f"the table already has {name!r}; a column is never recomputed",
                             path=str(dataset.path), field=name)
        if lacking(name):
            raise InputError(f"{name!r} needs the {', '.join(lacking(name))} of every turn; the "
                             f"dataset's corpus does not give them", path=str(dataset.path), field=name)
    return list(names)


def add_features(folder: str | Path, names: Sequence[str] | None = None) -> list[str]:
    """Compute the features (see ``missing_features``) into the dataset at ``folder``;
    returns the names added (empty: nothing to do, nothing written)."""
    from engine.dataset_builds.output_folder import rewritten
    from engine.datasets import CONVERSATIONS, DIGESTS, file_digests, write_manifest, write_parquet

    dataset = Dataset.load(folder, computed_at_read=False)  # the table as stored
    if dataset.turn_embeddings is None:
        raise InputError("has no turn embeddings to compute features from", path=str(folder))
    fields = tuple(dict.fromkeys(f for name in (names or FEATURES.names()) if name in FEATURES
                                 for f in feature(name).needs))
    arrays, given = stored_turns(dataset.conversations["conversation_id"].tolist(),
                                 dataset.turn_embeddings, dataset.turn_index, dataset.corpus, fields)
    names = missing_features(dataset, names, given)
    if not names:
        return []
    values = features_for_corpus(arrays, turns={f: v for f, v in given.items() if v is not None}, names=names)
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
