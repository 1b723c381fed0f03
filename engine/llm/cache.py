"""SQLite response cache and replay mode (the design guide's cache rule).

The key covers everything that changes the answer: backend identity (kind, server, model),
messages, temperature, max_tokens, seed and the replicate index, so repeated sampling is
never collapsed into one cached answer. Re-running a finished grid costs zero calls. In
replay mode a miss raises ``CacheMiss`` instead of calling the model (reproducible tests
and demos). Only requests and replies are stored: never an API key.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Sequence

from engine.llm.base import Backend, BackendError, ChatResult, Message, check_messages, prompt_hash
from engine.sqlite_store import open_store


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
        return ChatResult(text=row[0], prompt_tokens=row[1], completion_tokens=row[2],
                          latency_s=row[3] or 0.0, cached=True)

    def put(self, key: str, identity: str, phash: str, result: ChatResult) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             (key, identity, phash, result.text, result.prompt_tokens,
                              result.completion_tokens, result.latency_s, time.time()))
            self._db.commit()

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
        self.concurrency = inner.concurrency
        self.retry = inner.retry
        self.usage = inner.usage  # one set of counters: calls made plus cache hits

    @property
    def identity(self) -> str:
        return self.inner.identity

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "cache": str(self.cache.path), "replay": self.replay}

    async def achat(self, messages, *, temperature=1.0, max_tokens=512, seed=None,
                    replicate=None) -> ChatResult:
        messages = check_messages(messages)
        key = cache_key(self.identity, messages, temperature, max_tokens, seed, replicate)
        hit = self.cache.get(key)
        if hit is not None:
            self.usage.bump("cache_hits")
            return hit
        if self.replay:
            raise CacheMiss(f"replay mode: no cached response for {self.identity} "
                            f"(prompt {prompt_hash(messages)}, seed {seed}, replicate {replicate})")
        result = await self.inner.achat(messages, temperature=temperature, max_tokens=max_tokens,
                                        seed=seed, replicate=replicate)
        self.cache.put(key, self.identity, prompt_hash(messages), result)
        return result

    async def aclose(self) -> None:
        await self.inner.aclose()

    def close(self) -> None:
        self.inner.close()
