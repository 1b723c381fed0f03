"""Paper B's multi-agent debate (section 3.1), shared by Homo-, Hetero- and Creative-MAD.

N agents answer independently (round 0); in each of R rounds every agent sees its own
previous answer and the previous-round answers of the peers chosen for it, and writes an
updated answer; the calls of one round are issued concurrently. A consensus step then
gives the session's final answer: N x (R + 1) + 1 calls with the default judge.

Design factors (section 5 and the ablations of section 7.4), options of every debate
method (``engine.protocols.config``):

* Cognitive Lens Assignment (``lenses``): agent i keeps the lens logical, emotional,
  critical, analogical, practical (cycling past five) in every round.
* Peer selection (``peers``, ``k``): ``all`` (standard MAD), ``distant`` (Embedding-based
  Peer Selection: the k peers whose previous answers are farthest by cosine distance),
  ``closest`` (the k nearest) or ``random`` (k peers drawn with a seeded generator). The
  peers each agent read are recorded on its turn (``meta["peers"]``).
* Consensus (``consensus``): ``judge`` asks a judge to pick one answer. The judge is the
  debating model (``meta["consensus_judge_model"]``) sampling at ``consensus_temperature``
  (default: the session's temperature, 1.0 in paper B's setup, which names no other for its
  judge; recorded as ``consensus_temperature``). An unreadable pick is asked again ``consensus_retries`` times, then resolved by a seeded random pick (never
  by position, which would make inter-session diversity measure Agent 1). ``vote``: every
  agent names the best answer, plurality wins, ties by seeded random pick. ``random``: a
  seeded random pick, no call. ``all``: every final answer is kept
  (``meta["final_answers"]``: the paper's "diverse subset" alternative, Limitations), the
  session's final idea being a seeded random one of them.
  Every session records ``consensus_parsed`` (True/False when a pick had to be read, None
  otherwise), ``consensus_choice`` (0-based), ``consensus_resolution`` and the chosen
  agent's name, lens and persona.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Sequence

import numpy as np

from engine import prompts
from engine.protocols.parsing import parse_choice
from engine.protocols.session import Agent, Ask, Session

RETRY_TEMPERATURE = 0.7


# -- agents -----------------------------------------------------------------------------------
def debate_agents(session: Session, *, personas: bool = False) -> list[Agent]:
    """The N debaters: a persona each (Hetero-MAD), a lens each when lenses are on."""
    config, task = session.config, session.task
    agents = []
    for i in range(config.agents):
        persona = prompts.PERSONAS[i % len(prompts.PERSONAS)] if personas else None
        lens = prompts.LENS_ORDER[i % len(prompts.LENS_ORDER)] if config.lens_assignment else None
        agents.append(Agent(f"Agent {i + 1}", prompts.debate_system(task.prompt, persona=persona, lens=lens),
                            persona=persona, lens=lens))
    return agents


# -- peer selection ---------------------------------------------------------------------------
def _cosine_distance(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=float)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1, norms)
    return 1.0 - unit @ unit.T


def most_distant_peers(vectors: np.ndarray, k: int) -> list[list[int]]:
    """Embedding-based Peer Selection (paper B, section 5): for each agent, the k peers whose
    responses have the largest cosine distance to its own, farthest first (ties: lower index)."""
    distance = _cosine_distance(vectors)
    n = len(distance)
    return [sorted((j for j in range(n) if j != i), key=lambda j: (-distance[i, j], j))[:k]
            for i in range(n)]


def closest_peers(vectors: np.ndarray, k: int) -> list[list[int]]:
    """Closest-k (section 7.4's control): the k nearest peers, nearest first (ties: lower index)."""
    distance = _cosine_distance(vectors)
    n = len(distance)
    return [sorted((j for j in range(n) if j != i), key=lambda j: (distance[i, j], j))[:k]
            for i in range(n)]


def random_peers(n: int, k: int, rng: random.Random) -> list[list[int]]:
    """Random-k (section 7.4's control): k distinct other agents for each agent."""
    return [rng.sample([j for j in range(n) if j != i], k) for i in range(n)]


async def choose_peers(session: Session, answers: list[str], round: int) -> list[list[int]]:
    """The peers each agent reads in ``round``, by the session's peer strategy."""
    strategy, k, n = session.config.peer_strategy, session.config.k, len(answers)
    if strategy == "all":
        return [[j for j in range(n) if j != i] for i in range(n)]
    if strategy == "random":
        return random_peers(n, k, random.Random(f"{session.seed}:peers:{round}"))
    vectors = await session.embed(answers)
    return (most_distant_peers if strategy == "distant" else closest_peers)(vectors, k)


# -- consensus --------------------------------------------------------------------------------
def _record_choice(session: Session, agents: Sequence[Agent], choice: int, resolution: str,
                   parsed: bool | None, attempts: int) -> None:
    chosen = agents[choice] if choice < len(agents) else None
    session.meta.update(consensus_parsed=parsed, consensus_choice=choice,
                        consensus_resolution=resolution, consensus_attempts=attempts,
                        consensus_agent=chosen.name if chosen else None,
                        consensus_lens=chosen.lens if chosen else None,
                        consensus_persona=chosen.persona if chosen else None)


async def _judge_pick(session: Session, answers: Sequence[str], round: int) -> tuple[int | None, int]:
    """The judge's 0-based pick (None if never readable) and the number of judge calls."""
    config = session.config
    first = config.judge_temperature  # the consensus_temperature option, else the session's
    retry_heat = max(first or 0.0, RETRY_TEMPERATURE)
    session.meta["consensus_judge_model"] = session.backend.model  # the debating model judges
    for attempt in range(config.consensus_retries + 1):
        turn = await session.ask("judge", prompts.consensus_select(session.task.prompt, answers),
                                 phase="consensus", round=round, max_tokens=16, attempt=attempt,
                                 temperature=first if attempt == 0 else retry_heat)
        choice = parse_choice(turn.text, len(answers))
        turn.meta["choice"] = choice
        if choice is not None:
            return choice, attempt + 1
    return None, config.consensus_retries + 1


async def _vote_pick(session: Session, agents: Sequence[Agent], answers: Sequence[str], round: int,
                     rng: random.Random) -> tuple[int | None, bool]:
    """Plurality of the agents' readable votes (ties: seeded pick); None if no vote was read."""
    asks = [Ask(a.name, prompts.consensus_vote(a.system, answers), phase="consensus", round=round,
                max_tokens=16) for a in agents]
    votes = []
    for turn in await session.ask_all(asks):
        vote = parse_choice(turn.text, len(answers))
        turn.meta["choice"] = vote
        if vote is not None:
            votes.append(vote)
    session.meta["consensus_votes"] = votes
    if not votes:
        return None, False
    counts = Counter(votes)
    top = max(counts.values())
    leaders = sorted(c for c, v in counts.items() if v == top)
    return (leaders[0] if len(leaders) == 1 else rng.choice(leaders)), len(leaders) > 1


async def consensus(session: Session, answers: Sequence[str], round: int,
                    agents: Sequence[Agent] | None = None) -> str:
    """The session's final answer by the configured consensus (see the module docstring)."""
    agents = list(agents or session.agents)
    mode = session.config.consensus
    rng = random.Random(f"{session.seed}:consensus")
    if mode in ("random", "all"):
        choice = rng.randrange(len(answers))
        if mode == "all":
            session.meta["final_answers"] = list(answers)
        _record_choice(session, agents, choice, mode, None, 0)
        return answers[choice]
    if mode == "vote":
        choice, tie = await _vote_pick(session, agents, answers, round, rng)
        session.meta["consensus_tie"] = tie
        attempts = len(agents)
        resolution = "vote"
    else:
        choice, attempts = await _judge_pick(session, answers, round)
        resolution = "judge" if attempts == 1 else "judge_retry"
    parsed = choice is not None
    if not parsed:
        choice = rng.randrange(len(answers))
        resolution = "random_fallback"
    _record_choice(session, agents, choice, resolution, parsed, attempts)
    return answers[choice]


# -- the debate -------------------------------------------------------------------------------
async def debate(session: Session, agents: list[Agent]) -> str:
    config = session.config
    session.agents = agents
    words = config.idea_words
    turns = await session.ask_all([Ask(a.name, prompts.debate_initial(a.system, words),
                                       phase="initial", round=0) for a in agents])
    answers = [t.text for t in turns]
    for number in range(1, config.rounds + 1):
        peers = await choose_peers(session, answers, number)
        asks = [Ask(a.name, prompts.debate_round(a.system, answers[i], [answers[j] for j in peers[i]],
                                                 words),
                    phase="debate", round=number,
                    meta={"peers": [agents[j].name for j in peers[i]],
                          "peer_strategy": config.peer_strategy})
                for i, a in enumerate(agents)]
        answers = [t.text for t in await session.ask_all(asks)]
    session.meta["stop_reason"] = "rounds"
    return await consensus(session, answers, config.rounds + 1, agents)
