"""Backends by provider: the registry ``make_backend`` dispatches on, open to plugins.

An ``Endpoint`` (``engine.llm.endpoints``) names its provider; ``BACKENDS`` maps provider
names to factories. The project registers two, each in its own module and without importing
its client library until a backend is built: ``local`` (``engine.llm.local_backend``: a GGUF
file through llama-cpp-python, in process) and ``openai`` (``engine.llm.openai_backend``:
api.openai.com, Azure, vLLM, Ollama, llama.cpp's server: any OpenAI-compatible server).

A plugin adds a provider from its own installed package, with no edit to this project::

    # the plugin's pyproject.toml
    [project.entry-points."creativity_lab.backends"]
    mybackend = "my_package.backend:MY_BACKEND"

    # my_package/backend.py
    from engine.llm.base import Backend, ChatResult
    from engine.llm.providers import BackendFactory

    class MyBackend(Backend):
        kind = "mybackend"
        async def _complete(self, messages, *, temperature, max_tokens, seed) -> ChatResult:
            ...  # call the model; return ChatResult(text, prompt_tokens, completion_tokens)

    def build(endpoint, *, api_key=None, concurrency=16):
        return MyBackend(model=endpoint.model, concurrency=concurrency)

    MY_BACKEND = BackendFactory("mybackend", build, price=lambda endpoint: (0.5, 1.5),
                                label="My server", fields=(endpoint_field("model"),
                                                           endpoint_field("base_url")))

The object the entry point names (or each object of a list it names) is a factory:

* ``name`` (str): the provider's name, what a grid's ``provider:`` (``judge.provider:``) and
  ``--provider`` / ``--judge-provider`` name;
* ``build(endpoint, *, api_key=None, concurrency=16, **options)`` returning an
  ``engine.llm.base.Backend``: ``endpoint`` is the ``Endpoint`` value (model, base URL(s),
  ``api_key_env`` (a variable NAME: read the key from ``os.environ[endpoint.api_key_env]``
  when you need one, and never store or print it), ``timeout``, ``max_attempts``...);
  ``api_key`` is a key given in memory (the dashboard's field), else None; ``concurrency``
  the requests in flight the run allows; ``options`` only what a caller of ``make_backend``
  passes beyond those (the local model's ``n_ctx``, ``n_threads``);
* optionally ``price(endpoint)``: (input, output) USD per 1M tokens, or None when unknown
  (the default: the endpoint's own ``price``, i.e. the grid's ``prices:`` entry for the model);
* optionally ``label`` (str): how the Pilot page names it (default: the name), and
  ``fields``: the ``Endpoint`` fields it takes, each an ``engine.llm.endpoints.EndpointField``
  (``endpoint_field("base_url")`` gives the usual label and help). The Pilot page shows those
  fields (and a key field when ``api_key_env`` is one of them), and a manifest records only
  them besides the provider and model; not given: every field;
* optionally ``model_name(endpoint)``: the model name the built backend will report (the
  default: ``endpoint.model``), and ``in_process`` (bool): the model runs on this machine's
  CPU (a Ray task then asks for a whole CPU).

``BackendFactory`` is that object ready-made; any object with those attributes will do.
A session, its cache key and the manifest see the backend's ``kind``, ``model``,
``identity`` and ``describe()`` (``engine.llm.base.Backend``); the manifest also records the
provider and, for a plugin, the plugin's name and version (``BACKENDS.source``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from engine.errors import InputError
from engine.llm.base import Backend
from engine.llm.cache import CachedBackend
from engine.llm.endpoints import ENDPOINT_FIELDS, FIELD_TEXT, Endpoint, EndpointField, endpoint_field
from engine.registry import GROUPS, Registry

Price = tuple[float, float]


def _given_price(endpoint: Endpoint) -> Price | None:
    return endpoint.price


def _given_model(endpoint: Endpoint) -> str:
    return endpoint.model


@dataclass(frozen=True)
class BackendFactory:
    """What a provider registers (see the module docstring)."""

    name: str
    build: Callable[..., Backend]
    price: Callable[[Endpoint], Price | None] = field(default=_given_price)
    model_name: Callable[[Endpoint], str] = field(default=_given_model)
    in_process: bool = False
    description: str = ""
    label: str = ""  # how the Pilot page names it; "": the name
    fields: tuple[EndpointField, ...] | None = None  # the Endpoint fields it takes; None: all


def factory_problem(obj: object) -> str | None:
    """Why ``obj`` is not a backend factory (the registry refuses it), or None."""
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name.strip():
        return "a backend factory needs a provider name (.name, a non-empty str)"
    if not callable(getattr(obj, "build", None)):
        return "a backend factory needs .build(endpoint, *, api_key=None, concurrency=16) -> Backend"
    for optional in ("price", "model_name"):
        if getattr(obj, optional, None) is not None and not callable(getattr(obj, optional)):
            return f".{optional} must be a function of the endpoint"
    fields = getattr(obj, "fields", None)
    if fields is not None:
        if not isinstance(fields, (tuple, list)) or not all(
                getattr(f, "name", None) in FIELD_TEXT
                and isinstance(getattr(f, "label", None), str) for f in fields):
            return (".fields must be EndpointField values (engine.llm.endpoints.endpoint_field) "
                    f"naming Endpoint fields ({', '.join(FIELD_TEXT)})")
    if not isinstance(getattr(obj, "label", ""), str):
        return ".label must be a str"
    return None


BACKENDS: Registry = Registry("backend", GROUPS["backends"], accepts=factory_problem)


def backend_factory(provider: str):
    """The registered factory of ``provider``; an unknown one is an InputError listing the
    known providers (and saying when a plugin failed to load)."""
    try:
        return BACKENDS.get(provider)
    except KeyError:
        known = ", ".join(BACKENDS.names()) or "none"
        failed = BACKENDS.failures
        note = (f" ({len(failed)} backend plugin(s) failed to load: python -m engine plugins)"
                if failed else "")
        raise InputError(f"unknown provider {provider!r}; known: {known}{note}", field="provider") from None


def check_provider(provider: str | None) -> str | None:
    """``provider`` when None or registered; else the InputError of ``backend_factory``."""
    if provider is not None:
        backend_factory(provider)
    return provider


def endpoint_price(endpoint: Endpoint) -> Price | None:
    """(input, output) USD per 1M tokens for the endpoint, as its provider knows it; None:
    unknown (never read as free)."""
    price = getattr(backend_factory(endpoint.provider), "price", None)
    value = endpoint.price if price is None else price(endpoint)
    return None if value is None else (float(value[0]), float(value[1]))


def endpoint_model_name(endpoint: Endpoint) -> str:
    """The model name the endpoint's backend reports (the GGUF file's stem for ``local``)."""
    name = getattr(backend_factory(endpoint.provider), "model_name", None)
    return endpoint.model if name is None else name(endpoint)


def runs_in_process(endpoint: Endpoint) -> bool:
    return bool(getattr(backend_factory(endpoint.provider), "in_process", False))


def backend_label(provider: str) -> str:
    """How the Pilot page names the provider's backend: its factory's ``label``, else its name."""
    return getattr(backend_factory(provider), "label", "") or provider


def backend_fields(provider: str) -> tuple[EndpointField, ...]:
    """The ``Endpoint`` fields the provider's backend takes (a factory that does not say: all)."""
    fields = getattr(backend_factory(provider), "fields", None)
    if fields is None:
        return tuple(endpoint_field(name) for name in FIELD_TEXT)
    return tuple(fields)


def endpoint_record(endpoint: Endpoint) -> dict[str, Any]:
    """The endpoint as a manifest keeps it: its provider, model and the fields its backend
    takes (``backend_fields``), with where its provider came from."""
    kept = [f.name for f in backend_fields(endpoint.provider)]
    return {**endpoint.record(kept), "source": BACKENDS.source(endpoint.provider).record()}


def make_backend(endpoint: Endpoint | str = "local", *, api_key: str | None = None,
                 concurrency: int = 16, cache: str | Path | None = None, replay: bool = False,
                 **options: Any) -> Backend:
    """The backend of ``endpoint``, built by its provider's factory; ``cache=path`` wraps it
    in the SQLite response cache (``replay=True`` forbids misses).

    ``api_key`` is a key held in memory (never part of an Endpoint); without it the provider
    reads ``$endpoint.api_key_env``. A model name with server options
    (``make_backend("gpt-4.1", base_url=..., timeout=30)``) is short for
    ``make_backend(Endpoint(model="gpt-4.1", base_url=..., timeout=30))``; other ``options``
    go to the factory (``n_ctx``, ``n_threads`` of the local model).
    """
    if replay and cache is None:
        raise InputError("replay mode needs a response cache (--cache PATH)", field="replay")
    server = {name: options.pop(name) for name in list(options) if name in ENDPOINT_FIELDS}
    if not isinstance(endpoint, Endpoint):
        endpoint = Endpoint(model=endpoint, **server)
    elif server:
        raise TypeError(f"server options {sorted(server)} belong in the Endpoint")
    factory = backend_factory(endpoint.provider)
    backend = factory.build(endpoint, api_key=api_key, concurrency=concurrency, **options)
    if not isinstance(backend, Backend):
        raise TypeError(f"backend provider {endpoint.provider!r} built {type(backend).__name__}, "
                        f"not an engine.llm.base.Backend")
    price = endpoint_price(endpoint)
    if price is not None:  # else what the backend itself knows (None: unknown)
        backend.price = price
    if cache is not None:
        backend = CachedBackend(backend, cache, replay=replay)
    return backend
