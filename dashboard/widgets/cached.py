"""Streamlit's caches over the pages' computations (``dashboard.page_data``): a re-render with
the same selection costs nothing. Each function here only keys and keeps; the work is in the
function it wraps."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard.page_data import (analyses, comparison, datasets, design_levers, diversity, fidelity_levers,
                                 quality_diversity, regression, trajectories)
from engine import samples
from engine.datasets import Dataset


@st.cache_data(show_spinner=False, max_entries=32)
def cached_feature_comparison(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    return analyses.feature_comparison(frame, list(columns))


def feature_comparison(frame: pd.DataFrame, columns) -> pd.DataFrame:
    """``analyses.feature_comparison`` through its cache (the export catalog calls it by this name)."""
    return cached_feature_comparison(frame, tuple(columns))


@st.cache_data(show_spinner=False, max_entries=32)
def cached_manipulability(frame: pd.DataFrame, suffix: str = "", sample: str = "trajectory") -> pd.DataFrame:
    return analyses.manipulability_percent(frame, suffix, sample)


@st.cache_data(show_spinner=False, max_entries=8)
def cached_fidelity_view(frame: pd.DataFrame, name: str, root: str) -> fidelity_levers.FidelityView:
    return fidelity_levers.view(frame, name, Path(root))


@st.cache_data(show_spinner=False, max_entries=32)
def cached_samples_available(frame: pd.DataFrame) -> list[str]:
    return samples.available(frame)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_sample(frame: pd.DataFrame, name: str) -> tuple[str, pd.DataFrame]:
    """(label with N, rows) of ``engine.samples`` sample ``name`` in ``frame``."""
    chosen = samples.sample(name)
    return chosen.label(frame), chosen.select(frame)


@st.cache_data(show_spinner=False, max_entries=32)
def cached_ladder(frame: pd.DataFrame, outcome: str) -> tuple[pd.DataFrame, list[str], pd.DataFrame]:
    return analyses.regression_ladder(frame, outcome)


regression_ladder = cached_ladder  # the name ``regression.regression_page_data`` calls it by


@st.cache_data(show_spinner=False, max_entries=64)
def cached_fit(frame: pd.DataFrame, outcome: str, blocks: tuple[str, ...], estimator: str,
               name: str, star_levels: tuple[float, float, float] = (0.05, 0.01, 0.001)) -> dict:
    """A fitted spec as plain data (table + summary), so it can be cached and copied."""
    return regression.fit_table(frame, outcome, blocks, estimator, name, star_levels)


fit_table = cached_fit  # the name ``regression.regression_page_data`` calls it by


@st.cache_data(show_spinner=False, max_entries=16)
def cached_conversation_map(frame: pd.DataFrame) -> pd.DataFrame:
    return analyses.conversation_map(frame)


@st.cache_data(show_spinner=False, max_entries=8)
def _turn_points(_dataset: Dataset, key: str, method: str) -> pd.DataFrame:
    return trajectories.projected_turns(_dataset, method)


def turn_points(dataset: Dataset, method: str) -> pd.DataFrame:
    """``trajectories.projected_turns``, kept per dataset and method (and on disk by
    ``engine.maps.projection``)."""
    return _turn_points(dataset, trajectories.dataset_key(dataset), method)


@st.cache_data(show_spinner=False, max_entries=4)
def _map_frames(_dataset: Dataset, _frame: pd.DataFrame, key: str, method: str, cap: int):
    return trajectories.map_frames(turn_points(_dataset, method), _frame, cap)


def map_frames(dataset: Dataset, frame: pd.DataFrame, method: str, cap: int | None = None):
    """``trajectories.map_frames`` of the dataset's projected turns, kept per dataset, method,
    selected ids and cap (default ``trajectories.MAX_MAP_POINTS``)."""
    cap = trajectories.MAX_MAP_POINTS if cap is None else int(cap)
    key = f"{trajectories.dataset_key(dataset)}:{trajectories.selection_digest(frame)}"
    return _map_frames(dataset, frame, key, method, cap)


@st.cache_data(show_spinner="Clustering the turns…", max_entries=8)
def _clusters(_dataset: Dataset, key: str, k: int) -> pd.DataFrame:
    return trajectories.turn_clusters(_dataset, k)


def turn_clusters(dataset: Dataset, k: int) -> pd.DataFrame:
    """``trajectories.turn_clusters``, kept per dataset and k."""
    return _clusters(dataset, trajectories.dataset_key(dataset), int(k))


manipulability_percent = cached_manipulability  # the export catalog's name for it


@st.cache_resource(show_spinner=False, max_entries=40)
def _figure(kind: str, key: tuple, _build):
    return _build()


def figure(kind: str, key: tuple, build):
    """What ``build()`` makes (a chart, or results holding charts such as the export set),
    made once per ``(kind, key)`` and then handed out as it is (not copied): building a Plotly
    figure of a thousand points validates every property and costs a Trajectories rerun about
    half its time, and a copy would validate it again. ``key`` must hold everything the result
    depends on; pages and exports only read these (an export stamps a copy)."""
    return _figure(kind, key, build)


@st.cache_resource(show_spinner=False, max_entries=64)
def chart(name: str, *args, **kwargs):
    """``dashboard.figures.charts.<name>(*args, **kwargs)``, built once per arguments (Streamlit
    hashes them: frames by content) and then handed out as it is, as ``figure``: a page's rerun
    or a new session with the same data builds no Plotly figure again."""
    from dashboard.figures import charts

    return getattr(charts, name)(*args, **kwargs)


def map_key(dataset: Dataset, frame: pd.DataFrame, method: str) -> tuple:
    """What the Trajectories figures rest on besides their own options: the dataset's turns,
    the selected conversations, the projection and the cap on drawn turns."""
    return (trajectories.dataset_key(dataset), trajectories.selection_digest(frame), method,
            trajectories.MAX_MAP_POINTS)


@st.cache_data(show_spinner=False, max_entries=64)
def _transcript(_dataset: Dataset, key: str, conversation_id: str) -> pd.DataFrame:
    return trajectories.transcript(_dataset, conversation_id)


def transcript(dataset: Dataset, conversation_id: str) -> pd.DataFrame:
    """``trajectories.transcript``, kept per dataset and conversation (the reader on every rerun)."""
    return _transcript(dataset, trajectories.dataset_key(dataset), conversation_id)


@st.cache_data(show_spinner=False, max_entries=16)
def _contrasting_pair(_frame: pd.DataFrame, key: tuple) -> tuple[str, str]:
    return trajectories.contrasting_pair(_frame)


def contrasting_pair(frame: pd.DataFrame, key: tuple) -> tuple[str, str]:
    """``trajectories.contrasting_pair`` of ``frame``, kept per ``key`` (``map_key``: the
    dataset, the selected conversations and the projection)."""
    return _contrasting_pair(frame, key)


@st.cache_data(show_spinner=False, max_entries=16)
def _levers_tables(ours: pd.DataFrame, n: int):
    return design_levers.levers_tables(ours)


def levers_tables(ours: pd.DataFrame):
    """``design_levers.levers_tables`` of our Table 24 (``cached_manipulability``): (``beside.Beside``
    of ours beside the published Table 24, its text, ours − published as numbers, Table 25's
    interaction share), kept per table and its fitted N (``attrs['n']``, which the caption
    states and a DataFrame's hash leaves out)."""
    return _levers_tables(ours, int(ours.attrs.get("n", 0)))


_FINGERPRINTS: dict[int, tuple] = {}


def frame_fingerprint(frame: pd.DataFrame) -> str:
    """A digest of a table's content (its pickle: values, index, columns, dtypes, attrs), worked
    out once per table object and then remembered by identity, so a cache key can name a whole
    dataset's table for a lookup, not a hash of its megabytes. For the tables the pages never
    change (a loaded or uploaded dataset's ``conversations``, read-only as ``session.load_dataset``
    says); a new object, even with the same content, is digested again."""
    import hashlib
    import pickle
    import weakref

    entry = _FINGERPRINTS.get(id(frame))
    if entry is not None and entry[0]() is frame:
        return entry[1]
    digest = hashlib.sha1(pickle.dumps(frame, protocol=5)).hexdigest()
    # sessions run in threads of one process: a snapshot of the entries, and no error when
    # another session has already dropped one
    for gone in [k for k, (ref, _) in list(_FINGERPRINTS.items()) if ref() is None]:
        _FINGERPRINTS.pop(gone, None)
    _FINGERPRINTS[id(frame)] = (weakref.ref(frame), digest)
    return digest


@st.cache_data(show_spinner=False, max_entries=64)
def _kept(kind: str, key: tuple, _build):
    return _build()


def kept(kind: str, key: tuple, build):
    """What ``build()`` computes (a table, numbers), computed once per ``(kind, key)`` and handed
    out as a copy (``st.cache_data``). ``key`` must hold everything the result depends on (for a
    whole dataset's table, ``frame_fingerprint``)."""
    return _kept(kind, key, build)


def content_key(dataset: Dataset) -> tuple:
    """What a dataset's pages rest on, as a short cache key: its name, its conversation table's
    content (``frame_fingerprint``) and its manifest (the dataset's caveats and provenance)."""
    import hashlib
    import json

    manifest = hashlib.sha1(json.dumps(dataset.manifest, sort_keys=True, default=str).encode()).hexdigest()
    return dataset.name, frame_fingerprint(dataset.conversations), manifest


def selection_key(selections: dict[str, list[str]]) -> tuple:
    """The sidebar's filters as a cache key (labels as text, as ``datasets.apply_filters`` compares them)."""
    return tuple((column, tuple(map(str, chosen))) for column, chosen in selections.items())


def availability(dataset: Dataset) -> datasets.Availability:
    """``datasets.availability``, kept per dataset content (every page asks on every render)."""
    corpus = None if dataset.corpus is None else len(dataset.corpus)
    embeddings = None if dataset.turn_embeddings is None else tuple(dataset.turn_embeddings.shape)
    turns = None if dataset.turn_index is None else len(dataset.turn_index)
    return kept("availability", (content_key(dataset), corpus, embeddings, turns),
                lambda: datasets.availability(dataset))


# ------------------------------------------------------------------ paper B's diversity (embeddings)
@st.cache_data(show_spinner="Embedding final outputs…", max_entries=16)
def _inter_session_table(frame: pd.DataFrame, methods: tuple[str, ...], group_size: int, _embed) -> pd.DataFrame:
    return diversity.inter_session_table(frame, methods, _embed, group_size=group_size)


def inter_session_table(frame: pd.DataFrame, methods, embed, group_size: int = 5) -> pd.DataFrame:
    """``diversity.inter_session_table``, kept per rows, methods and group size (``embed`` is
    the project's one embedder)."""
    return _inter_session_table(frame, tuple(methods), int(group_size), embed)


@st.cache_data(show_spinner="Measuring each debate round…", max_entries=16)
def _intra_session_table(_dataset: Dataset, key: str, frame: pd.DataFrame, methods: tuple[str, ...],
                         _embed) -> pd.DataFrame:
    return diversity.intra_session_table(_dataset, frame, methods, _embed)


def intra_session_table(dataset: Dataset, frame: pd.DataFrame, methods, embed) -> pd.DataFrame:
    """``diversity.intra_session_table``, kept per dataset (folder and size), rows and methods."""
    key = f"{dataset.path or dataset.name}:{len(dataset.conversations)}"
    return _intra_session_table(dataset, key, frame, tuple(methods), embed)


@st.cache_data(show_spinner=False, max_entries=16)
def _load_quality(_dataset: Dataset, key: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    return quality_diversity.load_quality(_dataset)


def load_quality(dataset: Dataset) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``quality_diversity.load_quality``, kept per dataset (folder and size)."""
    return _load_quality(dataset, f"{dataset.path or dataset.name}:{len(dataset.conversations)}")


# ------------------------------------------------------------------ Compare runs (``comparison``)
def runs_key(frames: dict[str, pd.DataFrame]) -> tuple:
    """The runs by name and content (``frame_fingerprint``): what every comparison rests on."""
    return tuple((name, frame_fingerprint(frame)) for name, frame in frames.items())


def feature_summary(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    return kept("compare_feature_summary", runs_key(frames), lambda: comparison.feature_summary(frames))


def rating_summary(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    return kept("compare_rating_summary", runs_key(frames), lambda: comparison.rating_summary(frames))


def run_differences(frames: dict[str, pd.DataFrame], columns, reference: str) -> pd.DataFrame:
    return kept("compare_run_differences", (runs_key(frames), tuple(columns), reference),
                lambda: comparison.run_differences(frames, columns, reference))


@st.cache_data(show_spinner="Embedding final outputs…", max_entries=8)
def _diversity_groups(keys: tuple, size: int, _frames: dict, _embed):
    return comparison.diversity_groups(_frames, _embed, group_size=size)


def diversity_groups(frames: dict[str, pd.DataFrame], embed, group_size: int = 5) -> dict[str, dict]:
    """Kept per runs' names and contents (``runs_key``): a dataset uploaded again under the same
    name with other outputs is embedded again."""
    return _diversity_groups(runs_key(frames), int(group_size), frames, embed)


def diversity_summary(frames: dict[str, pd.DataFrame], embed, group_size: int = 5, groups=None) -> pd.DataFrame:
    return kept("compare_diversity", (runs_key(frames), int(group_size)),
                lambda: comparison.diversity_summary(frames, embed, int(group_size), groups=groups))


@st.cache_data(show_spinner=False, max_entries=16)
def diversity_differences(groups: dict[str, dict], reference: str) -> pd.DataFrame:
    return comparison.diversity_differences(groups, reference)


# the names ``trajectories.trajectories_page_data`` calls them by
selection_map_frames = map_frames
conversation_map = cached_conversation_map
