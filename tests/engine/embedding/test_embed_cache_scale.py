"""The embedding cache at scale without timing anything: lookups in any order and in chunks
give the same vectors, a lookup's SQLite work does not grow with the cache (it did: the
planner scanned every cached key of the model), the one cache-through path of both
encoders, and its memory (one array, not one Python object per vector)."""

from __future__ import annotations

import sqlite3
import tracemalloc

import numpy as np
import pytest

import engine.embedding.embedder as embed
from engine.embedding.embedder import EmbeddingCache, encode_through_cache, text_key
from engine.llm import BackendError


def _filled(tmp_path, n: int, dim: int = 8, name: str = "c.sqlite"):
    """A cache holding ``n`` vectors ``[i, i+1, ...]`` for the texts ``t{i}``."""
    cache = EmbeddingCache(tmp_path / name)
    vectors = np.arange(n, dtype=np.float32)[:, None] + np.arange(dim, dtype=np.float32)
    cache.put_many("m", {text_key(f"t{i}"): vectors[i] for i in range(n)})
    return cache, vectors


def test_get_many_in_any_order_and_in_chunks_equals_what_was_stored(tmp_path, monkeypatch):
    cache, vectors = _filled(tmp_path, 200)
    order = np.random.default_rng(3).permutation(200)
    keys = [text_key(f"t{i}") for i in order] + [text_key("t5"), text_key("absent")]
    one_shot = cache.get_many("m", keys)
    assert len(one_shot) == 200 and text_key("absent") not in one_shot
    for i in range(200):
        np.testing.assert_array_equal(one_shot[text_key(f"t{i}")], vectors[i])
    monkeypatch.setattr(embed, "LOOKUP_CHUNK", 7)  # 29 joins instead of one
    chunked = cache.get_many("m", keys[::-1])
    assert chunked.keys() == one_shot.keys()
    assert all(np.array_equal(chunked[k], one_shot[k]) for k in one_shot)
    assert cache.count("m", keys) == 200 and cache.count("other", keys) == 0


def _vm_steps(cache: EmbeddingCache, keys) -> int:
    """SQLite virtual-machine steps (in units of 100) that one get_many takes."""
    steps = [0]

    def tick():
        steps[0] += 1
        return 0

    cache._db.set_progress_handler(tick, 100)
    try:
        cache.get_many("m", keys)
    finally:
        cache._db.set_progress_handler(None, 100)
    return steps[0]


def test_a_lookup_costs_the_same_in_a_small_and_a_large_cache(tmp_path):
    """Ten keys looked up among 100 or among 20,000 cached vectors: the same work (a
    search per key). Before, SQLite scanned the model's whole key index for each lookup
    (200 times the steps here), which made a chunked cached pass quadratic."""
    small, _ = _filled(tmp_path, 100, name="small.sqlite")
    large, _ = _filled(tmp_path, 20_000, name="large.sqlite")
    keys = [text_key(f"t{i}") for i in range(0, 100, 10)]
    assert len(large.get_many("m", keys)) == 10
    assert _vm_steps(large, keys) <= 2 * _vm_steps(small, keys) + 2


def test_the_lookup_leaves_no_transaction_open(tmp_path):
    cache, _ = _filled(tmp_path, 10)
    cache.count("m", [text_key("t1")])
    cache.get_many("m", [text_key("t1")])
    assert not cache._db.in_transaction
    other = sqlite3.connect(tmp_path / "c.sqlite", timeout=0)
    other.execute("INSERT INTO vectors VALUES ('m', x'00', 1, x'00000000')")
    other.commit()  # not blocked by a snapshot the cache kept


def test_encode_through_cache_embeds_each_missing_text_once_in_first_order(tmp_path):
    cache, vectors = _filled(tmp_path, 3)
    calls = []

    def embed_missing(texts):
        calls.append(list(texts))
        return [np.full(8, 100 + len(t), dtype=np.float32) for t in texts]

    texts = ["t2", "new-a", "t0", "new-bb", "new-a", "t2"]
    out = encode_through_cache(cache, "m", texts, embed_missing)
    assert calls == [["new-a", "new-bb"]]  # distinct missing texts, first-occurrence order
    assert out.dtype == np.float32 and out.shape == (6, 8)
    np.testing.assert_array_equal(out[[0, 5]], vectors[[2, 2]])
    np.testing.assert_array_equal(out[2], vectors[0])
    np.testing.assert_array_equal(out[[1, 4]], np.full((2, 8), 105.0))
    np.testing.assert_array_equal(out[3], np.full(8, 106.0))
    again = encode_through_cache(cache, "m", texts[::-1], embed_missing)
    assert len(calls) == 1  # all cached now
    np.testing.assert_array_equal(again, out[::-1])


def test_encode_through_cache_refuses_vectors_of_two_sizes(tmp_path):
    cache, _ = _filled(tmp_path, 2)
    with pytest.raises(BackendError, match=r"different sizes \[4, 8\]"):
        encode_through_cache(cache, "m", ["t0", "new"], lambda texts: [np.ones(4)] * len(texts))
    with pytest.raises(BackendError, match="1 vectors for 2 texts"):
        encode_through_cache(cache, "m", ["t0", "x", "y"], lambda texts: [np.ones(8)])


def test_a_cached_pass_holds_one_array_not_an_object_per_vector(tmp_path, monkeypatch):
    """20,000 cached 384-d vectors (30.7 MB as one float32 array): the pass's peak traced
    memory stays within 25 % of that array. Holding every vector as its own array (and
    the bytes it was read from) before assembling them took twice as much."""
    n, dim = 20_000, 384
    cache = EmbeddingCache(tmp_path / "big.sqlite")
    rng = np.random.default_rng(0)
    stored = rng.standard_normal((n, dim)).astype(np.float32)
    texts = [f"t{i}" for i in range(n)]
    cache.put_many("m", {text_key(t): stored[i] for i, t in enumerate(texts)})
    monkeypatch.setattr(embed, "LOOKUP_CHUNK", 1024)
    tracemalloc.start()
    try:
        out = encode_through_cache(cache, "m", texts, lambda missing: pytest.fail("all cached"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(out, stored)
    assert peak < 1.25 * stored.nbytes, peak / stored.nbytes
