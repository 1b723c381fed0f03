"""Paper B, Direct (section 6): the model answers the task in one call.

``candidates`` (default 1): with K >= 2, K independent answers are drawn (concurrently) and
the consensus judge picks one (``engine.protocols.debate.consensus``): K + 1 calls. This is
paper B's "all methods use a judge-based selection mechanism" read literally; it is off by
default because the paper gives no K, and with K = N it is exactly Voting, which the paper
contrasts with Direct ("Voting achieves diversity comparable to Direct").
"""

from __future__ import annotations

from engine import prompts
from engine.protocols.debate import consensus
from engine.protocols.session import Agent, Ask, Session


async def run(session: Session) -> str:
    config = session.config
    system = prompts.debate_system(session.task.prompt)
    agents = [Agent(f"Agent {i + 1}", system) for i in range(config.candidates)]
    session.agents = agents
    turns = await session.ask_all([Ask(a.name, prompts.debate_initial(system, config.idea_words),
                                       phase="initial", round=0) for a in agents])
    if config.candidates == 1:
        session.meta["stop_reason"] = "single_call"
        return turns[0].text
    session.meta["stop_reason"] = "judge_selection"
    return await consensus(session, [t.text for t in turns], 1, agents)
