"""The dataset the user chose, kept in Streamlit's session: cached loading, the selector's
choices (cached datasets, this session's uploads, the pilot history) and the filtered
conversation table every page starts from. What a dataset holds and how filters cut it is
in ``dashboard.page_data.datasets``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard.page_data.datasets import (
    FILTER_COLUMNS,
    apply_filters,
    cached_runs_root,
    demonstration,
    pilot_root,
)
from engine.datasets import Dataset, list_datasets

UPLOADS_KEY = "uploaded_datasets"
DATASET_KEY = "dataset_choice"
UPLOAD_PREFIX = "upload: "
PILOT_PREFIX = "pilot: "


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


@st.cache_data(show_spinner=False, ttl=30)
def cached_demonstrations(root: str) -> dict[str, str]:
    """``{name: "demonstration on a 135M model (...)"}`` of the cached datasets the engine made
    with the local model (their manifests only; ``datasets.demonstration``)."""
    import json

    out = {}
    for path in list_datasets(root):
        try:
            manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        label = demonstration(manifest)
        if label:
            out[path.name] = label
    return out


def demonstrations() -> dict[str, str]:
    """The cached datasets that are demonstrations on a small local model, with their label."""
    return cached_demonstrations(str(cached_runs_root()))


def choice_label(choice: str) -> str:
    """The selector's text for a choice: demonstrations say so (``local_smollm2 · demonstration
    on a 135M model``)."""
    label = demonstrations().get(choice)
    return f"{choice} · {label.split(' (')[0]}" if label else choice


def dataset_choices() -> list[str]:
    """Names shown in the dataset selector: cached datasets, this session's uploads, then the
    pilots kept in the run history (``dashboard.pilot.history``)."""
    uploads = st.session_state.get(UPLOADS_KEY, {})
    names = cached_dataset_names(str(cached_runs_root()))
    pilots = cached_dataset_names(str(pilot_root()))
    return [*names, *(UPLOAD_PREFIX + n for n in uploads), *(PILOT_PREFIX + n for n in pilots)]


def default_choice(choices: list[str]) -> int:
    """The paper release first (real data); the local demonstration runs are one click away
    on the Data page (``dashboard.page_data.datasets.demonstration``)."""
    for preferred in ("paper_release", "local_smollm2"):
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
