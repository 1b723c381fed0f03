"""The registered features of many conversations at once, in bounded memory.

``features_for_corpus`` streams through its input in small chunks of equal-length
conversations (so memory stays bounded whatever the corpus size, and a memory-mapped
``.npy`` is read chunk by chunk) and computes every feature of a chunk from one shared
``Chunk`` (one Gram matrix per conversation; ``engine.measures.feature``). A Ray worker
computes the very same chunks (``engine.cluster.features``), so the tables are bit-identical.
"""

from __future__ import annotations

from typing import Collection, Iterable, Mapping, Sequence

import numpy as np

from engine.measures.feature import Chunk, Feature
from engine.measures.registry import feature, features
from engine.measures.trajectory import compute_features

# Conversations computed together: 128 x 30 turns x 384 dims of float64 is 12 MB, small
# enough that the passes over it stay in cache, large enough that numpy's per-call cost
# is spread thin (measured: 128-256 is fastest; 2,000 at once is 3x slower).
CHUNK_CONVERSATIONS = 128
# Turns held back waiting for more conversations of the same length, at most (streamed
# input with many distinct lengths): past this, the largest waiting group is computed.
MAX_WAITING_TURNS = 1 << 17
KMEANS_MODES = ("batched", "sklearn")


def chosen_features(names: Sequence[str] | None = None,
                    given: Collection[str] | None = None) -> tuple[Feature, ...]:
    """The features named (in that order), or every registered one the input allows;
    ``given``: the turn fields the input has (None: every field a feature may need)."""
    if names is None:
        return features(given)
    chosen = tuple(feature(name) for name in names)
    if given is not None:
        lacking = {f.name: [n for n in f.needs if n not in given] for f in chosen}
        lacking = {name: fields for name, fields in lacking.items() if fields}
        if lacking:
            said = "; ".join(f"{name} needs the {', '.join(fields)} of every turn"
                             for name, fields in lacking.items())
            raise ValueError(f"features {list(lacking)} need turn fields the input lacks: {said}; "
                             f"given: {sorted(given) or 'embeddings only'}")
    return chosen


def needed_fields(chosen: Sequence[Feature]) -> tuple[str, ...]:
    """The turn fields the chosen features read (what a caller loads, and nothing more)."""
    return tuple(dict.fromkeys(name for f in chosen for name in f.needs))


def turn_fields_of(speakers=None, turns: Mapping[str, Sequence] | None = None) -> dict[str, Sequence]:
    """``turns`` (turn field -> one sequence per conversation) with ``speakers`` as its "speaker"."""
    given = dict(turns or {})
    if speakers is not None:
        given["speaker"] = speakers
    return given


def features_for_corpus(conversations: Sequence[np.ndarray] | Iterable[np.ndarray] | np.ndarray, *,
                        speakers: Sequence[Sequence[str]] | None = None,
                        turns: Mapping[str, Sequence[Sequence]] | None = None,
                        names: Sequence[str] | None = None, kmeans: str = "batched",
                        progress: bool = False,
                        chunk: int = CHUNK_CONVERSATIONS) -> "pandas.DataFrame":
    """Features for many conversations; one row per input, in input order, one column per
    feature (``names``, or every registered feature the input allows). ``turns`` maps turn
    fields (``engine.measures.feature.TURN_FIELDS``: ``"text"``, ...) to one sequence per
    conversation, one value per turn, in input order; ``speakers`` is ``turns["speaker"]``.
    A feature that needs a field not given is left out (named: refused).

    ``conversations`` is a sequence or any iterable of ``(n_turns, dim)`` arrays (views on
    a memory-mapped file are fine: each is read when its chunk is computed), or one
    ``(conversations, n_turns, dim)`` array. Memory used beyond the input is a few chunks.
    ``kmeans`` is ``"batched"`` (fast, numpy, equal partitions to scikit-learn except on
    rare ties) or ``"sklearn"`` (scikit-learn's KMeans per conversation, as the paper).
    """
    import pandas as pd

    if kmeans not in KMEANS_MODES:
        raise ValueError(f"kmeans must be 'batched' or 'sklearn', got {kmeans!r}")
    if chunk < 1:
        raise ValueError("chunk must be at least 1")
    given = turn_fields_of(speakers, turns)
    chosen = chosen_features(names, given)
    given = {name: given[name] for name in needed_fields(chosen)}  # only what a feature reads
    total = len(conversations) if hasattr(conversations, "__len__") else None
    for name, values in given.items():
        if total is not None and len(values) != total:
            raise ValueError(f"{len(values)} lists of turn {name}s for {total} conversations")
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="features", unit="conversation")
    blocks = []  # (positions, values) per computed chunk
    if isinstance(conversations, np.ndarray) and conversations.ndim == 3:
        pieces = ((np.arange(start, min(start + chunk, len(conversations))),
                   np.asarray(conversations[start:start + chunk], dtype=np.float64))
                  for start in range(0, len(conversations), chunk))
    else:
        pieces = equal_length_chunks(conversations, chunk)
    for positions, x in pieces:
        blocks.append((positions, chunk_features(x, kmeans, chosen=chosen, turns=turns_of(given, positions))))
        if bar is not None:
            bar.update(len(positions))
    if bar is not None:
        bar.close()
    count = sum(len(p) for p, _ in blocks)
    out = np.full((count, len(chosen)), np.nan)
    for positions, values in blocks:
        out[positions] = values
    return pd.DataFrame(out, columns=[f.name for f in chosen])


def speakers_of(speakers, positions) -> list | None:
    """The speaker lists of a chunk's conversations (None when the corpus has none)."""
    return None if speakers is None else [speakers[int(p)] for p in positions]


def turns_of(given: Mapping[str, Sequence], positions) -> dict[str, list]:
    """Each given turn field's values for a chunk's conversations."""
    return {name: [values[int(p)] for p in positions] for name, values in given.items()}


def chunk_features(x: np.ndarray, kmeans: str = "batched", speakers=None,
                   chosen: Sequence[Feature] | None = None,
                   turns: Mapping[str, Sequence] | None = None) -> np.ndarray:
    """The features (batch, len(chosen)) of one chunk from ``equal_length_chunks`` (any
    float dtype); ``chosen`` defaults to every registered feature the input allows
    (``turns``, with ``speakers`` as its "speaker": the chunk's turn fields)."""
    given = turn_fields_of(speakers, turns)
    if chosen is None:
        chosen = chosen_features(None, given)
    x = np.asarray(x, dtype=np.float64)
    return compute_features(Chunk(x, kmeans=kmeans, turns=given), chosen)


def equal_length_chunks(conversations, chunk: int = CHUNK_CONVERSATIONS, *, as_float64: bool = True):
    """Yield ``(positions, array (m, n, dim))`` of at most ``chunk`` conversations of one
    shape, reading the input once, in order, holding few turns back; float64 unless
    ``as_float64`` is False (the input's own dtype: what a Ray shard ships,
    ``engine.cluster.features``). The chunks ``features_for_corpus`` computes, exactly."""
    waiting: dict[tuple[int, int], list[tuple[int, np.ndarray]]] = {}
    waiting_turns = 0
    for position, embeddings in enumerate(conversations):
        array = np.asarray(embeddings)
        if array.ndim != 2:
            raise ValueError(f"conversation {position}: expected an (n_turns, dim) array, "
                             f"got shape {array.shape}")
        group = waiting.setdefault(array.shape, [])
        group.append((position, array))
        waiting_turns += len(array)
        if len(group) == chunk:
            waiting_turns -= sum(len(a) for _, a in group)
            yield stacked(waiting.pop(array.shape), as_float64)
        elif waiting_turns > MAX_WAITING_TURNS:
            largest = max(waiting, key=lambda shape: shape[0] * len(waiting[shape]))
            waiting_turns -= largest[0] * len(waiting[largest])
            yield stacked(waiting.pop(largest), as_float64)
    for shape in sorted(waiting):
        yield stacked(waiting[shape], as_float64)


def stacked(group: list[tuple[int, np.ndarray]], as_float64: bool = True) -> tuple[np.ndarray, np.ndarray]:
    positions = np.fromiter((p for p, _ in group), dtype=np.int64, count=len(group))
    arrays = np.stack([a for _, a in group])
    return positions, arrays.astype(np.float64, copy=False) if as_float64 else arrays
