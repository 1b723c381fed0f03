"""Paper B, Self-Refine (section 6; Madaan et al.): one agent answers, then for each of R
rounds gives itself feedback and revises: 1 + 2R calls. The last revision is the answer."""

from __future__ import annotations

from engine import prompts
from engine.protocols.session import Agent, Session


async def run(session: Session) -> str:
    config = session.config
    agent = Agent("Agent 1", prompts.debate_system(session.task.prompt))
    session.agents = [agent]
    answer = (await session.ask(agent.name, prompts.debate_initial(agent.system, config.idea_words),
                                phase="initial", round=0)).text
    for number in range(1, config.rounds + 1):
        feedback = await session.ask(agent.name, prompts.self_refine_feedback(agent.system, answer),
                                     phase="feedback", round=number)
        answer = (await session.ask(agent.name, prompts.self_refine_revise(
            agent.system, answer, feedback.text, config.idea_words), phase="refine", round=number)).text
    session.meta["stop_reason"] = "rounds"
    return answer
