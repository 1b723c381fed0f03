"""Paper B, Creative-MAD (section 5): Cognitive Lens Assignment + Embedding-based Peer Selection.

Agent i keeps the lens logical, emotional, critical, analogical, practical (in that order,
cycling past five) in every round, and in each debate round sees only the k (default 2)
peers whose previous-round responses are most distant from its own by cosine distance of
their all-MiniLM-L6-v2 embeddings. Both are options (``lenses``, ``peers``) whose defaults
for this method are on and ``distant``; turning one off gives section 7.4's ablations.
"""

from __future__ import annotations

from engine.protocols.debate import debate, debate_agents
from engine.protocols.session import Session


async def run(session: Session) -> str:
    return await debate(session, debate_agents(session))
