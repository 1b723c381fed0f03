"""Every registered feature (paper A's nine of Table 19 and the rest) on a Ray cluster: one task
per shard of conversations.

The driver reads the conversations once, in input order, into the very chunks one machine
computes together (``engine.measures.compute.equal_length_chunks``: up to 128 conversations of one
length), gathers chunks into shards of about ``shard_turns`` turns, puts each shard in Ray's
object store (in the input's dtype), keeps at most ``in_flight`` shards out at once (the
object store stays bounded whatever the corpus size: a memory-mapped ``.npy`` is read shard
by shard) and places every value at its conversation's position, so the rows come back in
input order. The turn fields the chosen features need (``Feature.needs``: speakers, texts) of
each chunk's turns travel with it, and nothing else; a feature that needs one not given is
refused before any task starts; and
the features are named: a worker computes each chunk with ``engine.measures.compute.chunk_features``, the same
code on the same batch as on one machine, so the table is bit-identical to one machine's
(numpy's reductions may round differently for another batch, so the batches are kept). A task lost with its node is run again by Ray (its
retries); shards computed more than once are counted through the ``Tally``.
"""

from __future__ import annotations

import sys
from typing import Sequence

import numpy as np

from engine.cluster.connection import ClusterSession, report

SHARD_TURNS = 60_000  # 60k turns x 384 float32 = 92 MB per shard in the object store


def feature_shard(chunks: list[np.ndarray], kmeans: str, tally=None, names=None,
                  speakers=None, turns=None) -> list[np.ndarray]:
    """Features (m, len(names)) of each chunk of one shard (run on a worker; ``names`` are
    looked up in the worker's registry, which loads the same plugins). ``speakers`` and
    ``turns`` (turn field -> values) are per chunk, as ``engine.measures.compute.turns_of``."""
    from engine.measures.compute import chosen_features, chunk_features, turn_fields_of

    per_chunk = [turn_fields_of(None if speakers is None else speakers[i], None if turns is None else turns[i])
                 for i in range(len(chunks))]
    chosen = chosen_features(names, per_chunk[0] if per_chunk else {})
    values = [chunk_features(chunk, kmeans, chosen=chosen, turns=given)
              for chunk, given in zip(chunks, per_chunk)]
    report(tally, "shards", 1)
    return values


def shard_bounds(lengths: Sequence[int], shard_turns: int) -> list[tuple[int, int]]:
    """``(first, stop)`` conversation ranges of about ``shard_turns`` turns each, in order;
    a conversation is never split, and every shard holds at least one (how a caller can cut
    a table of conversations by size)."""
    bounds, first, turns = [], 0, 0
    for position, length in enumerate(lengths):
        if turns and turns + int(length) > shard_turns:
            bounds.append((first, position))
            first, turns = position, 0
        turns += int(length)
    if first < len(lengths):
        bounds.append((first, len(lengths)))
    return bounds


def shards_of_chunks(conversations, shard_turns: int):
    """Yield shards: lists of ``(positions, chunk)`` from ``engine.measures.compute.equal_length_chunks``
    (the chunks one machine computes, in the input's dtype), about ``shard_turns`` turns each."""
    from engine.measures.compute import equal_length_chunks

    shard, turns = [], 0
    for positions, chunk in equal_length_chunks(conversations, as_float64=False):
        size = chunk.shape[0] * chunk.shape[1]
        if shard and turns + size > shard_turns:
            yield shard
            shard, turns = [], 0
        shard.append((positions, chunk))
        turns += size
    if shard:
        yield shard


def features_on_cluster(cluster: ClusterSession, conversations, *, speakers=None, turns=None, names=None,
                        kmeans: str = "batched",
                        shard_turns: int = SHARD_TURNS, in_flight: int | None = None,
                        progress: bool = False) -> tuple["pandas.DataFrame", dict]:
    """The features table (one row per conversation, input order) and what the cluster did
    (``shards``, ``repeated_shards``, ``nodes``). ``conversations`` is a sequence of
    (n_turns, dim) arrays (``TurnBlocks`` of a memory-mapped file is read shard by shard);
    ``speakers`` and ``turns`` as ``engine.measures.compute.features_for_corpus``."""
    import pandas as pd
    import ray

    from engine.measures.compute import chosen_features, needed_fields, turn_fields_of, turns_of

    given = turn_fields_of(speakers, turns)
    chosen = chosen_features(names, given)  # a feature needing a field not given: refused here
    given = {name: given[name] for name in needed_fields(chosen)}
    names = [f.name for f in chosen]
    total = len(conversations)
    tally = cluster.tally()
    task = ray.remote(num_cpus=1, max_retries=5, scheduling_strategy="SPREAD")(feature_shard)
    limit = in_flight or 2 * cluster.slots(1.0)
    out = np.full((total, len(names)), np.nan)
    pending: dict = {}
    shards = 0
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="features on Ray", unit="conversation", file=sys.stderr)

    def collect(ready) -> None:
        for ref in ready:
            positions = pending.pop(ref)
            for where, values in zip(positions, ray.get(ref)):
                out[where] = values
            if bar is not None:
                bar.update(sum(len(p) for p in positions))

    for shard in shards_of_chunks(conversations, shard_turns):
        while len(pending) >= limit:
            ready, _ = ray.wait(list(pending), num_returns=1)
            collect(ready)
        shard_fields = [turns_of(given, p) for p, _ in shard] if given else None
        pending[task.remote([chunk for _, chunk in shard], kmeans, tally, names,
                            None, shard_fields)] = [p for p, _ in shard]
        shards += 1
        del shard
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        collect(ready)
    if bar is not None:
        bar.close()
    totals = ray.get(tally.totals.remote())
    ray.kill(tally)
    info = {"shards": shards, "repeated_shards": max(0, totals["counts"].get("shards", 0) - shards),
            "nodes": totals["nodes"].get("shards", [])}
    return pd.DataFrame(out, columns=names), info
