"""One chat interface for every model.

``make_backend`` builds the backend the CLI, runner and dashboard use:

* ``model="local"`` (the default when no base URL is given), or a ``.gguf`` path: the
  in-process llama.cpp backend;
* any other name: an OpenAI-compatible server (OpenAI, Azure with ``azure_api_version``,
  vLLM or Ollama with ``base_url``), key from ``api_key`` in memory or ``$api_key_env``;
  several URLs (a list, or commas) make one ``ReplicaBackend`` over replicas of the model;
* ``cache=path`` wraps it in the SQLite response cache; ``replay=True`` forbids misses.
"""

from __future__ import annotations

from pathlib import Path

from engine.llm.base import (Backend, BackendError, ChatResult, Message, RetryableError, Usage,
                             prompt_hash, run_sync)
from engine.llm.cache import CachedBackend, CacheMiss, ResponseCache
from engine.llm.retry import RetryPolicy
from engine.llm.scripted import ScriptedBackend

__all__ = ["Backend", "BackendError", "CacheMiss", "CachedBackend", "ChatResult", "Message",
           "ResponseCache", "RetryPolicy", "RetryableError", "ScriptedBackend", "Usage",
           "is_local_model", "make_backend", "prompt_hash", "run_sync"]


def is_local_model(model: str, base_url: str | None = None) -> bool:
    from engine.llm.local_backend import LOCAL_ALIASES

    return base_url is None and (model in LOCAL_ALIASES or str(model).endswith(".gguf"))


def make_backend(model: str = "local", base_url: str | list[str] | None = None, api_key: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", azure_api_version: str | None = None, *,
                 concurrency: int = 16, timeout: float = 120.0, max_attempts: int = 6,
                 reasoning_effort: str | None = None, cache: str | Path | None = None,
                 replay: bool = False, n_ctx: int = 4096, n_threads: int | None = None) -> Backend:
    """The backend for ``model``; see the module docstring for the choices."""
    if replay and cache is None:
        from engine.errors import InputError

        raise InputError("replay mode needs a response cache (--cache PATH)", field="replay")
    if base_url is not None:  # given, so never empty: "" or [] must not mean api.openai.com
        from engine.llm.endpoints import check_base_urls

        urls = check_base_urls(base_url)
        base_url = urls[0] if len(urls) == 1 else urls
    if is_local_model(model, base_url):
        from engine.llm.local_backend import LocalBackend

        backend: Backend = LocalBackend(model, n_ctx=n_ctx, n_threads=n_threads)
    else:
        from engine.llm.openai_backend import OpenAIBackend
        from engine.llm.replicas import ReplicaBackend, split_urls

        urls = split_urls(base_url) or [None]
        servers = [OpenAIBackend(model, base_url=url, api_key=api_key, api_key_env=api_key_env,
                                 azure_api_version=azure_api_version, timeout=timeout,
                                 concurrency=concurrency, retry=RetryPolicy(max_attempts=max_attempts),
                                 reasoning_effort=reasoning_effort) for url in urls]
        # several URLs: replicas of one model, each with ``concurrency`` requests in flight
        backend = servers[0] if len(servers) == 1 else ReplicaBackend(servers)
    if cache is not None:
        backend = CachedBackend(backend, cache, replay=replay)
    return backend
