"""Short, stable codes for experimental conditions, and the key that spells them out.

A condition (``engine.protocols.conditions.condition_label``: ``creative_mad [CLA, distant k=2] N=5 R=2
T=1 Qwen3-8B``) is far too long for a legend or an axis. Its code is made from the condition
alone, so one condition has one code on every page:

* the method's abbreviation, from its description (``Method.code``, ``engine.protocols.
  registry``: ``CMAD`` Creative-MAD, ``HoMAD`` Homo MAD, ``HeMAD`` Hetero MAD, ``VOTE``,
  ``DIR`` direct, ``SR`` self-refine; paper A's ``OPEN``, ``INST``, ``ITER``, ``PROG``,
  ``NONE``; ``STEER``); a method without one (an uploaded debate, a plugin's method that
  gave no code) is shortened from its own name;
* for a debate, its peer design (paper B, section 3: ``d`` distant = EPS, ``c`` closest,
  ``r`` random, followed by k; ``a`` = all peers where the method's own design is a peer
  selection, i.e. Creative-MAD without EPS);
* ``+L`` / ``-L`` when the Cognitive Lens Assignment departs from the method's own design
  (Creative-MAD has lenses, the other debates not);
* a consensus other than the judge (``vote``...).

So ``creative_mad [CLA, distant k=2] ...`` is ``CMAD·d2`` and ``creative_mad [no CLA,
distant k=1] ...`` is ``CMAD·d1·-L``. Team size, rounds, temperature and model are left out
of the code (they are the same across most charts) and written in the key; when two
conditions of one chart would share a code, ``codes()`` appends the factors that tell them
apart (``·N4``, ``·R2``, ``·T0.7``, then the model).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from engine.protocols.registry import is_method, own_design
from engine.protocols.registry import method as described

SEPARATOR = "·"
PEER_CODES = {"all": "a", "distant": "d", "closest": "c", "random": "r"}
PEER_NAMES = {"all": "all peers", "distant": "distant peers", "closest": "closest peers",
              "random": "random peers"}

_LABEL = re.compile(
    r"^(?P<method>\S+)"
    r"(?: \[(?P<design>[^\]]*)\])?"
    r"(?: N=(?P<team_size>\d+))?"
    r"(?: R=(?P<rounds>\d+))?"
    r"(?: T=(?P<temperature>[0-9.eE+-]+))?"
    r"(?: (?P<model>.+))?$")


@dataclass(frozen=True)
class Condition:
    """The factors of one condition, as ``engine.protocols.conditions`` defines them."""

    method: str
    lenses: bool | None = None
    peers: str | None = None
    k: int | None = None
    consensus: str | None = None
    team_size: int | None = None
    rounds: int | None = None
    temperature: float | None = None
    model: str | None = None


def parse(label) -> Condition:
    """A condition label (``engine.protocols.conditions.condition_label``) back into its factors; a
    plain method name (``homo_mad``) is a condition with only its method."""
    text = "" if label is None else str(label).strip()
    match = _LABEL.match(text)
    if not match:
        return Condition(method=text)
    lenses = peers = k = consensus = None
    for part in (p.strip() for p in (match["design"] or "").split(",") if p.strip()):
        if part in ("CLA", "no CLA"):
            lenses = part == "CLA"
        elif part.startswith("consensus="):
            consensus = part.split("=", 1)[1]
        else:
            peer = re.match(r"^(?P<peers>\w+)(?: peers| k=(?P<k>\d+))$", part)
            if peer:
                peers, k = peer["peers"], int(peer["k"]) if peer["k"] else None
    return Condition(method=match["method"], lenses=lenses, peers=peers, k=k, consensus=consensus,
                     team_size=int(match["team_size"]) if match["team_size"] else None,
                     rounds=int(match["rounds"]) if match["rounds"] else None,
                     temperature=float(match["temperature"]) if match["temperature"] else None,
                     model=match["model"] or None)


def method_name(method: str) -> str:
    """A method in words (its description's label; an unknown one: its name, spaced)."""
    if is_method(method) and described(method).label:
        return described(method).label
    return str(method).replace("_", " ")


def method_code(method: str) -> str:
    if is_method(method) and described(method).code:
        return described(method).code
    words = [w for w in re.split(r"[^A-Za-z0-9]+", str(method)) if w]
    if not words:
        return "?"
    if len(words) == 1:
        return words[0][:6].upper()
    return "".join(w[0] for w in words).upper()[:6]


def code(label) -> str:
    """The code of one condition (without the disambiguation ``codes()`` may add)."""
    c = label if isinstance(label, Condition) else parse(label)
    parts = [method_code(c.method)]
    own_lenses, own_peers = own_design(c.method)
    if c.peers is not None and (c.peers != "all" or own_peers != "all"):
        parts.append(PEER_CODES.get(c.peers, c.peers[:1]) + (str(c.k) if c.k is not None else ""))
    if c.lenses is not None and c.lenses != own_lenses:
        parts.append("+L" if c.lenses else "-L")
    if c.consensus not in (None, "judge"):
        parts.append(str(c.consensus)[:5])
    return SEPARATOR.join(parts)


def _extra(c: Condition, factor: str) -> str:
    value = getattr(c, factor)
    if value is None:
        return ""
    if factor == "team_size":
        return f"N{value}"
    if factor == "rounds":
        return f"R{value}"
    if factor == "temperature":
        return f"T{value:g}"
    return _model_tag(str(value))


def _model_tag(model: str) -> str:
    """A few characters naming a model: ``SmolLM2-135M-Instruct.Q4_1`` -> ``SmolLM2-135M``."""
    parts = re.split(r"[-_/ .]", model.split("/")[-1])
    return "-".join(parts[:2])[:14] or model[:14]


def codes(labels) -> dict[str, str]:
    """``{label: code}`` for the conditions of one chart: every label its own code. Labels
    that would share one get the factors that tell them apart appended (team size, rounds,
    temperature, then the model); two labels that are the same condition written twice keep
    one code."""
    labels = [str(x) for x in dict.fromkeys(labels)]
    parsed = {label: parse(label) for label in labels}
    out = {label: code(c) for label, c in parsed.items()}
    for factor in ("team_size", "rounds", "temperature", "model"):
        groups: dict[str, list[str]] = {}
        for label, value in out.items():
            groups.setdefault(value, []).append(label)
        for shared, members in groups.items():
            if len(members) < 2:
                continue
            values = {getattr(parsed[m], factor) for m in members}
            if len(values) > 1:
                for m in members:
                    tag = _extra(parsed[m], factor)
                    out[m] = f"{shared}{SEPARATOR}{tag}" if tag else shared
    groups = {}
    for label, value in out.items():
        groups.setdefault(value, []).append(label)
    for shared, members in groups.items():  # still shared: number them in label order
        if len(members) > 1:
            for number, m in enumerate(sorted(members), start=1):
                out[m] = f"{shared}{SEPARATOR}{number}"
    return out


def describe(label) -> str:
    """The condition in words: ``Creative-MAD, distant peers, k = 2, 5 agents, 2 rounds,
    T = 1, Qwen3-8B``."""
    c = label if isinstance(label, Condition) else parse(label)
    parts = [method_name(c.method)]
    if c.peers is not None:
        parts.append(PEER_NAMES.get(c.peers, f"{c.peers} peers"))
        if c.k is not None:
            parts.append(f"k = {c.k}")
    if c.lenses is not None and c.lenses != own_design(c.method)[0]:
        parts.append("with lenses (CLA)" if c.lenses else "without lenses (no CLA)")
    if c.consensus not in (None, "judge"):
        parts.append(f"consensus by {c.consensus}")
    if c.team_size is not None:
        parts.append(f"{c.team_size} agent{'s' if c.team_size != 1 else ''}")
    if c.rounds is not None:
        parts.append(f"{c.rounds} round{'s' if c.rounds != 1 else ''}")
    if c.temperature is not None:
        parts.append(f"T = {c.temperature:g}")
    if c.model:
        parts.append(c.model)
    return ", ".join(parts)


def key_table(labels) -> pd.DataFrame:
    """The key shown beside a chart that uses codes: code, the condition in words, and the
    label as the tables print it."""
    mapping = codes(labels)
    rows = [{"code": value, "condition": describe(label), "label": label} for label, value in mapping.items()]
    return pd.DataFrame(rows, columns=["code", "condition", "label"]).sort_values("code").reset_index(drop=True)
