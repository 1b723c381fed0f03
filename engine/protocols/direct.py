"""Paper B, Direct (section 6): one model call answers the task; no debate, no judge."""

from __future__ import annotations

from engine import prompts
from engine.protocols.session import Agent, Session


async def run(session: Session) -> str:
    agent = Agent("Agent 1", prompts.debate_system(session.task.prompt))
    session.agents = [agent]
    turn = await session.ask(agent.name, prompts.debate_initial(agent.system, session.config.idea_words),
                             phase="initial", round=0)
    session.meta["stop_reason"] = "single_call"
    return turn.text
