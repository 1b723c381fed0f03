"""Embedding on a Ray cluster: Ray Data ``map_batches`` over an actor pool of embedders.

The driver alone reads and writes the SQLite embedding cache (``engine.embedding.embedder``): it looks
every text up, sends only the distinct missing ones through the cluster, and stores each
batch of vectors as it comes back, under the same keys (model name with its backend, SHA-256
of the text) as on one machine, so a second pass makes no model call, on a cluster or not.
Each actor loads the model once (torch or ONNX Runtime, on a CPU slot or a GPU) and embeds
``batch_size`` texts per model call; rows carry their position, so the vectors land in input
order whatever order Ray returns them in. Ray Data restarts an actor lost with its node and
runs its unfinished batches again elsewhere; should it give up on one (``ActorDiedError``),
the texts not yet returned go out again (``embed_in_passes``: counted in ``lost_passes`` and
said). The actors report what they embedded to a ``Tally`` on the driver's node, so texts
embedded twice are counted (``repeated``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from engine.embedding.embedder import (EmbeddingCache, cache_model_name, encode_through_cache, encode_with,
                          load_sentence_model)
from engine.cluster.connection import ClusterSession, report

DEFAULT_RAY_BATCH = 256  # texts per Ray Data batch (one actor call)
ACTOR_START_S = 900  # how long the actors may take to start and load the model
PASSES = 3  # passes over the texts not yet returned when an actor (its node) is lost


class EmbedActor:
    """One embedder on a worker: the model loaded once, a batch of ``{row, text}`` in,
    ``{row, vector}`` out (used by ``map_batches`` as a callable class)."""

    def __init__(self, model: str, backend: str, device: str, model_batch: int, tally=None):
        self.model = load_sentence_model(model, backend=backend, device=device, progress=False)
        self.model_batch = model_batch
        self.tally = tally

    def __call__(self, batch: dict) -> dict:
        texts = [str(t) for t in batch["text"]]
        vectors = encode_with(self.model, texts, batch_size=self.model_batch)
        report(self.tally, "texts", len(texts))
        report(self.tally, "calls", 1)
        return {"row": np.asarray(batch["row"], dtype=np.int64), "vector": vectors}


class RayEmbedder:
    """Same interface as ``engine.embedding.embedder.Embedder`` (``encode``, ``model_name``, ``cache``,
    ``model_calls``), the model calls made by an actor pool on the cluster.

    ``model_calls``: Ray batches the actors embedded (one model call each); ``repeated``: texts
    embedded more than once (an actor lost with its node); ``nodes``: nodes that embedded.
    ``chunk_texts`` is None: the CLI hands every text over at once (one pool, loaded once).
    """

    chunk_texts = None

    def __init__(self, cluster: ClusterSession, model: str, *, backend: str = "torch",
                 cache: EmbeddingCache | str | Path | None = None, batch_size: int = 64,
                 ray_batch: int = DEFAULT_RAY_BATCH, actors: int | None = None,
                 gpus_per_actor: float = 0.0, progress: bool = True):
        self.cluster = cluster
        self.model_name = cache_model_name(model, backend)
        self.base_model = model
        self.backend = backend
        self.batch_size = batch_size
        self.ray_batch = ray_batch
        self.gpus_per_actor = gpus_per_actor
        self.actors = actors
        self.progress = progress
        self.cache = cache if isinstance(cache, EmbeddingCache) else EmbeddingCache(cache)
        self.model_calls = 0
        self.repeated = 0
        self.nodes: list[str] = []
        self.lost_passes = 0  # passes that ended with an actor lost (its texts sent again)
        self.tally_lost = False  # the counts of work done were lost (the vectors were not)

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        return encode_through_cache(self.cache, self.model_name, texts,
                                    lambda missing: self._embed_on_cluster(missing, progress), store=False)

    __call__ = encode

    def pool_size(self) -> int:
        if self.actors:
            return self.actors
        return self.cluster.slots(1.0, self.gpus_per_actor)

    def _embed_on_cluster(self, texts: list[str], progress: bool) -> np.ndarray:
        import pyarrow as pa
        import ray

        from engine.embedding.embedder import text_key

        n = len(texts)
        step = self.ray_batch
        tally = self.cluster.tally()
        context = ray.data.DataContext.get_current()
        # every actor loaded before the first batch goes out, so the work is spread over all
        context.wait_for_min_actors_s = ACTOR_START_S

        def pipeline(rows: np.ndarray):
            blocks = [pa.table({"row": rows[i:i + step],
                                "text": pa.array([texts[j] for j in rows[i:i + step]], pa.string())})
                      for i in range(0, len(rows), step)]
            size = min(self.pool_size(), len(blocks))
            return ray.data.from_arrow(blocks).map_batches(
                EmbedActor, batch_size=step, batch_format="numpy",
                compute=ray.data.ActorPoolStrategy(size=size, max_tasks_in_flight_per_actor=2),
                num_cpus=0 if self.gpus_per_actor else 1, num_gpus=self.gpus_per_actor or None,
                fn_constructor_kwargs={"model": self.base_model, "backend": self.backend,
                                       "device": "cuda" if self.gpus_per_actor else "cpu",
                                       "model_batch": self.batch_size, "tally": tally})

        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=n, desc=f"embedding on Ray ({min(self.pool_size(), -(-n // step))} actors)",
                       unit="text", file=sys.stderr)

        def run_pass(rows: np.ndarray):
            for batch in pipeline(rows).iter_batches(batch_format="numpy", batch_size=None,
                                                     prefetch_batches=2):
                yield batch["row"], batch["vector"]

        def store(rows: np.ndarray, vectors: np.ndarray) -> None:
            self.cache.put_many(self.model_name, {text_key(texts[i]): v for i, v in zip(rows, vectors)})
            if bar is not None:
                bar.update(len(rows))

        try:
            out, lost = embed_in_passes(n, run_pass, store)
        except ray.exceptions.RayActorError as error:  # the last pass lost an actor too
            self.lost_passes += getattr(error, "lost_passes", 0)
            raise
        finally:
            if bar is not None:
                bar.close()
        self.lost_passes += lost
        try:
            totals = ray.get(tally.totals.remote())
            ray.kill(tally)
        except ray.exceptions.RayError as error:  # every vector is in: the counts alone are lost
            self.tally_lost = True
            print(f"note: embedding on Ray: all {n} texts returned and stored, but the tally of work "
                  f"done was lost ({error.__class__.__name__}): batches and texts made twice unknown",
                  file=sys.stderr)
            return out
        self.model_calls += totals["counts"].get("calls", 0)
        self.repeated += max(0, totals["counts"].get("texts", 0) - n)
        self.nodes = sorted(set(self.nodes) | set(totals["nodes"].get("texts", [])))
        return out


def embed_in_passes(n: int, run_pass: Callable[[np.ndarray], Iterable[tuple[np.ndarray, np.ndarray]]],
                    store: Callable[[np.ndarray, np.ndarray], None], *,
                    passes: int = PASSES) -> tuple[np.ndarray, int]:
    """Gather the vectors of rows ``0..n-1``: ``run_pass(rows)`` yields ``(rows, vectors)``
    batches in any order; each row's first vector is kept and handed to ``store`` once.

    When a pass ends with Ray's ``RayActorError`` (``ActorDiedError``: an actor lost with its
    node and given up on), what came back stays and the rows not yet returned go out again,
    at most ``passes`` passes in all, each said on stderr; an error after every row came back
    ends the job normally (said). Returns the vectors and the passes that ended with such an
    error; when the last pass fails too, the error goes up with ``lost_passes`` set on it.
    """
    import ray

    out: np.ndarray | None = None
    done = np.zeros(n, dtype=bool)
    lost = 0
    for attempt in range(1, passes + 1):
        try:
            for where, vectors in run_pass(np.flatnonzero(~done).astype(np.int64)):
                where, vectors = np.asarray(where, dtype=np.int64), np.asarray(vectors, dtype=np.float32)
                if out is None:
                    out = np.empty((n, vectors.shape[1]), dtype=np.float32)
                fresh = ~done[where]  # a batch run twice after a lost actor is stored once
                where, vectors = where[fresh], vectors[fresh]
                out[where] = vectors
                done[where] = True
                store(where, vectors)
        except ray.exceptions.RayActorError as error:
            lost += 1
            left = int((~done).sum())
            if not left:
                print(f"note: embedding on Ray: {error.__class__.__name__} (a node or actor lost) after "
                      f"all {n} texts were returned and stored; nothing to send again", file=sys.stderr)
                break
            print(f"note: embedding on Ray: {error.__class__.__name__} (a node or actor lost) after "
                  f"{n - left} of {n} texts; " + (
                      f"the other {left} sent again (pass {attempt + 1} of at most {passes})"
                      if attempt < passes else f"the other {left} not embedded after {passes} passes "
                      "(what was returned is stored: a re-run makes only the rest)"), file=sys.stderr)
            if attempt == passes:
                error.lost_passes = lost
                raise
            continue
        break
    if out is None or not done.all():
        from engine.llm.errors import BackendError

        raise BackendError(f"the cluster returned {int(done.sum())} of {n} embeddings")
    return out, lost
