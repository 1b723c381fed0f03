"""The failures a backend reports, in a module of their own so that the retry loop
(``engine.llm.retry``) and the backends (``engine.llm.base``) both import them without
importing each other."""

from __future__ import annotations

from engine.llm.secrets import scrub


class BackendError(RuntimeError):
    """A call that failed for good; the message never contains an API key."""

    def __init__(self, message: str):
        super().__init__(scrub(message))


class RetryableError(BackendError):
    """A failure worth retrying (429, 5xx, timeout, empty or malformed reply)."""

    def __init__(self, message: str, *, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class ServerRedirectError(BackendError):
    """A server that answered a redirect (3xx), which is never followed: final for one server,
    but the fault of that server alone, so a pool of replicas (``engine.llm.replicas``) fails
    over from it as from a refused connection."""
