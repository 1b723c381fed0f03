"""What a dataset holds and how the sidebar filters cut it (no Streamlit here).

``availability`` says what a dataset can show, ``filter_options`` and ``apply_filters`` are
the sidebar's filters; ``cached_runs_root`` and ``pilot_root`` are where datasets live
(``cached_runs/`` or ``$CDL_CACHED_RUNS``; the pilot history). The chosen dataset and the
session's uploads are kept by ``dashboard.widgets.session``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dashboard.page_data.feature_choices import feature_choices
from engine.datasets import Dataset
from engine.measures.trajectory import PAPER_A_FEATURES  # paper A's nine: the release's 4B columns
from engine.names import (
    PAPER_B as PAPER_B_METHODS,  # paper A's samples are in engine.samples
)

REPO_ROOT = Path(__file__).resolve().parents[2]
FILTER_COLUMNS = ("source", "task", "model", "discussion", "persona", "team_size")
OUTCOME_COLUMNS = ("creativity", "novelty", "usefulness")
MISSING_LABEL = "(none)"


def cached_runs_root() -> Path:
    """Folder of cached datasets: ``$CDL_CACHED_RUNS`` or ``<repo>/cached_runs``."""
    return Path(os.environ.get("CDL_CACHED_RUNS") or REPO_ROOT / "cached_runs")


def pilot_root() -> Path:
    """Folder of the pilots kept in the run history (``dashboard.pilot.history``)."""
    from dashboard.pilot.history import history_root

    return history_root()


@dataclass(frozen=True)
class Availability:
    """What a dataset holds, so pages can say what is missing instead of failing."""

    n_conversations: int
    turns: bool
    turn_embeddings: bool
    features: tuple[str, ...]
    ratings: tuple[str, ...]
    sources: tuple[str, ...]
    paper_b_methods: tuple[str, ...]
    final_ideas: bool
    features_4b: bool


def availability(dataset: Dataset) -> Availability:
    frame = dataset.conversations
    has = lambda c: c in frame.columns and frame[c].notna().any()  # noqa: E731
    methods = ()
    if "discussion" in frame.columns:
        present = set(frame["discussion"].dropna().astype(str))
        methods = tuple(m for m in PAPER_B_METHODS if m in present) + custom_debates(frame)
    return Availability(
        n_conversations=len(frame),
        turns=dataset.corpus is not None and any(c.turns for c in dataset.corpus),
        turn_embeddings=dataset.turn_embeddings is not None and dataset.turn_index is not None,
        features=tuple(feature_choices(frame)),
        ratings=tuple(c for c in OUTCOME_COLUMNS if has(c)),
        sources=tuple(sorted(frame["source"].dropna().astype(str).unique())) if "source" in frame else (),
        paper_b_methods=methods,
        final_ideas=has("final_idea"),
        features_4b=any(f"{f}_4b" in frame.columns for f in PAPER_A_FEATURES),
    )


@dataclass(frozen=True)
class DataPageData:
    """The Data page's numbers: its four headline counts (as the page prints them) and the
    conversations by model and task (None without those columns)."""

    headline: dict[str, str]
    by_model_and_task: pd.DataFrame | None


def data_page_data(frame: pd.DataFrame) -> DataPageData:
    """The Data page's numbers of the selected rows ``frame``."""
    counts = frame["source"].value_counts() if "source" in frame else pd.Series(dtype=int)
    headline = {
        "Conversations selected": f"{len(frame):,}",
        "LLM conversations": f"{int(counts.get('llm', 0)):,}",
        "Human conversations": f"{int(counts.get('human', 0)):,}",
        "Mean turns": f"{frame['n_turns'].mean():.1f}" if "n_turns" in frame else "n/a",
    }
    by_model_and_task = None
    if {"source", "model", "task"} <= set(frame.columns):
        by_model_and_task = pd.crosstab(frame["model"].fillna(MISSING_LABEL), frame["task"].fillna(MISSING_LABEL),
                                        margins=True, margins_name="total")
    return DataPageData(headline, by_model_and_task)


def demonstration(manifest: dict) -> str | None:
    """``"demonstration on a 135M model (SmolLM2-135M-Instruct.Q4_1, run locally)"`` for a
    dataset the engine made with the local model (``run.backend.backend == "local"``, as
    ``engine.dataset_builds.run_folder`` records it), else None. The size is read from the
    model's name when it states one (``135M``, ``1.7B``)."""
    import re

    backend = ((manifest or {}).get("run") or {}).get("backend") or {}
    if not isinstance(backend, dict) or backend.get("backend") != "local":
        return None
    model = str(backend.get("model") or backend.get("file") or "local model")
    size = re.search(r"(?<![\d.])(\d+(?:\.\d+)?)([MB])(?![a-z])", model)
    what = f"a {size.group(1)}{size.group(2)} model" if size else "a small local model"
    return f"demonstration on {what} ({model}, run locally)"


def custom_debates(frame: pd.DataFrame) -> tuple[str, ...]:
    """Protocol names of imported debates kept as conditions of their own
    (``debate_as == "custom"``, ``engine.protocols.conditions``), sorted."""
    from engine.protocols.conditions import CUSTOM, DEBATE_AS

    if DEBATE_AS not in frame.columns or "discussion" not in frame.columns:
        return ()
    custom = frame.loc[frame[DEBATE_AS].astype(str) == CUSTOM, "discussion"].dropna().astype(str)
    return tuple(sorted(set(custom) - set(PAPER_B_METHODS)))


def _labels(values: pd.Series) -> pd.Series:
    """Filter labels of a column: text, with missing values shown as ``(none)``."""
    out = values.astype(object).where(values.notna(), MISSING_LABEL)
    return out.map(lambda v: str(int(v)) if isinstance(v, (float, np.floating)) and float(v).is_integer() else str(v))


def filter_options(frame: pd.DataFrame) -> dict[str, list[str]]:
    """For each filter column present, its distinct labels (sorted, ``(none)`` last)."""
    options = {}
    for column in FILTER_COLUMNS:
        if column not in frame.columns:
            continue
        labels = sorted(set(_labels(frame[column])) - {MISSING_LABEL})
        if frame[column].isna().any():
            labels.append(MISSING_LABEL)
        options[column] = labels
    return options


def apply_filters(frame: pd.DataFrame, selections: dict[str, list[str]]) -> pd.DataFrame:
    """Rows whose label in every filtered column is among the selected ones.

    An empty selection means "no filter" on that column.
    """
    mask = np.ones(len(frame), dtype=bool)
    for column, chosen in selections.items():
        if chosen and column in frame.columns:
            mask &= _labels(frame[column]).isin([str(c) for c in chosen]).to_numpy()
    return frame.loc[mask]
