"""Paper B, Homo-MAD (sections 3.1, 6): N identical agents, full peer visibility, R rounds,
judge-based consensus."""

from __future__ import annotations

from engine import prompts
from engine.protocols.debate import all_peers, debate
from engine.protocols.session import Agent, Session


async def run(session: Session) -> str:
    system = prompts.debate_system(session.task.prompt)
    agents = [Agent(f"Agent {i + 1}", system) for i in range(session.config.agents)]
    return await debate(session, agents, all_peers)
