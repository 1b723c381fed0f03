"""The pieces of the Ray commands that need no cluster: shards of conversations, the driver's
reply broker, the tallies, usage added from a worker, and the options' errors. The real
two-node cluster is ``tests/engine/cluster/test_ray_cluster.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.llm.base import ChatResult, Usage
from engine.llm.cache import ResponseCache
from engine.cluster.connection import Tally
from engine.cluster.features import shard_bounds
from engine.cluster.sessions import ResponseBroker, write_replies

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("lengths, turns, expected", [
    ([3, 3, 3, 3], 6, [(0, 2), (2, 4)]),
    ([3, 3, 3, 3], 7, [(0, 2), (2, 4)]),   # 9 turns would pass 7: the third starts a shard
    ([10, 1, 1], 5, [(0, 1), (1, 3)]),      # a long conversation is never split
    ([1, 1, 1], 100, [(0, 3)]),
    ([], 5, []),
])
def test_shards_cut_conversations_in_order_without_splitting_one(lengths, turns, expected):
    assert shard_bounds(lengths, turns) == expected


def test_the_broker_answers_from_the_cache_file_and_from_new_replies_and_counts_repeats(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache.put("k-old", "openai:m", "ph", ChatResult(text="old reply", prompt_tokens=3, completion_tokens=2,
                                                    latency_s=0.5))
    broker = ResponseBroker(str(cache.path))
    assert broker.get("k-old") == ("k-old", "openai:m", "ph", "old reply", 3, 2, 0.5)
    assert broker.get("k-new") is None
    row = ("k-new", "openai:m", "ph2", "new reply", 4, 5, 0.1)
    broker.put(row)
    broker.put(row)  # the same request answered twice (a lost attempt ran again)
    assert broker.get("k-new") == row
    assert broker.counts() == {"calls": 2, "repeated": 1}
    drained = broker.drain()
    assert drained == [row] and broker.drain() == []
    assert broker.get("k-new") == row  # still answered after the driver took it
    write_replies(cache, drained)
    hit = ResponseCache(tmp_path / "cache.sqlite").get("k-new")
    assert (hit.text, hit.prompt_tokens, hit.completion_tokens) == ("new reply", 4, 5)


def test_the_broker_never_writes_the_cache_file(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache.close()
    before = (tmp_path / "cache.sqlite").read_bytes()
    broker = ResponseBroker(str(tmp_path / "cache.sqlite"))
    broker.put(("k", "i", "p", "t", 1, 1, 0.0))
    broker.get("k")
    broker.drain()
    assert (tmp_path / "cache.sqlite").read_bytes() == before
    with pytest.raises(Exception):  # opened read-only
        broker._db.execute("DELETE FROM responses")


def test_a_tally_sums_per_kind_and_names_the_nodes():
    tally = Tally()
    tally.add("texts", 8, "node-a")
    tally.add("texts", 5, "node-b")
    tally.add("calls", 1, "node-a")
    assert tally.totals() == {"counts": {"texts": 13, "calls": 1},
                              "nodes": {"texts": ["node-a", "node-b"], "calls": ["node-a"]}}


def test_usage_counted_on_a_worker_is_added_to_the_drivers():
    usage = Usage(calls=2, prompt_tokens=10)
    usage.merge({"calls": 3, "cache_hits": 1, "prompt_tokens": 7, "completion_tokens": 4, "unknown": 9})
    assert usage.as_dict() == {"calls": 5, "cache_hits": 1, "retries": 0, "failures": 0,
                               "prompt_tokens": 17, "completion_tokens": 4, "lone_surrogates_replaced": 0}


def cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("argv, field", [
    (["embed", "c.jsonl", "e.npy", "--ray", "auto", "--embed-base-url", "http://127.0.0.1:9/v1"], "--ray"),
    (["embed", "c.jsonl", "e.npy", "--ray", "auto", "--ray-batch-size", "0"], "--ray-batch-size"),
    (["embed", "c.jsonl", "e.npy", "--ray", "auto", "--ray-actors", "0"], "--ray-actors"),
    (["features", "e.npy", "--ray", "auto", "--ray-shard-turns", "0"], "--ray-shard-turns"),
    (["embed", "c.jsonl", "e.npy", "--embed-backend", "onnx", "--embed-base-url", "http://127.0.0.1:9/v1"],
     "--embed-backend"),
])
def test_ray_and_backend_option_mistakes_are_one_line_and_exit_2(argv, field):
    result = cli(*argv)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and field in lines[0]


def test_shards_of_one_machines_chunks_give_its_features_bit_for_bit():
    """Every value as one process computes it: the shards carry the same equal-length
    chunks (numpy may round a reduction differently over another batch: 4e-16 was seen when
    each shard was computed as a corpus of its own)."""
    import numpy as np

    from engine.measures.compute import features_for_corpus
    from engine.cluster.features import feature_shard, shards_of_chunks

    rng = np.random.default_rng(0)
    conversations = [rng.normal(size=(int(rng.integers(1, 12)), 16)).astype(np.float32) for _ in range(300)]
    expected = features_for_corpus(conversations).to_numpy()
    got = np.full_like(expected, np.nan)
    shards = list(shards_of_chunks(conversations, 40))
    for shard in shards:
        assert all(chunk.dtype == np.float32 for _, chunk in shard)  # shipped as read
        for (positions, _), values in zip(shard, feature_shard([c for _, c in shard], "batched")):
            got[positions] = values
    assert len(shards) > 5
    assert np.array_equal(got, expected, equal_nan=True)


def test_shards_carry_the_turn_fields_of_their_chunks_that_features_need():
    """Discursive diversity needs who spoke each turn, mean words per turn what was said: each
    chunk's turn fields go with it, so a worker's table equals one machine's, every registered
    feature included; a feature needing a field not given is refused before any shard."""
    import numpy as np

    from engine.cluster.features import feature_shard, shards_of_chunks
    from engine.measures.compute import features_for_corpus, needed_fields, turns_of
    from engine.measures.registry import feature_names, features

    rng = np.random.default_rng(1)
    conversations = [rng.normal(size=(int(rng.integers(1, 12)), 16)).astype(np.float32) for _ in range(200)]
    words = ["idea", "plan", "  ", "a\nb", "ça"]
    values = {"speaker": lambda: f"agent {int(rng.integers(0, 3))}",
              "text": lambda: " ".join(rng.choice(words, size=int(rng.integers(0, 6))))}
    turns = {field: [[values.get(field, lambda: f"{field} value")() for _ in c] for c in conversations]
             for field in needed_fields(features())}
    assert {"speaker", "text"} <= set(turns)
    expected = features_for_corpus(conversations, turns=turns)
    assert list(expected.columns) == list(feature_names())
    got = np.full(expected.shape, np.nan)
    for shard in shards_of_chunks(conversations, 40):
        chunk_turns = [turns_of(turns, positions) for positions, _ in shard]
        values = feature_shard([c for _, c in shard], "batched", None, list(expected.columns), None, chunk_turns)
        for (positions, _), block in zip(shard, values):
            got[positions] = block
    assert np.array_equal(got, expected.to_numpy(), equal_nan=True)
    assert np.isfinite(expected["discursive_diversity"]).sum() > 100
    # the words of one conversation counted here: the shards carried its texts
    first = turns["text"][0]
    assert got[0, list(expected.columns).index("mean_words_per_turn")] == np.mean([len(t.split()) for t in first])


def test_a_feature_whose_turn_field_is_not_given_is_refused_before_any_shard():
    import numpy as np
    import pytest

    from engine.cluster.features import features_on_cluster

    with pytest.raises(ValueError, match="mean_words_per_turn needs the text of every turn"):
        features_on_cluster(None, [np.eye(3)], names=["mean_words_per_turn"])


HEAD_LOST = """
import socket, time
from engine.cluster.connection import HeadWatch
server = socket.create_server(("127.0.0.1", 0))
port = server.getsockname()[1]
watch = HeadWatch(f"127.0.0.1:{port}", lost_after=0.6, poll=0.1)
watch.start()
time.sleep(0.5)
print("head answering", flush=True)
server.close()  # the head's control port goes away
time.sleep(30)
print("not stopped")
"""


def test_a_lost_head_stops_the_command_with_one_line_and_status_2():
    result = subprocess.run([sys.executable, "-c", HEAD_LOST], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert result.stdout.strip() == "head answering"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: lost the Ray head at 127.0.0.1:")
    assert "re-run with --ray ADDRESS or without --ray to resume" in lines[0]


# -- the embedder's passes: what goes out again when Ray gives up on a lost actor ----------

def row_vectors(rows) -> "np.ndarray":
    """A vector that names its row: (row, row + 0.5, -row)."""
    import numpy as np

    rows = np.asarray(rows, dtype=np.float32)
    return np.stack([rows, rows + 0.5, -rows], axis=1)


class ScriptedPasses:
    """``run_pass`` for ``embed_in_passes``: pass k returns the batches scripted for it (each
    a list of rows, only rows it was sent), then ends with ``ActorDiedError`` when scripted;
    it records which rows each pass was sent."""

    def __init__(self, script):
        self.script, self.sent = script, []

    def __call__(self, rows):
        import ray

        batches, dies = self.script[len(self.sent)]
        self.sent.append([int(r) for r in rows])
        for batch in batches:
            assert set(batch) <= set(self.sent[-1])
            yield batch, row_vectors(batch)
        if dies:
            raise ray.exceptions.ActorDiedError()


def gather(script, n=10, passes=3):
    from engine.cluster.embedding import embed_in_passes

    stored: list[int] = []
    run = ScriptedPasses(script)
    out, lost = embed_in_passes(n, run, lambda rows, vectors: stored.extend(int(r) for r in rows),
                                passes=passes)
    return out, lost, run.sent, stored


def test_a_pass_ended_by_a_lost_actor_sends_again_only_the_texts_not_returned(capsys):
    import numpy as np

    # pass 1 returns rows 0-2 (twice: a batch Ray ran again) and 5-6, then the actor is lost
    out, lost, sent, stored = gather([([[0, 1, 2], [5, 6], [0, 1, 2]], True),
                                      ([[3, 4, 7], [8, 9]], False)])
    assert sent == [list(range(10)), [3, 4, 7, 8, 9]]
    assert np.array_equal(out, row_vectors(range(10)))
    assert sorted(stored) == list(range(10))  # each row stored once
    assert lost == 1
    assert capsys.readouterr().err.strip() == (
        "note: embedding on Ray: ActorDiedError (a node or actor lost) after 5 of 10 texts; "
        "the other 5 sent again (pass 2 of at most 3)")


def test_a_lost_actor_reported_after_every_text_came_back_ends_the_job_normally(capsys):
    import numpy as np

    out, lost, sent, stored = gather([([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]], True)])
    assert sent == [list(range(10))]  # no second pass
    assert np.array_equal(out, row_vectors(range(10))) and sorted(stored) == list(range(10))
    assert lost == 1
    assert capsys.readouterr().err.strip() == (
        "note: embedding on Ray: ActorDiedError (a node or actor lost) after all 10 texts were "
        "returned and stored; nothing to send again")


def test_when_every_pass_loses_an_actor_the_error_goes_up_and_what_came_back_stays(capsys):
    import ray

    from engine.cluster.embedding import embed_in_passes

    stored: list[int] = []
    run = ScriptedPasses([([[0, 1]], True), ([[2, 3]], True), ([[4]], True)])
    with pytest.raises(ray.exceptions.ActorDiedError) as raised:
        embed_in_passes(10, run, lambda rows, vectors: stored.extend(int(r) for r in rows), passes=3)
    assert raised.value.lost_passes == 3
    assert run.sent == [list(range(10)), list(range(2, 10)), list(range(4, 10))]
    assert stored == [0, 1, 2, 3, 4]
    notes = capsys.readouterr().err.strip().splitlines()
    assert notes[-1] == ("note: embedding on Ray: ActorDiedError (a node or actor lost) after 5 of 10 "
                         "texts; the other 5 not embedded after 3 passes (what was returned is "
                         "stored: a re-run makes only the rest)")
    assert [n.split("; ")[1] for n in notes[:2]] == ["the other 8 sent again (pass 2 of at most 3)",
                                                     "the other 6 sent again (pass 3 of at most 3)"]


def test_a_pass_that_ends_without_error_but_short_is_an_error_not_a_quiet_gap():
    from engine.llm.errors import BackendError

    with pytest.raises(BackendError, match="the cluster returned 3 of 10 embeddings"):
        gather([([[0, 1, 2]], False)])
