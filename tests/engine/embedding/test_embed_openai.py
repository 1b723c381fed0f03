"""Embeddings through an OpenAI-compatible /v1/embeddings endpoint (engine.embedding.openai_endpoint),
against the loopback fake server (real HTTP; the vectors it answers are a known function
of the text, ``embedding_of``) — batching, order, cache, retries, secrets and the CLI."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.loopback_server import LoopbackServer, embedding_of
from engine.embedding.embedder import EmbeddingCache
from engine.embedding.openai_endpoint import OpenAIEmbedder
from engine.llm import BackendError, RetryPolicy

TEXTS = ["a refill network", "deposit tokens", "a refill network", "seaweed packaging", "river drones"]


def expected(text: str) -> np.ndarray:
    vector = np.array(embedding_of(text))
    return vector / np.linalg.norm(vector)


def make(server, tmp_path, **options) -> OpenAIEmbedder:
    options.setdefault("retry", RetryPolicy(max_attempts=3, base_delay=0.0, max_delay=0.0))
    return OpenAIEmbedder("fake-embed", base_url=server.base_url,
                          cache=EmbeddingCache(tmp_path / "cache.sqlite"), **options)


def test_batched_concurrent_in_order_and_cached(tmp_path):
    with LoopbackServer() as server:
        embedder = make(server, tmp_path, batch_size=2, concurrency=2)
        vectors = embedder.encode(TEXTS)
        # 4 distinct texts in batches of 2: two requests, the repeated text sent once
        assert server.requests == 2 and embedder.model_calls == 2
        assert sorted(len(b["input"]) for b in server.bodies) == [2, 2]
        assert all(b["model"] == "fake-embed" and b["encoding_format"] == "float" for b in server.bodies)
        np.testing.assert_allclose(vectors, np.array([expected(t) for t in TEXTS]), atol=1e-6)
        assert vectors.dtype == np.float32
        again = make(server, tmp_path).encode(TEXTS[::-1])  # a new embedder, the same cache file
        assert server.requests == 2  # nothing sent
        np.testing.assert_allclose(again, vectors[::-1], atol=0)


def test_server_errors_are_retried_and_counted(tmp_path):
    with LoopbackServer(script=["500", "429", "malformed"]) as server:
        embedder = make(server, tmp_path, retry=RetryPolicy(max_attempts=4, base_delay=0.0, max_delay=0.0))
        vectors = embedder.encode(TEXTS[:2])
    assert server.requests == 4 and embedder.retries == 3 and embedder.model_calls == 1
    np.testing.assert_allclose(vectors, [expected(t) for t in TEXTS[:2]], atol=1e-6)


def test_gives_up_with_a_clear_error(tmp_path):
    with LoopbackServer(script=["503"] * 3) as server:
        with pytest.raises(BackendError, match="gave up after 2 attempts.*HTTP 503"):
            make(server, tmp_path, retry=RetryPolicy(max_attempts=2, base_delay=0.0,
                                                     max_delay=0.0)).encode(["x"])


def test_cache_is_keyed_by_server_and_model_without_secrets(tmp_path):
    secret = "q9-url-secret-value"
    with LoopbackServer() as server:
        embedder = OpenAIEmbedder("fake-embed", base_url=f"{server.base_url}?api_key={secret}",
                                  cache=EmbeddingCache(tmp_path / "cache.sqlite"), max_attempts=1)
        embedder.encode(["one text"])
        assert secret not in embedder.model_name and server.base_url in embedder.model_name
        assert all(path.endswith(f"api_key={secret}") for path in server.paths)  # sent, not stored
        other = OpenAIEmbedder("another-model", base_url=server.base_url,
                               cache=EmbeddingCache(tmp_path / "cache.sqlite"))
        other.encode(["one text"])
        assert other.model_calls == 1  # another model: not the first one's vectors
    assert secret.encode() not in (tmp_path / "cache.sqlite").read_bytes()


def test_cli_embed_and_features_through_the_server(tmp_path, monkeypatch, capsys):
    import pandas as pd

    from engine.cli import main
    from engine.corpus import Conversation, Corpus, Turn

    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
    corpus = Corpus([Conversation("c1", turns=[Turn("A", t) for t in TEXTS[:4]]),
                     Conversation("c2", turns=[Turn("B", t) for t in TEXTS[2:]])])
    corpus.to_jsonl(tmp_path / "corpus.jsonl")
    with LoopbackServer() as server:
        assert main(["embed", str(tmp_path / "corpus.jsonl"), str(tmp_path / "e.npy"), "--no-progress",
                     "--embed-base-url", server.base_url, "--embed-model", "fake-embed"]) == 0
        assert main(["features", str(tmp_path / "corpus.jsonl"), "-o", str(tmp_path / "f.csv"),
                     "--no-progress", "--embed-base-url", server.base_url,
                     "--embed-model", "fake-embed"]) == 0
        requests = server.requests
    assert requests == 1  # 5 distinct texts, one batch of 64; the features run hit the cache
    vectors = np.load(tmp_path / "e.npy")
    all_texts = TEXTS[:4] + TEXTS[2:]
    np.testing.assert_allclose(vectors, [expected(t) for t in all_texts], atol=1e-6)
    table = pd.read_csv(tmp_path / "f.csv").set_index("conversation_id")
    first = np.array([expected(t) for t in TEXTS[:4]])
    steps = [1 - first[i] @ first[i + 1] for i in range(3)]  # cosine distances of unit vectors
    assert table.loc["c1", "path_length"] == pytest.approx(sum(steps), abs=1e-6)
    assert "openai:" + server.base_url + ":fake-embed" in capsys.readouterr().out


def test_cli_refuses_a_server_model_without_a_server(tmp_path, capsys):
    from engine.cli import main

    assert main(["embed", "corpus.jsonl", str(tmp_path / "e.npy"), "--embed-model", "m"]) == 2
    assert "--embed-base-url" in capsys.readouterr().err
