"""OpenAI-compatible chat backend through the ``openai`` SDK.

Works with api.openai.com, Azure OpenAI (``azure_api_version``), and any compatible server
(vLLM, Ollama, llama.cpp server) via ``base_url``. The key comes from the environment
variable named by ``api_key_env`` (default ``OPENAI_API_KEY``) or is passed in memory; it is
kept only on the client object and scrubbed from every error. ``timeout`` is a total deadline
for each request (the whole reply must arrive within it), not a per-read timeout. Reasoning
models (o1/o3/o4, gpt-5: paper A's o3) take no temperature and count ``max_completion_tokens``.

Registered as the provider ``openai`` (``OPENAI``, ``engine.llm.providers``): the ``openai``
SDK is imported when a client is first made, never at registration. Several base URLs make
one ``ReplicaBackend`` over replicas of the model. Its price is the endpoint's (a grid's
``prices:``), else the list price of ``engine.llm.pricing``, else unknown.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
import weakref
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from engine.errors import InputError
from engine.llm.base import Backend, BackendError, ChatResult, RetryableError
from engine.llm.errors import ServerRedirectError
from engine.llm.endpoints import Endpoint, endpoint_field
from engine.llm.pricing import DEFAULT_PRICES
from engine.llm.providers import BACKENDS, BackendFactory
from engine.llm.retry import RetryPolicy, retry_after_seconds
from engine.llm.secrets import redact_url, remember_secret, scrub, url_secrets

CLIENT_SHARDS = 8
_REASONING = re.compile(r"^(o\d|gpt-5)([-_.].*)?$", re.IGNORECASE)


def is_reasoning_model(model: str) -> bool:
    """o1, o3, o3-mini, o4-mini, gpt-5...: models that reject a temperature."""
    return bool(_REASONING.match(model.split("/")[-1]))


class OpenAIBackend(Backend):
    kind = "openai"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", azure_api_version: str | None = None,
                 timeout: float = 120.0, concurrency: int = 16, retry: RetryPolicy | None = None,
                 reasoning: bool | None = None, reasoning_effort: str | None = None,
                 price: tuple[float, float] | None = None):
        super().__init__(model=model, concurrency=concurrency, retry=retry)
        self.price = price if price is not None else DEFAULT_PRICES.get(model)
        if base_url is not None:  # "" is not "no URL": it would send the calls to api.openai.com
            from engine.llm.endpoints import check_base_url

            base_url = check_base_url(base_url)
        key = api_key or os.environ.get(api_key_env)
        if not key:
            if base_url is None or azure_api_version:
                raise InputError(f"no API key: set the environment variable {api_key_env} "
                                 f"(or pass --api-key-env NAME), or use --model local",
                                 field="api_key")
            key = "not-needed"  # local OpenAI-compatible servers ignore the key
        remember_secret(key)
        self._api_key = key
        for secret in url_secrets(base_url):  # a key inside the URL is a key too
            remember_secret(secret)
        self._server_url, self._default_query = _client_url(base_url)
        self.base_url = redact_url(base_url)  # what describe, identity and errors show
        self.azure_api_version = azure_api_version
        self.timeout = timeout
        self.reasoning = is_reasoning_model(model) if reasoning is None else reasoning
        self.reasoning_effort = reasoning_effort
        self._omit_temperature = self.reasoning
        self._clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]" = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def identity(self) -> str:
        return f"{self.kind}:{self.base_url or 'api.openai.com'}:{self.model}"

    def describe(self) -> dict[str, Any]:
        return {"backend": "azure" if self.azure_api_version else self.kind, "model": self.model,
                "base_url": self.base_url, "azure_api_version": self.azure_api_version,
                "reasoning": self.reasoning, "reasoning_effort": self.reasoning_effort,
                "concurrency": self.concurrency}

    def _new_client(self):
        import openai

        # redirects are not followed: the prompt and the key go to the server named, or nowhere
        http_client = openai.DefaultAsyncHttpxClient(follow_redirects=False)
        if self.azure_api_version:
            return openai.AsyncAzureOpenAI(api_key=self._api_key, azure_endpoint=self._server_url,
                                           api_version=self.azure_api_version,
                                           default_query=self._default_query,
                                           timeout=self.timeout, max_retries=0, http_client=http_client)
        return openai.AsyncOpenAI(api_key=self._api_key, base_url=self._server_url,
                                  default_query=self._default_query, timeout=self.timeout,
                                  max_retries=0, http_client=http_client)

    def _client(self):
        """A client of this event loop. Requests are spread over a few clients (connection
        pools): httpcore's pool scans all its connections for every request, so one pool
        with hundreds of connections costs quadratic time (measured in bench_runner)."""
        loop = asyncio.get_running_loop()
        clients = self._clients.get(loop)
        if clients is None:
            shards = max(1, min(CLIENT_SHARDS, self.concurrency // 16))
            clients = self._clients[loop] = [[self._new_client() for _ in range(shards)], 0]
        pool, turn = clients
        clients[1] = (turn + 1) % len(pool)
        return pool[turn]

    async def aclose(self) -> None:
        """Close this loop's clients (call before the loop ends)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        clients = self._clients.pop(loop, None)
        for client in (clients or [[]])[0]:
            await client.close()

    def _params(self, messages, temperature, max_tokens, seed) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.reasoning:
            params["max_completion_tokens"] = max_tokens
            if self.reasoning_effort:
                params["reasoning_effort"] = self.reasoning_effort
        else:
            params["max_tokens"] = max_tokens
        if temperature is not None and not self._omit_temperature:
            params["temperature"] = temperature
        if seed is not None:
            params["seed"] = seed
        return params

    async def _complete(self, messages, *, temperature, max_tokens, seed) -> ChatResult:
        import openai

        started = time.perf_counter()
        try:
            # the client's own timeout bounds each socket read only (a server dripping a byte
            # at a time never trips it): this bounds the whole request
            response = await asyncio.wait_for(self._client().chat.completions.create(
                **self._params(messages, temperature, max_tokens, seed)), self.timeout)
        except asyncio.TimeoutError:
            raise RetryableError(f"no complete reply within {self.timeout:g} s") from None
        except openai.APIStatusError as error:
            if (error.status_code == 400 and "temperature" in str(error.message).lower()
                    and not self._omit_temperature):
                self._omit_temperature = True  # a model that rejects temperature: ask again without
                raise RetryableError("HTTP 400 (temperature unsupported), retrying without it",
                                     retry_after=0.0) from None
            raise api_error(error, self.base_url) from None
        except (openai.APIError, ValueError, KeyError, TypeError) as error:
            raise api_error(error, self.base_url) from None
        latency = time.perf_counter() - started
        try:
            text = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            raise RetryableError("malformed response (no choices)") from None
        if not isinstance(text, str) or not text.strip():
            raise RetryableError("empty response")
        usage = getattr(response, "usage", None)
        return ChatResult(text=text, prompt_tokens=getattr(usage, "prompt_tokens", None),
                          completion_tokens=getattr(usage, "completion_tokens", None),
                          latency_s=latency)

    def close(self) -> None:
        self._clients = weakref.WeakKeyDictionary()


def api_error(error: Exception, base_url: str | None) -> BackendError:
    """The project's error for an exception of the ``openai`` SDK: 408/409/429/5xx, timeouts,
    lost connections and malformed replies are retryable (with the server's Retry-After); a
    3xx is a ``ServerRedirectError`` (final, but replicas fail over from it); any other HTTP
    status is final. The message never holds a key."""
    import openai

    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        if 300 <= status < 400:
            from engine.llm.endpoints import redirect_message

            headers = getattr(error.response, "headers", None) or {}
            return ServerRedirectError(redirect_message(status, base_url, headers.get("location")))
        detail = scrub(_short(error.message))
        if status in (408, 409, 429) or status >= 500:
            return RetryableError(f"HTTP {status}: {detail}", retry_after=_retry_after(error.response))
        return BackendError(f"HTTP {status} from {base_url or 'OpenAI'}: {detail}")
    if isinstance(error, (openai.APITimeoutError, openai.APIConnectionError)):
        return RetryableError(f"{type(error).__name__}: {scrub(_short(str(error)))}")
    return RetryableError(f"malformed response ({type(error).__name__}: {scrub(_short(str(error)))})")


def _client_url(base_url: str | None) -> tuple[str | None, dict[str, str] | None]:
    """The server URL without its query, and the query as the client's default parameters
    (the SDK appends paths to ``base_url``, which a query string would break)."""
    if not base_url:
        return base_url, None
    parts = urlsplit(base_url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit(parts._replace(query="", fragment="")), (query or None)


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


def _retry_after(response) -> float | None:
    """Seconds from a retry-after-ms or Retry-After (seconds or HTTP-date) header, if sent."""
    return retry_after_seconds(getattr(response, "headers", None))


def _price(endpoint: Endpoint) -> tuple[float, float] | None:
    return endpoint.price if endpoint.price is not None else DEFAULT_PRICES.get(endpoint.model)


def _build(endpoint: Endpoint, *, api_key: str | None = None, concurrency: int = 16) -> Backend:
    """The ``openai`` provider's backend: one server, or a ``ReplicaBackend`` over several
    URLs, each with ``concurrency`` requests in flight."""
    from engine.llm.replicas import ReplicaBackend

    servers = [OpenAIBackend(endpoint.model, base_url=url, api_key=api_key, api_key_env=endpoint.api_key_env,
                             azure_api_version=endpoint.azure_api_version, timeout=endpoint.timeout,
                             concurrency=concurrency, retry=RetryPolicy(max_attempts=endpoint.max_attempts),
                             reasoning_effort=endpoint.reasoning_effort, price=_price(endpoint))
               for url in endpoint.urls or [None]]
    return servers[0] if len(servers) == 1 else ReplicaBackend(servers)


OPENAI = BACKENDS.register(BackendFactory(
    "openai", _build, price=_price, label="OpenAI-compatible server",
    fields=tuple(endpoint_field(name) for name in (
        "model", "base_url", "api_key_env", "azure_api_version", "reasoning_effort", "timeout",
        "max_attempts", "price")),
    description="an OpenAI-compatible server: api.openai.com, Azure (azure_api_version), vLLM, Ollama, "
                "llama.cpp's server (base_url; several URLs: replicas)"))
