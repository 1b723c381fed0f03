"""What the Design levers page shows about fidelity (no Streamlit here).

Paper A's structures run as the paper describes them and as the authors' code ran them
(``engine.protocols.fidelity_modes``): the page compares the nine features between the two modes
(``engine.stats.mode_differences``). The sessions come from the chosen dataset when it has both
modes, else from the cached fidelity dataset (``cached_runs/local_smollm2_fidelity``, grid
``cached_runs/grids/fidelity.yaml``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from engine.datasets import Dataset
from engine.stats.mode_differences import compared_structures, fidelity_rows, mode_differences, mode_mechanics
from engine.stats.p_format import format_p

FIDELITY_DATASET = "local_smollm2_fidelity"


@dataclass(frozen=True)
class FidelitySource:
    frame: pd.DataFrame | None
    name: str            # the dataset the rows come from
    model: str           # the model that made them
    note: str            # how the source was chosen, or why there is none


def source(current: pd.DataFrame, current_name: str, root: Path) -> FidelitySource:
    """The chosen dataset's rows when they hold both modes, else the cached fidelity dataset."""
    if compared_structures(fidelity_rows(current)):
        return FidelitySource(current, current_name, _model(current), "the chosen dataset")
    folder = Path(root) / FIDELITY_DATASET
    if not (folder / "manifest.json").exists():
        return FidelitySource(None, FIDELITY_DATASET, "",
                              f"no sessions of both fidelities here, and no {FIDELITY_DATASET} dataset in "
                              f"{root} (python -m engine run --grid cached_runs/grids/fidelity.yaml)")
    data = Dataset.load(folder, with_corpus=False)
    model = ((data.manifest.get("run") or {}).get("config") or {}).get("model") or _model(data.conversations)
    return FidelitySource(data.conversations, FIDELITY_DATASET, str(model),
                          "the cached fidelity dataset (the chosen dataset has no sessions of both modes)")


def _model(frame: pd.DataFrame) -> str:
    if "model" not in frame or frame["model"].dropna().empty:
        return "?"
    return ", ".join(sorted(frame["model"].dropna().astype(str).unique()))


def _number(value: float, digits: int = 3) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


@dataclass(frozen=True)
class FidelityView:
    """Everything the Design levers page shows about fidelity, computed once per dataset."""
    source: FidelitySource
    differences: pd.DataFrame | None   # ``engine.stats.mode_differences.mode_differences``
    table: pd.DataFrame | None         # ``differences_table``
    mechanics: pd.DataFrame | None     # ``mechanics_table``
    headline: str = ""                 # ``headline``


def view(current: pd.DataFrame, current_name: str, root: Path) -> FidelityView:
    """The source (``source``) and, when it has rows, its differences and mechanics tables."""
    found = source(current, current_name, root)
    if found.frame is None:
        return FidelityView(found, None, None, None)
    diff = mode_differences(found.frame)
    return FidelityView(found, diff, differences_table(found.frame, diff), mechanics_table(found.frame),
                        headline(found.frame, diff))


def differences_table(frame: pd.DataFrame, diff: pd.DataFrame | None = None) -> pd.DataFrame:
    """The comparison as the page prints it: one row per structure and feature (``diff``:
    ``mode_differences(frame)`` when already computed)."""
    diff = mode_differences(frame) if diff is None else diff
    out = pd.DataFrame({
        "structure": diff["structure"], "feature": diff["feature"],
        "N paper / release": [f"{a} / {b}" for a, b in zip(diff["n_paper"], diff["n_release"])],
        "mean paper": diff["mean_paper"].map(_number), "mean release": diff["mean_release"].map(_number),
        "release − paper": diff["diff"].map(_number),
        "95% CI (Welch)": [f"[{_number(lo)}, {_number(hi)}]" if not math.isnan(lo) else "—"
                           for lo, hi in zip(diff["ci_low"], diff["ci_high"])],
        "p (Holm, 9 features)": diff["p_holm"].map(format_p),  # <0.001 as every p table prints it
        "Hedges' g [95% CI]": [f"{_number(g, 2)} [{_number(lo, 2)}, {_number(hi, 2)}]" if not math.isnan(g) else "—"
                               for g, lo, hi in zip(diff["g"], diff["g_low"], diff["g_high"])],
        "note": diff["note"],
    })
    return out


def mechanics_table(frame: pd.DataFrame) -> pd.DataFrame:
    table = mode_mechanics(frame)
    return table.rename(columns={"turns_mean": "turns (mean)", "calls_mean": "chat calls (mean)",
                                 "reasked": "replies asked again", "unreadable": "unreadable turns",
                                 "read_as_agree": "read as Agree", "picks_not_verbatim": "picks not verbatim",
                                 "stop_reasons": "how sessions stopped"})


def headline(frame: pd.DataFrame, diff: pd.DataFrame | None = None) -> str:
    """One sentence: how many feature differences have an interval and how many exclude 0
    (``diff``: ``mode_differences(frame)`` when already computed)."""
    diff = mode_differences(frame) if diff is None else diff
    with_ci = diff.dropna(subset=["ci_low", "ci_high"])
    apart = with_ci[(with_ci["ci_low"] > 0) | (with_ci["ci_high"] < 0)]
    holm = diff[diff["p_holm"] < 0.05]
    sessions = fidelity_rows(frame)
    structures = compared_structures(sessions)
    compared = sessions[sessions["structure"].isin(structures)]
    return (f"{len(compared)} sessions ({', '.join(structures)}); of "
            f"{len(diff)} feature comparisons {len(with_ci)} have an interval, {len(apart)} of them "
            f"exclude 0 and {len(holm)} stay below p = .05 after Holm's adjustment over the nine features.")
