"""Loading, filtering and caching the datasets the dashboard shows.

Pure helpers (``apply_filters``, ``availability``, ``filter_options``) know nothing about
Streamlit and are tested directly; the ``st.cache_*`` wrappers and the session-state
accessors (``current_dataset``, ``filtered_conversations``) are what the pages call.
A dataset comes from ``cached_runs/`` (or ``$CDL_CACHED_RUNS``) or from an upload kept in
the session only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from engine.datasets import Dataset, list_datasets
from engine.features import FEATURE_NAMES
from engine.names import PAPER_B as PAPER_B_METHODS  # paper A's samples are in engine.samples

REPO_ROOT = Path(__file__).resolve().parents[1]
FILTER_COLUMNS = ("source", "task", "model", "discussion", "persona", "team_size")
OUTCOME_COLUMNS = ("creativity", "novelty", "usefulness")
MISSING_LABEL = "(none)"
UPLOADS_KEY = "uploaded_datasets"
DATASET_KEY = "dataset_choice"
UPLOAD_PREFIX = "upload: "
PILOT_PREFIX = "pilot: "


def cached_runs_root() -> Path:
    """Folder of cached datasets: ``$CDL_CACHED_RUNS`` or ``<repo>/cached_runs``."""
    return Path(os.environ.get("CDL_CACHED_RUNS") or REPO_ROOT / "cached_runs")


# ----------------------------------------------------------------------------- pure helpers
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
        methods = tuple(m for m in PAPER_B_METHODS if m in present)
    return Availability(
        n_conversations=len(frame),
        turns=dataset.corpus is not None and any(c.turns for c in dataset.corpus),
        turn_embeddings=dataset.turn_embeddings is not None and dataset.turn_index is not None,
        features=tuple(f for f in FEATURE_NAMES if has(f)),
        ratings=tuple(c for c in OUTCOME_COLUMNS if has(c)),
        sources=tuple(sorted(frame["source"].dropna().astype(str).unique())) if "source" in frame else (),
        paper_b_methods=methods,
        final_ideas=has("final_idea"),
        features_4b=any(f"{f}_4b" in frame.columns for f in FEATURE_NAMES),
    )


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


# ----------------------------------------------------------------------------- cached loading
@st.cache_resource(show_spinner=False, max_entries=8)
def _load(path: str, stamp: float) -> Dataset:
    return Dataset.load(path)


def load_dataset(path: str | Path) -> Dataset:
    """A cached dataset (read-only: never mutate it); re-read when its manifest changes."""
    manifest = Path(path) / "manifest.json"
    stamp = manifest.stat().st_mtime if manifest.exists() else 0.0
    return _load(str(path), stamp)


@st.cache_data(show_spinner=False, ttl=30)
def cached_dataset_names(root: str) -> list[str]:
    return [p.name for p in list_datasets(root)]


def pilot_root() -> Path:
    from dashboard.pilot_history import history_root

    return history_root()


def dataset_choices() -> list[str]:
    """Names shown in the dataset selector: cached datasets, this session's uploads, then the
    pilots kept in the run history (``dashboard.pilot_history``)."""
    uploads = st.session_state.get(UPLOADS_KEY, {})
    names = cached_dataset_names(str(cached_runs_root()))
    pilots = cached_dataset_names(str(pilot_root()))
    return [*names, *(UPLOAD_PREFIX + n for n in uploads), *(PILOT_PREFIX + n for n in pilots)]


def default_choice(choices: list[str]) -> int:
    """The richest dataset first: local runs when present, else the paper release."""
    for preferred in ("local_smollm2", "paper_release"):
        if preferred in choices:
            return choices.index(preferred)
    return 0


def dataset_by_choice(choice: str) -> Dataset:
    if choice.startswith(UPLOAD_PREFIX):
        return st.session_state[UPLOADS_KEY][choice[len(UPLOAD_PREFIX):]]
    if choice.startswith(PILOT_PREFIX):
        return load_dataset(pilot_root() / choice[len(PILOT_PREFIX):])
    return load_dataset(cached_runs_root() / choice)


def current_dataset() -> Dataset | None:
    """The dataset chosen in the sidebar (None when there is none at all)."""
    choices = dataset_choices()
    if not choices:
        return None
    choice = st.session_state.get(DATASET_KEY)
    if choice not in choices:
        choice = choices[default_choice(choices)]
    return dataset_by_choice(choice)


def current_selections() -> dict[str, list[str]]:
    return {c: list(st.session_state.get(f"filter_{c}") or []) for c in FILTER_COLUMNS}


def filtered_conversations() -> pd.DataFrame:
    """The chosen dataset's conversation table after the sidebar filters."""
    dataset = current_dataset()
    if dataset is None:
        return pd.DataFrame()
    return apply_filters(dataset.conversations, current_selections())


def add_upload(name: str, dataset: Dataset) -> str:
    """Keep an uploaded dataset in this session and select it; returns its choice label."""
    uploads = st.session_state.setdefault(UPLOADS_KEY, {})
    uploads[name] = dataset
    return UPLOAD_PREFIX + name
