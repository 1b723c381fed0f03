"""Retries with exponential backoff and jitter, honouring Retry-After.

Only errors marked retryable (429, 5xx, timeouts, empty or malformed replies) are retried;
anything else (a 401, a bad request) fails at once. After ``max_attempts`` the last error is
raised as a plain ``BackendError`` naming how many attempts were made.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Mapping, TypeVar

from engine.llm.errors import BackendError, RetryableError

T = TypeVar("T")


@dataclass
class RetryPolicy:
    """Attempt ``max_attempts`` times; wait ``base_delay * 2**(n-1)`` (capped), half of it jittered.

    A server's Retry-After (see ``retry_after_seconds``) replaces the computed wait, capped at
    ``max_retry_after``.
    ``sleep`` and ``rng`` are injectable so tests need no wall-clock time.
    """

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(float(retry_after), self.max_retry_after)
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)


def retry_after_seconds(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds a server asked us to wait, or None when it did not say (or said nonsense).

    ``retry-after-ms`` (milliseconds, sent by OpenAI and Azure) wins over ``Retry-After``,
    which RFC 9110 (section 10.2.3) allows as delay-seconds or as an HTTP-date; a date in
    the past means "now" (0). ``now`` (epoch seconds) is injectable for tests.
    """
    if not headers:
        return None
    lowered = {str(k).lower(): str(v).strip() for k, v in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds:
        try:
            value = float(milliseconds) / 1000.0
        except ValueError:
            value = None
        if value is not None and value >= 0 and value == value:  # not NaN
            return value
    text = lowered.get("retry-after")
    if not text:
        return None
    try:
        value = float(text)
        return value if value >= 0 and value == value and value != float("inf") else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:  # an HTTP-date is always GMT
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


async def call_with_retries(attempt: Callable[[], Awaitable[T]], policy: RetryPolicy, *,
                            on_retry: Callable[[Exception], None] | None = None) -> T:
    for number in range(1, policy.max_attempts + 1):
        try:
            return await attempt()
        except RetryableError as error:
            if number == policy.max_attempts:
                raise BackendError(f"gave up after {number} attempts: {error}") from None
            if on_retry:
                on_retry(error)
            await policy.sleep(policy.delay(number, error.retry_after))
    raise AssertionError("unreachable")
