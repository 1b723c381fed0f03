"""An embedding server's replies are checked before a vector is used or cached: the count,
the indexes, the values (numbers, finite), the size (non-empty, the same for every text and
as the cache holds) and the direction (an all-zero vector is refused: every cosine with it
would be 0 and the features 0.0). A failure, or a dead server after the retries, ends the
command with exit 2 and one line naming the server; nothing is written or cached."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.loopback_server import EMBEDDING_FAULTS, LoopbackServer, embedding_of
from engine.corpus import Conversation, Corpus, Turn
from engine.llm.retry import RetryPolicy
from tests.support.cli_run import cli, refused

TEXTS = ["a first idea", "a second idea", "a third idea", "a fourth idea"]


@pytest.fixture
def corpus_path(tmp_path):
    corpus = Corpus([Conversation("c1", [Turn("A" if i % 2 else "B", text) for i, text in enumerate(TEXTS)])])
    return corpus.to_jsonl(tmp_path / "corpus.jsonl")


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    """The embedder's retries without their waits (a dead server is retried, then named)."""
    import engine.embedding.openai_endpoint

    monkeypatch.setattr(engine.embedding.openai_endpoint, "RetryPolicy",
                        lambda max_attempts=6, **_: RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02))


def features(corpus_path, url, cache, *extra):
    return cli(["features", corpus_path, "--embed-base-url", url, "--embed-model", "m", "--cache", cache,
                "--no-progress", "-o", corpus_path.parent / "features.csv", *extra])


@pytest.mark.parametrize("fault", [f for f in EMBEDDING_FAULTS if f != "emb_resized"])
def test_an_unusable_reply_is_one_line_naming_the_server(corpus_path, tmp_path, fault):
    with LoopbackServer(script=[fault] * 10, lifetime=60) as server:
        outcome = features(corpus_path, server.base_url, tmp_path / "cache.sqlite")
        assert server.requests == 1  # not asked again: the same server gives the same answer
    refused(outcome, server.base_url, "unusable reply")
    assert not (tmp_path / "features.csv").exists()
    assert cached_vectors(tmp_path / "cache.sqlite") == 0


def cached_vectors(path) -> int:
    import sqlite3

    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]


def test_a_dead_server_is_named_after_the_retries(corpus_path, tmp_path):
    with LoopbackServer(lifetime=5) as server:
        url = server.base_url
    outcome = features(corpus_path, url, tmp_path / "cache.sqlite")
    refused(outcome, url, "gave up after 2 attempts")


def test_vectors_of_another_size_than_the_cached_ones_are_refused(corpus_path, tmp_path):
    cache = tmp_path / "cache.sqlite"
    with LoopbackServer(lifetime=60) as server:
        assert features(corpus_path, server.base_url, cache, "--batch-size", "2").code == 0
        more = Corpus([Conversation("c2", [Turn("A", "a new text"), Turn("B", "another new text"),
                                           Turn("A", "a first idea")])])
        more_path = more.to_jsonl(tmp_path / "more.jsonl")
        server.script = ["emb_resized"] * 5  # the server now runs another model, same name
        outcome = features(more_path, server.base_url, cache)
    refused(outcome, server.base_url, "different sizes", "[8, 11]")


def test_sizes_changing_between_batches_of_one_run_are_refused(corpus_path, tmp_path):
    with LoopbackServer(script=["ok", "emb_resized"], lifetime=60) as server:
        outcome = features(corpus_path, server.base_url, tmp_path / "cache.sqlite", "--batch-size", "2",
                           "--embed-concurrency", "1")
    refused(outcome, server.base_url, "different sizes")


def test_a_good_reply_gives_the_server_vectors_normalised(corpus_path, tmp_path):
    cache = tmp_path / "cache.sqlite"
    with LoopbackServer(lifetime=60) as server:
        outcome = cli(["embed", corpus_path, tmp_path / "e.npy", "--embed-base-url", server.base_url,
                       "--embed-model", "m", "--cache", cache, "--no-progress"])
    assert outcome.code == 0, outcome.err
    vectors = np.load(tmp_path / "e.npy")
    expected = np.array([embedding_of(t) for t in TEXTS], dtype=np.float64)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)


def test_strings_that_look_like_numbers_are_not_taken_as_vectors(corpus_path, tmp_path):
    # "0.25" is not an embedding: converting it would hide a server speaking another format
    with LoopbackServer(script=["emb_strings"], lifetime=60) as server:
        outcome = features(corpus_path, server.base_url, tmp_path / "cache.sqlite")
    refused(outcome, "non-numbers")
