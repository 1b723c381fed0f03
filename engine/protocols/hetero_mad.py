"""Paper B, Hetero-MAD (section 6): like Homo-MAD, but each agent holds a distinct persona."""

from __future__ import annotations

from engine import prompts
from engine.protocols.debate import all_peers, debate
from engine.protocols.session import Agent, Session


async def run(session: Session) -> str:
    agents = []
    for i in range(session.config.agents):
        persona = prompts.PERSONAS[i % len(prompts.PERSONAS)]
        agents.append(Agent(f"Agent {i + 1}", prompts.debate_system(session.task.prompt, persona=persona),
                            persona=persona))
    return await debate(session, agents, all_peers)
