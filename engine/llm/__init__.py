"""One chat interface for every model.

``make_backend(endpoint)`` builds the backend the CLI, runner and dashboard use, through the
factory its provider registered (``engine.llm.providers.BACKENDS``; plugins add providers):

* provider ``local`` (the default for ``model="local"`` or a ``.gguf`` path with no base URL):
  the in-process llama.cpp backend;
* provider ``openai`` (the default for any other model name): an OpenAI-compatible server
  (OpenAI, Azure with ``azure_api_version``, vLLM or Ollama with ``base_url``), key from
  ``api_key`` in memory or ``$api_key_env``; several URLs make one ``ReplicaBackend`` over
  replicas of the model;
* ``cache=path`` wraps it in the SQLite response cache; ``replay=True`` forbids misses.

An ``Endpoint`` (``engine.llm.endpoints``) is the one value that says which model on which
server; ``make_backend("gpt-4.1", base_url=...)`` is short for one.
"""

from __future__ import annotations

from engine.llm import local_backend, openai_backend  # noqa: F401  (register the built-in providers)
from engine.llm.base import (Backend, BackendError, ChatResult, Message, RetryableError, Usage,
                             prompt_hash, run_sync)
from engine.llm.cache import CachedBackend, CacheMiss, ResponseCache
from engine.llm.endpoints import Endpoint, is_local_model
from engine.llm.providers import BACKENDS, BackendFactory, backend_factory, make_backend
from engine.llm.retry import RetryPolicy
from engine.llm.scripted import ScriptedBackend

__all__ = ["BACKENDS", "Backend", "BackendError", "BackendFactory", "CacheMiss", "CachedBackend",
           "ChatResult", "Endpoint", "Message", "ResponseCache", "RetryPolicy", "RetryableError",
           "ScriptedBackend", "Usage", "backend_factory", "is_local_model", "make_backend",
           "prompt_hash", "run_sync"]
