"""Tables of the Quality–Diversity page (paper B: section 6's trade-off, 7.1, 7.2, 7.4).

* ``load_quality``: the dataset's judge records (``quality.parquet``, written by
  ``engine.dataset_builds.run_folder`` from ``python -m engine judge``): rubric scores (final and
  per round) and pairwise comparisons.
* ``condition_summary``: per condition (``engine.protocols.conditions``), over tasks: Vendi and
  Div-BLEU over the diversity groups (paper B: groups of 5 runs), the rubric score over
  sessions, each with a 95% interval inside the score's range (``engine.stats.guards``:
  Vendi in [1, group size], Div-BLEU in [0, 1], rubric in [1, 10]; Student t on the logit of
  the mean, back-transformed) and none with fewer than 3 groups or sessions (the words "too few
  groups for an interval (n = 2)" in ``interval_note``); the average pairwise win rate with a
  Wilson interval over the readable comparisons (none below 3 comparisons). ``INTERVALS`` says so in one sentence.
* ``pareto``: conditions no other condition beats on both quality and diversity.
* ``ablation_table``: section 7.4's rows (lens / peer designs) of the summary.
* ``quality_agreement``: which judge rated quality, how many ratings per output and the raters'
  agreement (``engine.judging.quality.rubric_agreement``: ICC(3,k), ICC(2,1) with N outputs and
  k raters), over the selection's sessions; with one rating per output it says "one rating per
  item: agreement cannot be computed", never a number.
* ``benchmark_summary``: per paper-B benchmark (the dataset's ``benchmark_of_task``) and method,
  the rubric score over sessions and the diversity over groups; ``benchmark_quality_gap``:
  Creative-MAD's distance below the best method's rubric score on each benchmark, beside paper
  B's published one (section 6, pooled over its four benchmarks).
* ``quality_diversity_page_data``: all of the page's numbers, which the page and its notebook call.
"""

from __future__ import annotations

import re

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dashboard.page_data.analyses import small_model
from dashboard.page_data.diversity import (Embed, benchmark_diversity, consensus_table, own_designs, paper_b_rows,
                                           task_benchmarks)
from dashboard.page_data.diversity import inter_session_table, intra_session_table  # noqa: F401 (``compute``)
from engine.datasets import Dataset
from engine.judging.quality import per_round_table, rubric_agreement, rubric_table, win_rates
from engine.stats.agreement import panel_agreement
from engine.stats.guards import (MIN_GROUPS_FOR_INTERVAL, mean_interval, score_range, too_few_text,
                                 wilson_interval)

QUALITY_TABLE = "quality.parquet"
SUMMARY_COLUMNS = ["condition", "method", "ablation", "k", "tasks", "sessions", "groups",
                   "vendi", "vendi_lo", "vendi_hi", "div_bleu", "div_bleu_lo", "div_bleu_hi",
                   "rubric", "rubric_lo", "rubric_hi", "rubric_n", "rubric_missing", "win_rate", "win_rate_lo",
                   "win_rate_hi", "win_rate_n", "comparisons", "interval_note"]
INTERVALS = ("95% intervals stay inside each score's range: Vendi in [1, group size], Div-BLEU in [0, 1] over the "
             "diversity groups, rubric in [1, 10] over sessions (Student t on the logit of the mean within the "
             "range, back-transformed); with fewer than 3 groups or sessions no interval, only the value. Win rate: "
             "Wilson interval over the readable pairwise comparisons (ties = 1/2; none below 3).")


def load_quality(dataset: Dataset) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rubric records, pairwise records) of a dataset; empty frames when it has none."""
    path = Path(dataset.path) / QUALITY_TABLE if dataset.path else None
    if path is None or not path.exists():
        return pd.DataFrame(), pd.DataFrame()
    records = pd.read_parquet(path)
    rubric = records[records["kind"] == "rubric"].reset_index(drop=True)
    pairwise = records[records["kind"] == "pairwise"].reset_index(drop=True)
    return rubric, pairwise


def mean_ci(values, level: float = 0.95, bounds=(None, None)) -> tuple[float, float, float, int]:
    """(mean, low, high, n) with a 95% interval inside ``bounds`` (``engine.stats.guards.mean_interval``);
    NaN bounds with fewer than 3 values."""
    interval = mean_interval(values, bounds, level=level)
    return interval.estimate, interval.low, interval.high, interval.n


def condition_summary(inter: pd.DataFrame, conversations: pd.DataFrame, rubric: pd.DataFrame,
                      pairwise: pd.DataFrame, group_size: int = 5) -> pd.DataFrame:
    """One row per condition; see the module docstring."""
    sessions = rubric_table(rubric, conversations)
    wins = win_rates(pairwise)
    rows = []
    conditions = sorted(set(inter["condition"]) | set(sessions["condition"]))
    for condition in conditions:
        cells = inter[inter["condition"] == condition]
        mine = sessions[sessions["condition"] == condition]
        vendi = mean_interval([v for lst in cells["vendi_per_group"] for v in lst],
                              score_range("vendi", group_size))
        bleu = mean_interval([v for lst in cells["div_bleu_per_group"] for v in lst], score_range("div_bleu"))
        quality = mean_interval(mine["rubric_score"].tolist(), score_range("rubric"), unit="sessions")
        w = wins[wins["condition"] == condition].dropna(subset=["win_rate"])
        readable = int((w["comparisons"] - w["missing"]).sum()) if len(w) else 0
        win = (wilson_interval(float(w["win_rate"].mean()) * readable, readable)
               if readable >= MIN_GROUPS_FOR_INTERVAL else None)
        notes = [f"{name}: {interval.note}" for name, interval in (("Vendi", vendi), ("Div-BLEU", bleu),
                                                                   ("rubric", quality))
                 if interval.note and interval.n]
        if 0 < readable < MIN_GROUPS_FOR_INTERVAL:
            notes.append(f"win rate: {too_few_text(readable, 'comparisons')}")
        source = cells if len(cells) else mine
        rows.append({"condition": condition, "method": source["method"].iat[0],
                     "ablation": source["ablation"].iat[0],
                     "k": cells["k"].iat[0] if len(cells) and "k" in cells else None,
                     "tasks": int(mine["task"].nunique()), "sessions": len(mine), "groups": vendi.n,
                     "vendi": vendi.estimate, "vendi_lo": vendi.low, "vendi_hi": vendi.high,
                     "div_bleu": bleu.estimate, "div_bleu_lo": bleu.low, "div_bleu_hi": bleu.high,
                     "rubric": quality.estimate, "rubric_lo": quality.low, "rubric_hi": quality.high,
                     "rubric_n": quality.n, "rubric_missing": int(mine["rubric_score"].isna().sum()),
                     "win_rate": float(w["win_rate"].mean()) if len(w) else np.nan,
                     "win_rate_lo": win.low if win else np.nan, "win_rate_hi": win.high if win else np.nan,
                     "win_rate_n": len(w), "comparisons": readable, "interval_note": "; ".join(notes)})
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
            "rubric", "win_rate", "interval_note"]
    return rows[keep].sort_values(["ablation", "k"], na_position="first").reset_index(drop=True)


def quality_agreement(rubric: pd.DataFrame, sessions: pd.DataFrame) -> dict | None:
    """The quality raters of the selection's sessions (``engine.stats.agreement.panel_agreement``
    values, plus ``people``: whether that judge was checked against people,
    ``engine.judging.people_check``): from the judge records when the dataset has them, else from
    the runner's own rubric score (one rating per session); None when nothing was rated."""
    found = _quality_raters(rubric, sessions)
    if found is not None:
        from dashboard.page_data.datasets import cached_runs_root
        from engine.judging.people_check import people_check

        judges = [j for j in re.split(r" / |\+", str(found.get("judge") or "")) if j.strip()]
        found["people"] = "; ".join(people_check(j, cached_runs_root()) for j in judges) or \
            "not checked against people: the judge is not recorded"
    return found


def _quality_raters(rubric: pd.DataFrame, sessions: pd.DataFrame) -> dict | None:
    ids = set(sessions["conversation_id"]) if "conversation_id" in sessions else set()
    if not rubric.empty:
        mine = rubric[rubric["conversation_id"].isin(ids)]
        return rubric_agreement(mine) if len(mine) else None
    if "rubric_score" in sessions and pd.to_numeric(sessions["rubric_score"], errors="coerce").notna().any():
        scores = pd.to_numeric(sessions["rubric_score"], errors="coerce").dropna()
        raters = sessions["rater"].dropna().astype(str).str.removeprefix("llm:").unique() \
            if "rater" in sessions else []
        return panel_agreement(scores.to_frame(), judge="+".join(sorted(raters)) or "the run's judge")
    return None


def benchmark_summary(inter: pd.DataFrame, sessions: pd.DataFrame, rubric: pd.DataFrame,
                      benchmarks: dict[str, str]) -> pd.DataFrame:
    """Per benchmark and method (own designs): sessions, mean rubric score (1-10) of the final
    outputs with how many were rated and unreadable, and Vendi / Div-BLEU over the groups
    (``diversity.benchmark_diversity``)."""
    columns = ["benchmark", "method", "sessions", "rubric", "rubric_n", "rubric_missing", "groups", "vendi",
               "div_bleu"]
    scored = rubric_table(rubric, sessions)
    scored = own_designs(scored.assign(k=scored["cond_k"]))  # add_condition's k of the condition
    scored = scored[scored["task"].isin(benchmarks)].assign(benchmark=lambda t: t["task"].map(benchmarks))
    if scored.empty:
        return pd.DataFrame(columns=columns)
    quality = (scored.groupby(["benchmark", "method"])["rubric_score"]
               .agg(sessions="size", rubric="mean", rubric_n="count").reset_index())
    quality["rubric_missing"] = quality["sessions"] - quality["rubric_n"]
    diversity = benchmark_diversity(inter, benchmarks)[["benchmark", "method", "groups", "vendi", "div_bleu"]]
    return quality.merge(diversity, on=["benchmark", "method"], how="left")[columns]


def benchmark_quality_gap(summary: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark: how far (percent) Creative-MAD's mean rubric score is below the best
    method's in ``benchmark_summary`` (0 when it is the best), ours, beside paper B's published
    distance (``engine.stats.published_b.quality_distance``: pooled, six methods)."""
    from engine.stats import published_b

    rows = []
    for name, part in summary.dropna(subset=["rubric"]).groupby("benchmark"):
        scores = part.set_index("method")["rubric"]
        best = scores.idxmax()
        gap = (100 * (scores.max() - scores["creative_mad"]) / scores.max()
               if "creative_mad" in scores and scores.max() > 0 else None)
        row = {"benchmark": name, "methods compared · ours": ", ".join(sorted(scores.index)),
               "best method · ours": best, "Creative-MAD below the best % · ours": gap}
        published = published_b.quality_distance()
        for _, paper in published.iterrows():
            row[f"Creative-MAD below the best · published ({paper['model']})"] = \
                paper["Creative-MAD below the best quality score"]
        row["published scope"] = published["scope"].iat[0] + "; its six methods"
        rows.append(row)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------ the page
GROUP = 5  # runs per diversity group (paper B: 15 runs -> 3 groups of 5)


@dataclass(frozen=True)
class QualityDiversityData:
    rubric: pd.DataFrame  # the judge's rubric records (``load_quality``)
    pairwise: pd.DataFrame  # its pairwise comparisons
    sessions: pd.DataFrame  # the paper-B sessions with a final output (``diversity.paper_b_rows``)
    inter: pd.DataFrame  # diversity per condition and task (``diversity.inter_session_table``)
    summary: pd.DataFrame  # ``condition_summary`` with its two Pareto columns
    made_by: str | None  # the small model that made the sessions, if one did
    intra: pd.DataFrame | None  # per-round diversity (``diversity.intra_session_table``); None without turns
    rounds_quality: pd.DataFrame | None  # per-round rubric scores (``engine.judging.quality.per_round_table``)
    ablation: pd.DataFrame  # section 7.4
    consensus: pd.DataFrame  # how the final answers were picked
    agreement: dict | None = None  # ``quality_agreement``: judge, ratings per output, agreement
    by_benchmark: pd.DataFrame | None = None  # ``benchmark_summary``; None: tasks not from a benchmark
    quality_gap: pd.DataFrame | None = None  # ``benchmark_quality_gap`` (ours beside published)

    @property
    def incomplete(self) -> pd.DataFrame:
        """The condition × task cells with a warning (fewer runs than a group, a partial group)."""
        return self.inter[self.inter["warning"] != ""]


def quality_diversity_page_data(dataset: Dataset, frame: pd.DataFrame, methods, embed: Embed, *,
                                turns: bool = True, compute=sys.modules[__name__]) -> QualityDiversityData:
    """The Quality–Diversity page's numbers on the selection ``frame`` of ``dataset``: the
    paper-B sessions of ``methods``, diversity in groups of ``GROUP`` runs; the per-round views
    when the dataset has ``turns``. ``compute`` gives ``load_quality``, ``inter_session_table`` and
    ``intra_session_table``: this module (default) or the page's caches of them
    (``dashboard.widgets.cached``)."""
    methods = tuple(methods)
    rubric, pairwise = compute.load_quality(dataset)
    sessions = paper_b_rows(frame, methods)
    inter = compute.inter_session_table(frame, methods, embed, GROUP)
    summary = condition_summary(inter, sessions, rubric, pairwise, group_size=GROUP)
    summary["pareto (rubric × Vendi)"] = pareto(summary, "rubric", "vendi")
    summary["pareto (rubric × Div-BLEU)"] = pareto(summary, "rubric", "div_bleu")
    intra = rounds_quality = None
    if turns:
        intra = compute.intra_session_table(dataset, frame, methods, embed)
        rounds_quality = per_round_table(rubric, sessions) if not rubric.empty else pd.DataFrame()
    benchmarks = task_benchmarks(dataset)
    by_benchmark = gap = None
    if set(sessions["task"]) & set(benchmarks):
        by_benchmark = benchmark_summary(inter, sessions, rubric, benchmarks)
        gap = benchmark_quality_gap(by_benchmark)
    return QualityDiversityData(rubric, pairwise, sessions, inter, summary, small_model(sessions), intra,
                                rounds_quality, ablation_table(summary), consensus_table(sessions),
                                quality_agreement(rubric, sessions), by_benchmark, gap)
