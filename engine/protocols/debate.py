"""Paper B's multi-agent debate (section 3.1), shared by Homo-, Hetero- and Creative-MAD.

N agents answer independently (round 0); in each of R rounds every agent sees its own
previous answer and the previous-round answers of the peers chosen for it, and writes an
updated answer; the calls of one round are issued concurrently. A judge call then picks
one final answer (judge-based consensus): N x (R + 1) + 1 calls per session.
"""

from __future__ import annotations

from typing import Awaitable, Callable, Sequence

import numpy as np

from engine import prompts
from engine.protocols.parsing import parse_choice
from engine.protocols.session import Agent, Ask, Session

PeerChooser = Callable[[Session, list[str]], Awaitable[list[list[int]]]]


async def all_peers(session: Session, answers: list[str]) -> list[list[int]]:
    """Standard MAD: every agent sees every other agent."""
    n = len(answers)
    return [[j for j in range(n) if j != i] for i in range(n)]


def most_distant_peers(vectors: np.ndarray, k: int) -> list[list[int]]:
    """Embedding-based Peer Selection (paper B, section 5): for each agent, the k peers whose
    responses have the largest cosine distance to its own, farthest first (ties: lower index)."""
    vectors = np.asarray(vectors, dtype=float)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1, norms)
    distance = 1.0 - unit @ unit.T
    chosen = []
    for i in range(len(unit)):
        peers = sorted((j for j in range(len(unit)) if j != i), key=lambda j: (-distance[i, j], j))
        chosen.append(peers[:k])
    return chosen


async def distant_peers(session: Session, answers: list[str]) -> list[list[int]]:
    vectors = await session.embed(answers)
    return most_distant_peers(vectors, session.config.k)


async def consensus(session: Session, answers: Sequence[str], round: int) -> str:
    """One judge call picks the final answer; an unreadable choice falls back to answer 1."""
    turn = await session.ask("judge", prompts.consensus_select(session.task.prompt, answers),
                             phase="consensus", round=round, max_tokens=16)
    choice = parse_choice(turn.text, len(answers))
    turn.meta["choice"] = choice
    session.meta["consensus_parsed"] = choice is not None
    session.meta["consensus_choice"] = 0 if choice is None else choice
    return answers[0 if choice is None else choice]


async def debate(session: Session, agents: list[Agent], choose_peers: PeerChooser) -> str:
    config = session.config
    session.agents = agents
    words = config.idea_words
    turns = await session.ask_all([Ask(a.name, prompts.debate_initial(a.system, words),
                                       phase="initial", round=0) for a in agents])
    answers = [t.text for t in turns]
    for number in range(1, config.rounds + 1):
        peers = await choose_peers(session, answers)
        asks = [Ask(a.name, prompts.debate_round(a.system, answers[i], [answers[j] for j in peers[i]],
                                                 words),
                    phase="debate", round=number, meta={"peers": [agents[j].name for j in peers[i]]})
                for i, a in enumerate(agents)]
        answers = [t.text for t in await session.ask_all(asks)]
    session.meta["stop_reason"] = "rounds"
    return await consensus(session, answers, config.rounds + 1)
