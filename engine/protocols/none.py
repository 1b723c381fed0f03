"""Paper A, "No Discussion / None" (A.1.2): generate, rate, keep the top idea.

Agents propose ideas (interactive or nominal), every agent rates every idea 1-10 on
creativity, and the idea with the highest mean rating is the team's output. No discussion.
"""

from __future__ import annotations

from engine.protocols.session import Session
from engine.protocols.team import build_team, initial_phase


async def run(session: Session) -> str:
    build_team(session)
    ranked = await initial_phase(session)
    session.meta["stop_reason"] = "selected"
    return ranked[0]
