"""What the fidelity of paper A's structures does to the nine trajectory features.

The same structures run as the paper's text describes them (``fidelity="paper"``) and as
the authors' code ran them (``"release"``; ``engine.protocols.fidelity_modes``) give two groups of
sessions per structure. ``mode_differences`` compares them feature by feature (paper A,
Table 19): release − paper difference of means with Welch's 95% interval and p-value,
Holm's adjustment over the nine features of a structure, and Hedges' g with its interval
(``engine.stats.guards``: the interval and the test use the same Welch statistic). With
fewer than ``MIN_GROUPS_FOR_INTERVAL`` sessions with a value in either mode no interval or
test is given, only the means and the reason. ``mode_mechanics`` describes what the modes
did mechanically (discussion turns, chat calls, replies asked again or read as Agree,
stop reasons), with N. Neither paper reports this comparison.
"""

from __future__ import annotations

import json
import math
from typing import Sequence

import numpy as np
import pandas as pd

from engine.measures.trajectory import PAPER_A_FEATURES
from engine.stats import guards

MODES = ("paper", "release")
STRUCTURES = ("open", "instructed", "iterative")


def fidelity_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The conversations of a dataset that were run with a recorded fidelity."""
    if "fidelity" not in table.columns:
        return table.iloc[0:0].assign(fidelity=pd.Series(dtype=object), structure=pd.Series(dtype=object))
    rows = table[table["fidelity"].isin(MODES)]
    structure = "discussion" if "discussion" in rows.columns else "protocol"
    return rows.assign(structure=rows[structure].astype(str))


def compared_structures(rows: pd.DataFrame) -> list[str]:
    """Structures that have sessions in both modes, in paper A's order."""
    both = [s for s, g in rows.groupby("structure") if set(g["fidelity"]) >= set(MODES)]
    order = {name: i for i, name in enumerate(STRUCTURES)}
    return sorted(both, key=lambda s: (order.get(s, len(order)), s))


def mode_differences(table: pd.DataFrame, features: Sequence[str] = PAPER_A_FEATURES) -> pd.DataFrame:
    """One row per (structure, feature): N and mean per mode, release − paper with Welch's 95%
    interval and p, Holm-adjusted p over the structure's features, Hedges' g and its interval;
    ``note`` says why a row has no interval."""
    rows = fidelity_rows(table)
    out = []
    for structure in compared_structures(rows):
        group = rows[rows["structure"] == structure]
        block = []
        for feature in features:
            if feature not in group.columns:
                continue
            paper = pd.to_numeric(group.loc[group["fidelity"] == "paper", feature], errors="coerce").dropna()
            release = pd.to_numeric(group.loc[group["fidelity"] == "release", feature], errors="coerce").dropna()
            row = {"structure": structure, "feature": feature, "n_paper": len(paper), "n_release": len(release),
                   "mean_paper": _mean(paper), "mean_release": _mean(release),
                   "diff": _mean(release) - _mean(paper), "ci_low": math.nan, "ci_high": math.nan,
                   "p": math.nan, "p_holm": math.nan, "g": math.nan, "g_low": math.nan, "g_high": math.nan,
                   "note": ""}
            smallest = min(len(paper), len(release))
            if smallest == 0 and len(group):
                row["note"] = "undefined for every session of a mode (conversations too short for it)"
            elif smallest < guards.MIN_GROUPS_FOR_INTERVAL:
                row["note"] = guards.too_few_text(smallest, "sessions")
            else:
                test = guards.welch(release.to_numpy(), paper.to_numpy())
                effect = guards.hedges_g(release.to_numpy(), paper.to_numpy())
                row.update(ci_low=test["ci_low"], ci_high=test["ci_high"], p=test["p"],
                           g=effect["g"], g_low=effect["g_low"], g_high=effect["g_high"])
                if math.isnan(test["p"]):
                    row["note"] = "no variation in either mode"
            block.append(row)
        tested = [r for r in block if not math.isnan(r["p"])]
        if tested:
            for r, adjusted in zip(tested, guards.holm([r["p"] for r in tested])):
                r["p_holm"] = float(adjusted)
        out += block
    columns = ["structure", "feature", "n_paper", "n_release", "mean_paper", "mean_release", "diff",
               "ci_low", "ci_high", "p", "p_holm", "g", "g_low", "g_high", "note"]
    return pd.DataFrame(out, columns=columns)


def _mean(values: pd.Series) -> float:
    return float(values.mean()) if len(values) else math.nan


def _replies(value, key: str) -> float:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return math.nan
    if isinstance(value, dict):
        return float(value.get(key, 0) or 0)
    return math.nan


def mode_mechanics(table: pd.DataFrame) -> pd.DataFrame:
    """Per structure and mode: sessions, mean discussion turns and chat calls, replies asked
    again, unreadable, read as Agree, the release's not-verbatim picks, and how sessions
    stopped (counts)."""
    rows = fidelity_rows(table)
    out = []
    for structure in compared_structures(rows):
        for mode in MODES:
            group = rows[(rows["structure"] == structure) & (rows["fidelity"] == mode)]
            replies = group["replies"] if "replies" in group else pd.Series([None] * len(group))
            row = {"structure": structure, "fidelity": mode, "sessions": len(group),
                   "turns_mean": _column_mean(group, "n_turns"),
                   "calls_mean": _column_mean(group, "calls")}
            for key in ("reasked", "unreadable", "read_as_agree"):
                values = [_replies(v, key) for v in replies]
                known = [v for v in values if not math.isnan(v)]
                row[key] = int(sum(known)) if known else None
            picks = pd.to_numeric(group.get("picks_not_verbatim", pd.Series(dtype=float)), errors="coerce")
            row["picks_not_verbatim"] = int(picks.sum()) if picks.notna().any() else None
            stops = group["stop_reason"].value_counts() if "stop_reason" in group else pd.Series(dtype=int)
            row["stop_reasons"] = ", ".join(f"{k} {v}" for k, v in stops.items())
            out.append(row)
    return pd.DataFrame(out)


def _column_mean(group: pd.DataFrame, column: str) -> float:
    if column not in group:
        return math.nan
    values = pd.to_numeric(group[column], errors="coerce").dropna()
    return float(values.mean()) if len(values) else math.nan


def intervals_overlap_zero(frame: pd.DataFrame) -> np.ndarray:
    """Rows whose interval contains 0 (no detectable difference); False where no interval."""
    known = frame["ci_low"].notna() & frame["ci_high"].notna()
    return (known & (frame["ci_low"] <= 0) & (frame["ci_high"] >= 0)).to_numpy()
