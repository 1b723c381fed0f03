"""The full experimental condition of a session, so diversity never pools runs that differ.

Paper B's inter-session diversity (section 3.2) is measured over G independent runs of one
method on one query, everything else fixed. ``add_condition`` gives each row of a
conversation table the factors that define its condition: method (``discussion`` or
``protocol``), Cognitive Lens Assignment on/off, peer strategy, k (only when peers are
selected), team size N, rounds R, model, temperature and consensus mode; a ``condition``
label made of them; and ``ablation``, section 7.4's name for the lens/peer combination.
Factors a table does not have (tables made before they were recorded) take the method's
own design (Creative-MAD = lenses + distant peers, other debates = neither).

An imported debate (a transcript upload) says how it is to be read in ``debate_as``: the
paper-B method the user mapped it to, or ``"custom"`` for a debate of its own (its protocol
name is its method). For those rows nothing is assumed: a factor the file did not record
stays unknown (the label says "design not recorded" rather than "[no CLA, all peers]"), and
a custom debate is labelled "custom debate".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.protocols.registry import consensus_methods, debate_methods, is_method, own_design
from engine.protocols.registry import method as described

FACTORS = ("method", "lenses", "peers", "k", "team_size", "rounds", "model", "temperature", "consensus")
DEBATE_AS = "debate_as"  # column: how an imported debate is read (a paper-B debate method or CUSTOM)
CUSTOM = "custom"


def _method_column(frame: pd.DataFrame) -> pd.Series:
    for name in ("discussion", "protocol", "method"):
        if name in frame.columns:
            return frame[name].astype(object)
    return pd.Series([None] * len(frame), index=frame.index, dtype=object)


def _column(frame: pd.DataFrame, *names: str) -> pd.Series:
    for name in names:
        if name in frame.columns:
            return frame[name].astype(object)
    return pd.Series([None] * len(frame), index=frame.index, dtype=object)


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def ablation_name(method: str, lenses, peers) -> str | None:
    """Section 7.4's name of a debate condition's lens/peer design (None for non-debates)."""
    if method not in debate_methods():
        return None
    base = {"homo_mad": "", "hetero_mad": "personas + "}.get(method, "")
    lens = "CLA" if lenses else ""
    peer = {"all": "", "distant": "EPS", "closest": "closest-k", "random": "random-k"}[peers]
    parts = " + ".join(p for p in (lens, peer) if p)
    if not parts:
        return "personas only (Hetero MAD)" if method == "hetero_mad" else "neither (Homo MAD)"
    name = parts if parts != "CLA + EPS" else "CLA + EPS (Creative-MAD)"
    if parts == "CLA":
        name = "CLA only"
    elif parts == "EPS":
        name = "EPS only"
    return base + name


def add_condition(frame: pd.DataFrame) -> pd.DataFrame:
    """The table with the condition factors, ``condition`` and ``ablation`` columns added."""
    out = frame.copy()
    method = _method_column(frame)
    lenses = _column(frame, "lenses")
    peers = _column(frame, "peers")
    k = _column(frame, "k")
    team = _column(frame, "team_size", "agents")
    rounds = _column(frame, "rounds")
    model = _column(frame, "model")
    temperature = _column(frame, "temperature")
    consensus = _column(frame, "consensus")
    imported = _column(frame, DEBATE_AS)
    rows = {name: [] for name in FACTORS}
    labels, ablations = [], []
    debates, with_consensus = set(debate_methods()), set(consensus_methods())
    for i in range(len(frame)):
        m = method.iat[i]
        how = None if _missing(imported.iat[i]) or str(imported.iat[i]).strip() == "" else str(imported.iat[i])
        debate = m in debates or how is not None
        assumed = how is None  # an imported debate: nothing beyond what its file recorded
        own_lenses, own_peers = own_design(m)
        lens = bool(lenses.iat[i]) if not _missing(lenses.iat[i]) else (own_lenses if assumed else None)
        peer = peers.iat[i] if not _missing(peers.iat[i]) else (own_peers if assumed else None)
        kk = k.iat[i] if debate and peer not in ("all", None) and not _missing(k.iat[i]) else None
        recorded_consensus = None if _missing(consensus.iat[i]) else consensus.iat[i]
        values = {"method": m, "lenses": lens if debate else None, "peers": peer if debate else None,
                  "k": int(kk) if kk is not None else None,
                  "team_size": None if _missing(team.iat[i]) else int(team.iat[i]),
                  "rounds": None if _missing(rounds.iat[i]) or _roundless(m) else int(rounds.iat[i]),
                  "model": None if _missing(model.iat[i]) else str(model.iat[i]),
                  "temperature": None if _missing(temperature.iat[i]) else float(temperature.iat[i]),
                  "consensus": (recorded_consensus or "judge") if assumed and m in with_consensus
                  else (recorded_consensus if not assumed else None),
                  "imported": how}
        for name in FACTORS:
            rows[name].append(values[name])
        known = lens is not None and peer is not None
        ablations.append(ablation_name(m, lens, peer) if debate and known and m in debates else None)
        labels.append(condition_label(values))
    for name in FACTORS:
        if name == "method":
            out["method"] = rows["method"]
        else:
            out[f"cond_{name}"] = pd.Series(rows[name], index=frame.index, dtype=object)
    out["condition"] = labels
    out["ablation"] = pd.Series(ablations, index=frame.index, dtype=object)
    return out


def _roundless(name) -> bool:
    """Paper B's kind of method that takes no rounds (Voting, Direct): its rounds are no factor."""
    return is_method(name) and not described(name).turn_limited and not described(name).takes("rounds")


def condition_label(values: dict) -> str:
    """'creative_mad [CLA, closest k=1] N=3 R=1 T=1.0 local' style label of one condition."""
    design = []
    imported = values.get("imported")
    if imported == CUSTOM:
        design.append("custom debate")
    if values.get("lenses") is not None:
        design.append("CLA" if values["lenses"] else "no CLA")
    peers = values.get("peers")
    if peers is not None:
        design.append(f"{peers} k={values['k']}" if values.get("k") is not None else f"{peers} peers")
    if imported is not None and (values.get("lenses") is None or peers is None):
        design.append("design not recorded" if values.get("lenses") is None and peers is None
                      else "lenses not recorded" if values.get("lenses") is None else "peers not recorded")
    if values.get("consensus") not in (None, "judge"):
        design.append(f"consensus={values['consensus']}")
    parts = [str(values.get("method"))]
    if design:
        parts.append("[" + ", ".join(design) + "]")
    for key, short in (("team_size", "N"), ("rounds", "R"), ("temperature", "T")):
        if values.get(key) is not None:
            parts.append(f"{short}={values[key]:g}" if key == "temperature" else f"{short}={values[key]}")
    if values.get("model"):
        parts.append(str(values["model"]))
    return " ".join(parts)

