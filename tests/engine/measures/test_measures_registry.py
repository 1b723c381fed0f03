"""The feature registry, and the two measures it adds beside paper A's nine.

forward flow (Gray et al. 2019) and discursive diversity (Lix et al. 2022) are checked
against hand-worked values and against loops written here from their definitions; paper A's
nine are checked bit for bit against the values the code before the registry computed
(``tests/data/nine_features_before_registry.parquet``, made from the cached datasets' turn
embeddings by that code).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.measures.compute import features_for_corpus
from engine.measures.feature import Feature
from engine.measures.registry import FEATURES, feature_names
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.registry import Registry, Source

REPO = Path(__file__).resolve().parents[3]


def cosine_distance(u, v) -> float:
    return 1.0 - float(np.dot(u, v)) / (math.sqrt(float(np.dot(u, u))) * math.sqrt(float(np.dot(v, v))))


def forward_flow_by_definition(turns) -> float:
    """Gray et al. (2019): mean over t >= 2 of the mean distance of turn t to every earlier turn."""
    if len(turns) < 2:
        return math.nan
    flows = []
    for t in range(1, len(turns)):
        flows.append(sum(cosine_distance(turns[t], turns[i]) for i in range(t)) / t)
    return sum(flows) / len(flows)


def discursive_diversity_by_definition(turns, speakers) -> float:
    """Lix et al. (2022): mean pairwise cosine distance of the speakers' centroids of unit turns."""
    centroids = {}
    for vector, speaker in zip(turns, speakers):
        unit = np.asarray(vector, float) / math.sqrt(float(np.dot(vector, vector)))
        centroids.setdefault(speaker, []).append(unit)
    means = [np.mean(vectors, axis=0) for _, vectors in sorted(centroids.items())]
    pairs = [(a, b) for i, a in enumerate(means) for b in means[i + 1:]]
    if not pairs:
        return math.nan
    return sum(cosine_distance(a, b) for a, b in pairs) / len(pairs)


def one(turns, speakers=None) -> pd.Series:
    table = features_for_corpus([np.asarray(turns, float)],
                                speakers=None if speakers is None else [speakers])
    return table.iloc[0]


# ----------------------------------------------------------------------------- hand-worked
def test_forward_flow_by_hand():
    # two orthogonal turns: one step of distance 1
    assert one([[1, 0], [0, 1]])["forward_flow"] == pytest.approx(1.0, abs=1e-12)
    # back to the start: t=2 flow 1; t=3 mean(d=0 to turn 1, d=1 to turn 2) = 0.5; mean 0.75
    assert one([[1, 0], [0, 1], [1, 0]])["forward_flow"] == pytest.approx(0.75, abs=1e-12)
    # ties: the same idea said three times flows nowhere
    assert one([[3, 4], [3, 4], [6, 8]])["forward_flow"] == pytest.approx(0.0, abs=1e-12)
    # opposite turns are distance 2
    assert one([[1, 0], [-1, 0]])["forward_flow"] == pytest.approx(2.0, abs=1e-12)
    # below two turns it is undefined
    assert math.isnan(one([[1, 0]])["forward_flow"])


def test_discursive_diversity_by_hand():
    # A says (1,0) twice, B says (0,1): centroids orthogonal, distance 1
    row = one([[1, 0], [0, 1], [1, 0]], ["A", "B", "A"])
    assert row["discursive_diversity"] == pytest.approx(1.0, abs=1e-12)
    # three speakers at (1,0), (0,1), (-1,0): pairs 1, 2, 1 -> 4/3
    row = one([[1, 0], [0, 1], [-1, 0]], ["A", "B", "C"])
    assert row["discursive_diversity"] == pytest.approx(4 / 3, abs=1e-12)
    # turns are made unit before averaging: A = unit(2,0) and unit(0,1) -> (0.5, 0.5); B = (0,1)
    row = one([[2, 0], [0, 1], [0, 3]], ["A", "A", "B"])
    assert row["discursive_diversity"] == pytest.approx(1 - 1 / math.sqrt(2), abs=1e-12)
    # one speaker: undefined; two turns, two speakers saying the same: 0 (a tie)
    assert math.isnan(one([[1, 0], [0, 1], [1, 1]], ["A", "A", "A"])["discursive_diversity"])
    assert one([[1, 2], [2, 4]], ["A", "B"])["discursive_diversity"] == pytest.approx(0.0, abs=1e-12)


def test_both_equal_the_definitions_on_many_conversations_to_1e_9():
    rng = np.random.default_rng(11)
    conversations, speakers = [], []
    for _ in range(300):
        n = int(rng.integers(1, 14))
        turns = rng.normal(size=(n, 12))
        if n > 2 and rng.random() < 0.3:
            turns[1] = turns[0] * 2.5  # a tie: the same direction again
        conversations.append(turns)
        speakers.append([f"agent {int(s)}" for s in rng.integers(0, int(rng.integers(1, 4)), size=n)])
    table = features_for_corpus(conversations, speakers=speakers, chunk=7)
    ff = np.array([forward_flow_by_definition(c) for c in conversations])
    dd = np.array([discursive_diversity_by_definition(c, s) for c, s in zip(conversations, speakers)])
    np.testing.assert_allclose(table["forward_flow"], ff, rtol=0, atol=1e-9)
    np.testing.assert_allclose(table["discursive_diversity"], dd, rtol=0, atol=1e-9)
    assert np.isnan(table["discursive_diversity"]).sum() == np.isnan(dd).sum() > 0  # one-speaker talks


def test_speaker_measures_are_left_out_without_speakers_and_refused_when_asked_for():
    table = features_for_corpus([np.eye(3)])
    assert list(table.columns) == [*PAPER_A_FEATURES, "forward_flow"]
    with pytest.raises(ValueError, match="discursive_diversity"):
        features_for_corpus([np.eye(3)], names=["discursive_diversity"])


# ----------------------------------------------------------------------------- paper A's nine
def test_the_nine_equal_the_code_before_the_registry():
    """Bit-identical under the numpy the golden file was made with; another numpy build may
    round a reduction differently in the last bits (seen: 1e-15, convergence ratio 1.4e-12),
    so the check is to 1e-10 relative: any change of the computation is far larger."""
    golden = pd.read_parquet(REPO / "tests/data/nine_features_before_registry.parquet")
    for name, expected in golden.groupby("dataset", sort=False):
        emb = np.load(REPO / "cached_runs" / name / "turn_embeddings.npy")
        index = pd.read_parquet(REPO / "cached_runs" / name / "turn_index.parquet")
        rows = {c: g.sort_values("turn").index.to_numpy() for c, g in index.groupby("conversation_id")}
        arrays = [emb[rows[c]] for c in expected["conversation_id"]]
        table = features_for_corpus(arrays)
        for column in PAPER_A_FEATURES:
            np.testing.assert_allclose(table[column].to_numpy(), expected[column].to_numpy(), rtol=1e-10,
                                       atol=1e-12, equal_nan=True, err_msg=f"{name} {column}")


def test_the_registry_lists_paper_a_first_then_the_two_measures():
    assert feature_names()[:11] == (*PAPER_A_FEATURES, "forward_flow", "discursive_diversity")
    assert [FEATURES.get(n).paper_a for n in feature_names()[:11]] == [True] * 9 + [False, False]


# ----------------------------------------------------------------------------- the registry
def test_a_feature_registered_in_process_is_computed_and_a_clash_is_refused():
    registry = Registry("feature", "creativity_lab.test-none", accepts=Feature)

    def turn_count(chunk):
        return np.full(chunk.batch, float(chunk.n))

    mine = Feature("turn_count_test", "Turns", turn_count, "this test", min_turns=0)
    registry.register(mine, source=Source("pkg-a", "1.0"))
    assert registry.names() == ("turn_count_test",)
    with pytest.raises(ValueError, match="already registered by pkg-a 1.0"):
        registry.register(mine, source=Source("pkg-b", "2.0"))
    with pytest.raises(TypeError, match="expected a Feature"):
        registry.register("not a feature")
    FEATURES.register(mine)
    try:
        table = features_for_corpus([np.eye(4), np.eye(2), np.eye(1)])
        assert table.columns[-1] == "turn_count_test"
        assert table["turn_count_test"].tolist() == [4.0, 2.0, 1.0]
    finally:
        FEATURES.unregister("turn_count_test")
    assert "turn_count_test" not in feature_names()


def test_the_features_that_grow_with_length_are_the_diagnosis_length_matched_four():
    """Sums and maxima over turns (path length; max distance, revisits and topic switches over
    more pairs and steps) grow with the turn count; means do not."""
    from engine.diagnosis.diagnose import LENGTH_DEPENDENT

    growing = [f.name for f in FEATURES.values() if f.grows_with_length]
    assert growing == ["path_length", "max_distance", "topic_switching_rate", "revisit_score"]
    assert set(LENGTH_DEPENDENT) == set(growing)


def test_the_nines_labels_are_the_names_paper_a_prints():
    """Each record's label is Table 19's name, as transcribed in engine.stats.published_a."""
    from engine.stats.published_a import FEATURE_LABELS

    assert {name: FEATURES.get(name).label for name in PAPER_A_FEATURES} == FEATURE_LABELS
