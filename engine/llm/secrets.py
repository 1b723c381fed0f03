"""API keys live in memory only: this registry lets every error message scrub them.

A backend registers the key it was given (``remember_secret``, with the base64 forms of
it: a server that echoes ``Authorization: Basic ...`` or the bearer key encoded); ``scrub``
replaces any registered key, anything shaped like a bearer token or ``sk-...`` key, and the
credentials of a URL (``user:pass@``, ``?api-key=...``) by ``[redacted]`` before text reaches
a log, an exception, a model reply kept in a corpus or cache, or a manifest. ``redact_url`` gives the form of a server URL
that may be stored (which variables a grid file may name as its key, and where it may send
it: ``engine.llm.endpoints.PROVIDER_KEYS``).
"""

from __future__ import annotations

import re
import threading
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit, urlunsplit

_SECRETS: set[str] = set()
_LOCK = threading.Lock()
REDACTED = "[redacted]"
_KEY_SHAPES = re.compile(r"(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+[A-Za-z0-9_\-\.]{8,})")
# credentials in any URL inside a text: user:pass@ and key-like query parameters
_URL_USERINFO = re.compile(r"(?<=://)[^/\s@?#\"']+@")
_URL_KEY_PARAM = re.compile(r"([?&](?:[A-Za-z0-9_\-]*(?:key|token|secret|password|passwd|sig|signature|auth|code))=)"
                            r"[^&\s#\"']+", re.IGNORECASE)
# query parameters of a base URL that are configuration, not credentials
SAFE_QUERY_PARAMS = frozenset({"api-version", "api_version"})


def remember_secret(value: str | None) -> None:
    """Keep ``value`` (and its base64 forms, see ``base64_forms``) to be scrubbed from any text."""
    if value and len(value) >= 4:
        forms = {value, *base64_forms(value)}
        with _LOCK:
            _SECRETS.update(forms)


def base64_forms(value: str, *, shortest: int = 8) -> set[str]:
    """The base64 text any encoding of ``value`` must contain, wherever the value sits in the
    encoded bytes (an ``Authorization: Basic base64(user:pass)`` header echoed back, a key
    inside an encoded blob): for each of the three alignments, the characters that depend on
    the value's bytes only; standard and URL-safe alphabets. Forms shorter than ``shortest``
    characters are left out (they would match ordinary words)."""
    import base64

    raw = value.encode("utf-8", "surrogatepass")
    forms = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii").rstrip("=")
        first_bit, end_bit = 8 * offset, 8 * (offset + len(raw))
        start = -(-first_bit // 6)          # first character whose 6 bits are all the value's
        stop = end_bit // 6                 # characters wholly inside the value's bits
        core = encoded[start:stop]
        if len(core) >= shortest:
            forms.add(core)
            forms.add(core.replace("+", "-").replace("/", "_"))
    return forms


def scrub(text: str) -> str:
    """The text with every known secret and key-shaped token replaced by ``[redacted]``."""
    if not isinstance(text, str):
        text = str(text)
    with _LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    text = _URL_USERINFO.sub(REDACTED + "@", text)
    text = _URL_KEY_PARAM.sub(lambda m: m.group(1) + REDACTED, text)
    return _KEY_SHAPES.sub(REDACTED, text)


def _split(url: str) -> SplitResult | None:
    try:
        return urlsplit(url)
    except ValueError:
        return None


def url_secrets(url: str | None) -> list[str]:
    """The credentials a URL carries: its user info (and the ``Basic`` token it is sent as)
    and every query value that is not plain configuration (``api-version``), raw and
    percent-decoded."""
    parts = _split(url) if url else None
    if parts is None:
        return []
    found = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        found += [userinfo, *userinfo.split(":", 1)]
        # the Basic token the HTTP client sends them as (its own base64 forms are kept too)
        import base64

        found.append(base64.b64encode(unquote(userinfo).encode("utf-8", "surrogatepass")).decode("ascii"))
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name.lower() not in SAFE_QUERY_PARAMS and value:
            found.append(value)
    for piece in parts.query.split("&"):
        name, _, value = piece.partition("=")
        if unquote(name).lower() not in SAFE_QUERY_PARAMS:
            found.append(value or name)
    if parts.fragment:
        found.append(parts.fragment)
    return [unquote(s) for s in found if s] + [s for s in found if s]


def redact_url(url: str | None) -> str | None:
    """The URL as it may be stored: user info, query values (but ``api-version``) and any
    fragment replaced by ``[redacted]``; scheme, host, port and path kept."""
    if not url:
        return url
    parts = _split(url)
    if parts is None:
        return scrub(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = REDACTED + "@" + netloc.rsplit("@", 1)[1]
    query = []
    for piece in parts.query.split("&") if parts.query else []:
        name, sep, value = piece.partition("=")
        if unquote(name).lower() in SAFE_QUERY_PARAMS:
            query.append(piece)
        else:
            query.append(f"{name}={REDACTED}" if sep else REDACTED)
    fragment = REDACTED if parts.fragment else ""
    return scrub(urlunsplit(parts._replace(netloc=netloc, query="&".join(query), fragment=fragment)))
