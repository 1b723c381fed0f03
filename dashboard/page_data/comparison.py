"""Run comparison (data side): several datasets or pilots side by side, each number with its N.

* ``overview``: what each dataset is (conversations, sources, models, discussions, tasks, the
  embedding model its features come from);
* ``feature_summary`` / ``rating_summary``: mean, SD and N of each column per dataset;
* ``diversity_summary``: paper B's inter-session diversity of each dataset's final outputs
  per task (``engine.diversity.inter_session_diversity``, groups of ``group_size`` runs),
  averaged over tasks, with the number of groups it rests on.

Features computed with different embedding models are not comparable in absolute terms; the
overview names each dataset's model so the page can say so.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from engine.diversity import inter_session_diversity
from engine.features import FEATURE_NAMES

RATINGS = ("novelty", "usefulness", "creativity")


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
                     "embedding model": manifests.get(name, {}).get("embedding_model", "not recorded")})
    return pd.DataFrame(rows)


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
    return column_summary(frames, FEATURE_NAMES)


def rating_summary(frames):
    return column_summary(frames, RATINGS)


def diversity_summary(frames: dict[str, pd.DataFrame], embed: Callable, group_size: int = 5) -> pd.DataFrame:
    """Per dataset: Vendi and Div-BLEU of final outputs in groups of ``group_size`` runs of the
    same task and discussion, averaged over those cells; groups and cells counted."""
    rows = []
    for name, frame in frames.items():
        row = {"dataset": name, "vendi": np.nan, "div_bleu": np.nan, "groups": 0, "cells": 0,
               "final outputs": 0}
        if "final_idea" in frame:
            ok = frame[frame["final_idea"].fillna("").astype(str).str.strip() != ""]
            if "status" in ok:
                ok = ok[ok["status"].fillna("ok") == "ok"]
            row["final outputs"] = len(ok)
            keys = [c for c in ("discussion", "task") if c in ok]
            vendi, bleu = [], []
            for _, part in (ok.groupby(keys) if keys else [((), ok)]):
                if len(part) < group_size:
                    continue
                texts = part["final_idea"].astype(str).tolist()
                result = inter_session_diversity(texts, embed(texts), group_size=group_size)
                vendi.append(result["vendi"])
                bleu.append(result["div_bleu"])
                row["groups"] += int(result["n_groups"])
                row["cells"] += 1
            if vendi:
                row["vendi"], row["div_bleu"] = float(np.mean(vendi)), float(np.mean(bleu))
        rows.append(row)
    return pd.DataFrame(rows)
