"""SQLite response cache and replay mode (the design guide's cache rule).

The key covers everything that changes the answer: backend identity (kind, server, model),
messages, temperature, max_tokens, seed and the replicate index, so repeated sampling is
never collapsed into one cached answer. Re-running a finished grid costs zero calls. In
replay mode a miss raises ``CacheMiss`` instead of calling the model (reproducible tests
and demos). Only requests and replies are stored: never an API key (replies are scrubbed
by the backend before they reach the cache, and again when read from an older cache).

Single flight: a request identical to one already in flight (same key) waits for that
one's answer instead of being sent again, so a run never pays twice for one request (the
judge's per-round items often repeat a text). A full disk while storing an answer is one
line (``engine.errors.write_error``), as for every file the project writes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Sequence

from engine.llm.base import Backend, BackendError, ChatResult, Message, check_messages, prompt_hash
from engine.llm.secrets import scrub
from engine.storage.sqlite_store import open_store, sqlite_write_error


class CacheMiss(BackendError):
    """Replay mode asked for a response that was never recorded."""


def default_cache_path() -> Path:
    root = os.environ.get("CDL_CACHE_DIR") or Path.home() / ".cache" / "creativity-dynamics-lab"
    return Path(root) / "llm_responses.sqlite"


def cache_key(identity: str, messages: Sequence[Message], temperature: float | None,
              max_tokens: int, seed: int | None, replicate: int | None) -> str:
    payload = json.dumps({"backend": identity, "messages": list(messages), "temperature": temperature,
                          "max_tokens": max_tokens, "seed": seed, "replicate": replicate},
                         sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


class ResponseCache:
    """One SQLite file (WAL) safe across threads and processes."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else default_cache_path()
        self._lock = threading.Lock()
        self._db = open_store(self.path, "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY,"
                              " backend TEXT, prompt_hash TEXT, text TEXT NOT NULL, prompt_tokens"
                              " INTEGER, completion_tokens INTEGER, latency_s REAL, created REAL)")

    def get(self, key: str) -> ChatResult | None:
        with self._lock:
            row = self._db.execute("SELECT text, prompt_tokens, completion_tokens, latency_s"
                                   " FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return ChatResult(text=scrub(row[0]), prompt_tokens=row[1], completion_tokens=row[2],
                          latency_s=row[3] or 0.0, cached=True)

    def put(self, key: str, identity: str, phash: str, result: ChatResult) -> None:
        with self._lock:
            try:
                self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                 (key, identity, phash, scrub(result.text), result.prompt_tokens,
                                  result.completion_tokens, result.latency_s, time.time()))
                self._db.commit()
            except sqlite3.OperationalError as error:
                self._db.rollback()
                raise sqlite_write_error(self.path, error) from None

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedBackend(Backend):
    """Wraps a backend: answers from the cache when it can, records new answers otherwise."""

    def __init__(self, inner: Backend, cache: ResponseCache | str | Path, *, replay: bool = False):
        self.inner = inner
        self.cache = cache if isinstance(cache, ResponseCache) else ResponseCache(cache)
        self.replay = replay
        self.model = inner.model
        self.kind = inner.kind
        self.price = inner.price
        self.concurrency = inner.concurrency
        self.retry = inner.retry
        self.usage = inner.usage  # one set of counters: calls made plus cache hits
        # key -> future of the answer being fetched, per event loop (single flight)
        self._in_flight: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict]" = (
            weakref.WeakKeyDictionary())

    @property
    def identity(self) -> str:
        return self.inner.identity

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "cache": str(self.cache.path), "replay": self.replay}

    async def achat(self, messages, *, temperature=1.0, max_tokens=512, seed=None,
                    replicate=None) -> ChatResult:
        messages = check_messages(messages)
        key = cache_key(self.identity, messages, temperature, max_tokens, seed, replicate)
        in_flight = self._in_flight.setdefault(asyncio.get_running_loop(), {})
        while True:
            hit = self.cache.get(key)
            if hit is not None:
                self.usage.bump("cache_hits")
                return hit
            pending = in_flight.get(key)
            if pending is None:
                break
            shared = await asyncio.shield(pending)  # the same request is on its way: wait
            if shared is not None:
                self.usage.bump("cache_hits")
                return shared
            # that request failed: look again (this one may now be the one to send)
        if self.replay:
            raise CacheMiss(f"replay mode: no cached response for {self.identity} "
                            f"(prompt {prompt_hash(messages)}, seed {seed}, replicate {replicate})")
        pending = in_flight[key] = asyncio.get_running_loop().create_future()
        result = None
        try:
            result = await self.inner.achat(messages, temperature=temperature, max_tokens=max_tokens,
                                            seed=seed, replicate=replicate)
            self.cache.put(key, self.identity, prompt_hash(messages), result)
            return result
        finally:
            in_flight.pop(key, None)
            pending.set_result(None if result is None else dataclasses.replace(result, cached=True))

    async def aclose(self) -> None:
        await self.inner.aclose()

    def close(self) -> None:
        self.inner.close()
