"""An embeddings file and its index are a verified pair: a kill between writing them (new
vectors beside the old index) is refused by ``features``; temp files of killed writers go."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from engine.cli import main
from engine.corpus import Conversation, Corpus, Turn, atomic_write_text
from engine.embedding.embedder import DEFAULT_MODEL, EmbeddingCache, text_key


def _corpus(tag: str) -> Corpus:
    return Corpus([Conversation(f"{tag}{c}", [Turn("A", f"{tag} text {c}.{t}") for t in range(3)])
                   for c in range(2)])


def _prefilled_cache(path, corpora) -> str:
    """Vectors for every text, so `embed` needs no model: unit vectors, one per text."""
    cache = EmbeddingCache(path)
    rng = np.random.default_rng(0)
    items = {}
    for corpus in corpora:
        for conversation in corpus:
            for turn in conversation.turns:
                v = rng.normal(size=8).astype(np.float32)
                items[text_key(turn.text)] = v / np.linalg.norm(v)
    cache.put_many(DEFAULT_MODEL, items)
    cache.close()
    return str(path)


def test_new_vectors_beside_an_old_index_are_refused(tmp_path, capsys):
    a, b = _corpus("a"), _corpus("b")
    a.to_jsonl(tmp_path / "a.jsonl")
    b.to_jsonl(tmp_path / "b.jsonl")
    cache = _prefilled_cache(tmp_path / "cache.sqlite", [a, b])
    npy, index = tmp_path / "turn_embeddings.npy", tmp_path / "turn_index.parquet"
    assert main(["embed", str(tmp_path / "a.jsonl"), str(npy), "--cache", cache, "--no-progress"]) == 0
    index_of_a = index.read_bytes()
    assert main(["features", str(npy), "--no-progress"]) == 0
    assert capsys.readouterr().out.count("\na") == 2  # rows labelled a0, a1
    assert main(["embed", str(tmp_path / "b.jsonl"), str(npy), "--cache", cache, "--no-progress"]) == 0
    # the state a kill between the two writes leaves: corpus b's vectors, corpus a's index
    index.write_bytes(index_of_a)
    capsys.readouterr()
    assert main(["features", str(npy), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert str(index) in err and "does not belong to turn_embeddings.npy" in err
    # a complete pair of b reads back with b's ids
    assert main(["embed", str(tmp_path / "b.jsonl"), str(npy), "--cache", cache, "--no-progress"]) == 0
    assert main(["features", str(npy), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "\nb0," in out and "\nb1," in out and "\na0," not in out


def test_an_index_from_an_older_version_is_read_with_a_warning(tmp_path, capsys):
    vectors = np.eye(4, dtype=np.float32)
    np.save(tmp_path / "x.npy", vectors)
    pd.DataFrame({"conversation_id": ["c", "c", "d", "d"], "turn": [0, 1, 0, 1]}).to_parquet(
        tmp_path / "x_index.parquet", index=False)
    assert main(["features", str(tmp_path / "x.npy"), "--no-progress"]) == 0
    assert "records no hash of its embeddings" in capsys.readouterr().err


def test_a_dataset_with_a_mismatched_pair_is_refused(tmp_path):
    from engine.datasets import Dataset
    from engine.errors import InputError

    frame = pd.DataFrame({"conversation_id": ["c"]})
    index = pd.DataFrame({"conversation_id": ["c", "c"], "turn": [0, 1]})
    Dataset("d", frame, turn_embeddings=np.eye(2, dtype=np.float32), turn_index=index).save(tmp_path)
    assert Dataset.load(tmp_path).turn_embeddings.shape == (2, 2)
    np.save(tmp_path / "turn_embeddings.npy", np.eye(2, dtype=np.float32)[::-1])  # a half-done save
    with pytest.raises(InputError, match="does not belong"):
        Dataset.load(tmp_path)


def test_temp_files_of_killed_writers_are_removed(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".out.json.tmp-{dead.pid}-abc123"
    stale.write_text("half")
    alive = tmp_path / f".out.json.tmp-{os.getppid()}-def456"  # a live writer's: kept
    alive.write_text("busy")
    atomic_write_text(tmp_path / "out.json", "{}\n")
    assert (tmp_path / "out.json").read_text() == "{}\n"
    assert not stale.exists() and alive.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [alive.name, "out.json"]


@pytest.mark.slow
def test_no_progress_prints_no_bar_while_loading_the_model(tmp_path):
    _corpus("q").to_jsonl(tmp_path / "q.jsonl")
    result = subprocess.run([sys.executable, "-m", "engine", "embed", str(tmp_path / "q.jsonl"),
                             str(tmp_path / "q.npy"), "--cache", str(tmp_path / "empty.sqlite"),
                             "--no-progress"], capture_output=True, text=True, timeout=300,
                            cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert result.returncode == 0, result.stderr
    assert "Loading weights" not in result.stderr and "it/s" not in result.stderr, result.stderr


def test_two_processes_sharing_the_cache_can_both_write_after_reading(tmp_path):
    """A read left an implicit transaction open: the reader's next write failed at once with
    'database is locked' when another connection (another process) had written meanwhile."""
    import numpy as np

    from engine.embedding.embedder import EmbeddingCache

    path = tmp_path / "embeddings.sqlite"
    first, second = EmbeddingCache(path), EmbeddingCache(path)
    vector = np.arange(3, dtype=np.float32)
    assert first.get_many("m", [b"a"]) == {}
    second.put_many("m", {b"b": vector})
    first.put_many("m", {b"c": vector})  # raised sqlite3.OperationalError before the fix
    found = second.get_many("m", [b"b", b"c"])
    assert sorted(found) == [b"b", b"c"] and np.array_equal(found[b"c"], vector)
