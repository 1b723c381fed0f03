"""Turn-level projections for the Trajectories page (data side, no widgets)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from engine.datasets import Dataset
from engine.features import FEATURE_NAMES


def projection_cache_dir() -> Path:
    from engine.embed import default_cache_path

    return default_cache_path().parent / "projections"


def turn_texts(dataset: Dataset) -> pd.DataFrame:
    """``conversation_id, turn, speaker, text`` of every turn (empty when no corpus)."""
    if dataset.corpus is None:
        return pd.DataFrame(columns=["conversation_id", "turn", "speaker", "text"])
    return dataset.corpus.turns_frame()[["conversation_id", "turn", "speaker", "text"]]


@st.cache_data(show_spinner=False, max_entries=8)
def _turn_points(_dataset: Dataset, key: str, method: str) -> pd.DataFrame:
    from engine.projection import project_turns

    points = project_turns(_dataset.turn_embeddings, _dataset.turn_index, method=method, seed=42,
                           cache_dir=projection_cache_dir())
    texts = turn_texts(_dataset)
    if len(texts):
        points = points.merge(texts, on=["conversation_id", "turn"], how="left")
    return points


def turn_points(dataset: Dataset, method: str) -> pd.DataFrame:
    """Projected turns of the whole dataset with speaker and text; cached per dataset and
    method in memory (and on disk by ``engine.projection``)."""
    key = f"{dataset.path or dataset.name}:{len(dataset.turn_index)}"
    return _turn_points(dataset, key, method)


def contrasting_pair(frame: pd.DataFrame) -> tuple[str, str]:
    """Two conversations to compare: highest vs lowest creativity when rated, else lowest vs
    highest global coherence (broad vs narrow exploration, as Figure 4). Conversations with a
    path to draw (at least 4 turns) are preferred when there are two of them."""
    if "n_turns" in frame.columns and (frame["n_turns"] >= 4).sum() >= 2:
        frame = frame[frame["n_turns"] >= 4]
    for column, ascending in (("creativity", False), ("global_coherence", True)):
        if column in frame.columns and frame[column].notna().sum() >= 2:
            ordered = frame.dropna(subset=[column]).sort_values(column, ascending=ascending)
            return ordered["conversation_id"].iloc[0], ordered["conversation_id"].iloc[-1]
    ids = list(frame["conversation_id"])
    return ids[0], ids[min(1, len(ids) - 1)]


def feature_pair_table(frame: pd.DataFrame, ids: list[str]) -> pd.DataFrame:
    """Features (and ratings) of the chosen conversations, one column per conversation."""
    columns = [c for c in (*FEATURE_NAMES, "creativity", "novelty", "usefulness", "n_turns",
                           "task", "model", "discussion") if c in frame.columns]
    rows = frame.set_index("conversation_id").loc[ids, columns]
    numeric = rows.select_dtypes("number").columns
    rows[numeric] = rows[numeric].round(3)
    return rows.T.astype(str)
