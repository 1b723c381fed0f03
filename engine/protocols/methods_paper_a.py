"""Paper A's five discussion structures (appendix A.1.2, Table 6), described once each.

Protocols: ``engine.protocols.none``, ``open``, ``instructed``, ``iterative``, ``progressive``
(shared team steps in ``engine.protocols.team``). Every structure is a team of 3 by default
(the paper's teams are 3 or 6), runs for discussion turns (``turn_limit``) and takes the
paper/release ``fidelity`` (``engine.protocols.fidelity_modes``). The initial generation phase is
on by default, except for ``open``, whose Table 6 conditions 9-16 have none; ``none`` and
``progressive`` are built on it. Call counts are the most a stopping rule allows.
"""

from __future__ import annotations

from engine.protocols.method import Method, initial_calls

# Options of every team structure (``engine.protocols.team``: personas, speaking order,
# interactive or nominal generation, the initial phase and its ratings).
TEAM_OPTIONS = frozenset({"agents", "temperature", "max_tokens", "models", "idea_words", "persona", "order",
                          "generation", "initial_generation", "ideas_per_agent", "rating_max_tokens"})


def _none_calls(config, with_retries: bool) -> int:
    return initial_calls(config)


def _open_calls(config, with_retries: bool) -> int:
    """``turn_limit`` turns, then one synthesis."""
    return initial_calls(config) + config.turn_limit + 1


def _instructed_calls(config, with_retries: bool) -> int:
    """Each turn reads one reply (hand-raising: every agent's draft, plus every agent's bid);
    ``with_retries``: an unreadable reply asked ``config.attempts`` times in all (the release
    asks once without an initial phase, in fixed or random order)."""
    raising = config.order == "raise"
    asked = config.agents if raising else 1
    bids = config.agents if raising else 0
    asks_again = config.fidelity != "release" or config.initial_generation or raising
    attempts = config.attempts if with_retries and asks_again else 1
    return initial_calls(config) + config.turn_limit * (asked * attempts + bids)


def _iterative_calls(config, with_retries: bool) -> int:
    """A proposal and a selection per turn: every agent rates (paper), or the proposer picks (release)."""
    per_turn = 2 if config.fidelity == "release" else 1 + config.agents
    return initial_calls(config) + config.turn_limit * per_turn


def _progressive_calls(config, with_retries: bool) -> int:
    """Divergent ideas, novelty ratings, refinements and the final ratings: one call each per agent."""
    return initial_calls(config) + 4 * config.agents


NONE = Method(
    name="none", run="engine.protocols.none:run", calls=_none_calls, paper="A",
    label="no discussion", code="NONE", colour="black",
    citation="Paper A, appendix A.1.2 (No Discussion / None); Table 6",
    turn_limited=True, needs_initial_generation=True, options=TEAM_OPTIONS | {"fidelity"},
    small_options=dict(agents=2, ideas_per_agent=2),
    worked_calls=(({"agents": 3}, 6, 6),))  # the initial phase: 3 proposals + 3 ratings
OPEN = Method(
    name="open", run="engine.protocols.open:run", calls=_open_calls, paper="A",
    label="open discussion", code="OPEN", colour="blue",
    citation="Paper A, appendix A.1.2 (Open Discussion); Table 6, conditions 9-16",
    turn_limited=True, initial_generation=False, options=TEAM_OPTIONS | {"fidelity", "turn_limit"},
    small_options=dict(agents=2, turn_limit=2, initial_generation=False),
    # 10 turns + 1 synthesis; with the initial phase 2 x 3 more
    worked_calls=(({"agents": 3, "turn_limit": 10}, 11, 11),
                  ({"agents": 3, "turn_limit": 10, "initial_generation": True}, 17, 17)))
INSTRUCTED = Method(
    name="instructed", run="engine.protocols.instructed:run", calls=_instructed_calls, paper="A",
    label="instructed discussion", code="INST", colour="orange",
    citation="Paper A, appendix A.1.2 (Instructed Discussion: Agree / Modify / Replace); Table 6",
    turn_limited=True, hand_raising=True,
    options=TEAM_OPTIONS | {"fidelity", "turn_limit", "min_rounds", "pool", "reply_attempts"},
    small_options=dict(agents=2, turn_limit=2, initial_generation=False),
    # initial phase 6 + 10 readings (asked up to 3 times: 30); hand-raising: 3 drafts + 3 bids a
    # turn (drafts asked 3 times: 9 + 3); release: no initial phase asks once, with it 50 times
    worked_calls=(({"agents": 3, "turn_limit": 10}, 6 + 10, 6 + 10 * 3),
                  ({"agents": 3, "turn_limit": 10, "order": "raise"}, 6 + 10 * (3 + 3), 6 + 10 * (3 * 3 + 3)),
                  ({"agents": 3, "turn_limit": 10, "fidelity": "release", "initial_generation": False}, 10, 10),
                  ({"agents": 3, "turn_limit": 10, "fidelity": "release"}, 16, 6 + 10 * 50)))
ITERATIVE = Method(
    name="iterative", run="engine.protocols.iterative:run", calls=_iterative_calls, paper="A",
    label="iterative discussion", code="ITER", colour="green",
    citation="Paper A, appendix A.1.2 (Iterative Refinement); Table 6",
    turn_limited=True, options=TEAM_OPTIONS | {"fidelity", "turn_limit", "convergence"},
    small_options=dict(agents=2, turn_limit=2, initial_generation=False),
    # initial phase 6 + 10 turns of a proposal and 3 ratings (release: a proposal and a pick)
    worked_calls=(({"agents": 3, "turn_limit": 10}, 6 + 10 * 4, 46),
                  ({"agents": 3, "turn_limit": 10, "fidelity": "release"}, 6 + 10 * 2, 26)))
PROGRESSIVE = Method(
    name="progressive", run="engine.protocols.progressive:run", calls=_progressive_calls, paper="A",
    label="progressive discussion", code="PROG", colour="purple",
    citation="Paper A, appendix A.1.2 (Progressive Improvement); Table 6",
    turn_limited=True, needs_initial_generation=True, options=TEAM_OPTIONS | {"fidelity", "refine_top"},
    small_options=dict(agents=2, ideas_per_agent=2, refine_top=2),
    worked_calls=(({"agents": 3}, 6 + 12, 18),))  # initial phase 6 + 4 steps x 3 agents

METHODS = (NONE, OPEN, INSTRUCTED, ITERATIVE, PROGRESSIVE)
