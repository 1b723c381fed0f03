"""The steered discussion against its baselines: the tables of the Steering page.

The dataset is built by ``python -m engine dataset build RUN_DIR --kind steered``
(``engine.dataset_builds.steered``), which also stores the MiniLM embeddings of every
session's final idea for paper B's diversity.

``summary_table`` gives one row per method, all from the dataset's files:

* sessions (finished), mean chat calls per session, moderator interventions per session;
* the five features the moderator tracks (engine.protocols.steered.TRACKED): mean and 95%
  t-interval over sessions, N (intervals by ``engine.stats.guards.mean_interval``: inside each
  score's range, none with fewer than 3 values);
* the judge's rubric score of each final idea (1-10, ``python -m engine judge quality``;
  paper B's quality) and its creativity (novelty x usefulness rated together, min-max scaled
  within task; paper A), each with a 95% t-interval over the sessions it could rate and its
  parse rate (sessions with a readable score / sessions);
* Vendi and Div-BLEU of the final ideas (paper B, section 6): runs in replicate order split
  into groups of 5, mean over groups with a 95% t-interval over groups.

``difference_table`` gives steered minus each baseline (difference of means, Welch 95% CI and
Welch's p from the same statistic; at least 3 sessions a side).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from engine.dataset_builds.steered import (  # noqa: F401
    DATASET_NAME,
    FINAL_EMBEDDINGS,
    FINAL_IDS,
    INTERVENTIONS,
    METHODS,
)
from engine.measures.diversity import div_bleu, split_into_groups, vendi_score
from engine.protocols.steering_targets import TRACKED
from engine.stats.guards import MIN_GROUPS_FOR_INTERVAL, mean_interval, score_range, welch

GROUP = 5
OUTCOMES = TRACKED + ("rubric_score", "creativity")

def mean_ci(values, name: str = "", group_size: int = GROUP) -> tuple[float, float, float, int]:
    """(mean, low, high, n): a 95% interval inside the range of score ``name`` (rubric 1-10,
    creativity, Div-BLEU [0, 1], Vendi [1, group size]; features unbounded: Student t),
    ``engine.stats.guards.mean_interval``; NaN bounds with fewer than 3 values."""
    interval = mean_interval(values, score_range(name, group_size))
    return interval.estimate, interval.low, interval.high, interval.n


def final_vectors(folder: Path) -> dict[str, np.ndarray]:
    ids = json.loads((folder / FINAL_IDS).read_text(encoding="utf-8"))
    vectors = np.load(folder / FINAL_EMBEDDINGS)
    if len(ids) != len(vectors):
        raise ValueError(f"{FINAL_IDS} names {len(ids)} sessions, {FINAL_EMBEDDINGS} has {len(vectors)} rows")
    return dict(zip(ids, vectors))


def _method_column(frame: pd.DataFrame) -> str:
    return "discussion" if "discussion" in frame.columns else "protocol"


def summary_table(conversations: pd.DataFrame, vectors: dict[str, np.ndarray]) -> pd.DataFrame:
    """One row per method present (see the module docstring)."""
    column = _method_column(conversations)
    rows = []
    for method in [m for m in METHODS if m in set(conversations[column])]:
        part = conversations[(conversations[column] == method) & (conversations["status"] == "ok")]
        part = part.sort_values("replicate", kind="stable")
        row = {"method": method, "sessions": len(part),
               "calls_per_session": float(part["calls"].mean()) if "calls" in part else np.nan}
        row["interventions_per_session"] = (float(part["interventions"].fillna(0).mean())
                                            if "interventions" in part and method == "steered" else np.nan)
        for name in OUTCOMES:
            values = part[name].to_numpy(dtype=float) if name in part else np.array([])
            mean, low, high, n = mean_ci(values, name)
            row.update({name: mean, f"{name}_lo": low, f"{name}_hi": high, f"{name}_n": n})
        readable = part[["novelty_raw", "usefulness_raw"]].notna().all(axis=1) if \
            {"novelty_raw", "usefulness_raw"} <= set(part.columns) else pd.Series(False, index=part.index)
        row["judge_parsed"] = int(readable.sum())
        row["judge_parse_rate"] = float(readable.mean()) if len(part) else np.nan
        rubric = part["rubric_score"].notna() if "rubric_score" in part else pd.Series(False, index=part.index)
        row["rubric_parse_rate"] = float(rubric.mean()) if len(part) else np.nan
        ids = [cid for cid in part["conversation_id"] if cid in vectors]
        texts = dict(zip(part["conversation_id"], part["final_idea"].astype(str)))
        groups = split_into_groups(ids, GROUP)
        vendi = [vendi_score(np.stack([vectors[i] for i in g])) for g in groups]
        bleu = [div_bleu([texts[i] for i in g]) for g in groups]
        for name, values in (("vendi", vendi), ("div_bleu", bleu)):
            mean, low, high, n = mean_ci(values, name)
            row.update({name: mean, f"{name}_lo": low, f"{name}_hi": high})
        row["groups"] = len(groups)
        rows.append(row)
    return pd.DataFrame(rows)


def difference_table(conversations: pd.DataFrame, outcomes=OUTCOMES) -> pd.DataFrame:
    """Steered minus each baseline: difference of session means with a Welch 95% interval."""
    column = _method_column(conversations)
    ok = conversations[conversations["status"] == "ok"]
    steered = ok[ok[column] == "steered"]
    rows = []
    for method in [m for m in METHODS[1:] if m in set(ok[column])]:
        other = ok[ok[column] == method]
        for name in outcomes:
            a = steered[name].dropna().to_numpy(float) if name in steered else np.array([])
            b = other[name].dropna().to_numpy(float) if name in other else np.array([])
            if len(a) < MIN_GROUPS_FOR_INTERVAL or len(b) < MIN_GROUPS_FOR_INTERVAL:
                continue
            test = welch(a, b)
            rows.append({"baseline": method, "outcome": name, "steered_minus_baseline": test["diff"],
                         "lo": test["ci_low"], "hi": test["ci_high"], "welch_p": test["p"],
                         "n_steered": len(a), "n_baseline": len(b)})
    return pd.DataFrame(rows, columns=["baseline", "outcome", "steered_minus_baseline", "lo", "hi", "welch_p",
                                       "n_steered", "n_baseline"])


def intervention_counts(records: pd.DataFrame) -> pd.DataFrame:
    """Interventions by rule and reason."""
    if records.empty:
        return pd.DataFrame(columns=["rule", "reason", "interventions"])
    return records.groupby(["rule", "reason"]).size().rename("interventions").reset_index()


def trajectory_with_marks(vectors: np.ndarray, conversation_id: str,
                          records: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A session's trajectory in 2D (PCA of its own turn embeddings, engine.maps.projection) and
    its interventions placed at the turn after which they fired."""
    from engine.maps.projection import project_turns

    index = pd.DataFrame({"conversation_id": conversation_id, "turn": range(len(vectors))})
    points = project_turns(np.asarray(vectors, float), index, method="pca", use_cache=False)
    marks = records[records["conversation_id"] == conversation_id].copy() if not records.empty else records.copy()
    if not marks.empty:
        marks["turn"] = marks["n_turns"].astype(int) - 1
        marks = marks.merge(points, on=["conversation_id", "turn"], how="left")
    return points, marks


# ------------------------------------------------------------------------------ the page
SUMMARY_COLUMNS = ["method", "sessions", "calls_per_session", "interventions_per_session",
                   *[f"{name}{part}" for name in OUTCOMES for part in ("", "_lo", "_hi", "_n")],
                   "rubric_parse_rate", "judge_parsed", "judge_parse_rate", "vendi", "vendi_lo", "vendi_hi", "div_bleu",
                   "div_bleu_lo", "div_bleu_hi", "groups"]  # what the page lists of ``summary_table``, in order


@dataclass(frozen=True)
class SteeringData:
    summary: pd.DataFrame  # ``summary_table``
    differences: pd.DataFrame  # ``difference_table``
    finished: int  # sessions with status ok
    records: pd.DataFrame  # the moderator's interventions (empty when none were recorded)
    interventions: pd.DataFrame  # ``intervention_counts``
    steered_ids: list[str]  # the finished steered sessions

    @property
    def shown(self) -> pd.DataFrame:
        """The summary's columns the page lists (``SUMMARY_COLUMNS``)."""
        return self.summary[[c for c in SUMMARY_COLUMNS if c in self.summary.columns]]

    @property
    def steered_sessions(self) -> int:
        """Finished steered sessions (the summary's ``sessions`` of the steered method)."""
        steered = self.summary[self.summary["method"] == "steered"] if len(self.summary) else self.summary
        return int(steered["sessions"].iloc[0]) if len(steered) else 0


def steering_page_data(conversations: pd.DataFrame, folder: Path) -> SteeringData:
    """The Steering page's numbers: the steered dataset's sessions ``conversations``, its files
    in ``folder`` (final ideas' embeddings, the moderator's interventions)."""
    records = pd.read_parquet(folder / INTERVENTIONS) if (folder / INTERVENTIONS).exists() else pd.DataFrame()
    column = _method_column(conversations)
    steered_ids = sorted(conversations.loc[(conversations[column] == "steered") & (conversations["status"] == "ok"),
                                           "conversation_id"])
    return SteeringData(summary_table(conversations, final_vectors(folder)), difference_table(conversations),
                        int((conversations["status"] == "ok").sum()), records, intervention_counts(records),
                        steered_ids)
