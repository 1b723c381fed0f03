"""Turn logic of every protocol on a scripted backend; expected values worked out by hand."""

from __future__ import annotations

import asyncio
import re

import numpy as np
import pytest

from engine.errors import InputError
from engine.llm import Backend, BackendError, ChatResult, ScriptedBackend
from engine.protocols import expected_calls, make_config, run_session
from engine.protocols.debate import most_distant_peers

TASK = "plastic_waste"


def run(backend, method, *, seed=0, embedder=None, **options):
    config = make_config(method, **options)
    return asyncio.run(run_session(backend, TASK, config, conversation_id=f"{method}-test", seed=seed,
                                   embedder=embedder))


def speaker_of(messages):
    match = re.search(r"You are (Agent \d+)\.", messages[0]["content"])
    return match.group(1) if match else None


def shown_ideas(prompt):
    return re.findall(r"^Idea (\d+): (.*)$", prompt, re.M)


def responder(*, generate=None, rate=None, turn=None, bid=None, choose=None):
    """Route each request by what the prompt asks for to a function of (speaker, prompt)."""
    def reply(messages):
        prompt, speaker = messages[-1]["content"], speaker_of(messages)
        if "'Idea N: score'" in prompt:
            return "\n".join(f"Idea {n}: {rate(speaker, idea)}" for n, idea in shown_ideas(prompt))
        if "scale from 1 (adds" in prompt:
            return str(bid(speaker))
        if "Answer only 'Response N'" in prompt:
            return choose(prompt)
        if "Write " in prompt and "different ideas" in prompt:
            return generate(speaker, prompt)
        return turn(speaker, prompt)
    return reply


# -- paper A: none -----------------------------------------------------------------------------
def two_ideas(speaker, prompt):
    n = speaker.split()[1]
    return f"plan {n}a with score seven tokens\nplan {n}b with score seven tokens"


SCORES = {"1a": 4, "1b": 9, "2a": 6, "2b": 2, "3a": 8, "3b": 5}


def score_by_tag(speaker, idea, bias=None):
    tag = re.search(r"plan (\d[ab])", idea).group(1)
    return SCORES[tag]


def test_none_interactive_generation_order_and_mean_rating_winner():
    # Agent 3 disagrees: gives 10 - score; means: 1a (4+4+6)/3=4.67, 1b (9+9+1)/3=6.33,
    # 2a (6+6+4)/3=5.33, 2b (2+2+8)/3=4, 3a (8+8+2)/3=6, 3b (5+5+5)/3=5 -> 1b wins.
    def rate(speaker, idea):
        s = score_by_tag(speaker, idea)
        return 10 - s if speaker == "Agent 3" else s

    backend = ScriptedBackend(responder=responder(generate=two_ideas, rate=rate))
    c = run(backend, "none", agents=3, ideas_per_agent=2)
    assert c.status == "ok" and c.final_idea == "plan 1b with score seven tokens"
    assert [t.speaker for t in c.turns if t.phase == "generation"] == ["Agent 1", "Agent 2", "Agent 3"]
    assert len([t for t in c.turns if t.phase == "rating"]) == 3 and len(c.turns) == 6
    prompts = [h["messages"][-1]["content"] for h in backend.history[:3]]
    assert "plan 1a" not in prompts[0] and "plan 1a" in prompts[1] and "plan 2b" in prompts[2]
    ranked = [entry["idea"][5:7] for entry in c.meta["initial_ideas"]]
    assert ranked == ["1b", "3a", "2a", "3b", "1a", "2b"]
    assert c.meta["initial_ideas"][0]["mean_rating"] == pytest.approx(19 / 3)


def test_none_nominal_generation_shows_no_earlier_ideas():
    backend = ScriptedBackend(responder=responder(generate=two_ideas, rate=score_by_tag))
    c = run(backend, "none", agents=3, ideas_per_agent=2, generation="nominal")
    assert all("already proposed" not in h["messages"][-1]["content"] for h in backend.history[:3])
    assert c.final_idea.startswith("plan 1b")  # 9 is the top score


# -- paper A: open --------------------------------------------------------------------------------
def test_open_fixed_rotation_then_synthesis_by_one_agent():
    said = []

    def turn(speaker, prompt):
        if "Begin with 'FINAL IDEA:'" in prompt:
            return "FINAL IDEA: refill stations everywhere with deposit rewards"
        said.append(speaker)
        return f"{speaker} suggests something new"

    backend = ScriptedBackend(responder=responder(turn=turn))
    c = run(backend, "open", agents=3, turn_limit=5, initial_generation=False)
    discussion = [t for t in c.turns if t.phase == "discussion"]
    assert [t.speaker for t in discussion] == ["Agent 1", "Agent 2", "Agent 3", "Agent 1", "Agent 2"]
    assert [t.round for t in discussion] == [1, 2, 3, 4, 5]
    assert c.turns[-1].phase == "synthesis" and c.turns[-1].speaker == c.meta["synthesiser"]
    assert c.final_idea == "refill stations everywhere with deposit rewards"
    # the 5th speaker saw the 4 earlier messages
    assert backend.history[4]["messages"][-1]["content"].count("suggests something new") == 4
    assert len(c.turns) == expected_calls(make_config("open", agents=3, turn_limit=5,
                                                      initial_generation=False)) == 6


def test_open_random_order_uses_team_members_only():
    backend = ScriptedBackend(responder=responder(turn=lambda s, p: "FINAL IDEA: x y z w" if "FINAL" in p
                                                  else f"{s} talks"))
    c = run(backend, "open", agents=3, turn_limit=12, order="random", initial_generation=False, seed=4)
    speakers = [t.speaker for t in c.turns if t.phase == "discussion"]
    assert len(speakers) == 12 and set(speakers) <= {"Agent 1", "Agent 2", "Agent 3"}
    assert len(set(speakers)) > 1


# -- paper A: instructed ----------------------------------------------------------------------------
def scripted_turns(replies):
    queue = list(replies)
    return lambda speaker, prompt: queue.pop(0)


def test_instructed_ends_only_when_all_three_agree_with_the_current_version():
    # As in the authors' release (reset_agreements on every Modify/Replace; the author is not
    # counted). Fixed order, no initial phase:
    #  t1 Agent 1 proposes X            agreed {}
    #  t2 Agent 2 agrees                agreed {2}
    #  t3 Agent 3 agrees                agreed {2,3}  (old rule: author 1 counted -> would stop here)
    #  t4 Agent 1 (the only one left) modifies X -> Y   agreed {}  (reset)
    #  t5 Agent 2 agrees {2}; t6 Agent 3 agrees {2,3}; t7 Agent 1 agrees {1,2,3} -> stop, final Y
    replies = ["idea X: sort plastic at home with a game",
               "Agree: No changes needed", "Agree: No changes needed",
               "Modify: idea Y: sort plastic with a neighbourhood game league - Reason: more social",
               "Agree: No changes needed", "Agree: No changes needed", "Agree: No changes needed"]
    backend = ScriptedBackend(responder=responder(turn=scripted_turns(replies)))
    c = run(backend, "instructed", agents=3, turn_limit=10, initial_generation=False)
    assert [t.speaker for t in c.turns] == ["Agent 1", "Agent 2", "Agent 3", "Agent 1",
                                            "Agent 2", "Agent 3", "Agent 1"]
    assert [t.meta.get("action") for t in c.turns] == ["propose", "agree", "agree", "modify",
                                                       "agree", "agree", "agree"]
    assert [len(t.meta["agreed"]) for t in c.turns] == [0, 1, 2, 0, 1, 2, 3]
    assert c.final_idea == "idea Y: sort plastic with a neighbourhood game league"
    assert c.meta["stop_reason"] == "all_agreed"
    # the turn after the Modify is shown the new version
    assert backend.history[4]["messages"][-1]["content"].startswith("Current idea:\nidea Y")


def test_instructed_modifier_is_not_counted_as_agreeing():
    # t1 Agent 1 proposes X {}; t2 Agent 2 modifies to Y {} (reset, the author not counted);
    # t3 Agent 3 agrees {3}; t4 next after Agent 3 among {1, 2} is Agent 1: agrees {1,3};
    # t5 Agent 2, the author of Y, must still agree: {1,2,3} -> stop after 5 turns.
    replies = ["idea X: sort plastic at home with a game",
               "Modify: idea Y: sort plastic with a neighbourhood game league - Reason: more social",
               "Agree: No changes needed", "Agree: No changes needed", "Agree: No changes needed"]
    backend = ScriptedBackend(responder=responder(turn=scripted_turns(replies)))
    c = run(backend, "instructed", agents=3, turn_limit=10, initial_generation=False)
    assert [t.speaker for t in c.turns] == ["Agent 1", "Agent 2", "Agent 3", "Agent 1", "Agent 2"]
    assert c.final_idea == "idea Y: sort plastic with a neighbourhood game league"
    assert c.meta["stop_reason"] == "all_agreed"


def test_instructed_turn_limit_before_everyone_agrees():
    # 3 agents, turn limit 3: propose, agree, agree -> only 2 of 3 agree -> turn_limit
    replies = ["idea X: sort plastic at home with a game"] + ["Agree: No changes needed"] * 2
    backend = ScriptedBackend(responder=responder(turn=scripted_turns(replies)))
    c = run(backend, "instructed", agents=3, turn_limit=3, initial_generation=False)
    assert c.meta["stop_reason"] == "turn_limit" and len(c.turns) == 3


def test_instructed_refuses_agreement_before_min_rounds_and_stops_at_turn_limit():
    replies = ["first idea about bottles and refills"] + ["Agree: No changes needed"] * 5
    backend = ScriptedBackend(responder=responder(turn=scripted_turns(replies)))
    c = run(backend, "instructed", agents=3, turn_limit=6, min_rounds=4, initial_generation=False)
    # turns done before each reply: 1, 2, 3 -> refused (< 4); 4, 5 -> accepted (Agents 2, 3).
    # Agent 1 (the author) never agreed, so the turn limit ends it.
    actions = [t.meta.get("action") for t in c.turns]
    assert actions == ["propose", "agree_refused", "agree_refused", "agree_refused", "agree", "agree"]
    assert [t.speaker for t in c.turns] == ["Agent 1", "Agent 2", "Agent 3", "Agent 1", "Agent 2",
                                            "Agent 3"]
    assert c.meta["stop_reason"] == "turn_limit" and len(c.turns) == 6
    assert "Agreeing is not allowed yet" in backend.history[1]["messages"][-1]["content"]
    assert "Agreeing is not allowed yet" not in backend.history[4]["messages"][-1]["content"]


# The replacement pool (ranks 2..pool+1, removal, what a Replace may take in each fidelity):
# tests/engine/protocols/test_fidelity.py::test_replacement_pool.


def test_instructed_hand_raising_highest_desire_speaks():
    bids = {"Agent 1": 3, "Agent 2": 6, "Agent 3": 2}

    def turn(speaker, prompt):
        if "Turn 2 of" in prompt:
            return "Agree: No changes needed"
        return f"Modify: {speaker} version of the bottle idea with refills - Reason: better"

    backend = ScriptedBackend(responder=responder(generate=two_ideas, rate=score_by_tag, turn=turn,
                                                  bid=lambda s: bids[s]))
    c = run(backend, "instructed", agents=3, ideas_per_agent=2, order="raise", turn_limit=2)
    discussion = [t for t in c.turns if t.phase == "discussion"]
    raises = [t for t in c.turns if t.phase == "hand_raise"]
    # turn 1: all three draft and bid; Agent 2 (6) speaks and modifies: nobody has agreed with
    # the new version, so at turn 2 all three bid again and Agent 2 (6) speaks (agrees).
    assert [t.speaker for t in discussion] == ["Agent 2", "Agent 2"]
    assert [t.speaker for t in raises] == ["Agent 1", "Agent 2", "Agent 3"] * 2
    assert discussion[0].meta["desire"] == 6
    assert c.final_idea == "Agent 2 version of the bottle idea with refills"


# -- paper A: iterative ----------------------------------------------------------------------------
def test_iterative_converges_after_same_choice_three_times():
    proposals = iter(["idea one about bottles", "idea two about refills", "idea three about deposits",
                      "idea four about taxes", "idea five about games"])
    quality = {"one": 3, "two": 8, "three": 5, "four": 6, "five": 9}

    def rate(speaker, idea):
        return quality[idea.split()[1]]

    backend = ScriptedBackend(responder=responder(rate=rate, turn=lambda s, p: next(proposals)))
    c = run(backend, "iterative", agents=3, turn_limit=10, initial_generation=False)
    # 1: Agent 1 proposes one (current). 2: two beats one -> streak 1. 3: two beats three -> 2.
    # 4: two beats four -> 3 = team size -> converged; five never proposed.
    proposals_made = [t for t in c.turns if t.phase == "discussion"]
    assert [t.speaker for t in proposals_made] == ["Agent 1", "Agent 2", "Agent 3", "Agent 1"]
    assert c.final_idea == "idea two about refills"
    assert c.meta["stop_reason"] == "converged" and c.meta["streak"] == 3
    assert [t.meta.get("adopted") for t in proposals_made[1:]] == [True, False, False]
    # turn 3 rated current, candidate and the recent idea one
    rated = shown_ideas(backend.history[-3]["messages"][-1]["content"])
    assert sorted(text for _, text in rated) == ["idea four about taxes", "idea one about bottles",
                                                 "idea three about deposits", "idea two about refills"]


def test_iterative_backtracks_to_a_recent_idea_and_stops_at_turn_limit():
    # The raters' opinion changes with each proposal: after proposal 2 they prefer two (6 > 5),
    # after proposal 3 they prefer the recent idea one (7 > 6 > 1): the team goes back to one.
    proposals = iter(["idea one a", "idea two b", "idea three c"])
    opinions = iter([{}, {"one": 5, "two": 6}, {"one": 7, "two": 6, "three": 1}])
    table = {}

    def turn(speaker, prompt):
        table.clear()
        table.update(next(opinions))
        return next(proposals)

    backend = ScriptedBackend(responder=responder(rate=lambda s, idea: table[idea.split()[1]], turn=turn))
    c = run(backend, "iterative", agents=2, turn_limit=3, initial_generation=False, convergence=5)
    assert c.final_idea == "idea one a"
    assert c.meta["stop_reason"] == "turn_limit"
    adopted = [t.meta.get("adopted") for t in c.turns if t.phase == "discussion"]
    assert adopted == [None, True, False]


# -- paper A: progressive ---------------------------------------------------------------------------
def test_progressive_phases_and_final_choice():
    def generate(speaker, prompt):
        return two_ideas(speaker, prompt)

    def turn(speaker, prompt):
        if "radically new ideas" in prompt:
            n = speaker.split()[1]
            return f"wild {n}x idea with floating barges\nwild {n}y idea with edible packaging"
        if "more useful and workable" in prompt:
            ideas = [text for _, text in shown_ideas(prompt)]
            return "\n".join(f"{idea} refined by {speaker}" for idea in ideas)
        raise AssertionError(prompt)

    def rate(speaker, idea):
        if idea.startswith("plan"):
            return score_by_tag(speaker, idea)
        if "refined" in idea:
            return 10 if "edible" in idea else 1
        return {"1x": 3, "1y": 9, "2x": 7, "2y": 2}[re.search(r"wild (\d[xy])", idea).group(1)]

    backend = ScriptedBackend(responder=responder(generate=generate, rate=rate, turn=turn))
    c = run(backend, "progressive", agents=2, ideas_per_agent=2, refine_top=2)
    phases = [t.phase for t in c.turns]
    assert phases == ["generation"] * 2 + ["rating"] * 2 + ["divergent"] * 2 + ["rating"] * 2 + \
        ["convergent"] * 2 + ["rating"] * 2
    assert c.meta["novel_selected"] == ["wild 1y idea with edible packaging", "wild 2x idea with floating barges"]
    assert c.final_idea == ("wild 1y idea with edible packaging refined by Agent 1 refined by Agent 2")
    assert len(c.turns) == expected_calls(make_config("progressive", agents=2))


def test_progressive_never_returns_an_initial_idea_that_skipped_both_phases():
    # agents=2, ideas_per_agent=2: initial top 2 by SCORES = plan 1b (9), plan 2a (6).
    # Novelty: 1y 9, 2x 7 go forward; refined versions rated 8 (edible) and 1 (barges).
    # Old rule (vote over refined + initial): plan 1b (9) would win. Now only the two refined
    # ideas are finalists: the edible one (8) is returned.
    def turn(speaker, prompt):
        if "radically new ideas" in prompt:
            n = speaker.split()[1]
            return f"wild {n}x idea with floating barges\nwild {n}y idea with edible packaging"
        if "more useful and workable" in prompt:
            return "\n".join(f"{idea} refined by {speaker}" for _, idea in shown_ideas(prompt))
        raise AssertionError(prompt)

    def rate(speaker, idea):
        if idea.startswith("plan"):
            return score_by_tag(speaker, idea)
        if "refined" in idea:
            return 8 if "edible" in idea else 1
        return {"1x": 3, "1y": 9, "2x": 7, "2y": 2}[re.search(r"wild (\d[xy])", idea).group(1)]

    backend = ScriptedBackend(responder=responder(generate=two_ideas, rate=rate, turn=turn))
    c = run(backend, "progressive", agents=2, ideas_per_agent=2, refine_top=2)
    assert c.final_idea == "wild 1y idea with edible packaging refined by Agent 1 refined by Agent 2"
    last_vote = backend.history[-1]["messages"][-1]["content"]
    assert len(shown_ideas(last_vote)) == 2 and "plan 1b" not in last_vote
    assert c.meta["final_from"] == "refined" and c.meta["refine_unparsed"] == 0


class FixedUsage(Backend):
    """Every reply costs 10 prompt and 3 completion tokens (or reports no usage)."""
    kind = "fixed"

    def __init__(self, reply, usage=True):
        super().__init__(model="fixed")
        self.reply, self.with_usage = reply, usage

    async def _complete(self, messages, *, temperature, max_tokens, seed):
        text = self.reply(messages)
        if not self.with_usage:
            return ChatResult(text=text)
        return ChatResult(text=text, prompt_tokens=10, completion_tokens=3)


def test_conversation_records_prompt_completion_and_total_tokens_of_every_call():
    # instructed, hand-raising, 3 agents, turn limit 1, no initial phase: the first turn is a
    # proposal by one agent (1 call). Turn limit 1 -> 1 call: 10 / 3 / 13.
    # With turn limit 2 the second turn is a hand-raise: 3 drafts (not recorded as turns) +
    # 3 bids = 6 calls -> 7 calls in all: prompt 70, completion 21, total 91, 5 turns recorded.
    def reply(messages):
        prompt = messages[-1]["content"]
        return "4" if "scale from 1 (adds" in prompt else "Modify: a new bottle deposit game - Reason: r"

    c = run(FixedUsage(reply), "instructed", agents=3, order="raise", turn_limit=2,
            initial_generation=False)
    assert len(c.turns) == 5 and c.meta["calls"] == 7
    assert (c.meta["prompt_tokens"], c.meta["completion_tokens"], c.meta["total_tokens"]) == (70, 21, 91)
    assert c.meta["calls_without_usage"] == 0
    silent = run(FixedUsage(reply, usage=False), "instructed", agents=3, order="raise", turn_limit=2,
                 initial_generation=False)
    assert silent.meta["total_tokens"] is None and silent.meta["calls_without_usage"] == 7
    # the tokens survive the corpus round trip (Conversation.to_dict / from_dict)
    from engine.corpus import Conversation
    again = Conversation.from_dict(c.to_dict())
    assert again.meta["total_tokens"] == 91


def test_open_has_no_initial_generation_by_default_and_a_flag_adds_it():
    assert make_config("open").initial_generation is False
    assert make_config("open", initial_generation=True).initial_generation is True
    assert make_config("instructed").initial_generation is True
    assert make_config("iterative").initial_generation is True
    backend = ScriptedBackend(responder=responder(
        generate=two_ideas, rate=score_by_tag,
        turn=lambda s, p: "FINAL IDEA: x y z w" if "FINAL" in p else f"{s} talks"))
    c = run(backend, "open", agents=3, turn_limit=2)
    assert [t.phase for t in c.turns] == ["discussion", "discussion", "synthesis"]
    assert c.meta["initial_generation"] is False
    c = run(backend, "open", agents=3, ideas_per_agent=2, turn_limit=2, initial_generation=True)
    assert [t.phase for t in c.turns][:6] == ["generation"] * 3 + ["rating"] * 3
    assert "Starting idea chosen by the team:\nplan 1b" in backend.history[-3]["messages"][-1]["content"]


def test_cli_initial_generation_flag_is_opt_in():
    import argparse

    from engine.cli import run as cli_run

    parser = argparse.ArgumentParser()
    cli_run.register(parser.add_subparsers())
    base = ["run", "--method", "open", "--task", "plastic_waste", "--out", "x"]
    assert "initial_generation" not in cli_run.grid_from_args(parser.parse_args(base))["conditions"][0]
    on = cli_run.grid_from_args(parser.parse_args(base + ["--initial-generation"]))
    assert on["conditions"][0]["initial_generation"] is True
    off = cli_run.grid_from_args(parser.parse_args(base + ["--no-initial-generation"]))
    assert off["conditions"][0]["initial_generation"] is False


# -- paper B ------------------------------------------------------------------------------------------
def debate_responder(choice="Response 2"):
    def reply(messages):
        prompt = messages[-1]["content"]
        if "Answer only 'Response N'" in prompt:
            return choice
        system = messages[0]["content"]
        count = prompt.count("Response from another agent")
        return f"answer after seeing {count} peers [{len(system)}]"
    return reply


def test_homo_mad_calls_rounds_peers_and_consensus():
    backend = ScriptedBackend(responder=debate_responder("Response 2"))
    c = run(backend, "homo_mad", agents=3, rounds=2)
    assert len(backend.history) == 3 * (2 + 1) + 1 == expected_calls(make_config("homo_mad", agents=3, rounds=2))
    assert [(t.phase, t.round) for t in c.turns] == [("initial", 0)] * 3 + [("debate", 1)] * 3 + \
        [("debate", 2)] * 3 + [("consensus", 3)]
    assert [t.meta["peers"] for t in c.turns if t.phase == "debate"][:3] == [
        ["Agent 2", "Agent 3"], ["Agent 1", "Agent 3"], ["Agent 1", "Agent 2"]]
    assert c.final_idea == c.turns[7].text and c.meta["consensus_choice"] == 1
    seeds = [h["seed"] for h in backend.history]
    assert len(set(seeds)) == len(seeds)  # identical prompts never share a seed


def test_consensus_unreadable_is_retried_then_picked_by_seeded_chance_not_position():
    import random

    backend = ScriptedBackend(responder=debate_responder("I like them all"))
    c = run(backend, "voting", agents=3, seed=5)
    assert len(backend.history) == 3 + 3 and c.meta["consensus_parsed"] is False
    choice = random.Random("5:consensus").randrange(3)
    assert c.meta["consensus_choice"] == choice and c.final_idea == c.turns[choice].text


def test_most_distant_peers_by_hand():
    vectors = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-1.0, 0.0]])
    # cosine distances: d12=.2 d13=1 d14=2 d23=.4 d24=1.8 d34=1 -> farthest two, ties -> lower index
    assert most_distant_peers(vectors, 2) == [[3, 2], [3, 2], [0, 3], [0, 1]]
    assert most_distant_peers(vectors, 1) == [[3], [3], [0], [0]]


def test_creative_mad_lenses_and_embedding_peer_selection():
    vectors = {0: [1.0, 0.0], 1: [0.8, 0.6], 2: [0.0, 1.0], 3: [-1.0, 0.0]}

    def reply(messages):
        prompt = messages[-1]["content"]
        if "Answer only 'Response N'" in prompt:
            return "Response 4"
        lens = re.search(r"the (\w+) lens", messages[0]["content"], re.I).group(1).lower()
        return f"{lens} answer"

    lens_index = {"logical": 0, "emotional": 1, "critical": 2, "analogical": 3}

    def embed(texts):
        return np.array([vectors[lens_index[t.split()[0]]] for t in texts])

    backend = ScriptedBackend(responder=reply)
    c = run(backend, "creative_mad", agents=4, rounds=1, k=2, embedder=embed)
    systems = [h["messages"][0]["content"] for h in backend.history[:4]]
    for system, lens in zip(systems, ["LOGICAL", "EMOTIONAL", "CRITICAL", "ANALOGICAL"]):
        assert f"the {lens} lens" in system
    peers = [t.meta["peers"] for t in c.turns if t.phase == "debate"]
    assert peers == [["Agent 4", "Agent 3"], ["Agent 4", "Agent 3"], ["Agent 1", "Agent 4"],
                     ["Agent 1", "Agent 2"]]
    first_prompt = backend.history[4]["messages"][-1]["content"]
    assert "analogical answer" in first_prompt and "critical answer" in first_prompt
    assert "emotional answer" not in first_prompt
    assert c.final_idea == "analogical answer" and len(backend.history) == 4 * 2 + 1


def test_hetero_mad_gives_each_agent_its_own_persona():
    backend = ScriptedBackend(responder=debate_responder())
    run(backend, "hetero_mad", agents=4, rounds=1)
    systems = [h["messages"][0]["content"] for h in backend.history[:4]]
    assert len(set(systems)) == 4


def test_direct_and_self_refine_call_counts():
    backend = ScriptedBackend(["only answer"])
    assert run(backend, "direct").final_idea == "only answer"
    backend = ScriptedBackend(["draft", "feedback 1", "revision 1", "feedback 2", "revision 2"])
    c = run(backend, "self_refine", rounds=2)
    assert c.final_idea == "revision 2"
    assert [t.phase for t in c.turns] == ["initial", "feedback", "refine", "feedback", "refine"]
    assert "feedback 2" in backend.history[4]["messages"][-1]["content"]


def test_debate_round_calls_are_issued_concurrently():
    class Barrier(Backend):
        """Answers only once ``width`` calls are in flight together (or times out)."""
        kind = "barrier"

        def __init__(self, width):
            super().__init__(model="barrier", concurrency=64)
            self.width, self.waiting, self.event = width, 0, None

        async def _complete(self, messages, *, temperature, max_tokens, seed):
            if "Answer only 'Response N'" in messages[-1]["content"]:
                return ChatResult(text="Response 1")
            if self.event is None or self.event.is_set():
                self.event, self.waiting = asyncio.Event(), 0
            event = self.event
            self.waiting += 1
            if self.waiting == self.width:
                event.set()
            await asyncio.wait_for(event.wait(), timeout=2)
            return ChatResult(text="together")

    c = run(Barrier(5), "homo_mad", agents=5, rounds=2)
    assert c.status == "ok" and len(c.turns) == 16


def test_failure_mid_session_keeps_received_turns():
    backend = ScriptedBackend(["first idea text", "Modify: second version of it - Reason: r",
                               BackendError("HTTP 401 invalid key sk-abcdefghijklmnop")])
    c = run(backend, "instructed", agents=3, turn_limit=5, initial_generation=False)
    assert c.status == "failed" and len(c.turns) == 2
    assert "401" in c.error and "sk-abcdefghij" not in c.error


def test_bad_options_name_the_field():
    with pytest.raises(InputError, match="turn_limt"):
        make_config("open", turn_limt=3)
    with pytest.raises(InputError, match="order"):
        make_config("open", order="raise")
    with pytest.raises(InputError, match="k"):
        make_config("creative_mad", agents=3, k=3)
    with pytest.raises(InputError, match="pool"):
        make_config("instructed", pool=3, initial_generation=False)
    with pytest.raises(InputError, match="unknown method"):
        make_config("debate")
    assert make_config("homo_mad").agents == 5 and make_config("open").agents == 3
