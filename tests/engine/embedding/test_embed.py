"""The embedder with the real bundled all-MiniLM-L6-v2: meaning, unit norms, and the cache."""

from __future__ import annotations

import numpy as np
import pytest

from engine.corpus import Conversation, Corpus, Turn
from engine.embedding.embedder import DEFAULT_MODEL, EmbeddingCache, Embedder, embed_corpus, text_key

SENTENCES = [
    "The cat sat on the mat.",
    "A kitten is sitting on a rug.",
    "The stock market fell sharply today.",
    "Investors sold shares as prices dropped.",
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("embedding-cache")


@pytest.fixture(scope="module")
def embedder(cache_dir):
    """One loaded model for the module (loading it takes seconds)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CDL_CACHE_DIR", str(cache_dir))
        yield Embedder()  # default model, default cache path under CDL_CACHE_DIR


def cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_similar_sentences_are_closer(embedder):
    v = embedder.encode(SENTENCES)
    assert v.shape == (4, 384)
    cats, stocks = cosine(v[0], v[1]), cosine(v[2], v[3])
    for similar in (cats, stocks):
        for across in (cosine(v[0], v[2]), cosine(v[0], v[3]), cosine(v[1], v[2]), cosine(v[1], v[3])):
            assert similar > across + 0.2
    assert cosine(v[0], v[0]) == pytest.approx(1.0, abs=1e-6)


def test_unit_norms(embedder):
    v = embedder.encode(SENTENCES + ["", "x" * 2000])
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_default_cache_is_under_the_env_folder(embedder, cache_dir):
    assert embedder.model_name == DEFAULT_MODEL
    assert embedder.cache.path == cache_dir / "embeddings.sqlite"


def test_second_pass_makes_no_model_call_and_equal_vectors(embedder, cache_dir, monkeypatch):
    monkeypatch.setenv("CDL_CACHE_DIR", str(cache_dir))
    texts = ["A brand new sentence for the cache test.", "Another one, never seen.",
             "A brand new sentence for the cache test."]
    first = Embedder()
    first._model = embedder.model  # reuse the loaded model; the counter starts at zero
    vectors = first.encode(texts)
    assert first.model_calls == 1
    np.testing.assert_array_equal(vectors[0], vectors[2])  # a repeated text, one vector
    again = first.encode(texts)
    assert first.model_calls == 1
    np.testing.assert_array_equal(again, vectors)
    fresh = Embedder()  # a new process would see the same file
    np.testing.assert_array_equal(fresh.encode(texts), vectors)
    assert fresh.model_calls == 0
    assert fresh._model is None  # the model was never even loaded


def test_cached_vectors_equal_direct_model_output(embedder):
    """The cache returns what sentence-transformers computes, not a rounded copy."""
    vectors = embedder.encode(SENTENCES[:2])
    direct = embedder.model.encode(SENTENCES[:2], normalize_embeddings=True, convert_to_numpy=True)
    np.testing.assert_allclose(vectors, direct, atol=1e-6)


def test_cache_is_keyed_by_model(tmp_path):
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    cache.put_many("model-a", {text_key("hi"): np.ones(3, dtype=np.float32)})
    assert set(cache.get_many("model-a", [text_key("hi")])) == {text_key("hi")}
    assert cache.get_many("model-b", [text_key("hi")]) == {}


def test_embed_corpus_splits_by_conversation(embedder):
    corpus = Corpus([
        Conversation("a", turns=[Turn("s", SENTENCES[0]), Turn("t", SENTENCES[2])]),
        Conversation("b", turns=[Turn("s", SENTENCES[1])]),
    ])
    out = embed_corpus(corpus, embedder)
    direct = embedder.encode([SENTENCES[0], SENTENCES[2], SENTENCES[1]])
    np.testing.assert_array_equal(out["a"], direct[:2])
    np.testing.assert_array_equal(out["b"], direct[2:])


def test_cache_counts_hits_without_reading_vectors(tmp_path):
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    cache.put_many("m", {text_key("a"): np.ones(3), text_key("b"): np.zeros(3)})
    cache.put_many("other", {text_key("c"): np.ones(3)})
    keys = [text_key(t) for t in ("a", "b", "a", "c", "d")]
    assert cache.count("m", keys) == 2  # a and b, each once; c is another model's
    assert cache.count("m", keys) == len(cache.get_many("m", keys))
    assert cache.count("other", keys) == 1 and cache.count("m", []) == 0
