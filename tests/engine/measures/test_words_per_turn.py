"""``mean_words_per_turn``: the mean over a conversation's turns of ``len(text.split())``,
against word counts done by hand (empty turns, runs of spaces, newlines, tabs, unicode), in
process, through ``python -m engine features`` and read from a dataset built before it."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from engine.measures.compute import features_for_corpus
from engine.measures.registry import feature
from engine.measures.words_per_turn import MEAN_WORDS_PER_TURN

# (text, its words counted by hand)
TURNS = [
    ("", 0),                                   # an empty turn
    ("   ", 0),                                # blanks only
    ("one", 1),
    ("  several   spaces  between ", 3),       # runs of spaces, leading and trailing
    ("line one\nline two\n\n", 4),             # newlines, a blank line
    ("tab\tseparated\r\nand crlf", 4),         # a tab, CR LF
    ("naïve café — déjà vu", 5),               # accented letters; the dash stands alone: a word
    ("日本語のテキスト", 1),                     # no space: one word
    ("emoji 🙂 counts", 3),
    ("a\u00a0b", 2),                            # a no-break space separates, as str.split says
    ("trailing punctuation, too!", 3),
]


def mean_words(texts: list[str], n_turns: int) -> float:
    return features_for_corpus([np.eye(n_turns, 3)], turns={"text": [texts]},
                               names=["mean_words_per_turn"])["mean_words_per_turn"][0]


def test_each_turn_counts_the_words_counted_by_hand():
    for text, words in TURNS:
        assert mean_words([text], 1) == words, repr(text)


def test_a_conversation_is_the_mean_of_its_turns():
    # 0 + 3 + 4 = 7 words over 3 turns
    assert mean_words(["", "  several   spaces  between ", "line one\nline two\n\n"], 3) == pytest.approx(7 / 3)
    # all eleven: 0+0+1+3+4+4+5+1+3+2+3 = 26 words over 11 turns
    texts = [t for t, _ in TURNS]
    assert mean_words(texts, len(texts)) == pytest.approx(26 / 11)


def test_many_conversations_of_mixed_lengths_keep_their_order():
    conversations = [["a b", "c"], ["one two three"], ["x", "", "y z", "w"]]
    arrays = [np.ones((len(c), 2)) for c in conversations]
    table = features_for_corpus(arrays, turns={"text": conversations}, names=["mean_words_per_turn"], chunk=1)
    assert table["mean_words_per_turn"].tolist() == pytest.approx([3 / 2, 3.0, 4 / 4])


def test_no_turn_is_undefined_and_no_text_is_refused():
    empty = features_for_corpus([np.zeros((0, 2))], turns={"text": [[]]}, names=["mean_words_per_turn"])
    assert math.isnan(empty["mean_words_per_turn"][0])
    with pytest.raises(ValueError, match="mean_words_per_turn needs the text of every turn"):
        features_for_corpus([np.eye(2)], names=["mean_words_per_turn"])
    # every feature the input allows: without texts it is left out, not NaN
    assert "mean_words_per_turn" not in features_for_corpus([np.eye(2)]).columns


def test_its_facts():
    """A mean over turns: saying the same turns twice as often does not change it."""
    assert feature("mean_words_per_turn") is MEAN_WORDS_PER_TURN
    assert MEAN_WORDS_PER_TURN.needs == ("text",) and not MEAN_WORDS_PER_TURN.needs_speakers
    assert MEAN_WORDS_PER_TURN.grows_with_length is False and MEAN_WORDS_PER_TURN.paper_a is False
    texts = ["a b c", "d"]
    assert mean_words(texts * 2, 4) == mean_words(texts, 2) == 2.0


def test_the_features_command_gives_it(tmp_path, monkeypatch):
    """``python -m engine features corpus.jsonl`` on an embedding cache filled beforehand (no model)."""
    from engine.cli import main
    from engine.corpus import Conversation, Corpus, Turn
    from engine.embedding.embedder import DEFAULT_MODEL, EmbeddingCache, text_key

    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
    talks = {"a": ["  several   spaces  between ", "line one\nline two\n\n", "one"],
             "b": ["naïve café — déjà vu", "日本語のテキスト"]}
    cache = EmbeddingCache(tmp_path / "cache" / "embeddings.sqlite")
    texts = [t for turns in talks.values() for t in turns]
    cache.put_many(DEFAULT_MODEL, {text_key(t): np.eye(len(texts), dtype=np.float32)[i] for i, t in enumerate(texts)})
    cache.close()
    corpus = Corpus([Conversation(cid, turns=[Turn(f"agent {i % 2}", t) for i, t in enumerate(turns)])
                     for cid, turns in talks.items()])
    out = tmp_path / "features.json"
    assert main(["features", str(corpus.write(tmp_path / "corpus.jsonl")), "-o", str(out), "--no-progress"]) == 0
    rows = {r["conversation_id"]: r for r in json.loads(out.read_text())}
    assert rows["a"]["mean_words_per_turn"] == pytest.approx((3 + 4 + 1) / 3)
    assert rows["b"]["mean_words_per_turn"] == pytest.approx((5 + 1) / 2)


def test_a_dataset_built_before_it_gains_it_when_read(tmp_path, monkeypatch):
    """The cached local dataset has no such column: reading it computes one from the turns
    its embeddings are of (the corpus's texts), caches it and says where it comes from."""
    import shutil
    from pathlib import Path

    from engine.corpus import Corpus
    from engine.datasets import Dataset

    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
    source = Path(__file__).resolve().parents[3] / "cached_runs" / "local_smollm2"
    stored = pd.read_parquet(source / "conversations.parquet")
    assert "mean_words_per_turn" not in stored.columns  # built before it existed
    folder = tmp_path / "local_smollm2"
    shutil.copytree(source, folder)
    dataset = Dataset.load(folder)
    index = pd.read_parquet(folder / "turn_index.parquet")
    cid = dataset.conversations.loc[dataset.conversations["n_turns"] >= 3, "conversation_id"].iloc[0]
    positions = sorted(index.loc[index["conversation_id"] == cid, "turn"])
    turns = [{"text": t.text} for t in Corpus.from_parquet(folder / "corpus.parquet")[cid].turns]
    expected = np.mean([len(turns[p]["text"].split()) for p in positions])
    got = dataset.conversations.loc[dataset.conversations["conversation_id"] == cid, "mean_words_per_turn"].item()
    assert got == pytest.approx(expected)
    said = dataset.manifest["features_at_read"]["mean_words_per_turn"]
    assert said["computed"] == "when the dataset was read" and "turn_embeddings.npy" in said["from"]
    assert said["by"]["project"] == "creativity-dynamics-lab"
    assert list((tmp_path / "cache" / "features_at_read").glob("*.parquet"))  # cached on disk
    # a second read takes the cached values; the folder itself is never written
    assert Dataset.load(folder).conversations["mean_words_per_turn"].equals(dataset.conversations["mean_words_per_turn"])
    assert pd.read_parquet(folder / "conversations.parquet").columns.tolist() == stored.columns.tolist()
