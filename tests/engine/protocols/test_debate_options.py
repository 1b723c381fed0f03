"""Paper B's debate options on a scripted backend: consensus resolution, peer strategies,
lenses on/off, per-agent models. Expected values worked out by hand from the embeddings."""

from __future__ import annotations

import asyncio
import json
import random
import re

import numpy as np
import pytest

from engine.errors import InputError
from engine.llm import ScriptedBackend
from engine.protocols import expected_calls, make_config, run_session
from engine.protocols.debate import closest_peers, most_distant_peers, random_peers
from engine.runs.runner import run_grid

TASK = "plastic_waste"
PICK = "Answer only 'Response N'"


def run(backend, method, *, seed=0, embedder=None, agent_backends=None, **options):
    config = make_config(method, **options)
    return asyncio.run(run_session(backend, TASK, config, conversation_id=f"{method}-t", seed=seed,
                                   embedder=embedder, agent_backends=agent_backends))


def never_readable(messages):
    """A server whose consensus replies never name a response."""
    if PICK in messages[-1]["content"]:
        return "They are all wonderful in their own way."
    return f"idea from a debater [{len(messages[0]['content'])}]"


# -- consensus ----------------------------------------------------------------------------------
def test_unreadable_consensus_is_retried_then_picked_at_random_and_reported(tmp_path):
    backend = ScriptedBackend(responder=never_readable)
    grid = {"name": "unreadable", "model": "scripted", "tasks": [TASK], "concurrency": 4,
            "conditions": [{"method": "homo_mad", "agents": 3, "rounds": 1, "replicates": 12}]}
    result = run_grid(grid, tmp_path / "run", backend=backend, progress=False, cache=False)
    assert result.ok == 12
    corpus = [json.loads(line) for line in (tmp_path / "run" / "corpus.jsonl").read_text().splitlines()[1:]]
    assert len(corpus) == 12
    assert all(c["meta"]["consensus_parsed"] is False for c in corpus)
    assert all(c["meta"]["consensus_resolution"] == "random_fallback" for c in corpus)
    # default: 2 more samples after the first unreadable one -> 3 judge calls per session
    assert all(sum(t["phase"] == "consensus" for t in c["turns"]) == 3 for c in corpus)
    assert len(backend.history) == 12 * (3 * 2 + 3)
    chosen = {c["meta"]["consensus_choice"] for c in corpus}
    assert len(chosen) >= 2  # not always by position
    for c in corpus:  # the final idea is the chosen agent's last answer
        last = [t for t in c["turns"] if t["phase"] == "debate"]
        assert c["final_idea"] == last[c["meta"]["consensus_choice"]]["text"]
        assert c["meta"]["consensus_agent"] == f"Agent {c['meta']['consensus_choice'] + 1}"
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["consensus"]["unparsed"] == 12 and manifest["consensus"]["sessions"] == 12
    assert manifest["consensus"]["unparsed_share"] == 1.0
    assert sum(manifest["consensus"]["chosen_agent"].values()) == 12
    assert len(manifest["consensus"]["chosen_agent"]) >= 2


def test_retry_that_reads_is_recorded_as_judge_retry_and_the_pick_is_reproducible():
    replies = iter(["no idea", "Response 3"])

    def reply(messages):
        if PICK in messages[-1]["content"]:
            return next(replies)
        return "an idea"
    backend = ScriptedBackend(responder=reply)
    c = run(backend, "voting", agents=3)
    assert c.meta["consensus_parsed"] is True and c.meta["consensus_choice"] == 2
    assert c.meta["consensus_resolution"] == "judge_retry" and c.meta["consensus_attempts"] == 2
    judge = [t for t in c.turns if t.phase == "consensus"]
    assert [t.meta["attempt"] for t in judge] == [0, 1] and judge[1].meta["temperature"] == 1.0
    # the fallback pick is a function of the session seed, the same on a re-run
    a = run(ScriptedBackend(responder=never_readable), "voting", agents=5, seed=7)
    b = run(ScriptedBackend(responder=never_readable), "voting", agents=5, seed=7)
    assert a.meta["consensus_choice"] == b.meta["consensus_choice"]
    assert a.meta["consensus_choice"] == random.Random("7:consensus").randrange(5)


def test_consensus_options_vote_random_and_all():
    def vote(messages):
        prompt = messages[-1]["content"]
        if "The debate is over" in prompt:
            # Agents 1 and 2 vote Response 3, Agent 3 votes Response 1
            return "Response 1" if "CRITICAL" in messages[0]["content"] else "Response 3"
        return "idea"
    backend = ScriptedBackend(responder=vote)
    c = run(backend, "creative_mad", agents=3, rounds=1, k=1, consensus="vote",
            embedder=lambda texts: np.eye(3)[: len(texts)])
    assert c.meta["consensus_votes"] == [2, 2, 0] and c.meta["consensus_choice"] == 2
    assert c.meta["consensus_lens"] == "critical" and c.meta["consensus_resolution"] == "vote"
    assert len(backend.history) == 3 * 2 + 3 == expected_calls(
        make_config("creative_mad", agents=3, rounds=1, k=1, consensus="vote"))

    backend = ScriptedBackend(responder=lambda m: f"idea {len(m[-1]['content'])}")
    c = run(backend, "homo_mad", agents=4, rounds=1, consensus="random", seed=3)
    assert len(backend.history) == 8 and c.meta["consensus_parsed"] is None
    assert c.meta["consensus_choice"] == random.Random("3:consensus").randrange(4)

    backend = ScriptedBackend(responder=lambda m: f"idea {len(m[-1]['content'])} {random.random()}")
    c = run(backend, "homo_mad", agents=4, rounds=1, consensus="all")
    finals = [t.text for t in c.turns if t.phase == "debate"]
    assert c.meta["final_answers"] == finals and c.final_idea in finals
    with pytest.raises(InputError, match="consensus"):
        make_config("direct", consensus="vote")


# -- peers and lenses -----------------------------------------------------------------------------
# Four agents whose first answers embed at these points; cosine distances by hand:
# d(1,2)=.2 d(1,3)=1 d(1,4)=2 d(2,3)=.4 d(2,4)=1.8 d(3,4)=1
VECTORS = {"A": [1.0, 0.0], "B": [0.8, 0.6], "C": [0.0, 1.0], "D": [-1.0, 0.0]}


def tagged(messages):
    """Round 0: agent i answers letter i; debate rounds keep the letter; judge picks 1."""
    prompt = messages[-1]["content"]
    if PICK in prompt:
        return "Response 1"
    system = messages[0]["content"]
    index = int(re.search(r"\[agent (\d)\]", system).group(1)) if "[agent" in system else None
    own = re.search(r"Your previous answer:\n(\w)", prompt)
    if own:
        return own.group(1) + " again"
    return "ABCD"[index] if index is not None else "A"


def embed(texts):
    return np.array([VECTORS[t[0]] for t in texts])


@pytest.fixture
def tag_agents(monkeypatch):
    """Tag each debater's system prompt with its index, so the scripted server knows who asks."""
    from engine.protocols import creative_mad, debate, hetero_mad, homo_mad

    original = debate.debate_agents

    def tagged_agents(session, **options):
        agents = original(session, **options)
        return [type(a)(a.name, a.system + f"\n[agent {i}]", a.persona, a.lens) for i, a in enumerate(agents)]
    for module in (creative_mad, hetero_mad, homo_mad):
        monkeypatch.setattr(module, "debate_agents", tagged_agents)


@pytest.mark.parametrize("peers, expected", [
    ("distant", [["Agent 4", "Agent 3"], ["Agent 4", "Agent 3"], ["Agent 1", "Agent 4"], ["Agent 1", "Agent 2"]]),
    ("closest", [["Agent 2", "Agent 3"], ["Agent 1", "Agent 3"], ["Agent 2", "Agent 1"], ["Agent 3", "Agent 2"]]),
    ("all", [["Agent 2", "Agent 3", "Agent 4"], ["Agent 1", "Agent 3", "Agent 4"],
             ["Agent 1", "Agent 2", "Agent 4"], ["Agent 1", "Agent 2", "Agent 3"]]),
])
@pytest.mark.parametrize("method", ["homo_mad", "creative_mad"])
def test_peer_strategies_record_the_peers_the_embeddings_give(tag_agents, method, peers, expected):
    backend = ScriptedBackend(responder=tagged)
    c = run(backend, method, agents=4, rounds=1, k=2, peers=peers, embedder=embed)
    recorded = [t.meta["peers"] for t in c.turns if t.phase == "debate"]
    assert recorded == expected
    # the prompt of each debater holds exactly its recorded peers' answers
    for turn, call in zip([t for t in c.turns if t.phase == "debate"], backend.history[4:8]):
        shown = re.findall(r"Response from another agent:\n(\w)", call["messages"][-1]["content"])
        assert shown == ["ABCD"[int(name.split()[1]) - 1] for name in turn.meta["peers"]]


def test_random_peers_are_k_distinct_others_seeded_by_session_and_round(tag_agents):
    backend = ScriptedBackend(responder=tagged)
    c = run(backend, "creative_mad", agents=4, rounds=1, k=2, peers="random", seed=11, embedder=embed)
    recorded = [t.meta["peers"] for t in c.turns if t.phase == "debate"]
    expected = random_peers(4, 2, random.Random("11:peers:1"))
    assert recorded == [[f"Agent {j + 1}" for j in row] for row in expected]
    assert all(f"Agent {i + 1}" not in row and len(set(row)) == 2 for i, row in enumerate(recorded))


def test_peer_selectors_by_hand():
    vectors = np.array([VECTORS[x] for x in "ABCD"])
    assert most_distant_peers(vectors, 2) == [[3, 2], [3, 2], [0, 3], [0, 1]]
    assert closest_peers(vectors, 1) == [[1], [0], [1], [2]]


def test_lenses_on_and_off_for_any_debate_method():
    backend = ScriptedBackend(responder=lambda m: "Response 1" if PICK in m[-1]["content"] else "x idea")
    run(backend, "creative_mad", agents=3, rounds=1, k=1, lenses=False, embedder=lambda t: np.eye(3))
    assert not any("lens" in h["messages"][0]["content"].lower() for h in backend.history[:3])
    backend = ScriptedBackend(responder=lambda m: "Response 1" if PICK in m[-1]["content"] else "x idea")
    c = run(backend, "homo_mad", agents=3, rounds=1, lenses=True)
    for h, lens in zip(backend.history[:3], ["LOGICAL", "EMOTIONAL", "CRITICAL"]):
        assert f"the {lens} lens" in h["messages"][0]["content"]
    assert c.meta["lenses"] is True and c.meta["peers"] == "all"
    assert make_config("creative_mad").meta()["peers"] == "distant"
    with pytest.raises(InputError, match="debate methods"):
        make_config("direct", lenses=True)


def test_new_options_at_default_keep_old_session_ids():
    from engine.runs.grid import options_hash

    config = make_config("creative_mad", agents=4, rounds=1, k=2, temperature=1.0, max_tokens=56,
                         idea_words="25-40")
    # the id of this condition in cached_runs/local_smollm2 (made before these options existed)
    import pandas as pd
    ids = pd.read_parquet("cached_runs/local_smollm2/conversations.parquet",
                          columns=["conversation_id"])["conversation_id"]
    assert any(i.startswith(f"creative_mad-plastic_waste-{options_hash(config)}-r") for i in ids)
    assert options_hash(make_config("creative_mad", peers="closest")) != options_hash(make_config("creative_mad"))


# -- per-agent models -------------------------------------------------------------------------------
def test_models_give_each_agent_its_backend_and_are_recorded_per_turn():
    def named(name):
        return ScriptedBackend(responder=lambda m: "Response 2" if PICK in m[-1]["content"] else f"from {name}",
                               model=name)
    main, other = named("m-a"), named("m-b")
    c = run(main, "hetero_mad", agents=3, rounds=1, models=("m-a", "m-b"),
            agent_backends={"m-a": main, "m-b": other})
    debaters = [t for t in c.turns if t.phase in ("initial", "debate")]
    assert [t.meta["model"] for t in debaters] == ["m-a", "m-b", "m-a"] * 2
    assert [t.text for t in debaters[:3]] == ["from m-a", "from m-b", "from m-a"]
    assert len(other.history) == 2 and len(main.history) == 4 + 1  # the judge is the session's backend
    assert c.model == "mixed" and c.meta["models"] == ["m-a", "m-b"]
    with pytest.raises(ValueError, match="no backend given for m-c"):
        run(main, "homo_mad", agents=2, rounds=1, models=("m-a", "m-c"))


def test_models_on_the_command_line(tmp_path, capsys):
    from engine.cli.run import grid_from_args, register
    import argparse

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["run", "--method", "instructed", "--task", TASK, "--models", "a, b,c",
                              "--out", str(tmp_path)])
    assert grid_from_args(args)["conditions"][0]["models"] == ["a", "b", "c"]
    args = parser.parse_args(["run", "--method", "homo_mad", "--task", TASK, "--no-lenses", "--peers",
                              "closest", "--k", "1", "--consensus", "vote", "--out", str(tmp_path)])
    condition = grid_from_args(args)["conditions"][0]
    assert (condition["lenses"], condition["peers"], condition["k"], condition["consensus"]) == \
        (False, "closest", 1, "vote")


def test_mixed_team_for_a_paper_a_structure():
    """Paper A's "Mixed" level (Tables 7 and 20): an open discussion, one model per agent."""
    backends = {name: ScriptedBackend(responder=lambda m, n=name: f"an idea from {n} about refill bottles",
                                      model=name) for name in ("m1", "m2", "m3")}
    c = run(backends["m1"], "open", agents=3, turn_limit=6, models=("m1", "m2", "m3"), agent_backends=backends)
    spoken = [t for t in c.turns if t.speaker.startswith("Agent")]
    assert spoken and all(t.meta["model"] == f"m{t.speaker.split()[1]}" for t in spoken)
    assert all(t.text == f"an idea from {t.meta['model']} about refill bottles" for t in spoken)
    assert c.model == "mixed"
    assert sum(len(b.history) for b in backends.values()) == len(spoken)


def test_pilot_takes_per_agent_backends():
    from engine.runs.runner import run_pilot

    backends = {n: ScriptedBackend(responder=lambda m, n=n: "Response 1" if PICK in m[-1]["content"] else f"by {n}",
                                   model=n) for n in ("x", "y")}
    corpus = run_pilot("homo_mad", TASK, 2, 1, 1, backends["x"], models=("x", "y"), agent_backends=backends)
    c = list(corpus)[0]
    assert [t.text for t in c.turns if t.phase == "initial"] == ["by x", "by y"] and c.model == "mixed"
