"""One model served by several OpenAI-compatible servers (vLLM replicas, one per GPU or node).

``--base-url`` (and a grid's ``base_url``) may name several URLs, as a list or separated
by commas. ``ReplicaBackend`` spreads chat calls over them: each replica has its own limit
of requests in flight (``concurrency`` each), a call goes to the replica with the most free
slots (round robin on ties), and a replica that fails a call with a retryable error
(connection refused, timeout, 429, 5xx) or answers a redirect (3xx, never followed: the
replica is misconfigured, not the request) is left out for ``cooldown`` seconds while the call
is retried at once on another one. A replica whose cooldown is over is tried again; when
every replica is cooling down the one back soonest is used. Final errors (401, a bad
request) are the request's fault, not the replica's: they fail the call as with one server;
so does a redirect when no other replica is up.
Retries, usage counters and the response cache work as for one backend.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import Any, Callable, Sequence

from engine.llm.base import Backend, ChatResult, RetryableError
from engine.llm.errors import ServerRedirectError
from engine.llm.retry import RetryPolicy

DEFAULT_COOLDOWN = 30.0


def split_urls(value: str | Sequence[str] | None) -> list[str]:
    """The URLs of ``--base-url``: a list, or one string with commas; empty parts dropped."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    return [part.strip() for item in items for part in str(item).split(",") if part.strip()]


def redact_urls(value: str | Sequence[str] | None):
    """``redact_url`` of one URL, or of each URL of a list (as stored in manifests)."""
    from engine.llm.secrets import redact_url

    if isinstance(value, (list, tuple)):
        return [redact_url(url) for url in value]
    return redact_url(value)


class _Replica:
    def __init__(self, backend: Backend):
        self.backend = backend
        self.in_flight = 0
        self.down_until = 0.0
        self.calls = 0
        self.failures = 0
        self.semaphores: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]" = (
            weakref.WeakKeyDictionary())

    def semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if loop not in self.semaphores:
            self.semaphores[loop] = asyncio.Semaphore(self.backend.concurrency)
        return self.semaphores[loop]


class ReplicaBackend(Backend):
    """Several backends of one model used as one (see the module docstring)."""

    def __init__(self, replicas: Sequence[Backend], *, cooldown: float = DEFAULT_COOLDOWN,
                 retry: RetryPolicy | None = None, clock: Callable[[], float] = time.monotonic):
        if not replicas:
            raise ValueError("at least one replica")
        models = {r.model for r in replicas}
        if len(models) != 1:
            raise ValueError(f"replicas must serve one model, got {sorted(models)}")
        total = sum(r.concurrency for r in replicas)
        # with n replicas a call may fail over n - 1 times before the usual retries start
        retry = retry or replicas[0].retry
        retry = RetryPolicy(max_attempts=retry.max_attempts + len(replicas) - 1,
                            base_delay=retry.base_delay, max_delay=retry.max_delay,
                            max_retry_after=retry.max_retry_after, sleep=retry.sleep, rng=retry.rng)
        super().__init__(model=replicas[0].model, concurrency=total, retry=retry)
        self.kind = replicas[0].kind
        self.price = replicas[0].price
        self.replicas = [_Replica(r) for r in replicas]
        self.cooldown = cooldown
        self.clock = clock
        self._turn = 0

    @property
    def identity(self) -> str:
        urls = sorted(str(getattr(r.backend, "base_url", r.backend.identity)) for r in self.replicas)
        return f"{self.kind}:{','.join(urls)}:{self.model}"

    def describe(self) -> dict[str, Any]:
        first = self.replicas[0].backend.describe()
        return {**first, "base_url": [r.backend.describe().get("base_url") for r in self.replicas],
                "concurrency": self.concurrency, "replica_cooldown_s": self.cooldown}

    def replica_stats(self) -> list[dict[str, Any]]:
        """Calls and failures per replica (URLs without secrets)."""
        return [{"base_url": getattr(r.backend, "base_url", None), "calls": r.calls,
                 "failures": r.failures} for r in self.replicas]

    def _choose(self) -> _Replica:
        now = self.clock()
        healthy = [r for r in self.replicas if r.down_until <= now]
        if not healthy:
            return min(self.replicas, key=lambda r: r.down_until)
        self._turn += 1
        count = len(healthy)
        # most free slots first; ties broken by a rotating start, so equal replicas share calls
        order = sorted(range(count), key=lambda i: (-(healthy[i].backend.concurrency - healthy[i].in_flight),
                                                   (i - self._turn) % count))
        return healthy[order[0]]

    async def _complete(self, messages, *, temperature, max_tokens, seed) -> ChatResult:
        replica = self._choose()
        async with replica.semaphore():
            replica.in_flight += 1
            try:
                result = await replica.backend._complete(messages, temperature=temperature,
                                                         max_tokens=max_tokens, seed=seed)
            except RetryableError as error:
                if error.retry_after == 0.0:  # the replica asks for the request again, reshaped
                    raise
                replica.failures += 1
                replica.down_until = self.clock() + self.cooldown
                others = any(r.down_until <= self.clock() for r in self.replicas if r is not replica)
                where = getattr(replica.backend, "base_url", "a replica")
                # another replica is up: retry there at once; else the usual backoff applies
                raise RetryableError(f"{where}: {error}",
                                     retry_after=0.0 if others else error.retry_after) from None
            except ServerRedirectError as error:
                replica.failures += 1
                replica.down_until = self.clock() + self.cooldown
                if not any(r.down_until <= self.clock() for r in self.replicas if r is not replica):
                    raise  # no other replica up: final, as with one server
                raise RetryableError(str(error), retry_after=0.0) from None  # at once, elsewhere
            finally:
                replica.in_flight -= 1
        replica.calls += 1
        return result

    async def aclose(self) -> None:
        for replica in self.replicas:
            await replica.backend.aclose()

    def close(self) -> None:
        for replica in self.replicas:
            replica.backend.close()
