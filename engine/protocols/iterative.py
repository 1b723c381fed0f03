"""Paper A, "Iterative Refinement" (A.1.2): propose, select, keep the best, with backtracking.

Each turn one agent (fixed or random order) proposes a new idea meant to beat the current
one; a selection among the candidate, the current idea and recent ideas makes the new
current idea, so the team may keep, adopt, or go back to a recent idea. Stops when the same
idea is selected ``convergence`` times in a row (default: the team size, i.e. 3 or 6 as in
the paper) or at ``turn_limit`` proposals. Without the initial phase, the first proposal
starts as the current idea.

``fidelity="paper"`` (the text: "All agents rated the new candidate, the current idea, and
recently explored past ideas on creativity (1-10 scale)"): the proposer sees the current
idea and the recent ideas; every agent rates the options 1-10 and the highest mean wins
(ties keep the current idea, then the candidate). Recent ideas: the last ``agents + 1``
ideas considered but not selected. 1 + N calls per turn.

``fidelity="release"`` (``generation/discussion_modes.py``, ``run_iterative_refinement`` and
``run_direct_iterative_refinement``; ``message_strategies.py``,
``_add_iterative_refinement_instructions``): the proposer sees every idea generated so far
(all the initial phase's ranked ideas, then every proposal) and, after proposing, alone
picks the best of its proposal, the current idea and the last ``agents + 1`` current ideas
(repeats included, shown once, shuffled), asked to copy it verbatim. The reply, minus a
leading "Idea N:", becomes the current idea even when it copies no option (``verbatim``
in the pick's meta says whether it did; ``meta["picks_not_verbatim"]`` counts those). 2
calls per turn.
"""

from __future__ import annotations

import re

from engine import prompts

from engine.prompts import release as prompts_release
from engine.protocols.session import Session
from engine.protocols.team import build_team, initial_phase, rank, rate

_IDEA_LABEL = re.compile(r"^Idea\s*\d+:\s*")


async def run(session: Session) -> str:
    config = session.config
    agents = build_team(session)
    ranked = await initial_phase(session) if config.initial_generation else []
    current = ranked[0] if ranked else None
    convergence = config.convergence or config.agents
    select = _release_turn if config.fidelity == "release" else _paper_turn
    memory = {"recent": [], "generated": list(ranked), "not_verbatim": 0}
    last_choice, streak, stop = None, 0, "turn_limit"
    for number in range(1, config.turn_limit + 1):
        agent = session.next_speaker(agents)
        best = await select(session, agent, current, number, memory)
        if current is None:  # the first proposal starts as the current idea
            current = best
            continue
        current = best
        streak = streak + 1 if best == last_choice else 1
        last_choice = best
        if streak >= convergence:
            stop = "converged"
            break
    session.meta.update(stop_reason=stop, convergence=convergence, streak=streak)
    if config.fidelity == "release":
        session.meta["picks_not_verbatim"] = memory["not_verbatim"]
    return current


async def _paper_turn(session: Session, agent, current: str | None, number: int, memory: dict) -> str:
    config = session.config
    proposal = await session.ask(agent.name, prompts.iterative_propose(
        agent.system, current, memory["recent"], config.idea_words), phase="discussion", round=number)
    candidate = proposal.text
    if current is None:
        return candidate
    options = list(dict.fromkeys([current, candidate, *memory["recent"]]))
    means = await rate(session, options, round=number)
    best = options[rank(options, means, session)[0]]
    proposal.meta["adopted"] = best == candidate
    memory["recent"] = [idea for idea in dict.fromkeys([current, candidate, *memory["recent"]])
                        if idea != best][:config.agents + 1]
    return best


async def _release_turn(session: Session, agent, current: str | None, number: int, memory: dict) -> str:
    config = session.config
    if current is None:  # run_direct_iterative_refinement: the first turn only proposes
        messages = prompts.iterative_propose(agent.system, None, [], config.idea_words)
    else:
        messages = prompts_release.iterative_propose(agent.system, memory["generated"])
    proposal = await session.ask(agent.name, messages, phase="discussion", round=number)
    candidate = proposal.text
    memory["generated"].append(candidate)
    if current is None:
        return candidate
    options = list(dict.fromkeys([candidate, current, *memory["recent"]]))
    session.rng.shuffle(options)
    pick = await session.ask(agent.name, prompts_release.iterative_pick(agent.system, options),
                             phase="rating", round=number, criterion="pick",
                             shown=len(options))
    best = _IDEA_LABEL.sub("", pick.text)
    pick.meta["verbatim"] = best in options
    memory["not_verbatim"] += best not in options
    proposal.meta["adopted"] = best == candidate or candidate in best
    memory["recent"] = (memory["recent"] + [current])[-(config.agents + 1):]
    return best
