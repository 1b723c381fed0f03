"""Run comparison (data side): several datasets or pilots side by side, each number with its N.

* ``overview``: what each dataset is (conversations, sources, models, discussions, tasks, the
  embedding model its features come from);
* ``feature_summary`` / ``rating_summary``: mean, SD and N of each column per dataset;
* ``diversity_summary``: paper B's inter-session diversity of each dataset's final outputs
  per task (``engine.measures.diversity.inter_session_diversity``, groups of ``group_size`` runs),
  averaged over tasks, with the number of groups it rests on.

Features computed with different embedding models are not comparable in absolute terms (a
cosine from one model has no place on another model's scale). The overview names each
dataset's embedding model and how its conversations were made
(``engine.protocols.implementation``). Standardised differences of features (Hedges' g) are
computed only between runs whose features share the reference run's embedding model; across
models the page shows ranks and shapes instead: ``within_run_scale`` (each run's values as
z-scores within that run: the shape of each distribution, not its place) and
``condition_ranks`` (within each run, the rank of each discussion's mean: whether the runs
order the structures alike).

As a run tracker compares runs (Weights & Biases: deltas with intervals, a diff of configs):

* ``run_differences``: each run against a reference run, per column: the difference of
  means with Welch's interval and p, Hedges' g with its interval, p adjusted by Holm over the
  columns of one pair (``engine.stats.guards``; no interval below
  ``guards.MIN_GROUPS_FOR_INTERVAL`` sessions a side);
* ``diversity_differences``: the same on the per-group Vendi and Div-BLEU values;
* ``config_differences``: the runs' manifests flattened to dotted keys, the keys whose values
  differ (or that only some runs have) side by side.

``compare_page_data`` gathers them: the page's numbers, which the page and its notebook call.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pandas as pd

from dashboard.page_data.feature_choices import feature_choices, feature_names
from engine.measures.diversity import inter_session_diversity
from engine.protocols.implementation import describe, implementation_of_table
from engine.stats import guards

RATINGS = ("novelty", "usefulness", "creativity")
GROUP_SIZES = range(2, 16)  # runs per diversity group the page accepts (paper B: 5)


def combined(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """All rows with a ``dataset`` column (the dataset's name)."""
    return pd.concat([f.assign(dataset=name) for name, f in frames.items()], ignore_index=True)


def overview(frames: dict[str, pd.DataFrame], manifests: dict[str, dict]) -> pd.DataFrame:
    rows = []
    for name, frame in frames.items():
        def levels(column):
            return ", ".join(sorted(map(str, frame[column].dropna().unique()))) if column in frame else ""

        rows.append({"dataset": name, "conversations": len(frame), "sources": levels("source"),
                     "models": levels("model"), "discussions": levels("discussion"),
                     "tasks": frame["task"].nunique() if "task" in frame else 0,
                     "embedding model": manifests.get(name, {}).get("embedding_model", "not recorded"),
                     "made by": describe(implementation_of_table(frame))})
    return pd.DataFrame(rows)


def same_scale_runs(manifests: dict[str, dict], reference: str) -> list[str]:
    """The runs whose features share the reference run's embedding model (the reference first)."""
    from engine.stats.reference import same_embedding_model

    model = manifests.get(reference, {}).get("embedding_model")
    return [name for name, manifest in manifests.items()
            if name == reference or same_embedding_model(model, manifest.get("embedding_model"))]


def within_run_scale(frames: dict[str, pd.DataFrame], columns) -> pd.DataFrame:
    """Every row with each of ``columns`` as a z-score within its own run (mean 0, SD 1 per run
    and column): the shape of each run's distribution, comparable across embedding models."""
    parts = []
    for name, frame in frames.items():
        part = frame.assign(dataset=name)
        for column in columns:
            if column in part:
                values = pd.to_numeric(part[column], errors="coerce")
                sd = values.std(ddof=1)
                part[column] = (values - values.mean()) / sd if sd and np.isfinite(sd) and sd > 0 else np.nan
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def condition_ranks(frames: dict[str, pd.DataFrame], columns, by: str = "discussion") -> pd.DataFrame:
    """Within each run, each level of ``by``'s mean of each column and its rank (1 = highest),
    with its N: rows = (column, level), a ``<run> rank`` / ``<run> mean`` / ``<run> N`` triple per run."""
    out: dict[tuple[str, str], dict] = {}
    for name, frame in frames.items():
        if by not in frame:
            continue
        for column in columns:
            if column not in frame:
                continue
            values = pd.to_numeric(frame[column], errors="coerce")
            grouped = values.groupby(frame[by]).agg(["mean", "size"]).dropna(subset=["mean"])
            ranks = grouped["mean"].rank(ascending=False, method="min")
            for level, row in grouped.iterrows():
                out.setdefault((column, str(level)), {}).update({
                    f"{name} rank": int(ranks[level]), f"{name} mean": float(row["mean"]),
                    f"{name} N": int(row["size"])})
    table = pd.DataFrame.from_dict(out, orient="index")
    if len(table):
        table.index = pd.MultiIndex.from_tuples(table.index, names=["column", by])
    return table


def column_summary(frames: dict[str, pd.DataFrame], columns) -> pd.DataFrame:
    """Rows = columns, one ``<dataset> mean / SD / N`` triple per dataset (missing = no data)."""
    out = {}
    for name, frame in frames.items():
        for column in columns:
            values = pd.to_numeric(frame[column], errors="coerce").dropna() if column in frame else pd.Series(dtype=float)
            out.setdefault(column, {}).update({
                f"{name} mean": values.mean() if len(values) else np.nan,
                f"{name} SD": values.std(ddof=1) if len(values) > 1 else np.nan,
                f"{name} N": len(values)})
    table = pd.DataFrame.from_dict(out, orient="index")
    table.index.name = "column"
    return table


def feature_summary(frames):
    return column_summary(frames, feature_names())


def rating_summary(frames):
    return column_summary(frames, RATINGS)


def diversity_groups(frames: dict[str, pd.DataFrame], embed: Callable, group_size: int = 5) -> dict[str, dict]:
    """Per dataset: the Vendi and Div-BLEU value of every group of ``group_size`` final outputs
    of one task and discussion (``{"vendi": [...], "div_bleu": [...], "cells": n, "final
    outputs": n}``), the values the summary averages and the differences compare."""
    out = {}
    for name, frame in frames.items():
        found = {"vendi": [], "div_bleu": [], "cells": 0, "final outputs": 0}
        if "final_idea" in frame:
            ok = frame[frame["final_idea"].fillna("").astype(str).str.strip() != ""]
            if "status" in ok:
                ok = ok[ok["status"].fillna("ok") == "ok"]
            found["final outputs"] = len(ok)
            keys = [c for c in ("discussion", "task") if c in ok]
            for _, part in (ok.groupby(keys) if keys else [((), ok)]):
                if len(part) < group_size:
                    continue
                texts = part["final_idea"].astype(str).tolist()
                result = inter_session_diversity(texts, embed(texts), group_size=group_size)
                found["vendi"] += list(result["vendi_per_group"])
                found["div_bleu"] += list(result["div_bleu_per_group"])
                found["cells"] += 1
        out[name] = found
    return out


def diversity_summary(frames: dict[str, pd.DataFrame], embed: Callable, group_size: int = 5,
                      groups: dict[str, dict] | None = None) -> pd.DataFrame:
    """Per dataset: Vendi and Div-BLEU of final outputs in groups of ``group_size`` runs of the
    same task and discussion, averaged over those cells; groups and cells counted; the 95%
    interval of the mean over groups inside each score's range (``guards.mean_interval``:
    Vendi in [1, group size], Div-BLEU in [0, 1]; none below 3 groups)."""
    groups = groups if groups is not None else diversity_groups(frames, embed, group_size)
    rows = []
    for name, frame in frames.items():
        row = {"dataset": name, "vendi": np.nan, "div_bleu": np.nan, "groups": 0, "cells": 0,
               "final outputs": 0}
        found = groups[name]
        row.update({"groups": len(found["vendi"]), "cells": found["cells"], "final outputs": found["final outputs"]})
        for metric in ("vendi", "div_bleu"):
            interval = guards.mean_interval(found[metric], guards.score_range(metric, group_size))
            row[metric] = interval.estimate if found[metric] else np.nan
            row[f"{metric} 95% CI"] = interval.text(3) if found[metric] else "no groups"
        rows.append(row)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------ differences
def _difference_row(reference, run, column, a, b) -> dict:
    """``run`` minus ``reference`` on one column: Welch's interval and p, Hedges' g."""
    a, b = guards._finite(a), guards._finite(b)
    row = {"reference": reference, "run": run, "column": column, "N reference": len(a), "N run": len(b),
           "mean reference": float(a.mean()) if len(a) else np.nan,
           "mean run": float(b.mean()) if len(b) else np.nan}
    few = min(len(a), len(b))
    if few < guards.MIN_GROUPS_FOR_INTERVAL:
        row.update({"difference": row["mean run"] - row["mean reference"], "ci_low": np.nan, "ci_high": np.nan,
                    "p": np.nan, "g": np.nan, "g_low": np.nan, "g_high": np.nan,
                    "note": guards.too_few_text(few, "sessions")})
        return row
    test = guards.welch(b, a)
    effect = guards.hedges_g(b, a)
    row.update({"difference": test["diff"], "ci_low": test["ci_low"], "ci_high": test["ci_high"], "p": test["p"],
                "g": effect["g"], "g_low": effect["g_low"],
                "g_high": effect["g_high"], "note": ""})
    return row


def _with_holm(rows: list[dict]) -> pd.DataFrame:
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table["p (Holm)"] = np.nan
    for _, part in table.groupby("run", sort=False):
        tested = part["p"].notna()
        if tested.any():
            table.loc[part.index[tested], "p (Holm)"] = guards.holm(part.loc[tested, "p"].to_numpy())
    return table


def run_differences(frames: dict[str, pd.DataFrame], columns, reference: str) -> pd.DataFrame:
    """Each run but ``reference``, minus ``reference``, per column present in both: N, means,
    difference with Welch's 95% interval and p, Holm's p over the columns of the pair, Hedges'
    g with its interval (``engine.stats.guards``)."""
    rows = []
    base = frames[reference]
    for run, frame in frames.items():
        if run == reference:
            continue
        for column in columns:
            if column not in base or column not in frame:
                continue
            a = pd.to_numeric(base[column], errors="coerce")
            b = pd.to_numeric(frame[column], errors="coerce")
            if a.notna().sum() == 0 or b.notna().sum() == 0:
                continue
            rows.append(_difference_row(reference, run, column, a, b))
    return _with_holm(rows)


def diversity_differences(groups: dict[str, dict], reference: str) -> pd.DataFrame:
    """``run_differences`` on the per-group Vendi and Div-BLEU values (N = groups)."""
    rows = []
    for run, found in groups.items():
        if run == reference:
            continue
        for metric in ("vendi", "div_bleu"):
            if groups[reference][metric] and found[metric]:
                rows.append(_difference_row(reference, run, metric, groups[reference][metric], found[metric]))
    table = _with_holm(rows)
    return table.rename(columns={"N reference": "groups reference", "N run": "groups run"}) if len(table) else table


def flatten(value, prefix: str = "") -> dict[str, object]:
    """A nested manifest as ``{"run.config.defaults.temperature": 0.7, ...}`` (lists kept whole)."""
    if isinstance(value, dict):
        out = {}
        for key, inner in value.items():
            out.update(flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def _shown(value, limit: int = 120) -> str:
    import json

    if value is None:
        return "(not recorded)"
    text = value if isinstance(value, str) else json.dumps(value, default=str, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


CONFIG_KEYS = ("run.config", "run.backend", "run.judge", "run.seed", "embedding_model", "made_by", "regenerate",
               "run.command")
CONTENT_KEYS = ("n_conversations", "n_failed_sessions", "protocols", "tasks", "has", "source", "licence")


def _kind(key: str) -> str:
    """``configuration`` (how the run was made), ``contents`` (what it holds) or ``record``
    (notes, statistics, timestamps, versions): the order the table lists them in."""
    for kind, prefixes in (("configuration", CONFIG_KEYS), ("contents", CONTENT_KEYS)):
        if any(key == p or key.startswith(p + ".") for p in prefixes):
            return kind
    return "record"


def config_differences(manifests: dict[str, dict], *, include_same: bool = False) -> pd.DataFrame:
    """Rows = manifest keys (dotted), one column per run: the keys whose values differ between
    the runs or that some runs lack (all keys with ``include_same``), values as text;
    configuration first (model, grid, seeds, judge, embedding model), then contents, then the
    rest of the record."""
    flat = {name: flatten(manifest or {}) for name, manifest in manifests.items()}
    order = {"configuration": 0, "contents": 1, "record": 2}
    keys = sorted(set().union(*(f.keys() for f in flat.values())) if flat else [],
                  key=lambda k: (order[_kind(k)], k))
    rows = []
    for key in keys:
        values = [f.get(key) for f in flat.values()]
        texts = [_shown(v) for v in values]
        differs = len(set(texts)) > 1
        if differs or include_same:
            rows.append({"setting": key, "kind": _kind(key), **dict(zip(flat, texts)), "differs": differs})
    table = pd.DataFrame(rows, columns=["setting", "kind", *flat, "differs"])
    return table.set_index("setting")


def rating_sources(frames: dict[str, pd.DataFrame], root) -> pd.DataFrame:
    """Who rated each run's ideas (the ``rater`` column our engine records; people for the authors'
    ratings) and whether that judge was checked against people (``engine.judging.people_check``)."""
    from engine.judging.people_check import model_of, people_check

    rows = []
    for name, frame in frames.items():
        if not any(c in frame and pd.to_numeric(frame[c], errors="coerce").notna().any() for c in RATINGS):
            continue
        judges = sorted({model_of(r) for r in frame["rater"].dropna().astype(str)}) if "rater" in frame else []
        rows.append({"dataset": name, "judge": "+".join(judges) or "people (the authors' ratings)",
                     "against people": "; ".join(people_check(j, root) for j in judges)
                     or "people's ratings, not a judge's"})
    return pd.DataFrame(rows, columns=["dataset", "judge", "against people"])


# ------------------------------------------------------------------------------ the page
@dataclass(frozen=True)
class CompareData:
    overview: pd.DataFrame
    config: pd.DataFrame  # ``config_differences``
    features: list[str]  # the features some run has values of
    feature_summary: pd.DataFrame | None
    feature_differences: pd.DataFrame | None  # each run − the reference (``run_differences``)
    ratings: pd.DataFrame  # ``rating_summary``
    rated: list[str]  # the ratings some run has
    rating_differences: pd.DataFrame | None
    group_size: int | None  # runs per diversity group; None: no diversity asked for
    diversity: pd.DataFrame | None = None  # ``diversity_summary``
    diversity_differences: pd.DataFrame | None = None
    same_scale: tuple[str, ...] = ()  # runs whose features share the reference's embedding model
    ranks: pd.DataFrame | None = None  # ``condition_ranks`` of the features (every run)

    @property
    def other_scale(self) -> list[str]:
        """Runs whose features come from another embedding model than the reference's."""
        return [name for name in self.overview["dataset"] if name not in self.same_scale]

    @property
    def embedding_models(self) -> set[str]:
        """The embedding models the runs' features come from."""
        return set(self.overview["embedding model"]) if len(self.overview) else set()


def compare_page_data(frames: dict[str, pd.DataFrame], manifests: dict[str, dict], reference: str, *,
                      include_same: bool = False, group_size: int | None = 5, embed: Callable | None = None,
                      compute=sys.modules[__name__]) -> CompareData:
    """The Compare runs page's numbers: the runs ``frames`` (each dataset whole) and their
    ``manifests``, each against the run ``reference``; diversity in groups of ``group_size``
    final outputs embedded by ``embed`` (None, or a size outside ``GROUP_SIZES``: left out).
    ``compute`` gives ``feature_summary``, ``rating_summary``, ``run_differences``,
    ``diversity_groups``, ``diversity_summary`` and ``diversity_differences``: this module
    (default) or the page's caches of them (``dashboard.widgets.cached``)."""
    present = set().union(*(feature_choices(frame) for frame in frames.values()))
    features = [f for f in feature_names() if f in present]
    ratings = compute.rating_summary(frames)
    rated = [c for c in RATINGS if any(ratings.loc[c, f"{n} N"] > 0 for n in frames)]
    same = same_scale_runs(manifests, reference)  # features: standardised differences only on one scale
    data = CompareData(
        overview(frames, manifests), config_differences(manifests, include_same=include_same), features,
        compute.feature_summary(frames) if features else None,
        compute.run_differences({n: frames[n] for n in same}, features, reference) if features else None,
        ratings, rated, compute.run_differences(frames, rated, reference) if rated else None, group_size,
        same_scale=tuple(same), ranks=condition_ranks(frames, features) if features else None)
    if group_size not in GROUP_SIZES:
        return replace(data, group_size=None)
    groups = compute.diversity_groups(frames, embed, group_size)
    return replace(data, diversity=compute.diversity_summary(frames, None, group_size, groups=groups),
                   diversity_differences=compute.diversity_differences(groups, reference))
