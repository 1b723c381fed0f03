"""Paper B, Hetero-MAD (section 6): like Homo-MAD, but each agent holds a distinct persona;
heterogeneous by model with ``models`` (one backend per agent, ``engine.protocols.session``)."""

from __future__ import annotations

from engine.protocols.debate import debate, debate_agents
from engine.protocols.session import Session


async def run(session: Session) -> str:
    return await debate(session, debate_agents(session, personas=True))
