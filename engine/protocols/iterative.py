"""Paper A, "Iterative Refinement" (A.1.2): propose, rate, keep the best, with backtracking.

Each turn one agent (fixed or random order) proposes a new idea meant to beat the current
one; every agent rates the candidate, the current idea and the recently considered ideas
1-10; the highest mean becomes the current idea (ties keep the current idea, then the
candidate), so the team may keep, adopt, or go back to a recent idea. Recent ideas: the last
``agents + 1`` ideas considered but not selected. Stops when the same idea is selected
``convergence`` times in a row (default: the team size, i.e. 3 or 6 as in the paper) or
at ``turn_limit`` proposals. Without the initial phase, the first proposal starts as the
current idea.
"""

from __future__ import annotations

from engine import prompts
from engine.protocols.session import Session
from engine.protocols.team import build_team, initial_phase, rank, rate


async def run(session: Session) -> str:
    config = session.config
    agents = build_team(session)
    window = config.agents + 1
    convergence = config.convergence or config.agents
    current = (await initial_phase(session))[0] if config.initial_generation else None
    recent: list[str] = []
    last_choice, streak, stop = None, 0, "turn_limit"
    for number in range(1, config.turn_limit + 1):
        agent = session.next_speaker(agents)
        proposal = await session.ask(agent.name, prompts.iterative_propose(
            agent.system, current, recent, config.idea_words), phase="discussion", round=number)
        candidate = proposal.text
        if current is None:
            current = candidate
            continue
        options = list(dict.fromkeys([current, candidate, *recent]))
        means = await rate(session, options, round=number)
        best = options[rank(options, means)[0]]
        proposal.meta["adopted"] = best == candidate
        recent = [idea for idea in dict.fromkeys([current, candidate, *recent]) if idea != best][:window]
        current = best
        streak = streak + 1 if best == last_choice else 1
        last_choice = best
        if streak >= convergence:
            stop = "converged"
            break
    session.meta.update(stop_reason=stop, convergence=convergence, streak=streak)
    return current
