"""Paper A's nine trajectory features (Table 19, ``engine.measures.trajectory``) against values
worked out by hand and an independent SciPy/sklearn loop."""

import itertools
import math

import numpy as np
import pytest
from scipy.spatial.distance import cosine, pdist
from sklearn.cluster import KMeans

from engine.measures.compute import features_for_corpus
from engine.measures.registry import FEATURES, feature_names
from engine.measures.trajectory import PAPER_A_FEATURES, batched_kmeans_labels, trajectory_features

E1, E2, E3 = np.eye(3)


def reference_features(x: np.ndarray) -> dict:
    """A plain per-conversation implementation written from Table 19 with SciPy and sklearn."""
    n = len(x)
    out = dict.fromkeys(PAPER_A_FEATURES, math.nan)
    out["path_length"] = sum(cosine(x[i], x[i + 1]) for i in range(n - 1)) if n >= 2 else 0.0
    if n >= 2:
        c = x.mean(axis=0)
        out["local_coherence"] = np.mean([1 - cosine(x[i], x[i + 1]) for i in range(n - 1)])
        out["global_coherence"] = np.mean([1 - cosine(e, c) for e in x])
        out["max_distance"] = pdist(x, "cosine").max()
        out["semantic_spread"] = np.std([np.linalg.norm(e - c) for e in x])
    if n >= 3:
        angles = []
        for i in range(n - 2):
            a, b = x[i + 1] - x[i], x[i + 2] - x[i + 1]
            if np.linalg.norm(a) > 1e-10 and np.linalg.norm(b) > 1e-10:
                angles.append(np.arccos(np.clip(a @ b / np.linalg.norm(a) / np.linalg.norm(b), -1, 1)))
        out["trajectory_curvature"] = np.mean(angles) if angles else math.nan
    if n >= 4:
        mid = n // 2
        early, late = pdist(x[:mid], "cosine").mean(), pdist(x[mid:], "cosine").mean()
        out["convergence_ratio"] = (early - late) / early if early > 0 else 0.0
        labels = KMeans(n_clusters=3, random_state=42, n_init=10).fit_predict(x)
        out["topic_switching_rate"] = np.mean(labels[1:] != labels[:-1])
    if n >= 6:
        w = int(0.3 * n)
        out["revisit_score"] = max(1 - cosine(a, b) for a in x[-w:] for b in x[:w])
    return out


def assert_features(actual, expected, tol=1e-12):
    for name in PAPER_A_FEATURES:
        a, e = actual[name], expected[name]
        if math.isnan(e):
            assert math.isnan(a), f"{name}: expected NaN, got {a}"
        else:
            assert a == pytest.approx(e, abs=tol), name


def test_zigzag_between_orthogonal_directions():
    x = np.array([E1, E2, E1, E2, E1, E2])
    f = trajectory_features(x)
    assert f["local_coherence"] == pytest.approx(0.0)          # every step is orthogonal
    assert f["path_length"] == pytest.approx(5.0)              # five steps of distance 1
    assert f["global_coherence"] == pytest.approx(1 / math.sqrt(2))  # cos(e1, (e1+e2)/2)
    assert f["max_distance"] == pytest.approx(1.0)
    assert f["trajectory_curvature"] == pytest.approx(math.pi)  # every step reverses
    assert f["convergence_ratio"] == pytest.approx(0.0)        # halves equally spread
    assert f["semantic_spread"] == pytest.approx(0.0)          # all at distance sqrt(1/2)
    assert f["revisit_score"] == pytest.approx(0.0)  # int(0.3*6) = 1: last turn e2 vs first e1


def test_straight_line_has_zero_curvature_and_closed_form_coherence():
    x = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    f = trajectory_features(x)
    c01, c12 = 1 / math.sqrt(2), 3 / math.sqrt(10)
    assert f["trajectory_curvature"] == pytest.approx(0.0, abs=1e-7)
    assert f["local_coherence"] == pytest.approx((c01 + c12) / 2)
    assert f["path_length"] == pytest.approx(2 - c01 - c12)
    assert f["max_distance"] == pytest.approx(1 - 1 / math.sqrt(5))  # (1,0) vs (1,2)
    centroid = np.array([1.0, 1.0])
    cosines = [1 / math.sqrt(2), 1.0, 3 / math.sqrt(10)]
    assert f["global_coherence"] == pytest.approx(np.mean(cosines))
    radii = [1.0, 0.0, 1.0]  # |x_i - (1,1)|
    assert f["semantic_spread"] == pytest.approx(np.std(radii))
    assert math.isnan(f["convergence_ratio"]) and math.isnan(f["topic_switching_rate"])
    assert centroid is not None


def test_repeated_turn():
    x = np.tile([0.3, 0.4, 0.5], (7, 1))
    f = trajectory_features(x)
    assert f["local_coherence"] == pytest.approx(1.0)
    assert f["global_coherence"] == pytest.approx(1.0)
    assert f["path_length"] == pytest.approx(0.0, abs=1e-12)
    assert f["max_distance"] == pytest.approx(0.0, abs=1e-12)
    assert f["convergence_ratio"] == 0.0                       # no early spread: defined as 0
    assert math.isnan(f["trajectory_curvature"])              # every step has zero length
    assert f["revisit_score"] == pytest.approx(1.0)
    assert f["semantic_spread"] == pytest.approx(0.0, abs=1e-12)
    assert f["topic_switching_rate"] == 0.0


def test_one_two_and_three_turn_conversations():
    one = trajectory_features(np.array([E1]))
    assert one["path_length"] == 0.0
    assert all(math.isnan(one[k]) for k in PAPER_A_FEATURES if k != "path_length")
    two = trajectory_features(np.array([E1, E2]))
    assert two["local_coherence"] == pytest.approx(0.0)
    assert two["path_length"] == pytest.approx(1.0)
    assert two["max_distance"] == pytest.approx(1.0)
    assert two["global_coherence"] == pytest.approx(1 / math.sqrt(2))
    for name in ("trajectory_curvature", "convergence_ratio", "topic_switching_rate", "revisit_score"):
        assert math.isnan(two[name])
    three = trajectory_features(np.array([E1, E2, E3]))
    # steps e2-e1 and e3-e2 meet at 60 degrees' supplement: cos = -1/2 -> 2*pi/3
    assert three["trajectory_curvature"] == pytest.approx(2 * math.pi / 3)
    assert math.isnan(three["convergence_ratio"])


def test_convergence_ratio_by_hand():
    f = trajectory_features(np.array([E1, E2, E3, E3]))
    assert f["convergence_ratio"] == pytest.approx(1.0)  # early D = 1, late D = 0
    g = trajectory_features(np.array([E3, E3, E1, E2]))
    assert g["convergence_ratio"] == 0.0                # early D = 0 -> defined as 0


def test_topic_switching_three_separated_topics():
    rng = np.random.default_rng(1)
    centres = {"a": np.array([10.0, 0, 0]), "b": np.array([0, 10.0, 0]), "c": np.array([0, 0, 10.0])}
    sequence = "aabbcca"  # transitions a->b, b->c, c->a: 3 of 6 steps
    x = np.array([centres[s] + rng.normal(scale=0.01, size=3) for s in sequence])
    assert trajectory_features(x)["topic_switching_rate"] == pytest.approx(3 / 6)


def test_revisit_uses_early_and_late_thirty_percent():
    # n = 10 -> int(3.0) = 3 early and 3 late turns; only turn 9 returns to turn 0's direction
    x = np.array([E1, E2, E2, E3, E3, E3, E3, E2 + E3, E3, E1 + 0.0])
    x[7] = [0, 1, 1]
    f = trajectory_features(x)
    assert f["revisit_score"] == pytest.approx(1.0)
    x[9] = [0, 0, 1]  # now late turns are e2+e3, e3, e3; best match: cos(e2+e3, e2) = 1/sqrt(2)
    assert trajectory_features(x)["revisit_score"] == pytest.approx(1 / math.sqrt(2))


def test_semantic_spread_by_hand():
    f = trajectory_features(np.array([E1, E1, E2]))
    radii = np.array([1, 1, 2]) * math.sqrt(2) / 3  # distances to centroid (2/3, 1/3, 0)
    assert f["semantic_spread"] == pytest.approx(radii.std())


@pytest.mark.parametrize("n_turns", [1, 2, 3, 4, 5, 6, 7, 12, 30])
def test_matches_independent_reference(n_turns):
    rng = np.random.default_rng(n_turns)
    for _ in range(3):
        x = rng.normal(size=(n_turns, 16))
        assert_features(trajectory_features(x), reference_features(x), tol=1e-10)


def test_batched_equals_single_for_mixed_lengths():
    rng = np.random.default_rng(7)
    conversations = [rng.normal(size=(int(rng.integers(1, 25)), 24)) for _ in range(60)]
    conversations += [np.tile(rng.normal(size=24), (5, 1))]  # a repeated-turn conversation
    table = features_for_corpus(conversations)
    # every registered feature that reads nothing but the embeddings, paper A's nine first
    assert list(table.columns) == list(feature_names(given=())) and len(table) == len(conversations)
    assert list(table.columns[:9]) == list(PAPER_A_FEATURES)
    for row, x in enumerate(conversations):
        assert_features(table.iloc[row].to_dict(), trajectory_features(x), tol=1e-9)


def test_batched_kmeans_finds_sklearns_partition():
    rng = np.random.default_rng(3)
    batch = rng.normal(size=(40, 30, 32))
    labels = batched_kmeans_labels(batch)
    for b in range(len(batch)):
        expected = KMeans(n_clusters=3, random_state=42, n_init=10).fit_predict(batch[b])
        assert any(np.array_equal(np.array(p)[labels[b]], expected)
                   for p in itertools.permutations(range(3))), f"conversation {b}"


def test_rejects_non_matrix_input():
    with pytest.raises(ValueError, match="n_turns, dim"):
        trajectory_features(np.zeros(5))


def test_trajectory_view_keeps_only_discussion_turns():
    from engine.corpus import Conversation, Corpus, Turn

    turns = [Turn("A1", "ideas: 1. x 2. y", phase="generation"), Turn("A1", "7", phase="rating"),
             Turn("A2", "let's try x", phase="discussion"), Turn("A3", "6", phase="hand_raise"),
             Turn("A3", "x, but cheaper", phase="discussion"), Turn("judge", "1", phase="consensus"),
             Turn("human", "no phase: imported transcript")]
    corpus = Corpus([Conversation("c1", turns=turns)])
    kept = corpus.trajectory_view()["c1"].texts
    assert kept == ["let's try x", "x, but cheaper", "no phase: imported transcript"]
    assert len(corpus["c1"].turns) == 7  # the original is untouched


def test_streamed_chunks_equal_one_conversation_at_a_time():
    # a generator (read once) of mixed lengths, computed in chunks of 4 and with a tiny
    # waiting budget, so groups are cut both by the chunk size and by the budget
    import engine.measures.compute as features_module

    rng = np.random.default_rng(11)
    conversations = [rng.normal(size=(int(rng.integers(1, 12)), 8)).astype(np.float32)
                     for _ in range(24)]
    budget = features_module.MAX_WAITING_TURNS
    features_module.MAX_WAITING_TURNS = 20
    try:
        table = features_for_corpus((c for c in conversations), chunk=4)
    finally:
        features_module.MAX_WAITING_TURNS = budget
    assert len(table) == len(conversations)
    for row, x in enumerate(conversations):
        # float32 input is computed in float64: SciPy on the same float32 vectors agrees
        assert_features(table.iloc[row].to_dict(), reference_features(x.astype(np.float64)), tol=1e-9)


def test_memory_mapped_corpus_streams_in_bounded_memory(tmp_path):
    import tracemalloc

    rng = np.random.default_rng(5)
    count, n_turns, dim = 1200, 30, 384
    data = rng.normal(size=(count, n_turns, dim)).astype(np.float32)  # 55 MB on disk
    np.save(tmp_path / "turns.npy", data)
    expected = features_for_corpus(list(data[:50]))
    del data
    mapped = np.load(tmp_path / "turns.npy", mmap_mode="r")
    tracemalloc.start()
    table = features_for_corpus(mapped)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # all at once in float64 would need 110 MB for the converted input alone; a 128-
    # conversation chunk is 11.8 MB, and a few temporaries of its size are alive at once
    assert peak < 50e6, f"peak {peak / 1e6:.1f} MB"
    assert len(table) == count
    np.testing.assert_allclose(table.iloc[:50].to_numpy(), expected.to_numpy(), rtol=0, atol=1e-12)


def test_three_dimensional_input_and_bad_shapes():
    rng = np.random.default_rng(2)
    block = rng.normal(size=(9, 7, 5))
    np.testing.assert_allclose(features_for_corpus(block, chunk=4).to_numpy(),
                               features_for_corpus(list(block)).to_numpy(), atol=1e-12)
    with pytest.raises(ValueError, match="conversation 1"):
        features_for_corpus([np.zeros((3, 2)), np.zeros(4)])


def test_the_features_of_the_nine_that_grow_with_length_are_its_sums_and_maxima():
    """Sums and maxima over turns (path length; max distance, revisits and topic switches over
    more pairs and steps) grow with the turn count; means do not. The diagnosis compares those
    only at similar lengths."""
    from engine.diagnosis.diagnose import LENGTH_DEPENDENT

    growing = [name for name in PAPER_A_FEATURES if FEATURES.get(name).grows_with_length]
    assert growing == ["path_length", "max_distance", "topic_switching_rate", "revisit_score"]
    assert list(LENGTH_DEPENDENT) == growing
    # path length of one zigzag: 5 steps of distance 1; the same zigzag twice as long: 11
    assert trajectory_features(np.array([E1, E2] * 3))["path_length"] == pytest.approx(5.0)
    assert trajectory_features(np.array([E1, E2] * 6))["path_length"] == pytest.approx(11.0)


def test_the_nines_labels_are_the_names_paper_a_prints():
    """Each record's label is Table 19's name, as transcribed in engine.stats.published_a."""
    from engine.stats.published_a import FEATURE_LABELS

    assert {name: FEATURES.get(name).label for name in PAPER_A_FEATURES} == FEATURE_LABELS
