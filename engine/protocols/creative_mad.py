"""Paper B, Creative-MAD (section 5): Cognitive Lens Assignment + Embedding-based Peer Selection.

Agent i keeps the lens logical, emotional, critical, analogical, practical (in that order,
cycling past five) in every round, and in each debate round sees only the k (default 2)
peers whose previous-round responses are most distant from its own by cosine distance of
their all-MiniLM-L6-v2 embeddings.
"""

from __future__ import annotations

from engine import prompts
from engine.protocols.debate import debate, distant_peers
from engine.protocols.session import Agent, Session


async def run(session: Session) -> str:
    agents = []
    for i in range(session.config.agents):
        lens = prompts.LENS_ORDER[i % len(prompts.LENS_ORDER)]
        agents.append(Agent(f"Agent {i + 1}", prompts.debate_system(session.task.prompt, lens=lens),
                            lens=lens))
    return await debate(session, agents, distant_peers)
