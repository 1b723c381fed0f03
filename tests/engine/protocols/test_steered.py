"""The trajectory-steered discussion: each moderator rule fires in a constructed case, and the
values an intervention records equal the Table 19 features recomputed independently from
the discussion turns that preceded it."""

from __future__ import annotations

import asyncio
import re

import numpy as np
import pytest

from engine.corpus import Corpus
from engine.errors import InputError
from engine.measures.trajectory import trajectory_features
from engine.llm import ScriptedBackend
from engine.protocols import expected_calls, make_config, run_session
from engine.protocols.steered import DEFAULT_TARGETS

OFF = {"coherence_max": 2.0, "spread_min": 0.0, "drift_min": 2.0, "max_distance_max": 3.0,
       "path_budget": 100.0, "explore_share": 2.0}


def vector_text(vector) -> str:
    return "v:" + ",".join(f"{x:.4f}" for x in vector)


def embed(texts):
    """Deterministic fake embedder: 'v:a,b,c' -> (a, b, c); anything else -> (1, 0, 0)."""
    out = []
    for text in texts:
        out.append([float(x) for x in text[2:].split(",")] if text.startswith("v:") else [1.0, 0.0, 0.0])
    return np.array(out)


def scripted(vectors):
    """Reply to discussion turn N with the N-th vector; the synthesis gets a final idea."""
    prompts = []

    def reply(messages):
        prompt = messages[-1]["content"]
        prompts.append(prompt)
        number = re.search(r"This is message (\d+) of", prompt)
        if number:
            return vector_text(vectors[int(number.group(1)) - 1])
        return "FINAL IDEA: one idea"
    backend = ScriptedBackend(responder=reply)
    backend.prompts = prompts
    return backend


def run(vectors, *, agents=3, turn_limit=None, **steering):
    config = make_config("steered", agents=agents, turn_limit=turn_limit or len(vectors),
                         steering=steering or None)
    backend = scripted(vectors)
    conversation = asyncio.run(run_session(backend, "plastic_waste", config, conversation_id="s",
                                           embedder=embed))
    assert conversation.status == "ok", conversation.error
    return conversation, backend, config


def interventions(conversation):
    return [t for t in conversation.turns if t.phase == "moderator"]


def preceding_vectors(conversation, moderator_turn):
    index = conversation.turns.index(moderator_turn)
    return np.array([embed([t.text])[0] for t in conversation.turns[:index] if t.phase == "discussion"])


def test_recorded_values_equal_features_recomputed_from_the_turns_so_far():
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(12, 5))
    # every rule may fire: defaults except a wide max-distance bound so random vectors do not
    # end the exploration at once, and a low drift threshold so lenses are assigned
    conversation, _, _ = run(vectors, max_distance_max=2.5, path_budget=50, drift_min=0.3,
                             spread_min=0.5, explore_share=0.9)
    events = interventions(conversation)
    assert len(events) >= 3
    for event in events:
        x = preceding_vectors(conversation, event)
        assert event.meta["n_turns"] == len(x)
        expected = trajectory_features(x)
        for name, value in event.meta["measured"].items():
            if np.isnan(expected[name]):
                assert value is None
            else:
                assert value == pytest.approx(expected[name], rel=1e-12, abs=1e-12)


def test_floor_goes_to_the_agent_farthest_from_the_centroid():
    # Agents 1 and 2 say nearly the same; Agent 3 is off to the side. Spread of the first
    # three turns is far below 0.5, so the floor rule fires after turn 3.
    a, b, c = [1.0, 0.0, 0.0], [1.0, 0.05, 0.0], [0.6, 0.0, 0.8]
    vectors = [a, b, c, a, b, c]
    conversation, backend, _ = run(vectors, **{**OFF, "spread_min": 0.5, "recent": 1})
    first = interventions(conversation)[0]
    assert first.meta["rule"] == "floor" and first.meta["n_turns"] == 3
    x = np.array([a, b, c])
    centroid = x.mean(axis=0)
    cos = lambda u, v: u @ v / np.linalg.norm(u) / np.linalg.norm(v)
    by_hand = {f"Agent {i + 1}": 1 - cos(x[i], centroid) for i in range(3)}
    assert first.meta["agent_distances"] == pytest.approx(by_hand)
    assert first.meta["agent"] == "Agent 3" == max(by_hand, key=by_hand.get)
    discussion = [t for t in conversation.turns if t.phase == "discussion"]
    assert discussion[3].speaker == "Agent 3"  # the floor, not the rotation (Agent 1)
    assert "Agent 3, your contributions are the furthest" in backend.prompts[3]


def test_leap_after_coherence_stays_above_the_band():
    # Nearly parallel turns: global coherence > 0.9 at every check; patience 2 -> the leap is
    # asked after turn 4 (checks at 3 and 4), then the streak restarts (next after turn 6);
    # nothing after the last turn (7), when no turn is left to act on it.
    base = np.array([1.0, 0.0, 0.0])
    vectors = [base + [0, 0.01 * i, 0.0] for i in range(7)]
    conversation, backend, _ = run(vectors, **{**OFF, "coherence_max": 0.9, "patience": 2})
    events = interventions(conversation)
    assert [(e.meta["rule"], e.meta["n_turns"]) for e in events] == [("leap", 4), ("leap", 6)]
    assert events[0].meta["measured"]["global_coherence"] > 0.9
    assert "Make a conceptual leap" in backend.prompts[4]
    assert "Make a conceptual leap" not in backend.prompts[3]


def test_no_floor_on_two_turns_whose_spread_is_always_zero():
    # two turns lie equally far from their centroid: spread 0 whatever they say
    vectors = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    conversation, _, _ = run(vectors, **{**OFF, "spread_min": 0.01, "warmup": 2})
    x = np.array(vectors[:2])
    assert trajectory_features(x)["semantic_spread"] == pytest.approx(0.0, abs=1e-12)
    assert [e.meta["n_turns"] for e in interventions(conversation)] == [3]  # not 2


def test_lens_to_the_agent_drifting_toward_the_majority_and_it_persists():
    # Agents 1 and 3 agree, Agent 2 sits between: its turn is the closest to the centroid.
    vectors = [[1.0, 0.0, 0.0], [0.8, 0.6, 0.0], [0.6, 0.8, 0.0], [1, 0, 0], [0, 0, 1], [0, 1, 0]]
    conversation, backend, _ = run(vectors, **{**OFF, "drift_min": 0.97})
    first = interventions(conversation)[0]
    x = np.array(vectors[:3])
    centroid = x.mean(axis=0)
    sims = {f"Agent {i + 1}": x[i] @ centroid / np.linalg.norm(x[i]) / np.linalg.norm(centroid) for i in range(3)}
    assert first.meta["rule"] == "lens" and first.meta["agent"] == "Agent 2"
    assert first.meta["lens"] == "logical"  # first of Creative-MAD's lens order
    assert first.meta["agent_similarities"] == pytest.approx(sims)
    assert sims["Agent 2"] > 0.97 > max(sims["Agent 1"], sims["Agent 3"])
    # Agent 2 speaks turn 5 with the lens in its system prompt
    turn5 = [h for h in backend.history if "This is message 5 of" in h["messages"][-1]["content"]][0]
    assert "LOGICAL lens" in turn5["messages"][0]["content"]
    assert [t.meta.get("lens") for t in conversation.turns if t.phase == "discussion"][4] == "logical"


@pytest.mark.parametrize("targets, reason, at", [
    ({"explore_share": 0.5}, "turns", 4),           # 0.5 x 8 turns
    ({"path_budget": 0.5}, "path_length", 3),
    ({"max_distance_max": 0.5}, "max_distance", 3),
])
def test_converge_when_the_exploration_budget_is_spent(targets, reason, at):
    vectors = [[1, 0, 0], [0.8, 0.6, 0], [0, 1, 0], [0, 0.6, 0.8], [0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    conversation, backend, _ = run(vectors, **{**OFF, **targets})
    events = interventions(conversation)
    assert len(events) == 1  # converge fires once and ends the other rules
    assert (events[0].meta["rule"], events[0].meta["reason"], events[0].meta["n_turns"]) == ("converge", reason, at)
    assert all("Converge now" in p for p in backend.prompts[at:8])
    assert not any("Converge now" in p for p in backend.prompts[:at])


def test_call_bound_moderator_turns_and_trajectory_view():
    rng = np.random.default_rng(3)
    conversation, backend, config = run(rng.normal(size=(9, 4)), drift_min=0.2, spread_min=0.6,
                                        max_distance_max=2.5, path_budget=50)
    assert expected_calls(config) == 9 + 1 == len(backend.history) == conversation.meta["calls"]
    events = interventions(conversation)
    assert events and all(t.speaker == "moderator" and t.tokens == 0 for t in events)
    assert conversation.meta["interventions"] == len(events)
    trajectory = Corpus([conversation]).trajectory_view()["s"]
    assert [t.phase for t in trajectory.turns].count("moderator") == 0
    assert len(trajectory.turns) == 9 + 1  # discussion + synthesis


def test_targets_are_validated():
    with pytest.raises(InputError, match="unknown target 'spreed'") as error:
        make_config("steered", steering={"spreed": 0.1})
    assert error.value.field == "steering"
    with pytest.raises(InputError, match="steering"):
        make_config("open", steering={"spread_min": 0.1})
    with pytest.raises(InputError, match="patience"):
        make_config("steered", steering={"patience": 0.5})
    assert make_config("steered").meta()["steering"] == DEFAULT_TARGETS


def test_cli_steer_flag_builds_the_condition():
    import argparse

    from engine.cli.run import grid_from_args, register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["run", "--method", "steered", "--task", "plastic_waste", "--out", "x",
                              "--steer", "coherence_max=0.7", "--steer", "patience=3"])
    assert grid_from_args(args)["conditions"][0]["steering"] == {"coherence_max": 0.7, "patience": 3.0}
    bad = parser.parse_args(["run", "--method", "steered", "--task", "x", "--out", "x", "--steer", "oops"])
    with pytest.raises(InputError, match="TARGET=NUMBER"):
        grid_from_args(bad)
