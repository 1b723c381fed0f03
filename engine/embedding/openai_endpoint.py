"""Turn embeddings from an OpenAI-compatible embeddings endpoint, through the same cache.

The scale path for embeddings: a GPU server (vLLM ``--task embed``, Hugging Face TEI,
Ollama, llama.cpp's server, or api.openai.com) embeds; this project batches, sends batches
concurrently, retries like the chat backend (``engine.llm.retry``), L2-normalises (as the
in-process ``engine.embedding.embedder.Embedder``) and stores every vector in the same SQLite cache,
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

from engine.embedding.embedder import EmbeddingCache, encode_through_cache
from engine.llm.base import BackendError, RetryableError, run_sync_closing
from engine.llm.retry import RetryPolicy, call_with_retries


class OpenAIEmbedder:
    """Embed texts with ``model`` on an OpenAI-compatible server; same interface as
    ``engine.embedding.embedder.Embedder`` (``encode``, ``model_name``, ``cache``, ``model_calls``)."""

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

    @classmethod
    def for_endpoint(cls, endpoint, **options) -> "OpenAIEmbedder":
        """The embedder of an ``engine.llm.endpoints.Endpoint`` (one OpenAI-compatible
        server: its model, URL, key variable, deadline and attempts); ``options`` as for the
        constructor (cache, batch_size, concurrency)."""
        from engine.errors import InputError

        if endpoint.provider != "openai":
            raise InputError(f"embeddings come from an OpenAI-compatible server (provider openai), "
                             f"not {endpoint.provider!r}", field="provider")
        if len(endpoint.urls) > 1:
            raise InputError("one embeddings server URL, not several", field="embed_base_url")
        return cls(endpoint.model, base_url=endpoint.base_url, api_key_env=endpoint.api_key_env,
                   timeout=endpoint.timeout, max_attempts=endpoint.max_attempts, **options)

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """Unit-length float32 embeddings, one row per text, in order; cached texts are not sent.

        A server that fails for good (refused connection after the retries, an unusable
        reply, vectors of another size than the cached ones) is a ``BackendError`` whose one
        line names the server.
        """
        try:
            return encode_through_cache(self.cache, self.model_name, texts, lambda missing: run_sync_closing(
                self._embed_all(missing, progress), self._http))
        except BackendError as error:
            if "embedding server" in str(error):
                raise
            raise BackendError(f"embedding server {self.base_url or 'api.openai.com'} (model "
                               f"{self.model!r}): {error}") from None

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
        """The response's vectors in input order, pooled and normalised.

        A reply that cannot be right is a final error naming the server (asking again gets
        the same answer): not one vector per text, indexes that are not 0..n-1, values that
        are not numbers (strings, booleans) or not finite, empty or all-zero vectors (no
        direction: every cosine with them would be 0), or vectors of different sizes.
        """
        data = getattr(response, "data", None)
        if not isinstance(data, list):
            raise self._bad_reply("no list of vectors ('data') in the reply")
        if len(data) != expected:
            raise self._bad_reply(f"{len(data)} vectors for {expected} texts")
        indexes = [getattr(item, "index", None) for item in data]
        if all(isinstance(i, int) and not isinstance(i, bool) for i in indexes):
            if sorted(indexes) != list(range(expected)):
                raise self._bad_reply(f"vector indexes {sorted(indexes)[:5]}... are not 0..{expected - 1}")
            ordered = [item for _, item in sorted(zip(indexes, data), key=lambda pair: pair[0])]
        elif any(i is not None for i in indexes):
            raise self._bad_reply("vector indexes that are not whole numbers")
        else:
            ordered = list(data)
        vectors, token_level, sizes = [], 0, set()
        for position, item in enumerate(ordered):
            array = self._numbers(getattr(item, "embedding", None), position)
            if array.ndim == 2 and array.shape[0] and array.shape[1]:  # one vector per token: mean over tokens
                array, token_level = array.mean(axis=0), token_level + 1
            if array.ndim != 1 or not len(array):
                raise self._bad_reply(f"vector {position} has shape {array.shape}, expected a list of numbers")
            if not np.isfinite(array).all():
                raise self._bad_reply(f"vector {position} holds NaN or infinite values")
            norm = np.linalg.norm(array)
            if not norm > 0 or not np.isfinite(norm):
                raise self._bad_reply(f"vector {position} is all zeros (or too large to normalise): "
                                      "it has no direction to compare")
            sizes.add(len(array))
            vectors.append((array / norm).astype(np.float32))
        if len(sizes) > 1:
            raise self._bad_reply(f"vectors of different sizes {sorted(sizes)} in one reply")
        self.token_level += token_level
        return vectors

    def _numbers(self, value, position: int) -> np.ndarray:
        """A vector (or a per-token matrix) of real numbers; text or booleans are refused,
        not converted (``"0.5"`` is not an embedding)."""
        rows = value if isinstance(value, list) and value and isinstance(value[0], list) else [value]
        for row in rows:
            if not isinstance(row, list) or not all(
                    isinstance(x, (int, float)) and not isinstance(x, bool) for x in row):
                kind = type(row).__name__ if not isinstance(row, list) else "list with non-numbers"
                raise self._bad_reply(f"vector {position} is a {kind}, expected a list of numbers")
        try:
            return np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):  # a ragged per-token matrix
            raise self._bad_reply(f"vector {position} has rows of different sizes") from None

    def _bad_reply(self, what: str) -> BackendError:
        return BackendError(f"embedding server {self.base_url or 'api.openai.com'} (model "
                            f"{self.model!r}) sent an unusable reply: {what}")


def make_embedder(model: str, *, server=None, cache=None, batch_size: int = 64, concurrency: int = 4,
                  progress: bool = False):
    """The embedder a command asks for: the OpenAI-compatible server ``server`` (an
    ``engine.llm.endpoints.Endpoint``, its own model) when given, else the in-process
    sentence-transformers ``model``."""
    if server is not None:
        return OpenAIEmbedder.for_endpoint(server, cache=cache, batch_size=batch_size,
                                           concurrency=concurrency)
    from engine.embedding.embedder import Embedder

    return Embedder(model, cache=cache, batch_size=batch_size, progress=progress)
