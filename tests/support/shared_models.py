"""The sentence-transformers model loaded once per test session: ``load_once(load)`` wraps
``engine.embedding.embedder.load_sentence_model`` so that every ``Embedder`` of the session
shares one loaded model per (name, backend, device) instead of loading its own (a few seconds
each). A load that fails is not kept (the next call tries again and fails the same way); a test
that replaces ``load_sentence_model`` itself (``monkeypatch``) still gets its own. The local
GGUF is kept once per process by ``engine.llm.local_backend`` already."""

from __future__ import annotations

import threading


def load_once(load):
    """``load`` remembering each model it returned, keyed by name, backend and device."""
    loaded: dict[tuple, object] = {}
    lock = threading.Lock()

    def shared(model_name: str, *, backend: str = "torch", device: str = "cpu", progress: bool = True):
        key = (model_name, backend, device)
        with lock:
            if key not in loaded:
                loaded[key] = load(model_name, backend=backend, device=device, progress=progress)
            return loaded[key]

    shared.__wrapped__ = load
    return shared
