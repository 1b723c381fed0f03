"""How a run's consensus steps went: a bias check (paper B, section 3.1's consensus).

A judge that cannot be read, or that always picks the first response, makes the
inter-session diversity of final outputs measure one agent. ``consensus_summary`` counts,
over sessions that have a consensus step, how the pick was resolved (``judge``,
``judge_retry``, ``vote``, ``random_fallback``, ``random``, ``all``), how many picks could
not be read, and which agents, lenses and personas were chosen. Sessions made before the
choice was recorded count as ``unrecorded``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping

from engine.protocols.registry import consensus_methods


def _meta(session: Any) -> Mapping[str, Any]:
    return session.get("meta", session) if isinstance(session, Mapping) else session.meta


def _protocol(session: Any) -> str | None:
    return session.get("protocol") if isinstance(session, Mapping) else session.protocol


def consensus_summary(sessions: Iterable[Any]) -> dict[str, Any]:
    """Counts over sessions with a consensus step (Conversations, or dicts with ``meta``).

    ``unparsed``: picks that had to be read and were not (resolved by a seeded random pick);
    ``unparsed_share`` = unparsed / sessions whose pick had to be read (None if none had).
    """
    resolution: Counter = Counter()
    agents: Counter = Counter()
    lenses: Counter = Counter()
    personas: Counter = Counter()
    by_method: dict[str, Counter] = {}
    read = unparsed = total = 0
    always = set(consensus_methods())  # the debates and Voting (plugins' methods too)
    for session in sessions:
        meta = _meta(session)
        if _protocol(session) not in always and (meta.get("candidates") or 1) < 2:
            continue
        total += 1
        how = meta.get("consensus_resolution") or "unrecorded"
        resolution[how] += 1
        parsed = meta.get("consensus_parsed")
        if parsed is not None and how != "unrecorded":
            read += 1
            unparsed += parsed is False
        if meta.get("consensus_agent"):
            agents[meta["consensus_agent"]] += 1
            by_method.setdefault(_protocol(session), Counter())[meta["consensus_agent"]] += 1
        if meta.get("consensus_lens"):
            lenses[meta["consensus_lens"]] += 1
        if meta.get("consensus_persona"):
            personas[meta["consensus_persona"][:40]] += 1
    return {"sessions": total, "needed_reading": read, "unparsed": unparsed,
            "unparsed_share": (unparsed / read) if read else None,
            "resolution": dict(sorted(resolution.items())),
            "chosen_agent": dict(sorted(agents.items())),
            "chosen_agent_by_method": {m: dict(sorted(c.items())) for m, c in sorted(by_method.items())},
            "chosen_lens": dict(sorted(lenses.items())),
            "chosen_persona": dict(sorted(personas.items()))}
