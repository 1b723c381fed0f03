"""Paper B's diversity measures on a dataset (section 6 and Figures of section 7).

* ``inter_session_table``: per full condition (method, lenses, peers, k, N, R, model,
  temperature, consensus: ``engine.protocols.conditions``) and task, Vendi Score and Div-BLEU of the
  final outputs of independent sessions, in groups of 5 runs (paper B's protocol: 15 runs
  -> 3 groups of 5), mean and SD across groups (``engine.measures.diversity.inter_session_diversity``);
  a cell with fewer runs than one group is kept with a ``warning``;
* ``intra_session_table``: per session and debate round, diversity among the agents'
  responses (``engine.measures.diversity.intra_session_diversity``);
* ``final_output_map``: PCA of the final outputs' embeddings, for the inter-session picture;
* ``consensus_table``: how each condition's final outputs were picked (the bias check);
* ``task_benchmarks``, ``benchmark_diversity`` and ``benchmark_gains``: the same numbers per
  paper-B benchmark (section 6: MacGyver, Arena-Hard...) when the dataset says which benchmark
  each task comes from, Creative-MAD's gain set beside paper B's published gains
  (``engine.stats.published_b.benchmark_gains``);
* ``diversity_page_data``: the Diversity page's numbers, which the page and its notebook call.

``embed`` is any callable texts -> (n, dim) unit vectors (the cached project embedder).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from dashboard.page_data.analyses import small_model
from engine.datasets import Dataset
from engine.measures.diversity import intra_session_diversity
from engine.protocols.conditions import add_condition
from engine.stats.condition_diversity import diversity_by_condition

Embed = Callable[[list[str]], np.ndarray]


def paper_b_rows(frame: pd.DataFrame, methods) -> pd.DataFrame:
    """Sessions of paper-B methods that have a final output, in replicate order."""
    rows = frame[frame["discussion"].isin(methods)]
    if "final_idea" in rows:
        rows = rows[rows["final_idea"].fillna("").astype(str).str.strip() != ""]
    if "status" in rows:
        rows = rows[rows["status"].fillna("ok") == "ok"]
    sort = [c for c in ("discussion", "task", "replicate", "conversation_id") if c in rows]
    return rows.sort_values(sort)


def inter_session_table(frame: pd.DataFrame, methods, embed: Embed, group_size: int = 5) -> pd.DataFrame:
    """One row per (condition, task) of the paper-B sessions of ``methods``
    (``engine.stats.condition_diversity.diversity_by_condition``)."""
    return diversity_by_condition(paper_b_rows(frame, methods), embed, group_size=group_size)


def intra_session_table(dataset: Dataset, frame: pd.DataFrame, methods, embed: Embed) -> pd.DataFrame:
    """One row per session and round with at least two responses (with its condition)."""
    columns = ["conversation_id", "method", "condition", "task", "round", "n_responses", "vendi", "div_bleu"]
    if dataset.corpus is None:
        return pd.DataFrame(columns=columns)
    parts = []
    for _, row in add_condition(paper_b_rows(frame, methods)).iterrows():
        cid = row["conversation_id"]
        if cid not in dataset.corpus:
            continue
        turns = dataset.corpus[cid].turns
        keep = [i for i, t in enumerate(turns) if t.round is not None]
        if len(keep) < 2:
            continue
        texts = [turns[i].text for i in keep]
        stored = dataset.embeddings_for(cid)
        vectors = stored[keep] if stored is not None and len(stored) == len(turns) else embed(texts)
        table = intra_session_diversity([turns[i].round for i in keep], texts, vectors)
        if len(table):
            parts.append(table.assign(conversation_id=cid, method=row["method"], condition=row["condition"],
                                      task=row["task"]))
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def final_output_map(frame: pd.DataFrame, methods, embed: Embed) -> pd.DataFrame:
    """PCA (2-D) of final outputs' embeddings: ``conversation_id, method, task, x, y``."""
    from sklearn.decomposition import PCA

    data = paper_b_rows(frame, methods)
    if len(data) < 3:
        return pd.DataFrame(columns=["conversation_id", "method", "task", "x", "y"])
    vectors = embed(data["final_idea"].astype(str).tolist())
    points = PCA(n_components=2, random_state=42).fit_transform(vectors)
    return pd.DataFrame({"conversation_id": data["conversation_id"].to_numpy(),
                         "method": data["discussion"].to_numpy(), "task": data["task"].to_numpy(),
                         "x": points[:, 0], "y": points[:, 1]})


def gain_over(table: pd.DataFrame, metric: str, method: str = "creative_mad",
              baseline: str = "homo_mad") -> float | None:
    """Percent gain of ``method`` over ``baseline`` in the task-averaged ``metric`` (paper B, §6).

    Only each method's own design counts (Creative-MAD = CLA + EPS, Homo MAD = neither), not
    its ablations, when the table says which is which (an ``ablation`` column).
    """
    table = own_designs(table)
    means = table.groupby("method")[metric].mean()
    if method not in means or baseline not in means or not np.isfinite(means[baseline]) or means[baseline] == 0:
        return None
    return float(100 * (means[method] - means[baseline]) / means[baseline])


def own_designs(table: pd.DataFrame) -> pd.DataFrame:
    """Rows of each method's own design (Creative-MAD = CLA + EPS at k = 2, Homo MAD = neither),
    not its ablations, when the table says which is which (an ``ablation`` column)."""
    if "ablation" in table.columns:
        own = {"creative_mad": "CLA + EPS (Creative-MAD)", "homo_mad": "neither (Homo MAD)"}
        keep = table["method"].map(lambda m: own.get(m)).isna() | (table["ablation"] == table["method"].map(own))
        table = table[keep]
        paper_k = (table["method"] == "creative_mad") & (table["k"] == 2)
        if paper_k.any():  # the paper's k = 2 when the table has a k sweep
            table = table[(table["method"] != "creative_mad") | paper_k]
    return table


def gain_interval(table: pd.DataFrame, metric: str, method: str = "creative_mad", baseline: str = "homo_mad",
                  *, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> dict | None:
    """The gain of ``gain_over`` with a bootstrap interval over diversity groups.

    Each (method, task) cell's per-group values (``<metric>_per_group``) are resampled with
    replacement, the cell means and the task-averaged gain recomputed; the interval is the
    percentile range of ``n_boot`` resamples. Also returned: the number of groups and cells
    behind each side, so the page can say what the headline rests on. When a cell has a single
    group, or a side has fewer than ``engine.stats.guards.MIN_PER_GROUP_FOR_BOOTSTRAP`` (10)
    groups in all (a percentile bootstrap of a few values undercovers), no interval is given
    (``low``/``high`` None, ``reason`` says why). None when a side has no groups.
    """
    from engine.stats.guards import MIN_PER_GROUP_FOR_BOOTSTRAP

    column = f"{metric}_per_group"
    table = own_designs(table)
    if column not in table.columns:
        return None
    cells = {}
    for side in (method, baseline):
        rows = table[(table["method"] == side)]
        groups = [np.asarray(v, dtype=float) for v in rows[column] if v is not None and len(v)]
        if not groups:
            return None
        cells[side] = groups
    point = gain_over(table, metric, method, baseline)
    if point is None:
        return None
    summary = {"gain": point, "level": level, "n_boot": n_boot,
               "groups": {side: sum(len(g) for g in groups) for side, groups in cells.items()},
               "cells": {side: len(groups) for side, groups in cells.items()},
               "single_group_cells": sum(len(g) < 2 for groups in cells.values() for g in groups)}
    if summary["single_group_cells"]:
        # one group in a cell: resampling it cannot vary, so an interval would look falsely tight
        return {**summary, "low": None, "high": None}
    if min(summary["groups"].values()) < MIN_PER_GROUP_FOR_BOOTSTRAP:
        counts = " and ".join(str(summary["groups"][side]) for side in (method, baseline))
        return {**summary, "low": None, "high": None,
                "reason": f"too few groups for a bootstrap interval ({counts}; at least "
                          f"{MIN_PER_GROUP_FOR_BOOTSTRAP} a side)"}
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        means = {side: np.mean([rng.choice(g, size=len(g), replace=True).mean() for g in groups])
                 for side, groups in cells.items()}
        if means[baseline] != 0:
            draws.append(100 * (means[method] - means[baseline]) / means[baseline])
    low, high = np.percentile(draws, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return {**summary, "low": float(low), "high": float(high)}


def consensus_table(conversations: pd.DataFrame) -> pd.DataFrame:
    """Per debate condition: sessions with a pick, unparsed picks, and how often each agent was
    chosen (the consensus bias check of the Diversity and Quality–Diversity pages)."""
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


def task_benchmarks(dataset: Dataset) -> dict[str, str]:
    """Task id -> paper-B benchmark name, from the dataset manifest's ``benchmark_of_task``
    (written by ``engine.dataset_builds.paper_b_benchmarks``); empty for other datasets."""
    mapping = (dataset.manifest or {}).get("benchmark_of_task") or {}
    return {str(task): str(name) for task, name in mapping.items() if name}


def benchmark_diversity(inter: pd.DataFrame, benchmarks: dict[str, str]) -> pd.DataFrame:
    """Per benchmark and method (each method's own design, ``own_designs``): Vendi and
    Div-BLEU averaged over the benchmark's task cells with a value, and what they rest on
    (task cells, diversity groups, runs)."""
    columns = ["benchmark", "method", "tasks", "groups", "runs", "vendi", "div_bleu"]
    table = own_designs(inter)
    table = table[table["task"].isin(benchmarks)].assign(benchmark=lambda t: t["task"].map(benchmarks))
    table = table[table["n_groups"] > 0]
    if table.empty:
        return pd.DataFrame(columns=columns)
    out = (table.groupby(["benchmark", "method"])
           .agg(tasks=("task", "nunique"), groups=("n_groups", "sum"), runs=("n_runs", "sum"),
                vendi=("vendi", "mean"), div_bleu=("div_bleu", "mean"))
           .reset_index())
    return out[columns]


def benchmark_gains(inter: pd.DataFrame, benchmarks: dict[str, str]) -> pd.DataFrame:
    """Per benchmark: Creative-MAD's gain over Homo MAD (``gain_over`` on that benchmark's task
    cells) with the runs it rests on, ours, beside paper B's published gains (section 6, which
    pools its four benchmarks: ``engine.stats.published_b.benchmark_gains``)."""
    from engine.stats import published_b

    rows = []
    for name in sorted(set(benchmarks.values())):
        cells = inter[inter["task"].map(benchmarks) == name]
        cells = cells[cells["n_groups"] > 0]
        runs = {m: int(own_designs(cells).loc[lambda t: t["method"] == m, "n_runs"].sum())
                for m in ("creative_mad", "homo_mad")}
        row = {"benchmark": name, "runs (Creative-MAD / Homo MAD) · ours": f"{runs['creative_mad']} / {runs['homo_mad']}"}
        for metric, label in (("vendi", "Vendi gain %"), ("div_bleu", "Div-BLEU gain %")):
            row[f"{label} · ours"] = gain_over(cells, metric) if len(cells) else None
            row[f"{label} interval · ours"] = _interval_text(gain_interval(cells, metric) if len(cells) else None)
        published = published_b.benchmark_gains(name)
        for _, paper in published.iterrows():
            row[f"Vendi gain % · published ({paper['model']})"] = paper["semantic (Vendi) gain %"]
            row[f"Div-BLEU gain % · published ({paper['model']})"] = paper["lexical (Div-BLEU) gain %"]
        row["published scope"] = published["scope"].iat[0] if len(published) else ""
        rows.append(row)
    return pd.DataFrame(rows)


def _interval_text(interval: dict | None) -> str:
    """A gain's bootstrap interval in words, or why there is none (``gain_interval``)."""
    if interval is None:
        return "no gain: a side has no diversity group"
    if interval["low"] is None:
        return "none: " + interval.get("reason", f"{interval['single_group_cells']} cell(s) with a single group")
    return f"{100 * interval['level']:.0f}% [{interval['low']:+.1f}%, {interval['high']:+.1f}%]"


# ------------------------------------------------------------------------------ the page
@dataclass(frozen=True)
class DiversityData:
    inter: pd.DataFrame  # ``inter_session_table`` (with each cell's per-group values)
    gains: dict[str, float | None]  # Creative-MAD's gain over Homo MAD, per metric (``gain_over``)
    intervals: dict[str, dict | None]  # their bootstrap intervals (``gain_interval``)
    headline_rows: int  # Creative-MAD and Homo MAD sessions the gains rest on
    made_by: str | None  # the small model that made them, if one did
    consensus: pd.DataFrame  # how the final outputs were picked (``consensus_table``)
    intra: pd.DataFrame | None  # ``intra_session_table``; None without turns
    by_benchmark: pd.DataFrame | None = None  # ``benchmark_diversity``; None: tasks not from a benchmark
    benchmark_gains: pd.DataFrame | None = None  # ``benchmark_gains`` (ours beside published)

    @property
    def shown(self) -> pd.DataFrame:
        """The inter-session table without its per-group arrays (what the page lists)."""
        return self.inter.drop(columns=["vendi_per_group", "div_bleu_per_group"], errors="ignore")

    @property
    def by_condition(self) -> pd.DataFrame:
        """The cells with a value, conditions as the bars' ``method``."""
        return self.shown.dropna(subset=["vendi"]).assign(method=lambda t: t["condition"])

    @property
    def without_spread(self) -> pd.DataFrame:
        """The cells with a value but fewer than ``engine.stats.guards.MIN_GROUPS_FOR_INTERVAL``
        (3) diversity groups: their bars are drawn without an SD (``charts.diversity_bars``)."""
        from engine.stats.guards import MIN_GROUPS_FOR_INTERVAL

        cells = self.by_condition
        return cells[cells["n_groups"] < MIN_GROUPS_FOR_INTERVAL]

    def spread_note(self) -> str:
        """The caption under the bars: what the error bars are and which cells have none, and why."""
        from engine.stats.guards import MIN_GROUPS_FOR_INTERVAL

        cells, few = self.by_condition, self.without_spread
        text = ("Bars: the mean over a cell's diversity groups; error bars: ±1 SD of the group values across "
                f"those groups (population SD), drawn only with {MIN_GROUPS_FOR_INTERVAL} or more groups.")
        if len(few):
            counts = ", ".join(f"{n} group{'s' if n != 1 else ''}: {c}"
                               for n, c in few["n_groups"].astype(int).value_counts().sort_index().items())
            text += (f" {len(few)} of {len(cells)} condition/task cells have fewer ({counts}), so they show the "
                     "value alone: an SD of 1 or 2 groups says almost nothing about the spread.")
        return text

    @property
    def short(self) -> pd.DataFrame:
        """The cells with fewer runs than one group (no diversity value)."""
        return self.inter[self.inter["n_groups"] == 0]


def diversity_page_data(dataset: Dataset, frame: pd.DataFrame, methods, embed: Embed, *, group_size: int = 5,
                        turns: bool = True, compute=sys.modules[__name__]) -> DiversityData:
    """The Diversity page's numbers on the selection ``frame`` of ``dataset``: the paper-B
    sessions of ``methods`` in groups of ``group_size`` runs; per-round diversity when the
    dataset has ``turns``. ``compute`` gives ``inter_session_table`` and
    ``intra_session_table``: this module (default) or the page's caches of them
    (``dashboard.widgets.cached``)."""
    methods = tuple(methods)
    inter = compute.inter_session_table(frame, methods, embed, group_size)
    headline = paper_b_rows(frame, ("creative_mad", "homo_mad"))
    metrics = ("vendi", "div_bleu")
    intra = compute.intra_session_table(dataset, frame, methods, embed) if turns else None
    gains = {m: gain_over(inter, m) for m in metrics}
    intervals = {m: gain_interval(inter, m) for m in metrics}
    benchmarks = task_benchmarks(dataset)
    shown = set(inter["task"]) & set(benchmarks)
    return DiversityData(inter, gains, intervals, len(headline), small_model(headline),
                         consensus_table(paper_b_rows(frame, methods)), intra,
                         benchmark_diversity(inter, benchmarks) if shown else None,
                         benchmark_gains(inter, benchmarks) if shown else None)
