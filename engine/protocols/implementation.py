"""How a set of conversations was made, as far as it decides whether their features compare.

Paper A's trajectory features describe what the agents said; what they said depends on the
implementation that made them talk: which reading of the protocol (``fidelity``: the text
or the authors' released code, ``engine.protocols.fidelity_modes``), what the system prompt
holds, and which turns each agent saw. Two sets of conversations are compared feature by
feature only when these agree (and when one embedding model measured both, checked apart).

An implementation is a small dict recorded on every session, dataset manifest, feature
table and pilot:

* ``generator``: who ran the sessions (this project's engine, or the paper release's code);
* ``fidelity``: ``release`` / ``paper`` for paper A's structures, ``None`` for the others;
* ``system_prompt``: what the system prompt holds (``SYSTEM_PROMPTS``);
* ``turn_visibility``: which turns a discussion turn sees (``TURN_VISIBILITY``);
* ``prompts_revision``: this engine's revision of paper A's prompts (``PROMPTS_REVISION``),
  raised whenever what a turn is shown changes.

The paper release (``PAPER_RELEASE``) is the authors' code: ``generation/main.py`` gives each
agent "You are Agent k." plus a persona, and ``generation/message_strategies.py`` shows a turn
the last N responses. This engine's ``release`` mode makes conversations the same way in our
own words, so it is compared with the release; its ``paper`` mode is not.
"""

from __future__ import annotations

from typing import Any, Mapping

GENERATOR = "creativity-lab engine"
RELEASE_GENERATOR = "paper release code (GitHub pitehu/llm_multiagent_creativity)"
# Raised whenever a paper-A system prompt or what a turn is shown changes:
# 1 = one reading of paper A's text, before the two fidelity modes (to 2026-12-01 17:00 UTC);
# 2 = the two fidelity modes, "You are Agent k in a team of N" + brainstorming rules in every
#     system prompt (to 2026-12-02);
# 3 = the release's "You are Agent k." + persona (release), a generic identity (paper).
PROMPTS_REVISION = 3

SYSTEM_PROMPTS = {
    "release": "You are Agent k. + the persona (generation/main.py)",
    "paper": "a generic agent identity (You are Agent k.) + the persona (paper A, Persona Manipulation)",
    "team_rules": "You are Agent k in a team of N + brainstorming rules (prompts revisions 1-2)",
    "method": "the method's own prompts (paper B or a plug-in)",
}
TURN_VISIBILITY = {
    "release": "the last N responses (N = team size)",
    "paper": "the whole discussion so far",
    "text reading before the fidelity modes": "the whole discussion so far",
    "method": "as the method defines",
}
KEYS = ("generator", "fidelity", "system_prompt", "turn_visibility")
SHORT = {"system_prompt": {"release": "the release's (Agent k + persona)", "paper": "generic identity + persona",
                           "team_rules": "team size + brainstorming rules", "method": "the method's own"},
         "turn_visibility": {"release": "last N responses", "paper": "whole discussion",
                             "text reading before the fidelity modes": "whole discussion",
                             "method": "the method's own"}}

PAPER_RELEASE = {"generator": RELEASE_GENERATOR, "fidelity": "release", "system_prompt": "release",
                 "turn_visibility": "release", "prompts_revision": None}


def implementation_of(fidelity: str | None, *, revision: int = PROMPTS_REVISION,
                      paper_a: bool | None = None) -> dict[str, Any]:
    """The implementation of a session this engine runs with ``fidelity``; ``paper_a`` says
    whether it is one of paper A's structures (default: it is when a fidelity is given)."""
    paper_a = fidelity is not None if paper_a is None else paper_a
    if not paper_a:
        return {"generator": GENERATOR, "fidelity": None, "system_prompt": "method",
                "turn_visibility": "method", "prompts_revision": revision}
    if revision < 2:  # before the fidelity modes: neither of today's two readings
        fidelity = "text reading before the fidelity modes"
    prompt = fidelity if revision >= 3 else "team_rules"
    return {"generator": GENERATOR, "fidelity": fidelity, "system_prompt": prompt,
            "turn_visibility": fidelity, "prompts_revision": revision}


def describe(implementation: Mapping[str, Any] | None) -> str:
    """One line a reader can check: fidelity, system prompt, turn visibility, who ran it."""
    if not implementation:
        return "implementation not recorded"
    fidelity = implementation.get("fidelity") or "n/a (not a paper-A structure)"
    prompt = SYSTEM_PROMPTS.get(implementation.get("system_prompt"), implementation.get("system_prompt"))
    seen = TURN_VISIBILITY.get(implementation.get("turn_visibility"), implementation.get("turn_visibility"))
    revision = implementation.get("prompts_revision")
    made = implementation.get("generator") or "unknown generator"
    return (f"fidelity {fidelity}; system prompt: {prompt}; each turn sees {seen}; made by {made}"
            + (f" (prompts revision {revision})" if revision is not None else ""))


def differences(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> list[str]:
    """What differs between two implementations, as sentences (empty: they compare).

    Unrecorded on either side is a difference ("not recorded"): nothing is assumed. The
    generator alone (this engine's release mode against the release's own code) is not a
    difference: that mode exists to make conversations as the release did.
    """
    if not a or not b:
        side = "either side" if not a and not b else ("the first side" if not a else "the second side")
        return [f"the implementation is not recorded on {side}"]
    out = []
    for key, label in (("fidelity", "fidelity"), ("system_prompt", "system prompt"),
                       ("turn_visibility", "turn visibility")):
        short = SHORT.get(key, {})
        first, second = (short.get(side.get(key), side.get(key)) or "none" for side in (a, b))
        if first != second:
            out.append(f"{label}: {first} against {second}")
    same_engine = a.get("generator") == b.get("generator") == GENERATOR
    if same_engine and not out and a.get("prompts_revision") != b.get("prompts_revision"):
        out.append(f"prompts revision: {a.get('prompts_revision')} against {b.get('prompts_revision')}")
    return out


def implementation_of_table(table) -> dict[str, Any] | None:
    """The one implementation behind a conversation or feature table, None when unrecorded.

    Read from ``table.attrs["implementation"]`` (set for the paper release and for datasets
    whose manifest records one), else from the table's own ``fidelity`` / ``prompts_revision``
    / ``generator`` columns together with ``attrs["generator"]`` and ``attrs
    ["prompts_revision"]`` (a manifest's record for tables made before the columns existed).
    Rows of several fidelities or revisions give ``fidelity = "mixed: ..."``, which differs
    from every single implementation.
    """
    recorded = table.attrs.get("implementation")
    if isinstance(recorded, Mapping):
        return dict(recorded)
    generator = _one(table, "generator") or table.attrs.get("generator")
    if generator is None:
        return None
    revision = _one(table, "prompts_revision")
    if revision is None:
        revision = table.attrs.get("prompts_revision")
    fidelities = _values(table, "fidelity", missing="none")
    papers = _values(table, "paper")
    if len(fidelities) > 1 or len(papers) > 1 or str(revision).startswith("mixed"):
        kinds = sorted(fidelities) + ([f"papers {' and '.join(sorted(papers))}"] if len(papers) > 1 else [])
        return {"generator": generator, "fidelity": "mixed: " + ", ".join(kinds or ["none"]),
                "system_prompt": "mixed", "turn_visibility": "mixed", "prompts_revision": revision}
    fidelity = next(iter(fidelities - {"none"}), None)
    if generator != GENERATOR:
        return {"generator": generator, "fidelity": fidelity, "system_prompt": None,
                "turn_visibility": None, "prompts_revision": revision}
    paper_a = (papers == {"A"}) if papers else (fidelity is not None)
    return implementation_of(fidelity, revision=int(revision) if revision is not None else PROMPTS_REVISION,
                             paper_a=paper_a)


def _values(table, column: str, missing: str | None = None) -> set:
    """The distinct values of a column as text; a missing value counts as ``missing`` when given."""
    if column not in getattr(table, "columns", ()):
        return set()
    values = {str(v) for v in table[column].dropna().unique()}
    if missing is not None and table[column].isna().any():
        values.add(missing)
    return values


def _one(table, column: str):
    values = _values(table, column)
    if len(values) > 1:
        return "mixed: " + ", ".join(sorted(values))
    return next(iter(values), None)
