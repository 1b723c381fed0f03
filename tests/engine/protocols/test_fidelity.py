"""Paper A's structures in both fidelities, on a scripted backend.

Every expected transcript and call sequence below was worked out by hand: the ``paper``
expectations from paper A's appendix A.1.2, the ``release`` ones by stepping through the
authors' generation code (GitHub ``pitehu/llm_multiagent_creativity``: ``generation/
discussion_modes.py``, ``data_strategies.py``, ``message_strategies.py``, ``conversation.py``),
function by function, for the same scripted replies.
"""

from __future__ import annotations

import asyncio
import random
import re

import pytest

from engine.errors import InputError
from engine.llm import ScriptedBackend
from engine.protocols import actions, expected_calls, make_config, run_session

TASK = "plastic_waste"

# Six initial ideas with (nearly) disjoint words, ranked by the score every agent gives them:
# R1 (9) > R2 (8) > R3 (6) > R4 (5) > R5 (4) > R6 (2)
R1, R2 = "seaweed wrappers replace takeaway film", "river cleanup funded through bag taxes"
R3, R4 = "school contests collecting bottle caps", "phone app rewards reusable cup owners"
R5, R6 = "glass deposit kiosks refund cash", "street vendors banned from cutlery"
IDEAS = {"Agent 1": [R5, R1], "Agent 2": [R2, R6], "Agent 3": [R3, R4]}
SCORES = {R1: 9, R2: 8, R3: 6, R4: 5, R5: 4, R6: 2}
LOTTERY = "a citywide deposit lottery for every bottle"


def speaker_of(messages):
    return re.search(r"You are (Agent \d+)\.", messages[0]["content"]).group(1)


def shown(prompt):
    return re.findall(r"^Idea (\d+): (.*)$", prompt, re.M)


def turn_number(prompt):
    found = re.search(r"Turn (\d+) of at most|this is turn (\d+)\.", prompt)
    return int(found.group(1) or found.group(2))


def route(*, turns=None, bids=None, rate=None, other=None):
    """Answer by what the prompt asks: generation, ratings, bids, instructed turns, the rest."""
    def reply(messages):
        prompt, speaker = messages[-1]["content"], speaker_of(messages)
        if "different ideas" in prompt and prompt.startswith(("Write", "Ideas already")):
            return "\n".join(IDEAS[speaker])
        if "'Idea N: score'" in prompt:
            rater = rate or (lambda s, idea: SCORES[idea])
            return "\n".join(f"Idea {n}: {rater(speaker, idea)}" for n, idea in shown(prompt))
        if "scale from 1 (adds" in prompt or "rate how much your suggested response" in prompt:
            return bids(speaker, prompt)
        if "Choose one action" in prompt:
            return turns(speaker, prompt)
        return other(speaker, prompt)
    return reply


def by_turn(table):
    """Replies popped per turn number: table = {turn: [first ask, second ask, ...]}."""
    queues = {k: list(v) for k, v in table.items()}
    return lambda speaker, prompt: queues[turn_number(prompt)].pop(0)


def run(backend, method, *, seed=0, **options):
    config = make_config(method, **options)
    return asyncio.run(run_session(backend, TASK, config, conversation_id=f"{method}-test", seed=seed))


def discussion(c):
    return [t for t in c.turns if t.phase == "discussion"]


BOTH = pytest.mark.parametrize("fidelity", ["paper", "release"])


# -- the option ----------------------------------------------------------------------------------
def test_fidelity_is_an_option_of_paper_a_recorded_in_id_and_meta():
    from engine.runs.grid import options_hash

    assert make_config("open").fidelity == "paper"
    assert make_config("open", fidelity="release").fidelity == "release"
    assert options_hash(make_config("open")) != options_hash(make_config("open", fidelity="release"))
    assert make_config("iterative", fidelity="release").meta()["fidelity"] == "release"
    assert make_config("homo_mad").fidelity is None and "fidelity" not in make_config("homo_mad").meta()
    # paper B's session ids are unchanged by the new option (left out of the hash when unset)
    assert "fidelity" not in make_config("homo_mad").hash_payload()
    with pytest.raises(InputError, match="fidelity"):
        make_config("homo_mad", fidelity="release")
    with pytest.raises(InputError):
        make_config("open", fidelity="authors")
    assert make_config("instructed").attempts == 3
    assert make_config("instructed", fidelity="release").attempts == 50  # generate_with_retries
    assert make_config("instructed", fidelity="release", reply_attempts=5).attempts == 5


# -- 1: a keyword counts where it begins a line ------------------------------------------------------
def test_action_readers_by_hand():
    pool = [R2, R3]
    text = "I agree with the direction, but\nModify: deposit league for school bottles - Reason: reach"
    assert actions.read_paper(text) == ("modify", "deposit league for school bottles", None, None)
    assert actions.read_release(text) == ("modify", "deposit league for school bottles", None, None)
    text = "We should not modify it.\nAgree: No changes needed"
    assert actions.read_paper(text).kind == actions.read_release(text).kind == "agree"
    # on one line, "agree" and "Modify:" in the middle: no line starts with a keyword
    assert actions.read_paper("I agree, but Modify: a deposit league for bottles") is None
    assert actions.read_release("I agree, but Modify: a deposit league for bottles") is None
    # the careful reader ignores case, bold and list markers; the release needs 'Modify:' as written
    for text in ("modify: deposit league for school bottles", "**Modify:** deposit league for school bottles",
                 "1. Modify - deposit league for school bottles"):
        assert actions.read_paper(text).idea == "deposit league for school bottles"
    assert actions.read_release("**Modify:** deposit league for school bottles").idea == \
        "deposit league for school bottles"
    assert actions.read_release("modify: deposit league for school bottles") is None
    assert actions.read_release("1. Modify - deposit league for school bottles") is None
    # release: an empty 'Modify:' takes the first later line not starting 'Reason:' ...
    assert actions.read_release("Modify:\nReason: bolder\nreal idea on the third line").idea == \
        "real idea on the third line"
    # ... and with no idea at all it is read as Agree (the release's default result)
    assert actions.read_release("Modify:").kind == "agree"
    assert actions.read_paper("Modify:") is None
    # Replace while the pool holds ideas: only a pool idea (release: exactly as written)
    assert actions.read_release(f"Replace: {R3} - Reason: x", pool) == ("replace", R3, 1, None)
    assert actions.read_paper(f"Replace: {R3}! - Reason: x", pool) == ("replace", R3, 1, None)
    assert actions.read_release(f"Replace: {R3}! - Reason: x", pool) is None
    assert actions.read_paper(f"Replace: {LOTTERY}", pool) is None
    assert actions.read_release(f"Replace: {LOTTERY}", pool) is None
    assert actions.read_paper(f"Replace: {LOTTERY}", []).idea == LOTTERY
    assert actions.read_release(f"Replace: {LOTTERY}", []).idea == LOTTERY
    # the release's reading where it does not ask again: no action line = Agree
    assert actions.read_release("Sounds good to me", validate=False).kind == "agree"


@BOTH
def test_line_start_keywords_in_a_session(fidelity):
    # Initial phase: current idea R1. t1 Agent 1: "I agree ..., but\nModify: M" -> Modify (the old
    # first-word-anywhere reader took it as Agree); t2 Agent 2: "We should not modify it.\nAgree: ..."
    # -> Agree (the old reader: Modify with the idea "it." -> unreadable). Limit 2.
    m = "plastic free school lunches with deposit boxes"
    replies = {1: [f"I agree with the goal, but\nModify: {m} - Reason: reach"],
               2: ["We should not modify it.\nAgree: No changes needed"]}
    backend = ScriptedBackend(responder=route(turns=by_turn(replies)))
    c = run(backend, "instructed", agents=3, ideas_per_agent=2, turn_limit=2, fidelity=fidelity)
    assert [t.meta["action"] for t in discussion(c)] == ["modify", "agree"]
    assert [t.speaker for t in discussion(c)] == ["Agent 1", "Agent 2"]
    assert c.final_idea == m and c.meta["stop_reason"] == "turn_limit"
    assert len(backend.history) == 3 + 3 + 2


# -- 2: unreadable replies are asked again, up to a stated limit, and counted -------------------------
def test_unreadable_replies_paper_asks_three_times_then_counts_the_turn():
    m = "neighbourhood deposit league for bottles"
    replies = {1: ["I like it a lot", "Still thinking", f"Modify: {m} - Reason: x"],
               2: ["hmm", "no idea", "nothing to add"]}
    backend = ScriptedBackend(responder=route(turns=by_turn(replies)))
    c = run(backend, "instructed", agents=3, ideas_per_agent=2, turn_limit=2)
    turns = discussion(c)
    assert [t.meta["attempts"] for t in turns] == [3, 3]
    assert [t.meta["action"] for t in turns] == ["modify", None]
    assert [t.text for t in turns] == [f"Modify: {m} - Reason: x", "nothing to add"]
    assert c.status == "ok" and c.final_idea == m
    assert c.meta["replies"] == {"turns": 2, "reasked": 4, "unreadable": 1, "read_as_agree": 0}
    assert len(backend.history) == 6 + 3 + 3 == c.meta["calls"]
    # an ask again repeats the same messages (a new seed)
    assert backend.history[6]["messages"] == backend.history[7]["messages"] == backend.history[8]["messages"]
    assert len({h["seed"] for h in backend.history[6:9]}) == 3
    # the refused replies cost tokens but are not turns
    assert c.meta["completion_tokens"] > sum(t.tokens for t in c.turns)


def test_unreadable_replies_release_asks_fifty_times_then_the_session_fails():
    m = "neighbourhood deposit league for bottles"
    replies = {1: ["I like it", "ok", "fine", f"Modify: {m} - Reason: x"], 2: ["hmm"] * 50}
    backend = ScriptedBackend(responder=route(turns=by_turn(replies)))
    c = run(backend, "instructed", agents=3, ideas_per_agent=2, turn_limit=2, fidelity="release")
    assert c.status == "failed" and c.error.startswith("UnreadableReply")
    assert "50 attempts" in c.error
    assert len(backend.history) == 6 + 4 + 50
    assert [t.meta["attempts"] for t in discussion(c)] == [4]
    assert expected_calls(make_config("instructed", agents=3, turn_limit=2, fidelity="release"),
                          with_retries=True) == 6 + 2 * 50


@BOTH
def test_without_initial_phase_release_reads_no_action_as_agree(fidelity):
    # direct_discussion_ps_all_at_once: t1 Agent 1 proposes X; Agents 2, 3, 1 answer without an
    # action line. Release (no re-ask, _parse_one_by_one_response -> "agree"): agreed {2}, {2,3},
    # {1,2,3}: 4 calls, all agreed. Paper: each of turns 2-4 asked 3 times, all unreadable:
    # 1 + 9 calls, nobody agreed, the turn limit ends it.
    proposal = "a bottle deposit scheme run by schools"
    backend = ScriptedBackend(responder=route(
        turns=lambda s, p: "Sounds good to me", other=lambda s, p: proposal))
    c = run(backend, "instructed", agents=3, turn_limit=4, initial_generation=False, fidelity=fidelity)
    assert c.final_idea == proposal
    if fidelity == "release":
        assert len(backend.history) == 4 and c.meta["stop_reason"] == "all_agreed"
        assert c.meta["replies"]["read_as_agree"] == 3 and c.meta["replies"]["reasked"] == 0
        assert [len(t.meta["agreed"]) for t in c.turns] == [0, 1, 2, 3]
    else:
        assert len(backend.history) == 1 + 3 * 3 and c.meta["stop_reason"] == "turn_limit"
        assert c.meta["replies"] == {"turns": 3, "reasked": 6, "unreadable": 3, "read_as_agree": 0}


# -- 3: the replacement pool ---------------------------------------------------------------------------
@BOTH
def test_replacement_pool(fidelity):
    # ranked R1..R6, pool=2: current R1, pool [R2, R3], release keeps [R4, R5, R6] to refill.
    # t1 Agent 1 "Replace: R3": both take it (pool index 1); paper pool [R2]; release refills
    #    update_shared_data -> [R2, R4], replaced [R1].
    # t2 Agent 2: a new idea while the pool holds ideas -> both ask again; then "Replace: R4":
    #    paper: R4 is not in [R2] -> asked a third time, "Replace: R2" -> pool []; release: R4 is
    #    in [R2, R4] -> taken, refilled to [R2, R5], replaced [R1, R3].
    # t3 Agent 3: the new idea again: paper (pool empty) accepts it; release ([R2, R5]) asks
    #    again, "Replace: R5" -> refilled [R2, R6]. Limit 3.
    replies = {1: [f"Replace: {R3} - Reason: better"],
               2: [f"Replace: {LOTTERY} - Reason: bolder", f"Replace: {R4} - Reason: ok",
                   f"Replace: {R2} - Reason: fine"],
               3: [f"Replace: {LOTTERY} - Reason: bolder", f"Replace: {R5} - Reason: x"]}
    backend = ScriptedBackend(responder=route(turns=by_turn(replies)))
    c = run(backend, "instructed", agents=3, ideas_per_agent=2, pool=2, turn_limit=3, fidelity=fidelity)
    assert c.meta["pool_start"] == [R2, R3]
    turns = discussion(c)
    last_prompt = backend.history[-1]["messages"][-1]["content"]
    if fidelity == "paper":
        assert [t.meta["attempts"] for t in turns] == [1, 3, 1]
        assert [t.meta.get("from_pool") for t in turns] == [1, 0, None]
        assert c.final_idea == LOTTERY and c.meta["pool_left"] == 0
        assert "Replacement pool" not in last_prompt and "write a completely new idea" in last_prompt
    else:
        assert [t.meta["attempts"] for t in turns] == [1, 2, 2]
        assert [t.meta.get("from_pool") for t in turns] == [1, 1, 1]
        assert c.final_idea == R5 and c.meta["pool_left"] == 2
        assert f"Replacement pool:\n1. {R2}\n2. {R5}" in last_prompt
        assert f"Ideas replaced so far:\n1. {R1}\n2. {R3}" in last_prompt
    assert len(backend.history) == 6 + 5


# -- 4: what a turn sees --------------------------------------------------------------------------
@BOTH
def test_open_turn_sees_whole_discussion_or_last_n(fidelity):
    # 3 agents, 5 turns: the 5th speaker (Agent 2) sees turns 1-4 (paper) or the last 3 (release,
    # get_previous_responses with history_depth = team size)
    def other(speaker, prompt):
        if "FINAL IDEA" in prompt:
            return "FINAL IDEA: refill stations with deposit rewards"
        return f"{speaker} point {len(backend.history)}"

    backend = ScriptedBackend(responder=route(other=other))
    c = run(backend, "open", agents=3, turn_limit=5, initial_generation=False, fidelity=fidelity)
    fifth = backend.history[4]["messages"][-1]["content"]
    seen = re.findall(r"Agent \d point (\d)", fifth)
    assert seen == (["1", "2", "3", "4"] if fidelity == "paper" else ["2", "3", "4"])
    if fidelity == "release":
        assert "this is turn 5" in fifth and "1 turn(s) left" in fifth and "Now, Agent 2:" in fifth
    # the synthesis reads the whole discussion in both
    assert re.findall(r"Agent \d point (\d)", backend.history[5]["messages"][-1]["content"]) == \
        ["1", "2", "3", "4", "5"]
    assert c.final_idea == "refill stations with deposit rewards"


@BOTH
def test_instructed_turn_sees_whole_discussion_or_last_n_with_the_idea_before(fidelity):
    # every turn modifies: X1..X4 by Agents 1, 2, 3, 1; turn 5 (Agent 2) sees responses 1-4
    # (paper) or 2-4 with "the idea before" = X1, the idea when response 2 was made (release)
    versions = {n: [f"Modify: version number {n} of the plan - Reason: r"] for n in range(1, 6)}
    backend = ScriptedBackend(responder=route(turns=by_turn(versions)))
    c = run(backend, "instructed", agents=3, ideas_per_agent=2, turn_limit=5, fidelity=fidelity)
    fifth = backend.history[-1]["messages"][-1]["content"]
    seen = re.findall(r"version number (\d) of the plan - Reason", fifth)
    if fidelity == "paper":
        assert seen == ["1", "2", "3", "4"]
    else:
        assert seen == ["2", "3", "4"]
        assert "before the responses below:\n1. version number 1 of the plan\n" in fifth
        assert "Current idea:\n1. version number 4 of the plan" in fifth
    assert c.final_idea == "version number 5 of the plan"


# -- 5: iterative refinement ----------------------------------------------------------------------
P1, P2, P3 = "idea one about bottles", "idea two about refills", "idea three about deposits"


@BOTH
def test_iterative_selection(fidelity):
    # 3 agents, no initial phase, 3 proposals (Agents 1, 2, 3). P1 starts as the current idea.
    # paper: every agent rates; turn 2 prefers P2 (8 > 3); turn 3 prefers the recent P1 again
    #   -> calls 1 + (1 + 3) + (1 + 3) = 9.
    # release: the proposer alone picks: Agent 2 answers "Idea k: P2" (label stripped), Agent 3
    #   answers P1 verbatim -> calls 1 + 2 + 2 = 5; Agent 3's proposal prompt lists P1 and P2.
    proposals = iter([P1, P2, P3])
    opinion = iter([{P1: 3, P2: 8}, {P1: 9, P2: 6, P3: 2}])
    table = {}

    def other(speaker, prompt):
        if "Give the BEST idea" in prompt:
            wanted = P2 if P3 not in prompt else P1
            number = next(n for n, idea in shown(prompt) if idea == wanted)
            return f"Idea {number}: {wanted}" if wanted == P2 else wanted
        table.clear()
        if "Propose ONE" in prompt:
            table.update(next(opinion))
        return next(proposals)

    backend = ScriptedBackend(responder=route(other=other, rate=lambda s, idea: table[idea]))
    c = run(backend, "iterative", agents=3, turn_limit=3, initial_generation=False, fidelity=fidelity)
    assert c.final_idea == P1 and c.meta["stop_reason"] == "turn_limit"
    speakers = [speaker_of(h["messages"]) for h in backend.history]
    if fidelity == "paper":
        assert speakers == ["Agent 1", "Agent 2", "Agent 1", "Agent 2", "Agent 3",
                            "Agent 3", "Agent 1", "Agent 2", "Agent 3"]
    else:
        assert speakers == ["Agent 1", "Agent 2", "Agent 2", "Agent 3", "Agent 3"]
        third = backend.history[3]["messages"][-1]["content"]
        assert f"Ideas so far:\n1. {P1}\n2. {P2}\n" in third
        assert sorted(idea for _, idea in shown(backend.history[4]["messages"][-1]["content"])) == \
            sorted([P1, P2, P3])
        assert c.meta["picks_not_verbatim"] == 0
        picks = [t for t in c.turns if t.meta.get("criterion") == "pick"]
        assert [t.meta["verbatim"] for t in picks] == [True, True]  # "Idea k: " is removed first


def test_iterative_release_keeps_a_pick_that_copies_no_option_and_counts_it():
    # the release's best_idea is the reply (a leading "Idea N:" removed), never checked
    proposals = iter([P1, P2])
    backend = ScriptedBackend(responder=route(other=lambda s, p: "my own blend of both ideas"
                                              if "Give the BEST idea" in p else next(proposals)))
    c = run(backend, "iterative", agents=2, turn_limit=2, initial_generation=False, fidelity="release")
    assert c.final_idea == "my own blend of both ideas" and c.meta["picks_not_verbatim"] == 1


# -- 6: progressive ----------------------------------------------------------------------------------
@BOTH
def test_progressive_divergent_phase_and_final_vote(fidelity):
    # 2 agents x 2 initial ideas: Agent 1 [R5, R1], Agent 2 [R2, R6] -> ranked R1, R2, R5, R6.
    # Divergent: paper asks both at once, each shown the top 2; release asks in turn, Agent 2 shown
    # the 4 ranked ideas and Agent 1's two new ones. Novelty picks N1b and N2a; the refined ideas
    # are rated 5, the initial R1 keeps 9: release (final vote with the initial top 2) returns R1,
    # paper (refined only) the better refined idea.
    def other(speaker, prompt):
        n = speaker.split()[1]
        if "radically" in prompt or "radically NOVEL" in prompt:
            return f"novel {n}a floating barge depots\nnovel {n}b edible cutlery kits"
        if "more useful and workable" in prompt:
            return "\n".join(f"{idea} improved" for _, idea in shown(prompt))
        raise AssertionError(prompt)

    def rate(speaker, idea):
        if idea in SCORES:
            return SCORES[idea]
        if idea.endswith("improved"):
            return 7 if "edible" in idea else 5
        return {"1a": 3, "1b": 9, "2a": 7, "2b": 2}[re.search(r"novel (\d[ab])", idea).group(1)]

    backend = ScriptedBackend(responder=route(other=other, rate=rate))
    c = run(backend, "progressive", agents=2, ideas_per_agent=2, refine_top=2, fidelity=fidelity)
    diverge = [h["messages"][-1]["content"] for h in backend.history if "radically" in h["messages"][-1]["content"]]
    final_vote = backend.history[-1]["messages"][-1]["content"]
    assert c.meta["novel_selected"] == ["novel 1b edible cutlery kits", "novel 2a floating barge depots"]
    if fidelity == "paper":
        assert all(R5 not in p and R1 in p and R2 in p for p in diverge)  # top 2 only
        assert len(shown(final_vote)) == 2
        assert c.final_idea == "novel 1b edible cutlery kits improved improved"
    else:
        assert f"Ideas ranked by the team:\n1. {R1}\n2. {R2}\n3. {R5}\n4. {R6}" in diverge[1]
        assert "New ideas from teammates in this phase:\n1. novel 1a floating barge depots\n" \
               "2. novel 1b edible cutlery kits" in diverge[1]
        assert "New ideas from teammates in this phase:\n(none)" in diverge[0]
        assert sorted(idea for _, idea in shown(final_vote)) == sorted(
            [R1, R2, "novel 1b edible cutlery kits improved improved",
             "novel 2a floating barge depots improved improved"])
        assert c.final_idea == R1 and c.meta["final_from"] == "initial"
    assert len(backend.history) == 12


# -- 7: open discussion's synthesis ------------------------------------------------------------------
def test_open_synthesiser_random_agent_or_last_speaker():
    names = ["Agent 1", "Agent 2", "Agent 3"]

    def other(speaker, prompt):
        return "Here it is. FINAL IDEA: one shared refill app" if "FINAL IDEA" in prompt else f"{speaker} talks"

    chosen = {}
    for fidelity in ("paper", "release"):
        for seed in range(8):
            c = run(ScriptedBackend(responder=route(other=other)), "open", agents=3, turn_limit=4,
                    initial_generation=False, fidelity=fidelity, seed=seed)
            chosen.setdefault(fidelity, []).append(c.meta["synthesiser"])
            if fidelity == "release":
                assert c.final_idea == "one shared refill app"  # what follows "FINAL IDEA:"
    # paper: "one randomly selected agent" = the session's seeded generator's choice
    assert chosen["paper"] == [random.Random(seed).choice(names) for seed in range(8)]
    assert len(set(chosen["paper"])) > 1
    # release: the last speaker (turns by Agents 1, 2, 3, 1)
    assert chosen["release"] == ["Agent 1"] * 8


@BOTH
def test_open_initial_phase_is_shown_only_in_paper_mode(fidelity):
    backend = ScriptedBackend(responder=route(other=lambda s, p: "FINAL IDEA: x y z w" if "FINAL" in p
                                              else f"{s} talks"))
    run(backend, "open", agents=3, ideas_per_agent=2, turn_limit=2, initial_generation=True,
        fidelity=fidelity)
    first_turn = backend.history[6]["messages"][-1]["content"]
    assert (R1 in first_turn) == (fidelity == "paper")


# -- 8: hand-raising ---------------------------------------------------------------------------------
@BOTH
def test_hand_raising(fidelity):
    # bids: Agent 1 "3", Agent 2 "6.5", Agent 3 "9" at turn 1, "5" from everyone later.
    # paper (1-7): 9 is out of range (0) -> Agent 2 speaks and modifies; turn 2: all three bid 5,
    #   one (seeded tie-break) agrees; turn 3: the two others bid, one agrees; limit 3 ->
    #   calls 6 + 6 + 6 + 4 = 22, final Agent 2's version.
    # release (1-10, one decimal): Agent 3 (9) speaks; turn 2: agreements reset, all three bid 5,
    #   the chosen reply says "Agree: No changes needed" -> the discussion ends: calls 6 + 6 + 6.
    def turns(speaker, prompt):
        if turn_number(prompt) == 1:
            return f"Modify: {speaker.lower()} version of the seaweed plan - Reason: r"
        return "Agree: No changes needed"

    def bids(speaker, prompt):
        if "Modify:" in prompt:  # bidding on a turn-1 draft
            return {"Agent 1": "3", "Agent 2": "6.5", "Agent 3": "9"}[speaker]
        return "5\nReason: fine"

    backend = ScriptedBackend(responder=route(turns=turns, bids=bids))
    c = run(backend, "instructed", agents=3, ideas_per_agent=2, order="raise", turn_limit=3,
            fidelity=fidelity)
    raised = [t for t in c.turns if t.phase == "hand_raise"]
    spoke = discussion(c)
    if fidelity == "paper":
        assert [t.meta["desire"] for t in raised[:3]] == [3.0, 6.5, 0.0]
        assert spoke[0].speaker == "Agent 2" and len(spoke) == 3
        assert len(raised) == 3 + 3 + 2 and len(backend.history) == 22
        assert c.final_idea == "agent 2 version of the seaweed plan" and c.meta["stop_reason"] == "turn_limit"
        assert "(adds nothing) to 7" in backend.history[9]["messages"][-1]["content"]
    else:
        assert [t.meta["desire"] for t in raised[:3]] == [3.0, 6.5, 9.0]
        assert spoke[0].speaker == "Agent 3" and len(spoke) == 2
        assert len(raised) == 6 and len(backend.history) == 18
        assert c.final_idea == "agent 3 version of the seaweed plan"
        assert c.meta["stop_reason"] == "speaker_agreed"
        assert "one decimal place" in backend.history[9]["messages"][-1]["content"]


def test_release_bid_reading_by_hand():
    from engine.protocols.instructed import _bid

    # discussion_all_at_once: re.search(r'\d+(\.\d+)?'), clamped to [1, 10], none = 0
    assert [_bid(t, True) for t in ("7.5\nReason: x", "Score 12", "0.4", "none", "-3")] == \
        [7.5, 10.0, 1.0, 0.0, 3.0]
    assert [_bid(t, False) for t in ("6", "9", "none")] == [6.0, 0.0, 0.0]


@BOTH
def test_agree_before_min_rounds(fidelity):
    # everyone always agrees; min_rounds 3, limit 6, fixed order.
    # paper: refused at turns 1-3 (fewer than 3 turns elapsed), counted from turn 4: Agents 1, 2, 3
    #   agree at turns 4, 5, 6 -> all agreed at the limit.
    # release: Agree is only hidden before turn 3 and counted whenever said: all agreed after 3.
    backend = ScriptedBackend(responder=route(turns=lambda s, p: "Agree: No changes needed"))
    c = run(backend, "instructed", agents=3, ideas_per_agent=2, min_rounds=3, turn_limit=6,
            fidelity=fidelity)
    prompts = [h["messages"][-1]["content"] for h in backend.history[6:]]
    offered = ["Agree: if the current idea" in p for p in prompts]
    if fidelity == "paper":
        assert [t.meta["action"] for t in discussion(c)] == ["agree_refused"] * 3 + ["agree"] * 3
        assert offered == [False, False, False, True, True, True]
    else:
        assert [t.meta["action"] for t in discussion(c)] == ["agree"] * 3
        assert offered == [False, False, True]
    assert c.meta["stop_reason"] == "all_agreed"


@BOTH
def test_hand_raising_without_initial_phase_books_agreement(fidelity):
    # 3 agents, no initial phase, limit 4, every draft "Agree: No changes needed", equal bids.
    # paper: the proposer is Agent 1 (fixed rotation); each Agree counts for its speaker, so the
    #   bidders of turn 3 are the two agents that did not speak at turn 2.
    # release (direct_discussion_ps_all_at_once): the proposer is drawn at random; the chosen
    #   speaker never becomes current_agent, so update_shared_data books each Agree to the last
    #   bidder: turn 2's bidders A1-A3 -> A3 booked; turn 3's A1, A2 -> A2; turn 4's A1 -> all.
    # Both: 1 + (3 + 3) + (2 + 2) + (1 + 1) = 13 calls, all agreed at the limit.
    proposal = "a bottle deposit scheme run by schools"
    backend = ScriptedBackend(responder=route(turns=lambda s, p: "Agree: No changes needed",
                                              bids=lambda s, p: "5", other=lambda s, p: proposal))
    c = run(backend, "instructed", agents=3, order="raise", turn_limit=4, initial_generation=False,
            fidelity=fidelity, seed=3)
    assert len(backend.history) == 13 and c.meta["stop_reason"] == "all_agreed"
    bidders = {}
    for t in c.turns:
        if t.phase == "hand_raise":
            bidders.setdefault(t.round, []).append(t.speaker)
    spoke = {t.round: t.speaker for t in c.turns if t.phase == "discussion"}
    if fidelity == "release":
        assert bidders == {2: ["Agent 1", "Agent 2", "Agent 3"], 3: ["Agent 1", "Agent 2"], 4: ["Agent 1"]}
        assert [t.meta.get("agree_booked_to", t.speaker) for t in c.turns if t.round in (2, 3, 4)
                and t.phase == "discussion"] == ["Agent 3", "Agent 2", "Agent 1"]
    else:
        assert spoke[1] == "Agent 1"
        assert bidders[3] == [a for a in ["Agent 1", "Agent 2", "Agent 3"] if a != spoke[2]]
        assert bidders[4] == [a for a in ["Agent 1", "Agent 2", "Agent 3"] if a not in (spoke[2], spoke[3])]
