"""Registered features a stored dataset lacks, computed when it is read (``engine.measures.at_read``):
the same values a build writes, cached by build and feature, and a reason for each one it cannot
compute."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.datasets import Dataset
from engine.measures import at_read
from engine.measures.registry import FEATURES, feature_names

REPO = Path(__file__).resolve().parents[3]
LOCAL = REPO / "cached_runs" / "local_smollm2"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "features_at_read"


def stored() -> Dataset:
    return Dataset.load(LOCAL, computed_at_read=False)


def test_a_column_computed_at_read_equals_the_one_the_build_wrote(cache):
    """forward_flow and discursive_diversity were written by the build: with them taken out,
    reading computes them again from the stored turns (speakers from the corpus) to 1e-12."""
    dataset = stored()
    built = dataset.conversations
    without = built.drop(columns=["forward_flow", "discursive_diversity"])
    added = at_read.features_at_read(without, dataset.turn_embeddings, dataset.turn_index,
                                     lambda: dataset.corpus, "build-a")
    for name in ("forward_flow", "discursive_diversity"):
        np.testing.assert_allclose(added.values[name], built[name], rtol=0, atol=1e-12, equal_nan=True)
        assert added.provenance[name]["computed"] == "when the dataset was read"
    assert "corpus.parquet" in added.provenance["discursive_diversity"]["from"]  # it read the speakers
    assert "corpus.parquet" not in added.provenance["forward_flow"]["from"]


def test_values_are_cached_by_build_and_feature_version(cache, monkeypatch):
    dataset = stored()
    table = dataset.conversations
    reads = []

    def corpus():
        reads.append(1)
        return dataset.corpus

    first = at_read.features_at_read(table, dataset.turn_embeddings, dataset.turn_index, corpus, "build-a")
    assert reads == [1] and "mean_words_per_turn" in first.values
    again = at_read.features_at_read(table, dataset.turn_embeddings, dataset.turn_index, corpus, "build-a")
    assert reads == [1]  # from the cache: the corpus is not read again
    assert again.values["mean_words_per_turn"].equals(first.values["mean_words_per_turn"])
    at_read.features_at_read(table, dataset.turn_embeddings, dataset.turn_index, corpus, "build-b")
    assert reads == [1, 1]  # another build: computed again
    # a cached file of other conversations is not taken
    key = at_read.cache_key("build-a", "mean_words_per_turn")
    pd.DataFrame({"conversation_id": ["x"], "value": [1.0]}).to_parquet(cache / f"{key}.parquet")
    at_read.features_at_read(table, dataset.turn_embeddings, dataset.turn_index, corpus, "build-a")
    assert reads == [1, 1, 1]
    # a feature's new version is another key
    import dataclasses

    newer = dataclasses.replace(FEATURES.get("mean_words_per_turn"), version="2")
    monkeypatch.setattr(at_read, "feature", lambda name: newer if name == newer.name else FEATURES.get(name))
    assert at_read.cache_key("build-a", "mean_words_per_turn") != key


def test_a_dataset_without_turn_embeddings_says_which_features_and_why(cache):
    release = Dataset.load(REPO / "cached_runs" / "paper_release")
    lacking = [n for n in feature_names() if n not in pd.read_parquet(
        REPO / "cached_runs" / "paper_release" / "conversations.parquet").columns]
    assert lacking and list(release.not_computed) == lacking
    note = release.not_computed_note()
    assert note == f"Not computed for this dataset: {', '.join(lacking)}: {at_read.NO_EMBEDDINGS}."
    assert "features_at_read" not in release.manifest and not cache.exists()


def test_a_feature_whose_turn_field_the_corpus_lacks_is_named_with_the_reason(cache):
    dataset = stored()
    added = at_read.features_at_read(dataset.conversations, dataset.turn_embeddings, dataset.turn_index,
                                     lambda: None, "build-c")  # no corpus stored
    assert "mean_words_per_turn" not in added.values
    assert added.not_computed["mean_words_per_turn"] == ("the dataset's corpus does not give the text "
                                                         "of every embedded turn, which it needs")


def test_a_feature_that_fails_costs_its_column_only_and_says_why(cache):
    from engine.measures.feature import Feature

    def broken(chunk):
        raise RuntimeError("no such thing")

    FEATURES.register(Feature("broken_test", "Broken", broken, "this test", min_turns=0, description="fails"))
    try:
        dataset = stored()
        added = at_read.features_at_read(dataset.conversations, dataset.turn_embeddings, dataset.turn_index,
                                         lambda: dataset.corpus, "build-d")
    finally:
        FEATURES.unregister("broken_test")
    assert added.not_computed == {"broken_test": "computing it failed (RuntimeError: no such thing)"}
    assert "broken_test" not in added.values and "mean_words_per_turn" in added.values
