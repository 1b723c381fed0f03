"""Paper A's team and its idea-generation-and-selection phase (Methods; A.1.2).

* ``build_team``: Agent 1..N with persona none (generic identity), same (one shared
  profile) or different (a distinct profile each). ``fidelity="release"``: the role text of
  the release's ``generation/main.py`` with its persona profiles
  (``engine.prompts.release.release_roles``); ``paper``: "You are Agent k." and our own
  persona texts (``engine.prompts.agent_role``). Either way the system message is the role,
  then the task, and nothing else.
* ``generate``: each agent proposes ``ideas_per_agent`` ideas (``max_tokens`` each, so the
  reply may use ``ideas_per_agent x max_tokens``); interactive mode shows the
  ideas proposed so far and asks for different ones (agents in turn); nominal mode asks
  everyone independently (issued concurrently).
* ``rate``: every agent rates every idea 1-10 (creativity, or novelty in progressive's
  convergent phase); the ideas are shown in one shuffled order; an idea's score is the mean
  of the ratings that could be read.
* ``rank``: ideas by mean rating, highest first; ties broken as the release does
  (``release``: the shuffled order the ideas were shown in for rating) or at random by the
  session's seed (``paper``); never by the order the ideas were generated.
"""

from __future__ import annotations

import random

from engine import prompts
from engine.protocols.parsing import parse_ratings, split_ideas
from engine.protocols.session import Agent, Ask, Session


def build_team(session: Session) -> list[Agent]:
    config, task = session.config, session.task
    if config.fidelity == "release":
        from engine.prompts.release import release_roles

        roles = release_roles(config.persona, config.agents, random.Random(f"{session.seed}:personas"))
        personas = [None if config.persona == "none" else role.split(". ", 1)[1] for role in roles]
    else:
        personas = [{"none": None, "same": prompts.PERSONAS[0],
                     "different": prompts.PERSONAS[index % len(prompts.PERSONAS)]}[config.persona]
                    for index in range(config.agents)]
        roles = [prompts.agent_role(index + 1, persona) for index, persona in enumerate(personas)]
    session.agents = [Agent(name=f"Agent {index + 1}", persona=persona, system=prompts.agent_system(role, task.prompt))
                      for index, (role, persona) in enumerate(zip(roles, personas))]
    return session.agents


def speaking_order(session: Session) -> list[Agent]:
    agents = list(session.agents)
    if session.config.order == "random":
        session.rng.shuffle(agents)
    return agents


async def generate(session: Session, *, round: int = 0) -> list[tuple[str, str]]:
    """All agents' ideas as ``(idea, author)`` pairs, in the order they were proposed."""
    config = session.config
    ideas: list[tuple[str, str]] = []
    tokens = config.max_tokens * config.ideas_per_agent  # max_tokens is the budget of one idea
    if config.generation == "nominal":
        asks = [Ask(a.name, prompts.generate_ideas(a.system, config.ideas_per_agent, config.idea_words),
                    phase="generation", round=round, max_tokens=tokens, meta={"mode": "nominal"})
                for a in speaking_order(session)]
        for turn in await session.ask_all(asks):
            ideas += [(idea, turn.speaker) for idea in split_ideas(turn.text, config.ideas_per_agent)]
        return ideas
    for agent in speaking_order(session):
        messages = prompts.generate_ideas(agent.system, config.ideas_per_agent, config.idea_words,
                                          previous=[idea for idea, _ in ideas])
        turn = await session.ask(agent.name, messages, phase="generation", round=round,
                                 max_tokens=tokens, mode="interactive")
        ideas += [(idea, agent.name) for idea in split_ideas(turn.text, config.ideas_per_agent)]
    return ideas


async def rate(session: Session, ideas: list[str], *, criterion: str = "creativity",
               round: int | None = None, phase: str = "rating") -> list[float | None]:
    """Mean 1-10 rating of each idea over all agents (None where no rating could be read)."""
    if not ideas:
        return []
    order = list(range(len(ideas)))
    session.rng.shuffle(order)
    shown = [ideas[i] for i in order]
    budget = session.config.rating_max_tokens or 8 * len(ideas) + 16
    asks = [Ask(a.name, prompts.rate_ideas(a.system, shown, criterion), phase=phase, round=round,
                max_tokens=budget, meta={"criterion": criterion, "shown_order": order})
            for a in session.agents]
    turns = await session.ask_all(asks)
    session.shown_order = order  # the release breaks rating ties by it (``rank``)
    totals = [[] for _ in ideas]
    for turn in turns:
        scores = parse_ratings(turn.text, len(shown))
        turn.meta["parsed"] = len(scores)
        for position, score in scores.items():
            totals[order[position]].append(score)
    return [sum(s) / len(s) if s else None for s in totals]


def rank(ideas: list[str], means: list[float | None], session: Session | None = None) -> list[int]:
    """Indices of ideas from highest to lowest mean; unrated ideas last. Ties: in ``release``
    mode the order the ideas were last shown in for rating (``rate``'s shuffle), in ``paper``
    mode a seeded random order (a fresh draw each call); without a session, input order."""
    tie = list(range(len(ideas)))
    if session is not None:
        shown = session.shown_order
        if session.config.fidelity == "release" and shown is not None and sorted(shown) == tie:
            tie = [shown.index(i) for i in range(len(ideas))]
        else:
            random.Random(f"{session.seed}:ties:{session.tie_draws}").shuffle(tie)
            session.tie_draws += 1
    return sorted(range(len(ideas)), key=lambda i: (means[i] is None, -(means[i] or 0.0), tie[i]))


async def initial_phase(session: Session) -> list[str]:
    """Generate and rate ideas; returns them ranked best first (also kept in session.meta)."""
    pairs = await generate(session)
    ideas = list(dict.fromkeys(idea for idea, _ in pairs))
    means = await rate(session, ideas)
    order = rank(ideas, means, session)
    session.meta["initial_ideas"] = [{"idea": ideas[i], "mean_rating": means[i]} for i in order]
    return [ideas[i] for i in order]
