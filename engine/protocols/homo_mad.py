"""Paper B, Homo-MAD (sections 3.1, 6): N identical agents, full peer visibility, R rounds,
judge-based consensus (lenses, peers and consensus are options: ``engine.protocols.debate``)."""

from __future__ import annotations

from engine.protocols.debate import debate, debate_agents
from engine.protocols.session import Session


async def run(session: Session) -> str:
    return await debate(session, debate_agents(session))
