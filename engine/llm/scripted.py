"""A queue-fed fake backend for unit tests only (the guide's ``enqueue`` / ``history`` fake).

Never offered to users: the CLI and dashboard build real backends through ``make_backend``.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Callable, Iterable

from engine.llm.base import Backend, BackendError, ChatResult, Message
from engine.llm.retry import RetryPolicy

Reply = str | Exception | Callable[[list[Message]], str]


class ScriptedBackend(Backend):
    """Answers from a queue of replies, in call order; records every request in ``history``.

    A reply may be a string, an exception instance (raised, e.g. ``RetryableError``) or a
    function of the messages. With ``responder=`` every call is answered by that function
    instead, which suits concurrent code whose call order is not fixed. ``delay`` (seconds)
    makes each call take that long, to test concurrency.
    """

    kind = "scripted"

    def __init__(self, replies: Iterable[Reply] = (), *, responder: Callable[[list[Message]], str] | None = None,
                 model: str = "scripted", delay: float = 0.0, concurrency: int = 64,
                 retry: RetryPolicy | None = None):
        super().__init__(model=model, concurrency=concurrency,
                         retry=retry or RetryPolicy(max_attempts=3, base_delay=0.0, max_delay=0.0))
        self.queue: deque[Reply] = deque(replies)
        self.responder = responder
        self.delay = delay
        self.history: list[dict] = []

    def enqueue(self, replies: Iterable[Reply]) -> None:
        self.queue.extend(replies)

    async def _complete(self, messages, *, temperature, max_tokens, seed) -> ChatResult:
        self.history.append({"messages": messages, "temperature": temperature,
                             "max_tokens": max_tokens, "seed": seed})
        if self.responder is not None:
            reply: Reply = self.responder
        elif self.queue:
            reply = self.queue.popleft()
        else:
            raise BackendError(f"scripted backend has no reply left for call {len(self.history)}")
        if self.delay:
            await asyncio.sleep(self.delay)
        if isinstance(reply, Exception):
            raise reply
        text = reply(messages) if callable(reply) else reply
        prompt_words = sum(len(m["content"].split()) for m in messages)
        return ChatResult(text=text, prompt_tokens=prompt_words,
                          completion_tokens=len(text.split()), latency_s=self.delay)
