"""Asking again when a reply cannot be read, and counting it.

An instructed turn whose reply carries no readable action is asked again (the same
messages, a fresh seed) up to ``config.attempts`` times in all: never silently used up as
a turn. The release does the same (``generation/discussion_modes.py``,
``GenericDiscussionMode.generate_with_retries``: 50 attempts, then a ``RuntimeError`` ends
the run). Every session counts, in ``meta["replies"]``: ``turns`` (turns that needed a
readable reply), ``reasked`` (extra calls), ``unreadable`` (turns still unreadable after every
attempt) and ``read_as_agree`` (replies the release reads as Agree without asking again).
The run's manifest sums them (``engine.protocols.reply_summary``). Only the accepted reply
becomes a turn (``meta["attempts"]`` says how many asks it took); the refused ones cost
tokens (counted in the session's usage) but are not part of the discussion.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from engine.corpus import Turn
from engine.llm.base import Message
from engine.protocols.session import Ask, Session

Read = Callable[[str], Any]
COUNTERS = ("turns", "reasked", "unreadable", "read_as_agree")


class UnreadableReply(RuntimeError):
    """No readable reply after every attempt, where the release ends the run."""


def counters(session: Session) -> dict[str, int]:
    return session.meta.setdefault("replies", {key: 0 for key in COUNTERS})


async def _again(session: Session, ask: Ask, first: Turn, read: Read, attempts: int) -> tuple[Turn, Any]:
    turn, value, attempt = first, read(first.text), 1
    while value is None and attempt < attempts:
        attempt += 1
        turn = await session.ask(ask.speaker, ask.messages, phase=ask.phase, round=ask.round,
                                 max_tokens=ask.max_tokens, record=False, **ask.meta)
        value = read(turn.text)
    count = counters(session)
    count["turns"] += 1
    count["reasked"] += attempt - 1
    count["unreadable"] += value is None
    turn.meta["attempts"] = attempt
    return turn, value


async def ask_until_read(session: Session, speaker: str, messages: list[Message], read: Read, *,
                         attempts: int, phase: str, round: int | None = None, record: bool = True,
                         **meta: Any) -> tuple[Turn, Any]:
    """One turn asked until ``read`` returns something (not None), at most ``attempts`` times.

    Returns the last reply as a Turn and what ``read`` made of it (None: unreadable).
    """
    ask = Ask(speaker, messages, phase, round, None, dict(meta))
    first = await session.ask(speaker, messages, phase=phase, round=round, record=False, **meta)
    turn, value = await _again(session, ask, first, read, attempts)
    if record:
        session.record(turn)
    return turn, value


async def ask_all_until_read(session: Session, asks: Sequence[Ask], read: Callable[[str, int], Any], *,
                             attempts: int) -> list[tuple[Turn, Any]]:
    """Several turns at once (hand-raising drafts), none recorded: the first asks are issued
    together, then each unreadable one is asked again in order (so seeds stay reproducible).
    ``read(text, index)`` reads the reply to ``asks[index]``."""
    firsts = await session.ask_all(asks, record=False)
    results = []
    for index, (ask, first) in enumerate(zip(asks, firsts)):
        results.append(await _again(session, ask, first, lambda text, i=index: read(text, i), attempts))
    return results


def reply_summary(finished, failed=()) -> dict[str, Any]:
    """What a run records about asking again (``manifest.json``, ``replies``).

    ``finished``: Conversations (or dicts with ``meta``) of finished sessions; ``failed``:
    failed sessions, those that ended for an unreadable reply counted by their error. Per
    fidelity: sessions whose turns needed reading, the turns, the extra calls, the turns
    still unreadable, the replies read as Agree, and the release's not-verbatim picks.
    """
    summary: dict[str, dict[str, int]] = {}
    for session in finished:
        meta = session.get("meta", {}) if isinstance(session, dict) else session.meta
        replies = meta.get("replies")
        picks = meta.get("picks_not_verbatim")
        if replies is None and picks is None:
            continue
        row = summary.setdefault(meta.get("fidelity") or "unrecorded",
                                 {"sessions": 0, **{k: 0 for k in COUNTERS}, "picks_not_verbatim": 0,
                                  "failed_unreadable": 0})
        row["sessions"] += 1
        for key in COUNTERS:
            row[key] += int((replies or {}).get(key, 0))
        row["picks_not_verbatim"] += int(picks or 0)
    for session in failed:
        error = session.get("error") if isinstance(session, dict) else session.error
        if error and error.startswith(UnreadableReply.__name__):
            meta = session.get("meta", {}) if isinstance(session, dict) else session.meta
            row = summary.setdefault(meta.get("fidelity") or "unrecorded",
                                     {"sessions": 0, **{k: 0 for k in COUNTERS},
                                      "picks_not_verbatim": 0, "failed_unreadable": 0})
            row["failed_unreadable"] += 1
    return summary
