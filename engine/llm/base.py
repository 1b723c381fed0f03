"""The one chat interface every protocol talks through.

A backend implements a single method, ``_complete(messages, temperature, max_tokens, seed)``
returning a :class:`ChatResult`. The base class adds what every backend needs the same way:
a bounded number of requests in flight, retries with exponential backoff and jitter (see
``engine.llm.retry``), usage counters, a synchronous ``chat`` wrapper, and replies cleaned
once before anything keeps them (lone surrogates replaced; keys and URL credentials, raw
or base64, scrubbed: ``engine.llm.secrets``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import re
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Sequence

from engine.llm.errors import BackendError, RetryableError  # noqa: F401  (re-exported: the backends raise them)
from engine.llm.pricing import cost_of
from engine.llm.retry import RetryPolicy, call_with_retries
from engine.llm.secrets import scrub

Message = dict[str, str]
ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class ChatResult:
    """One reply: its text, token usage (None when the server did not say), wall time."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    cached: bool = False
    lone_surrogates_replaced: int = 0


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_lone_surrogates(text: str) -> tuple[str, int]:
    """The text with every lone surrogate (a JSON ``"\\ud800"`` escape decodes to one; it is
    not a character and UTF-8 cannot encode it) replaced by U+FFFD, and how many there were.

    Replies are cleaned here, once, so the cache, corpus, Parquet export and embedding
    cache all receive encodable text; the count is kept on the turn and in the usage.
    """
    cleaned, count = _LONE_SURROGATE.subn("\ufffd", text)
    return cleaned, count


@dataclass
class Usage:
    """Counters shared by a backend and anything wrapping it (the cache)."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    lone_surrogates_replaced: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, result: ChatResult) -> None:
        with self._lock:
            self.calls += 1
            self.prompt_tokens += result.prompt_tokens or 0
            self.completion_tokens += result.completion_tokens or 0
            self.lone_surrogates_replaced += result.lone_surrogates_replaced

    def bump(self, name: str, amount: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + amount)

    def merge(self, counts: dict[str, int]) -> None:
        """Add counters counted elsewhere (a session run on a Ray worker)."""
        with self._lock:
            for name, value in counts.items():
                if name in self.as_dict_names:
                    setattr(self, name, getattr(self, name) + int(value))

    as_dict_names = ("calls", "cache_hits", "retries", "failures", "prompt_tokens",
                     "completion_tokens", "lone_surrogates_replaced")

    def as_dict(self) -> dict[str, int]:
        return {"calls": self.calls, "cache_hits": self.cache_hits, "retries": self.retries,
                "failures": self.failures, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "lone_surrogates_replaced": self.lone_surrogates_replaced}


def prompt_hash(messages: Sequence[Message]) -> str:
    """A short stable hash of the prompt messages (recorded on every turn)."""
    payload = json.dumps(list(messages), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def check_messages(messages: Sequence[Message]) -> list[Message]:
    """Validate the chat messages: a non-empty list of {role, content} with known roles."""
    if not messages:
        raise ValueError("messages must be a non-empty list")
    cleaned = []
    for position, message in enumerate(messages):
        if not isinstance(message, dict) or set(message) - {"role", "content"}:
            raise ValueError(f"message {position} must be a dict with 'role' and 'content'")
        if message.get("role") not in ROLES:
            raise ValueError(f"message {position} has unknown role {message.get('role')!r}")
        if not isinstance(message.get("content"), str):
            raise ValueError(f"message {position} content must be text")
        cleaned.append({"role": message["role"], "content": message["content"]})
    return cleaned


class Backend:
    """Base class: subclasses implement ``_complete``; callers use ``achat`` or ``chat``."""

    kind = "base"
    #: (input, output) USD per 1M tokens; None: unknown, which a cost shows as "cost unknown",
    #: never as 0. ``engine.llm.make_backend`` sets it from the provider and the endpoint.
    price: tuple[float, float] | None = None

    def __init__(self, *, model: str, concurrency: int = 8, retry: RetryPolicy | None = None):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.model = model
        self.concurrency = concurrency
        self.retry = retry or RetryPolicy()
        self.usage = Usage()
        self._semaphores: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]" = (
            weakref.WeakKeyDictionary())

    # -- the one method a backend writes ------------------------------------------------
    async def _complete(self, messages: list[Message], *, temperature: float | None,
                        max_tokens: int, seed: int | None) -> ChatResult:
        raise NotImplementedError

    # -- what callers use ---------------------------------------------------------------
    @property
    def identity(self) -> str:
        """What the response cache keys on besides the request (never a key)."""
        return f"{self.kind}:{self.model}"

    def describe(self) -> dict[str, Any]:
        """Configuration safe to write into a manifest."""
        return {"backend": self.kind, "model": self.model, "concurrency": self.concurrency}

    def cost_usd(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """What that many tokens cost at this backend's price; None when the price is unknown."""
        return cost_of(self.price, prompt_tokens, completion_tokens)

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.concurrency)
        return semaphore

    async def achat(self, messages: Sequence[Message], *, temperature: float | None = 1.0,
                    max_tokens: int = 512, seed: int | None = None,
                    replicate: int | None = None) -> ChatResult:
        """One chat completion, retried on transient failures, at most ``concurrency`` in flight.

        ``replicate`` only matters to the response cache (it keys on it); backends ignore it.
        """
        messages = check_messages(messages)

        async def attempt() -> ChatResult:
            async with self._semaphore():
                return await self._complete(messages, temperature=temperature,
                                            max_tokens=max_tokens, seed=seed)

        def on_retry(_error: Exception) -> None:
            self.usage.bump("retries")

        try:
            result = await call_with_retries(attempt, self.retry, on_retry=on_retry)
        except BackendError:
            self.usage.bump("failures")
            raise
        text, replaced = replace_lone_surrogates(result.text)
        text = scrub(text)  # a server that echoes the key or URL credentials: never stored
        if replaced or text != result.text:
            result = dataclasses.replace(result, text=text, lone_surrogates_replaced=replaced)
        self.usage.record(result)
        return result

    def chat(self, messages: Sequence[Message], **options: Any) -> ChatResult:
        """Synchronous ``achat`` (runs its own event loop; safe inside a running loop too)."""
        async def call_and_close() -> ChatResult:
            try:
                return await self.achat(messages, **options)
            finally:
                await self.aclose()

        return run_sync(call_and_close())

    async def aclose(self) -> None:
        """Release what belongs to the running event loop (HTTP clients); call before it ends."""

    def close(self) -> None:
        """Release resources (clients, models); the backend may be used again afterwards."""


def run_sync_closing(coroutine, *backends: "Backend"):
    """``run_sync`` that closes the backends' per-loop clients before the loop ends."""
    async def wrapped():
        try:
            return await coroutine
        finally:
            for backend in backends:
                await backend.aclose()

    return run_sync(wrapped())


def run_sync(coroutine):
    """Run a coroutine to completion from synchronous code, even if a loop is running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    box: dict[str, Any] = {}

    def runner() -> None:
        try:
            box["value"] = asyncio.run(coroutine)
        except BaseException as error:  # re-raised in the caller's thread
            box["error"] = error

    thread = threading.Thread(target=runner)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
