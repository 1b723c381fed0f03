"""engine.maps.topic_labels: c-TF-IDF weights worked out by hand on a tiny corpus."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.maps.topic_labels import cluster_turns, ctfidf
from engine.errors import InputError


def test_ctfidf_by_hand():
    # cluster 0: "river river fish" + "fish water"  -> river 2, fish 2, water 1 (5 words)
    # cluster 1: "school teacher" + "school river"   -> school 2, teacher 1, river 1 (4 words)
    texts = ["river river fish", "fish water", "school teacher", "school river"]
    weights, terms, classes = ctfidf(texts, [0, 0, 1, 1])
    assert classes == [0, 1] and terms == ["fish", "river", "school", "teacher", "water"]
    average = (5 + 4) / 2
    f = {"fish": 2, "river": 3, "school": 2, "teacher": 1, "water": 1}
    expected0 = {"fish": 2 / 5, "river": 2 / 5, "school": 0, "teacher": 0, "water": 1 / 5}
    expected1 = {"fish": 0, "river": 1 / 4, "school": 2 / 4, "teacher": 1 / 4, "water": 0}
    for row, expected in ((0, expected0), (1, expected1)):
        for j, term in enumerate(terms):
            assert weights[row, j] == pytest.approx(expected[term] * math.log(1 + average / f[term]))


def test_clusters_follow_the_vectors_and_are_named_by_their_words():
    texts = ["river water fish", "fish in the river", "clean river water",
             "school teacher pupils", "pupils at school", "teacher training school"]
    vectors = np.array([[0, 0], [0.1, 0], [0, 0.1], [10, 10], [10.1, 10], [10, 10.1]])
    result = cluster_turns(texts, vectors, k=2, n_words=2)
    assert len(set(result.labels[:3])) == 1 and len(set(result.labels[3:])) == 1
    assert result.labels[0] != result.labels[3]
    table = result.table.set_index("cluster")
    water_cluster, school_cluster = int(result.labels[0]), int(result.labels[3])
    assert table.loc[water_cluster, "size"] == 3
    # "river" appears 3 times in the water cluster and once nowhere else: its top word
    assert table.loc[water_cluster, "keywords"].split(", ")[0] == "river"
    assert table.loc[school_cluster, "keywords"].split(", ")[0] == "school"


def test_k_out_of_range_is_refused():
    with pytest.raises(InputError):
        cluster_turns(["a b", "c d"], np.zeros((2, 2)), k=5)
