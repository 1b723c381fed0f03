"""Tables of the Quality–Diversity page (paper B: section 6's trade-off, 7.1, 7.2, 7.4).

* ``load_quality``: the dataset's judge records (``quality.parquet``, written by
  ``engine.dataset_builds.run_folder`` from ``python -m engine judge``): rubric scores (final and
  per round) and pairwise comparisons.
* ``condition_summary``: per condition (``engine.conditions``), over tasks: Vendi and
  Div-BLEU with 95% t-intervals over the diversity groups (paper B: groups of 5 runs),
  rubric score with a 95% t-interval over sessions, and the average pairwise win rate.
* ``pareto``: conditions no other condition beats on both quality and diversity.
* ``ablation_table``: section 7.4's rows (lens / peer designs) of the summary.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from engine.datasets import Dataset
from engine.quality import rubric_table, win_rates

QUALITY_TABLE = "quality.parquet"
SUMMARY_COLUMNS = ["condition", "method", "ablation", "k", "tasks", "sessions", "groups",
                   "vendi", "vendi_lo", "vendi_hi", "div_bleu", "div_bleu_lo", "div_bleu_hi",
                   "rubric", "rubric_lo", "rubric_hi", "rubric_n", "rubric_missing", "win_rate", "win_rate_n"]


def load_quality(dataset: Dataset) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rubric records, pairwise records) of a dataset; empty frames when it has none."""
    path = Path(dataset.path) / QUALITY_TABLE if dataset.path else None
    if path is None or not path.exists():
        return pd.DataFrame(), pd.DataFrame()
    records = pd.read_parquet(path)
    rubric = records[records["kind"] == "rubric"].reset_index(drop=True)
    pairwise = records[records["kind"] == "pairwise"].reset_index(drop=True)
    return rubric, pairwise


def mean_ci(values, level: float = 0.95) -> tuple[float, float, float, int]:
    """(mean, low, high, n) with a Student-t interval; NaN bounds when n < 2."""
    values = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    n = len(values)
    if n == 0:
        return np.nan, np.nan, np.nan, 0
    mean = float(values.mean())
    if n < 2:
        return mean, np.nan, np.nan, n
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
    return mean, mean - half, mean + half, n


def condition_summary(inter: pd.DataFrame, conversations: pd.DataFrame, rubric: pd.DataFrame,
                      pairwise: pd.DataFrame) -> pd.DataFrame:
    """One row per condition; see the module docstring."""
    sessions = rubric_table(rubric, conversations)
    wins = win_rates(pairwise)
    rows = []
    conditions = sorted(set(inter["condition"]) | set(sessions["condition"]))
    for condition in conditions:
        cells = inter[inter["condition"] == condition]
        mine = sessions[sessions["condition"] == condition]
        vendi = [v for lst in cells["vendi_per_group"] for v in lst]
        bleu = [v for lst in cells["div_bleu_per_group"] for v in lst]
        v_mean, v_lo, v_hi, groups = mean_ci(vendi)
        b_mean, b_lo, b_hi, _ = mean_ci(bleu)
        r_mean, r_lo, r_hi, r_n = mean_ci(mine["rubric_score"].tolist())
        w = wins[wins["condition"] == condition]["win_rate"].dropna()
        source = cells if len(cells) else mine
        rows.append({"condition": condition, "method": source["method"].iat[0],
                     "ablation": source["ablation"].iat[0],
                     "k": cells["k"].iat[0] if len(cells) and "k" in cells else None,
                     "tasks": int(mine["task"].nunique()), "sessions": len(mine), "groups": groups,
                     "vendi": v_mean, "vendi_lo": v_lo, "vendi_hi": v_hi,
                     "div_bleu": b_mean, "div_bleu_lo": b_lo, "div_bleu_hi": b_hi,
                     "rubric": r_mean, "rubric_lo": r_lo, "rubric_hi": r_hi, "rubric_n": r_n,
                     "rubric_missing": int(mine["rubric_score"].isna().sum()),
                     "win_rate": float(w.mean()) if len(w) else np.nan, "win_rate_n": len(w)})
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def pareto(summary: pd.DataFrame, quality: str = "rubric", diversity: str = "vendi") -> pd.Series:
    """True for conditions that no other condition matches or beats on both axes while
    beating on one (higher is better on both); NaN rows are never on the frontier."""
    points = summary[[quality, diversity]].to_numpy(dtype=float)
    flags = []
    for i, (q, d) in enumerate(points):
        if not (np.isfinite(q) and np.isfinite(d)):
            flags.append(False)
            continue
        others = np.delete(points, i, axis=0)
        others = others[np.isfinite(others).all(axis=1)]
        dominated = ((others[:, 0] >= q) & (others[:, 1] >= d) & ((others[:, 0] > q) | (others[:, 1] > d))).any()
        flags.append(not dominated)
    return pd.Series(flags, index=summary.index, name="pareto")


def ablation_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Section 7.4's table: the debate conditions by lens / peer design."""
    rows = summary[summary["ablation"].notna()]
    keep = ["ablation", "k", "condition", "sessions", "vendi", "vendi_lo", "vendi_hi", "div_bleu",
            "rubric", "win_rate"]
    return rows[keep].sort_values(["ablation", "k"], na_position="first").reset_index(drop=True)


def consensus_table(conversations: pd.DataFrame) -> pd.DataFrame:
    """Per condition: sessions with a pick, unparsed picks, and how often each agent was chosen."""
    from engine.conditions import add_condition

    frame = add_condition(conversations)
    if "consensus_choice" not in frame:
        return pd.DataFrame(columns=["condition", "sessions", "unparsed", "unparsed_share"])
    frame = frame[frame["consensus_choice"].notna()].copy()
    if "consensus_agent" not in frame:  # runs made before the agent was recorded: 0-based choice
        frame["consensus_agent"] = None
    missing = frame["consensus_agent"].isna()
    frame.loc[missing, "consensus_agent"] = frame.loc[missing, "consensus_choice"].map(
        lambda c: f"Agent {int(c) + 1}")
    if "consensus_resolution" not in frame:
        frame["consensus_resolution"] = None
    rows = []
    for condition, part in frame.groupby("condition"):
        parsed = part["consensus_parsed"].dropna() if "consensus_parsed" in part else pd.Series(dtype=object)
        unparsed = int((parsed == False).sum())  # noqa: E712 (object column of True/False)
        row = {"condition": condition, "sessions": len(part), "unparsed": unparsed,
               "unparsed_share": unparsed / len(parsed) if len(parsed) else np.nan,
               "unparsed resolved by": ("position (Agent 1; runs made before retries)"
                                        if part["consensus_resolution"].isna().all() and unparsed
                                        else "seeded random pick" if unparsed else "")}
        for agent, count in part["consensus_agent"].value_counts().sort_index().items():
            row[f"chose {agent}"] = int(count)
        if "consensus_lens" in part and part["consensus_lens"].notna().any():
            lenses = part["consensus_lens"].dropna().value_counts().sort_index()
            row["lenses chosen"] = ", ".join(f"{lens} {count}" for lens, count in lenses.items())
        rows.append(row)
    table = pd.DataFrame(rows)
    chose = [c for c in table.columns if c.startswith("chose ")]
    table[chose] = table[chose].fillna(0).astype(int)
    return table
