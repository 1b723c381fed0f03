"""Paper B, Self-Refine (section 6; Madaan et al.): one agent answers, then for each of R
rounds gives itself feedback and revises: 1 + 2R calls. The last revision is the answer.

``candidates`` (default 1): with K >= 2, K independent Self-Refine chains run side by side
(each step's K calls issued together) and the consensus judge picks one of the K final
revisions (``engine.protocols.debate.consensus``): K (1 + 2R) + 1 calls; see
``engine.protocols.direct`` for why it is off by default.
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
    answers = [t.text for t in await session.ask_all(
        [Ask(a.name, prompts.debate_initial(system, config.idea_words), phase="initial", round=0)
         for a in agents])]
    for number in range(1, config.rounds + 1):
        feedback = await session.ask_all([Ask(a.name, prompts.self_refine_feedback(system, answers[i]),
                                              phase="feedback", round=number)
                                          for i, a in enumerate(agents)])
        answers = [t.text for t in await session.ask_all(
            [Ask(a.name, prompts.self_refine_revise(system, answers[i], feedback[i].text, config.idea_words),
                 phase="refine", round=number) for i, a in enumerate(agents)])]
    if config.candidates == 1:
        session.meta["stop_reason"] = "rounds"
        return answers[0]
    session.meta["stop_reason"] = "judge_selection"
    return await consensus(session, answers, config.rounds + 1, agents)
