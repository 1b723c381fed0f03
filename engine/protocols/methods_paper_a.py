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
    turn_limited=True, needs_initial_generation=True, options=TEAM_OPTIONS | {"fidelity"})
OPEN = Method(
    name="open", run="engine.protocols.open:run", calls=_open_calls, paper="A",
    label="open discussion", code="OPEN", colour="blue",
    citation="Paper A, appendix A.1.2 (Open Discussion); Table 6, conditions 9-16",
    turn_limited=True, initial_generation=False, options=TEAM_OPTIONS | {"fidelity", "turn_limit"})
INSTRUCTED = Method(
    name="instructed", run="engine.protocols.instructed:run", calls=_instructed_calls, paper="A",
    label="instructed discussion", code="INST", colour="orange",
    citation="Paper A, appendix A.1.2 (Instructed Discussion: Agree / Modify / Replace); Table 6",
    turn_limited=True, hand_raising=True,
    options=TEAM_OPTIONS | {"fidelity", "turn_limit", "min_rounds", "pool", "reply_attempts"})
ITERATIVE = Method(
    name="iterative", run="engine.protocols.iterative:run", calls=_iterative_calls, paper="A",
    label="iterative discussion", code="ITER", colour="green",
    citation="Paper A, appendix A.1.2 (Iterative Refinement); Table 6",
    turn_limited=True, options=TEAM_OPTIONS | {"fidelity", "turn_limit", "convergence"})
PROGRESSIVE = Method(
    name="progressive", run="engine.protocols.progressive:run", calls=_progressive_calls, paper="A",
    label="progressive discussion", code="PROG", colour="purple",
    citation="Paper A, appendix A.1.2 (Progressive Improvement); Table 6",
    turn_limited=True, needs_initial_generation=True, options=TEAM_OPTIONS | {"fidelity", "refine_top"})

METHODS = (NONE, OPEN, INSTRUCTED, ITERATIVE, PROGRESSIVE)
