"""API keys live in memory only: this registry lets every error message scrub them.

A backend registers the key it was given (``remember_secret``); ``scrub`` replaces any
registered key, and anything shaped like a bearer token or ``sk-...`` key, by ``[redacted]``
before text reaches a log, an exception, a corpus, a cache or a manifest.
"""

from __future__ import annotations

import re
import threading

_SECRETS: set[str] = set()
_LOCK = threading.Lock()
_KEY_SHAPES = re.compile(r"(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+[A-Za-z0-9_\-\.]{8,})")


def remember_secret(value: str | None) -> None:
    if value and len(value) >= 4:
        with _LOCK:
            _SECRETS.add(value)


def scrub(text: str) -> str:
    """The text with every known secret and key-shaped token replaced by ``[redacted]``."""
    if not isinstance(text, str):
        text = str(text)
    with _LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "[redacted]")
    return _KEY_SHAPES.sub("[redacted]", text)
