"""Forward flow (Gray et al. 2019, ``engine.measures.forward_flow``) against hand-worked values
and a loop written here from its definition."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from engine.measures.compute import features_for_corpus


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


def one(turns, speakers=None) -> pd.Series:
    table = features_for_corpus([np.asarray(turns, float)],
                                speakers=None if speakers is None else [speakers])
    return table.iloc[0]


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


def test_it_equals_the_definition_on_many_conversations_to_1e_9():
    rng = np.random.default_rng(11)
    conversations = []
    for _ in range(300):
        n = int(rng.integers(1, 14))
        turns = rng.normal(size=(n, 12))
        if n > 2 and rng.random() < 0.3:
            turns[1] = turns[0] * 2.5  # a tie: the same direction again
        conversations.append(turns)
    table = features_for_corpus(conversations, names=["forward_flow"], chunk=7)
    expected = np.array([forward_flow_by_definition(c) for c in conversations])
    np.testing.assert_allclose(table["forward_flow"], expected, rtol=0, atol=1e-9)


def test_its_facts():
    from engine.measures.registry import feature

    flow = feature("forward_flow")
    assert flow.needs == () and not flow.paper_a and flow.min_turns == 2
    # a mean of means of distances: the same back-and-forth, longer, does not flow further
    assert flow.grows_with_length is False
    assert one([[1, 0], [0, 1]] * 2)["forward_flow"] == pytest.approx(
        (1 + (0 + 1) / 2 + (1 + 0 + 1) / 3) / 3, abs=1e-12)
