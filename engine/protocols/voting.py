"""Paper B, Voting (section 6): N independent answers (no debate), then the same judge-based
selection as MAD: N + 1 calls. Isolates the consensus step from debate dynamics."""

from __future__ import annotations

from engine import prompts
from engine.protocols.debate import consensus
from engine.protocols.session import Agent, Ask, Session


async def run(session: Session) -> str:
    system = prompts.debate_system(session.task.prompt)
    agents = [Agent(f"Agent {i + 1}", system) for i in range(session.config.agents)]
    session.agents = agents
    turns = await session.ask_all([Ask(a.name, prompts.debate_initial(system, session.config.idea_words),
                                       phase="initial", round=0) for a in agents])
    session.meta["stop_reason"] = "vote"
    return await consensus(session, [t.text for t in turns], 1, agents)
