"""Sessions of a grid as Ray tasks; the driver alone writes the run folder and the cache.

Each session is one task (spread over the nodes, at most the grid's ``concurrency`` out at
once). On its worker it builds its backends from the grid, as one machine does (replicas and
their limits included), and runs the session and its judge; it returns the finished
``Conversation`` and its usage. The driver appends it through the run folder's own store
(``engine.runs.run_folder``: corpus, failed sessions, manifest), exactly as on one machine.

The response cache stays on the driver's machine. Workers ask a ``ResponseBroker`` actor
placed there: it answers from the cache file (opened read-only) and from the replies that
workers sent it since, and hands the new replies to the driver, which writes them into the
cache (``drain``). So a re-run answers from the cache as on one machine, and a session run
again after its node was lost finds the replies its first attempt got. Replies asked twice
(a lost attempt's calls that never reached the broker cannot be seen) are counted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from pathlib import Path
from typing import Any, Callable, Sequence

from engine.llm.base import Backend, ChatResult, check_messages, prompt_hash
from engine.llm.cache import CacheMiss, cache_key

Row = tuple  # (key, identity, prompt hash, text, prompt tokens, completion tokens, latency)


class ResponseBroker:
    """The cache as workers see it (a Ray actor on the driver's node; a plain class, so it
    is testable alone). It never writes the cache file."""

    def __init__(self, cache_path: str | None):
        self.path = cache_path
        self._db = None
        if cache_path and Path(cache_path).exists():
            self._db = sqlite3.connect(f"file:{cache_path}?mode=ro", uri=True, check_same_thread=False,
                                       timeout=60)
        self.replies: dict[str, Row] = {}
        self.new: list[Row] = []
        self.calls = 0
        self.repeated = 0

    def get(self, key: str) -> Row | None:
        if key in self.replies:
            return self.replies[key]
        if self._db is None:
            return None
        row = self._db.execute("SELECT key, backend, prompt_hash, text, prompt_tokens, completion_tokens,"
                               " latency_s FROM responses WHERE key = ?", (key,)).fetchone()
        return tuple(row) if row else None

    def put(self, row: Row) -> None:
        self.calls += 1
        if row[0] in self.replies:
            self.repeated += 1
            return
        self.replies[row[0]] = row
        self.new.append(row)

    def drain(self) -> list[Row]:
        rows, self.new = self.new, []
        return rows

    def counts(self) -> dict[str, int]:
        return {"calls": self.calls, "repeated": self.repeated}


class BrokerCachedBackend(Backend):
    """``engine.llm.cache.CachedBackend`` with the broker in place of the SQLite file (and
    the same single flight: a request already on its way is waited for, not sent again)."""

    def __init__(self, inner: Backend, broker, *, replay: bool = False):
        self.inner = inner
        self.broker = broker
        self.replay = replay
        self.model, self.kind = inner.model, inner.kind
        self.concurrency, self.retry = inner.concurrency, inner.retry
        self.usage = inner.usage
        self._in_flight: dict[str, asyncio.Future] = {}  # one session's loop: one event loop

    @property
    def identity(self) -> str:
        return self.inner.identity

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    async def achat(self, messages, *, temperature=1.0, max_tokens=512, seed=None,
                    replicate=None) -> ChatResult:
        messages = check_messages(messages)
        key = cache_key(self.identity, messages, temperature, max_tokens, seed, replicate)
        while True:
            row = await self.broker.get.remote(key)
            if row is not None:
                self.usage.bump("cache_hits")
                return ChatResult(text=row[3], prompt_tokens=row[4], completion_tokens=row[5],
                                  latency_s=row[6] or 0.0, cached=True)
            pending = self._in_flight.get(key)
            if pending is None:
                break
            shared = await asyncio.shield(pending)  # the same request is on its way (single flight)
            if shared is not None:
                self.usage.bump("cache_hits")
                return shared
        if self.replay:
            raise CacheMiss(f"replay mode: no cached response for {self.identity} "
                            f"(prompt {prompt_hash(messages)}, seed {seed}, replicate {replicate})")
        pending = self._in_flight[key] = asyncio.get_running_loop().create_future()
        result = None
        try:
            result = await self.inner.achat(messages, temperature=temperature, max_tokens=max_tokens,
                                            seed=seed, replicate=replicate)
            self.broker.put.remote((key, self.identity, prompt_hash(messages), result.text,
                                    result.prompt_tokens, result.completion_tokens, result.latency_s))
            return result
        finally:
            self._in_flight.pop(key, None)
            pending.set_result(None if result is None else dataclasses.replace(result, cached=True))

    async def aclose(self) -> None:
        await self.inner.aclose()

    def close(self) -> None:
        self.inner.close()


def write_replies(cache, rows: Sequence[Row]) -> None:
    """Store replies drained from the broker in the driver's ``ResponseCache``."""
    for key, identity, phash, text, prompt_tokens, completion_tokens, latency in rows:
        cache.put(key, identity, phash, ChatResult(text=text, prompt_tokens=prompt_tokens,
                                                   completion_tokens=completion_tokens,
                                                   latency_s=latency or 0.0))


def run_specs_on_cluster(cluster, specs: Sequence, session_fn: Callable, session_args: tuple, *,
                         cache, concurrency: int, cpus_per_session: float,
                         on_done: Callable[[Any, dict], None],
                         on_lost: Callable[[Any, str], None]) -> dict[str, Any]:
    """Run ``session_fn(spec, *session_args, broker)`` for every spec as a Ray task, at most
    ``concurrency`` at once, calling ``on_done(conversation, usage)`` on the driver as each
    finishes (in finishing order) and ``on_lost(spec, reason)`` for a task Ray gave up on.
    ``cache``: the driver's ``ResponseCache`` or None. Returns what the cluster did."""
    import ray

    from engine.cluster.connection import on_driver_node

    # on the driver's node: the replies it holds until drained are never lost with a worker node
    broker = on_driver_node(ResponseBroker, str(cache.path) if cache is not None else None)
    task = ray.remote(session_fn).options(num_cpus=cpus_per_session, max_retries=3,
                                          retry_exceptions=False, scheduling_strategy="SPREAD")
    queue = list(specs)
    pending: dict = {}
    nodes: set[str] = set()

    def drain() -> None:
        rows = ray.get(broker.drain.remote())
        if cache is not None and rows:
            write_replies(cache, rows)

    try:
        while queue or pending:
            while queue and len(pending) < concurrency:
                spec = queue.pop(0)
                pending[task.remote(spec, *session_args, broker)] = spec
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            drain()  # replies first: a session on disk never lacks its cached calls
            for ref in ready:
                spec = pending.pop(ref)
                try:
                    conversation, usage, node = ray.get(ref)
                except ray.exceptions.RayError as error:
                    on_lost(spec, f"{type(error).__name__}: {' '.join(str(error).split())[:300]}")
                    continue
                nodes.add(node)
                on_done(conversation, usage)
        drain()
        counts = ray.get(broker.counts.remote())
    finally:
        ray.kill(broker)
    return {"nodes": sorted(nodes), "calls": counts["calls"], "calls_repeated": counts["repeated"]}


def node_id() -> str:
    """The id of the Ray node this runs on (a worker names itself in its results)."""
    import ray

    return ray.get_runtime_context().get_node_id()
