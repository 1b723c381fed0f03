"""Reading an instructed-discussion reply: Agree, Modify or Replace (paper A, A.1.2).

An action counts only where its keyword begins a line (or the reply): "I agree with the
goal, but Modify: X" is a Modify, and "We should not modify it.\\nAgree: ..." an Agree.
The first line that starts with a keyword decides.

* ``read_paper`` (``fidelity="paper"``): the careful reader. The keyword may be in any case,
  in bold or after a list marker, and is followed by ':' or a dash, or ends its line
  ("**Modify**" above the idea). The new idea is everything after the keyword up to a "Reason:" marker,
  at least 3 words. While the replacement pool is not empty a Replace must name one of its
  ideas (the best word overlap, at least ``POOL_MATCH``; the pool's own text is used); a
  Replace naming none is unreadable, so it is asked again (the paper: ideas ranked 2-6
  "were available as replacements ... If the pool was exhausted, agents generated new
  replacement ideas").
* ``read_release`` (``fidelity="release"``): the authors' rule, ``generation/data_strategies.py``,
  ``GenericDataStrategy._parse_one_by_one_response_validate``: a line whose stripped text
  starts with ``Agree:``, ``Modify:`` or ``Replace:`` (or the bold ``**Agree:**`` ...), case
  as written; the idea is the rest of that line cut at "- Reason:" or "**Reason:**", or, if
  that is empty, the first non-empty line after the reply's first line that does not start
  with "Reason:"; a Modify or Replace with no idea at all is read as Agree (the release's
  default). A Replace is valid when the pool is empty or the idea equals a pool idea
  (surrounding spaces ignored). With ``validate=False`` it is the release's
  ``_parse_one_by_one_response`` (used where the release does not ask again, without an
  initial phase): a reply with no keyword line is read as Agree, never None.

Each returns an ``Action`` or None (unreadable: ask again).
"""

from __future__ import annotations

import re
from typing import NamedTuple, Sequence

from engine.protocols.parsing import clean_idea, word_overlap

POOL_MATCH = 0.5
MIN_IDEA_WORDS = 3

_PAPER_LINE = re.compile(
    r"^(?:[-*\u2022>]+\s+|\(?\d{1,2}[.)]\s+|#+\s*)?"      # a list marker or heading
    r"[*_]{0,2}\s*(agree|modify|replace)\s*[*_]{0,2}\s*"  # the keyword, maybe in bold
    r"([:\-\u2013\u2014]|[.!]?\s*[*_]{0,2}\s*$)",          # ':' or a dash, or the end of the line
    re.IGNORECASE)
_REASON = re.compile(r"\s*[-\u2013\u2014]*\s*\**reason\**\s*:", re.IGNORECASE)
_RELEASE_PREFIXES = (("agree", "Agree:"), ("agree", "**Agree:**"), ("modify", "Modify:"),
                     ("modify", "**Modify:**"), ("replace", "Replace:"), ("replace", "**Replace:**"))


class Action(NamedTuple):
    kind: str                       # agree | modify | replace
    idea: str | None = None         # the new current idea (modify, replace)
    pool_index: int | None = None   # replace: the pool idea taken
    note: str | None = None         # how a doubtful reply was read


def read_paper(text: str, pool: Sequence[str] = ()) -> Action | None:
    lines = text.splitlines()
    for number, line in enumerate(lines):
        match = _PAPER_LINE.match(line.strip())
        if not match:
            continue
        kind = match.group(1).lower()
        if kind == "agree":
            return Action("agree")
        rest = line.strip()[match.end():]
        body = "\n".join([rest, *lines[number + 1:]])
        idea = clean_idea(" ".join(_REASON.split(body, maxsplit=1)[0].split()))
        if len(idea.split()) < MIN_IDEA_WORDS:
            return None
        if kind == "replace" and pool:
            best = max(range(len(pool)), key=lambda i: word_overlap(idea, pool[i]))
            if word_overlap(idea, pool[best]) < POOL_MATCH:
                return None
            return Action("replace", pool[best], best)
        return Action(kind, idea)
    return None


def _release_idea(text: str) -> str:
    """The release's ``extract_idea``: the text before '- Reason:' or '**Reason:**'."""
    for marker in ("- Reason:", "**Reason:**"):
        if marker in text:
            return text.split(marker)[0].strip()
    return text.strip()


def read_release(text: str, pool: Sequence[str] = (), *, validate: bool = True) -> Action | None:
    lines = text.strip().split("\n")
    found = None
    for line in lines:
        stripped = line.strip()
        found = next(((kind, prefix) for kind, prefix in _RELEASE_PREFIXES
                      if stripped.startswith(prefix)), None)
        if found:
            break
    if found is None:
        return None if validate else Action("agree", note="no action line: read as agree")
    kind, prefix = found
    if kind == "agree":
        return Action("agree")
    idea = _release_idea(stripped[len(prefix):].strip())
    if not idea and len(lines) > 1:
        for line in lines[1:]:
            if line.strip() and not line.startswith("Reason:") and not line.startswith("**Reason:**"):
                idea = _release_idea(line.strip())
                break
    if not idea:
        return Action("agree", note=f"{kind} with no idea: read as agree")
    if kind == "modify":
        return Action("modify", idea)
    stripped_pool = [p.strip() for p in pool]
    if idea.strip() in stripped_pool:
        index = stripped_pool.index(idea.strip())
        return Action("replace", pool[index], index)
    if pool and validate:
        return None
    return Action("replace", idea)
