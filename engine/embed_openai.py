"""Turn embeddings from an OpenAI-compatible embeddings endpoint, through the same cache.

The scale path for embeddings: a GPU server (vLLM ``--task embed``, Hugging Face TEI,
Ollama, llama.cpp's server, or api.openai.com) embeds; this project batches, sends batches
concurrently, retries like the chat backend (``engine.llm.retry``), L2-normalises (as the
in-process ``engine.embed.Embedder``) and stores every vector in the same SQLite cache,
keyed by ``openai:<base URL without secrets>:<model>``, so a second pass sends nothing.

The key comes from the environment variable ``api_key_env`` (or memory) and is scrubbed
from every error; a key inside the URL is stripped from what is stored. A server that
answers one vector per token (llama-cpp-python's server on a model without pooling) is
mean-pooled over tokens, and ``token_level`` counts the texts where that happened.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Sequence

import numpy as np

from engine.embed import EmbeddingCache, encode_through_cache
from engine.llm.base import BackendError, RetryableError, run_sync_closing
from engine.llm.retry import RetryPolicy, call_with_retries


class OpenAIEmbedder:
    """Embed texts with ``model`` on an OpenAI-compatible server; same interface as
    ``engine.embed.Embedder`` (``encode``, ``model_name``, ``cache``, ``model_calls``)."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", cache: EmbeddingCache | str | Path | None = None,
                 batch_size: int = 64, concurrency: int = 4, timeout: float = 120.0,
                 max_attempts: int = 6, retry: RetryPolicy | None = None):
        from engine.llm.openai_backend import OpenAIBackend

        if batch_size < 1 or concurrency < 1:
            raise ValueError("batch_size and concurrency must be at least 1")
        # the chat backend's client handling: key from env or memory, secrets out of the URL
        self._http = OpenAIBackend(model, base_url=base_url, api_key=api_key, api_key_env=api_key_env,
                                   timeout=timeout, concurrency=concurrency,
                                   retry=retry or RetryPolicy(max_attempts=max_attempts))
        self.model = model
        self.base_url = self._http.base_url  # secrets already replaced
        self.model_name = f"openai:{self.base_url or 'https://api.openai.com/v1'}:{model}"
        self.batch_size = batch_size
        self.concurrency = concurrency
        self.cache = cache if isinstance(cache, EmbeddingCache) else EmbeddingCache(cache)
        self.model_calls = 0  # HTTP requests that succeeded
        self.retries = 0
        self.token_level = 0  # texts answered with one vector per token, mean-pooled here

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """Unit-length float32 embeddings, one row per text, in order; cached texts are not sent."""
        return encode_through_cache(self.cache, self.model_name, texts, lambda missing: run_sync_closing(
            self._embed_all(missing, progress), self._http))

    __call__ = encode

    async def _embed_all(self, texts: list[str], progress: bool) -> list[np.ndarray]:
        batches = [texts[i:i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        gate = asyncio.Semaphore(self.concurrency)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(texts), desc="embedding (server)", unit="text")

        async def one(batch: list[str]) -> list[np.ndarray]:
            async with gate:
                vectors = await call_with_retries(lambda: self._request(batch), self._http.retry,
                                                  on_retry=lambda _error: self._count_retry())
            if bar is not None:
                bar.update(len(batch))
            return vectors

        try:
            results = await asyncio.gather(*(one(b) for b in batches))
        finally:
            if bar is not None:
                bar.close()
        return [vector for batch in results for vector in batch]

    def _count_retry(self) -> None:
        self.retries += 1

    async def _request(self, batch: list[str]) -> list[np.ndarray]:
        from engine.llm.openai_backend import api_error

        try:
            response = await asyncio.wait_for(self._http._client().embeddings.create(
                model=self.model, input=batch, encoding_format="float"), self._http.timeout)
        except asyncio.TimeoutError:
            raise RetryableError(f"no complete reply within {self._http.timeout:g} s") from None
        except Exception as error:  # the SDK's errors, and malformed bodies
            if isinstance(error, BackendError):
                raise
            raise api_error(error, self.base_url) from None
        vectors = self._vectors(response, len(batch))
        self.model_calls += 1
        return vectors

    def _vectors(self, response, expected: int) -> list[np.ndarray]:
        """The response's vectors in input order, pooled and normalised; a reply of the
        wrong shape is retryable (a proxy's garbled body), like a malformed chat reply."""
        data = getattr(response, "data", None)
        if not isinstance(data, list) or len(data) != expected:
            got = len(data) if isinstance(data, list) else "no"
            raise RetryableError(f"malformed embeddings response ({got} vectors for {expected} texts)")
        ordered = sorted(data, key=lambda item: getattr(item, "index", 0) or 0)
        vectors, token_level = [], 0
        for item in ordered:
            try:
                array = np.asarray(getattr(item, "embedding", None), dtype=np.float64)
            except (TypeError, ValueError):
                raise RetryableError("malformed embeddings response (not numbers)") from None
            if array.ndim == 2 and len(array):  # one vector per token: mean over tokens
                array, token_level = array.mean(axis=0), token_level + 1
            if array.ndim != 1 or not len(array) or not np.isfinite(array).all():
                raise RetryableError(f"malformed embeddings response (vector of shape {array.shape})")
            norm = np.linalg.norm(array)
            vectors.append((array / norm if norm > 0 else array).astype(np.float32))
        self.token_level += token_level
        return vectors


def make_embedder(model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                  cache=None, batch_size: int = 64, concurrency: int = 4, progress: bool = False):
    """The embedder a command asks for: the OpenAI-compatible API when ``base_url`` is
    given, else the in-process sentence-transformers model."""
    if base_url:
        return OpenAIEmbedder(model, base_url=base_url, api_key_env=api_key_env, cache=cache,
                              batch_size=batch_size, concurrency=concurrency)
    from engine.embed import Embedder

    return Embedder(model, cache=cache, batch_size=batch_size, progress=progress)
