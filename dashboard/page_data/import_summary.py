"""What an upload of transcripts did, said before anything is shown (no Streamlit here).

* ``mark_roles``: turns whose speaker is a moderator, facilitator or judge and whose file
  gave no phase get the phase ``moderator`` or ``judge``: they stay in the dataset (the
  reader shows them) but, like the engine's own moderator and judge turns
  (``engine.corpus.NON_TRAJECTORY_PHASES``), they are not part of the discussion's
  trajectory, so paper A's nine features (Table 19) and the map leave them out.
* ``apply_debate_as``: debates whose protocol is none of the papers' methods, read as a
  paper-B method the user names (the file's name kept in ``protocol_in_file``) or as a
  ``custom`` debate of their own; ``engine.runs.conditions`` then assumes no factor the file
  did not record.
* ``summarise`` / ``summary_lines``: rows read, conversations and turns kept, turns set
  aside and why, turns kept outside the trajectory by phase, renumbering, the debate reading.
"""

from __future__ import annotations

import re

from engine.runs.conditions import CUSTOM, DEBATE_AS
from engine.corpus import Corpus, is_trajectory_turn
from engine.names import METHODS, PAPER_B

ROLE_PHASES = {"moderator": "moderator", "facilitator": "moderator", "judge": "judge"}
_ROLE = re.compile(r"^\s*(moderator|facilitator|judge)\b", re.IGNORECASE)
DEBATE_CHOICES = (CUSTOM, *PAPER_B)


def mark_roles(corpus: Corpus) -> dict[str, int]:
    """Give moderator/facilitator/judge speakers' turns without a phase their role's phase;
    returns how many turns got each phase."""
    counts: dict[str, int] = {}
    for conversation in corpus:
        for turn in conversation.turns:
            if turn.phase not in (None, ""):
                continue
            found = _ROLE.match(str(turn.speaker or ""))
            if found:
                turn.phase = ROLE_PHASES[found.group(1).lower()]
                counts[turn.phase] = counts.get(turn.phase, 0) + 1
    return counts


def apply_debate_as(corpus: Corpus, debate_as: str | None) -> dict:
    """Read the conversations whose protocol is none of the papers' methods as ``debate_as``
    (a paper-B method, or ``custom``). Returns ``{"as": ..., "conversations": n,
    "protocols": [names in the file]}`` (``conversations`` 0 when nothing applied)."""
    if not debate_as:
        return {}
    if debate_as not in DEBATE_CHOICES:
        raise ValueError(f"debate_as must be one of {DEBATE_CHOICES}, got {debate_as!r}")
    protocols: list[str] = []
    n = 0
    for conversation in corpus:
        protocol = conversation.protocol
        if protocol in METHODS:
            continue
        name = str(protocol).strip() if protocol not in (None, "") else ""
        if name and name not in protocols:
            protocols.append(name)
        conversation.meta[DEBATE_AS] = debate_as
        if debate_as == CUSTOM:
            conversation.protocol = name or "custom_debate"
        else:
            conversation.meta["protocol_in_file"] = name or None
            conversation.protocol = debate_as
        n += 1
    return {"as": debate_as, "conversations": n, "protocols": protocols}


def summarise(corpus: Corpus, *, rows_read: int | None, rows_are: str = "rows", roles: dict[str, int] | None = None,
              debate: dict | None = None) -> dict:
    """The numbers of an import (``corpus`` as kept, its ``meta`` from the importer)."""
    meta = corpus.meta or {}
    turns = [t for c in corpus for t in c.turns]
    other: dict[str, int] = {}
    for turn in turns:
        if not is_trajectory_turn(turn):
            other[turn.phase] = other.get(turn.phase, 0) + 1
    set_aside = {}
    if meta.get("dropped_empty_turns"):
        set_aside["turns with empty text"] = int(meta["dropped_empty_turns"])
    if meta.get("dropped_empty_conversations"):
        set_aside["conversations whose every turn was empty"] = int(meta["dropped_empty_conversations"])
    return {
        "rows_read": rows_read, "rows_are": rows_are, "conversations": len(corpus), "turns_kept": len(turns),
        "discussion_turns": len(turns) - sum(other.values()), "other_turns": other,
        "roles_from_speaker": dict(roles or {}), "set_aside": set_aside,
        "renumbered_conversations": int(meta.get("renumbered_conversations") or 0),
        "renumbered_examples": list(meta.get("renumbered_examples") or []),
        "debate": dict(debate or {}),
    }


def summary_lines(summary: dict) -> list[str]:
    """The summary as sentences (plain text: names from the file are shown as written)."""
    lines = []
    if summary.get("rows_read") is not None:
        lines.append(f"{summary['rows_read']:,} {summary.get('rows_are', 'rows')} read.")
    lines.append(f"{summary['turns_kept']:,} turns kept in {summary['conversations']:,} conversations: "
                 f"{summary['discussion_turns']:,} discussion turns (embedded, measured, on the map)"
                 + (", " + ", ".join(f"{n:,} {phase} turns" for phase, n in sorted(summary["other_turns"].items()))
                    + " kept with their own phase (in the reader; not part of the trajectory, so not in "
                      "the nine features or the map, as paper A measures the discussion)"
                    if summary["other_turns"] else "") + ".")
    if summary.get("roles_from_speaker"):
        lines.append("Phase given from the speaker's name where the file had none: "
                     + ", ".join(f"{n:,} turns → {phase}" for phase, n in sorted(summary["roles_from_speaker"].items()))
                     + ".")
    if summary["set_aside"]:
        lines.append("Set aside: " + ", ".join(f"{n:,} {why}" for why, n in summary["set_aside"].items()) + ".")
    else:
        lines.append("Nothing set aside.")
    if summary["renumbered_conversations"]:
        examples = ", ".join(summary["renumbered_examples"])
        lines.append(f"Renumbered: in {summary['renumbered_conversations']:,} conversations the file's turn numbers "
                     f"were not 0, 1, 2, … (e.g. {examples}); their turns are numbered from 0 in the file's "
                     "order of `turn`.")
    else:
        lines.append("No turn renumbered (the file numbers every conversation's turns 0, 1, 2, …).")
    debate = summary.get("debate") or {}
    if debate.get("conversations"):
        names = ", ".join(debate["protocols"]) or "no protocol name"
        if debate["as"] == CUSTOM:
            lines.append(f"{debate['conversations']:,} conversations ({names}) are custom debates: conditions of their "
                         "own on the Diversity and Quality–Diversity pages, with only the factors the file records.")
        else:
            lines.append(f"{debate['conversations']:,} conversations ({names}) are read as {debate['as']} (the file's "
                         "name kept as protocol_in_file); factors the file does not record are left unknown.")
    return lines
