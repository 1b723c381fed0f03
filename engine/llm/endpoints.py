"""Where calls go: a server URL is checked before anything is sent, and never followed elsewhere.

* ``check_base_url``: a base URL given (``--base-url``, ``--judge-base-url``,
  ``--embed-base-url``, a grid's ``base_url``) must be an ``http://`` or ``https://`` URL with a
  host. An empty value (``""``, ``[]``, ``" "``, ``","``) is refused: left to the OpenAI SDK it
  would mean "no base URL", i.e. api.openai.com with ``$OPENAI_API_KEY``, which is never what an
  empty field in a file meant.
* ``redirect_message``: the HTTP clients here do not follow redirects (a prompt and its key
  must reach the server named, not the host a reply points to); a 3xx is a final error that
  names the server that sent it and where it pointed, without credentials.
"""

from __future__ import annotations

from typing import Sequence
from urllib.parse import urlsplit

from engine.errors import InputError

SCHEMES = ("http", "https")


def check_base_url(value: str, *, field: str = "base_url", path: str | None = None) -> str:
    """``value`` stripped, when it is an http(s) URL with a host; else an InputError."""
    from engine.llm.secrets import redact_url

    text = value.strip() if isinstance(value, str) else value
    if not isinstance(text, str) or not text:
        raise InputError("empty server URL: give an http:// or https:// URL, or none at all (no URL "
                         "means the local model, or api.openai.com for an OpenAI model name)",
                         path=path, field=field)
    try:
        parts = urlsplit(text)
        host = parts.hostname
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError:
        raise InputError(f"not a URL: {redact_url(text)!r}", path=path, field=field) from None
    if parts.scheme.lower() not in SCHEMES or not host:
        raise InputError(f"not an http:// or https:// URL with a host: {redact_url(text)!r}",
                         path=path, field=field)
    return text


def check_base_urls(value: "str | Sequence[str]", *, field: str = "base_url",
                    path: str | None = None) -> list[str]:
    """Every URL of a base-URL value (a string, commas allowed, or a list), checked; an empty
    value or an empty part (``"a,,b"``) is an InputError."""
    items = [value] if isinstance(value, str) else list(value)
    if not items:
        raise InputError("empty list of server URLs", path=path, field=field)
    urls = []
    for item in items:
        if not isinstance(item, str):
            raise InputError(f"expected a URL, got {type(item).__name__}", path=path, field=field)
        parts = item.split(",")
        for part in parts:
            if len(parts) > 1 and not part.strip():
                raise InputError(f"empty URL between commas in {item!r}", path=path, field=field)
            urls.append(check_base_url(part, field=field, path=path))
    return urls


def redirect_message(status: int, server: str | None, location: str | None) -> str:
    """The one-line error for a redirect (3xx) answered by ``server`` (already redacted)."""
    from engine.llm.secrets import redact_url

    target = "another address"
    if location:
        try:
            parts = urlsplit(location)
            target = f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}{parts.path}" if parts.netloc \
                else f"path {parts.path!r} on the same host"
        except ValueError:
            target = "an unreadable address"
        target = redact_url(target) or target
    return (f"HTTP {status} from {server or 'api.openai.com'}: the server redirects to {target}; "
            "redirects are not followed (give the final URL as the base URL)")
