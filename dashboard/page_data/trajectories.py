"""Turn-level projections, map frames, clusters and the transcript reader's rows for the
Trajectories page (no Streamlit: ``dashboard.widgets.cached`` keeps these per dataset), and
``trajectories_page_data``, the page's numbers its notebook computes with the same calls."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from dashboard.page_data.analyses import conversation_map  # noqa: F401  (the default ``compute``'s)
from dashboard.page_data.feature_choices import feature_names
from engine.datasets import Dataset


def projection_cache_dir() -> Path:
    from engine.embedding.embedder import default_cache_path

    return default_cache_path().parent / "projections"


TURN_COLUMNS = ["conversation_id", "turn", "speaker", "phase", "round", "text"]


def turn_texts(dataset: Dataset) -> pd.DataFrame:
    """``conversation_id, turn, speaker, phase, round, text`` of every turn (empty when no corpus)."""
    if dataset.corpus is None:
        return pd.DataFrame(columns=TURN_COLUMNS)
    turns = dataset.corpus.turns_frame()
    return turns[[c for c in TURN_COLUMNS if c in turns.columns]]


def dataset_key(dataset: Dataset) -> str:
    """What identifies a dataset's turns for the caches: its folder (or name) and turn count."""
    return f"{dataset.path or dataset.name}:{len(dataset.turn_index)}"


def projected_turns(dataset: Dataset, method: str) -> pd.DataFrame:
    """Projected turns of the whole dataset with speaker and text (``engine.maps.projection``, which
    also keeps the projection on disk)."""
    from engine.maps.projection import project_turns

    projected = project_turns(dataset.turn_embeddings, dataset.turn_index, method=method, seed=42,
                              cache_dir=projection_cache_dir())
    points = projected
    texts = turn_texts(dataset)
    if len(texts):
        points = points.merge(texts, on=["conversation_id", "turn"], how="left")
        points.attrs = dict(projected.attrs)  # a merge drops them; they say what was fitted
    return points


def umap_fit_note(points: pd.DataFrame, method: str) -> str:
    """One sentence when UMAP was fitted on a seeded sample of the turns (above
    ``engine.maps.projection.MAX_FIT_TURNS``), else ``""``. Numbers only: no user text."""
    if method != "umap":
        return ""
    attrs = points.attrs
    if not attrs.get("fit_sampled"):
        return ""
    return (f"UMAP fitted on {attrs['fitted_turns']:,} of {attrs['fit_set_turns']:,} turns (seeded sample, "
            f"seed {attrs['seed']}), every turn placed with it.")


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
    columns = [c for c in (*feature_names(), "creativity", "novelty", "usefulness", "n_turns",
                           "task", "model", "discussion") if c in frame.columns]
    rows = frame.set_index("conversation_id").loc[ids, columns]
    numeric = rows.select_dtypes("number").columns
    rows[numeric] = rows[numeric].round(3)
    table = rows.T.astype(str)
    if len(set(ids)) < len(ids):  # one conversation picked on both sides: columns must stay apart
        table.columns = [f"{cid} ({position + 1})" for position, cid in enumerate(ids)]
    return table


# ------------------------------------------------------------------------ the embedding map
MAP_FACTORS = ("discussion", "task", "model", "source")


def map_points(points: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """Turn points with their conversation's factors and features, the turn's progress through
    its conversation (0 first, 1 last) and a row id (``point_id``) for selections."""
    keep = [c for c in ("conversation_id", *MAP_FACTORS, *feature_names(), "creativity") if c in frame.columns]
    out = points.merge(frame[keep], on="conversation_id", how="left")
    rank = out.groupby("conversation_id")["turn"].rank(method="first") - 1
    size = out.groupby("conversation_id")["turn"].transform("size") - 1
    out["progress"] = (rank / size.where(size > 0)).fillna(0.0)
    out["point_id"] = range(len(out))
    return out


MAX_MAP_POINTS = 40_000  # up to this many turns every turn is drawn as a point
POINTS_OVER_IMAGE = 5_000  # above it every turn goes into the map's image and this many are drawn over it


def sample_conversations(points: pd.DataFrame, cap: int = MAX_MAP_POINTS, seed: int = 0) -> pd.DataFrame:
    """The turns drawn on the map: every turn when there are at most ``cap``; otherwise whole
    conversations drawn uniformly at random without replacement (``numpy`` generator seeded with
    ``seed``) while their turns fit in ``cap``, in the order of ``points``. Whole conversations,
    so every drawn path is complete; the same selection gives the same sample."""
    if len(points) <= cap:
        return points
    sizes = points.groupby("conversation_id", sort=False).size()
    order = np.random.default_rng(seed).permutation(len(sizes))
    shuffled = sizes.iloc[order]
    kept = shuffled.index[np.cumsum(shuffled.to_numpy()) <= cap]
    return points[points["conversation_id"].isin(kept)]


def drawn_turns(points: pd.DataFrame, cap: int = MAX_MAP_POINTS) -> pd.DataFrame:
    """The turns drawn as points: all of them up to ``cap``; above, every turn goes into the
    map's image (``dashboard.figures.raster``) and whole conversations sampled at random
    (``sample_conversations``, seed 0) up to ``POINTS_OVER_IMAGE`` turns are drawn over it,
    to hover and click. Never empty when ``points`` is not: one conversation longer than the
    cap is drawn whole."""
    if len(points) <= cap:
        return points
    drawn = sample_conversations(points, min(cap, POINTS_OVER_IMAGE))
    if drawn.empty:
        first = points["conversation_id"].iloc[0]
        drawn = points[points["conversation_id"] == first]
    return drawn


def map_frames(points: pd.DataFrame, frame: pd.DataFrame, cap: int = MAX_MAP_POINTS):
    """``(ids, points, drawn)`` for the selection ``frame``: the conversations with projected
    turns, all their turns (``map_points``) and the ones drawn as points (``drawn_turns``)."""
    projected = set(points["conversation_id"])  # once: per conversation it made the page quadratic
    ids = [c for c in frame["conversation_id"] if c in projected]
    points = map_points(points[points["conversation_id"].isin(ids)], frame)
    return ids, points, drawn_turns(points, cap)


def selection_digest(frame: pd.DataFrame) -> str:
    """A short digest of the selected conversation ids (a cache key for ``map_frames``)."""
    return hashlib.sha1("\n".join(map(str, frame["conversation_id"])).encode()).hexdigest()


def selection_digest_of_points(points: pd.DataFrame) -> str:
    """A short digest of which turns (``point_id``) are picked, in order: what the page keeps to
    tell a new selection from the same one again (a selection may hold millions of turns)."""
    ids = np.ascontiguousarray(points["point_id"].to_numpy(np.int64))
    return f"{len(ids)}:{hashlib.sha1(ids.tobytes()).hexdigest()}"


PICKER_LIMIT = 2_000  # conversations a picker lists: every option goes to the browser on each rerun


def picker_options(ids: list[str], keep=(), limit: int | None = None) -> list[str]:
    """The conversations a picker lists: ``ids`` as they are up to ``limit`` (default
    ``PICKER_LIMIT``); above, the ones in ``keep`` that are in ``ids`` (chosen, selected, found
    by id) first, then the others in the order of ``ids``, ``limit`` in all (more when ``keep``
    alone holds more)."""
    limit = PICKER_LIMIT if limit is None else limit
    if len(ids) <= limit:
        return list(ids)
    known = set(ids)
    kept = [c for c in dict.fromkeys(keep) if c is not None and c in known]
    taken = set(kept)
    rest = [c for c in ids[: limit + len(kept)] if c not in taken]
    return kept + rest[: max(0, limit - len(kept))]


def conversation_labels(frame: pd.DataFrame) -> dict[str, str]:
    """``{conversation_id: "id · discussion · task · model · N turns"}`` (ids alone are opaque);
    missing values are left out. Built once per rerun for the pickers' ``format_func``."""
    columns = [c for c in ("discussion", "task", "model") if c in frame.columns]
    values = [frame[c].tolist() for c in columns]
    turns = frame["n_turns"].tolist() if "n_turns" in frame.columns else [None] * len(frame)
    labels = {}
    for position, cid in enumerate(frame["conversation_id"]):
        parts = [str(v[position]) for v in values if v[position] == v[position] and v[position] is not None]
        n = turns[position]
        if n is not None and n == n:
            parts.append(f"{int(n)} turns")
        labels[cid] = f"{cid} · {' · '.join(parts)}" if parts else cid
    return labels


def search_hits(points: pd.DataFrame, query: str) -> pd.Series:
    """Turns whose text contains ``query`` (case-insensitive, plain text, not a pattern)."""
    if not query.strip() or "text" not in points:
        return pd.Series(False, index=points.index)
    return points["text"].fillna("").str.contains(query.strip(), case=False, regex=False)


def selected_points(points: pd.DataFrame, event) -> pd.DataFrame:
    """The rows of ``points`` a Plotly selection event picked: every turn inside its boxes and
    lassos, resolved here against all of ``points`` (``map_selection``: the turns in the
    map's image count, not only the drawn ones), else the clicked points."""
    from dashboard.page_data import map_selection

    shapes = map_selection.regions(event)
    if shapes:
        return map_selection.in_regions(points, shapes)
    return clicked_points(points, event)


def clicked_points(points: pd.DataFrame, event) -> pd.DataFrame:
    """The rows of ``points`` whose ``point_id`` the event's points carry (``customdata``)."""
    try:
        chosen = event["selection"]["points"]
    except (KeyError, TypeError):
        chosen = getattr(getattr(event, "selection", None), "points", None) or []
    ids = []
    for point in chosen or []:
        data = point.get("customdata")
        if isinstance(data, (list, tuple)):
            data = data[0] if data else None
        if data is not None:
            ids.append(int(data))
    return points[points["point_id"].isin(ids)]


def focus(picked: pd.DataFrame) -> tuple[str, int]:
    """``(conversation_id, turn)`` the reader opens on for a selection: its first turn (a
    click selects exactly one)."""
    first = picked.iloc[0]
    return first["conversation_id"], int(first["turn"])


def as_paragraphs(text: str) -> str:
    """Each line of a turn as a paragraph of its own, so markdown keeps the turn's line breaks."""
    return "\n\n".join(line for line in str(text).replace("\r\n", "\n").split("\n") if line.strip())


def reader_blocks(turns: pd.DataFrame, focus_turn: int | None) -> list[dict]:
    """The reader's turns as ``{turn, header, text, focused}``: header = speaker, phase, round
    and the distance to the previous turn where known; the whole text, never cut."""
    blocks = []
    for row in turns.to_dict("records"):
        parts = [str(row[c]) for c in ("speaker",) if row.get(c) not in (None, "") and row.get(c) == row.get(c)]
        for name in ("phase", "round"):
            value = row.get(name)
            if value is not None and value == value and value != "":
                parts.append(f"{name} {int(value) if isinstance(value, float) and value.is_integer() else value}")
        distance = row.get("distance to previous turn")
        if distance is not None and distance == distance:
            parts.append(f"distance to previous turn {distance:.3f}")
        text = row.get("text")
        blocks.append({"turn": int(row["turn"]), "header": " · ".join(parts),
                       "text": "" if text is None or text != text else str(text),
                       "focused": focus_turn is not None and int(row["turn"]) == int(focus_turn)})
    return blocks


def transcript(dataset: Dataset, conversation_id: str) -> pd.DataFrame:
    """One conversation's turns as the reader shows them: turn, speaker, phase, round, the
    cosine distance of each turn's embedding to the previous turn's, and the full text."""
    texts = turn_texts(dataset)
    rows = texts[texts["conversation_id"] == conversation_id].sort_values("turn")
    embedded = dataset.turn_index[dataset.turn_index["conversation_id"] == conversation_id] \
        if dataset.turn_index is not None else pd.DataFrame(columns=["turn"])
    vectors = dataset.embeddings_for(conversation_id)
    distance = {}
    if vectors is not None and len(vectors):
        turns = sorted(embedded["turn"].tolist())
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(min=1e-12)
        for i in range(1, len(turns)):
            distance[turns[i]] = float(1.0 - unit[i] @ unit[i - 1])
    out = rows.drop(columns=["conversation_id"]).copy()
    out.insert(len(out.columns) - 1, "distance to previous turn", out["turn"].map(distance).round(4))
    return out.reset_index(drop=True)


def turn_clusters(dataset: Dataset, k: int) -> pd.DataFrame:
    """``conversation_id, turn, cluster`` (label "c: keyword, keyword"): k-means of the turn
    embeddings named by c-TF-IDF keywords (``engine.maps.topic_labels``)."""
    from engine.maps.topic_labels import cluster_turns

    texts = turn_texts(dataset)
    index = dataset.turn_index.reset_index(drop=True)
    merged = index.merge(texts, on=["conversation_id", "turn"], how="left")
    result = cluster_turns(merged["text"].fillna("").tolist(), dataset.turn_embeddings, k=k)
    labels = result.table.set_index("cluster")["label"]
    return index.assign(cluster=[labels[c] for c in result.labels])


# ------------------------------------------------------------------------------ the page
def selection_map_frames(dataset: Dataset, frame: pd.DataFrame, method: str, cap: int = MAX_MAP_POINTS):
    """``map_frames`` of the dataset's turns projected with ``method`` (``projected_turns``)."""
    return map_frames(projected_turns(dataset, method), frame, cap)


@dataclass(frozen=True)
class TurnMap:
    """The map's turns (cluster labels merged in when asked) and the search's hits among all of
    them and among the drawn ones."""

    points: pd.DataFrame
    drawn: pd.DataFrame
    hits: pd.Series
    drawn_hits: pd.Series


def turn_map(points: pd.DataFrame, drawn: pd.DataFrame, labelled: pd.DataFrame | None = None,
             search: str = "") -> TurnMap:
    """``map_frames``' turns with the cluster of each (``labelled``: ``turn_clusters``) and the
    turns holding ``search``."""
    if labelled is not None:
        points = points.merge(labelled, on=["conversation_id", "turn"], how="left")
        drawn = drawn.merge(labelled, on=["conversation_id", "turn"], how="left")
    return TurnMap(points, drawn, search_hits(points, search), search_hits(drawn, search))


@dataclass(frozen=True)
class TrajectoriesData:
    conversation_map: pd.DataFrame | None = None  # without turn embeddings: the conversations by their features
    ids: list[str] = field(default_factory=list)  # the selected conversations with projected turns
    map: TurnMap | None = None
    feature_values: pd.DataFrame | None = None  # the features of the side-by-side pair


def trajectories_page_data(dataset: Dataset, frame: pd.DataFrame, method: str | None = None, *,
                           clusters: int | None = None, search: str = "", pair=(),
                           compute=sys.modules[__name__]) -> TrajectoriesData:
    """The Trajectories page's numbers on the selection ``frame``: with ``method`` ("pca",
    "umap") the turns in semantic space (``selection_map_frames``), with ``clusters`` labels of
    k-means (``turn_clusters``), the hits of ``search`` and the features of the two
    conversations of ``pair`` (``feature_pair_table``); without (no turn embeddings), the map
    of conversations by their features (``analyses.conversation_map``). The page makes the same
    calls one by one, between its widgets (its map is a fragment that reruns alone); ``compute``
    gives ``selection_map_frames``, ``turn_clusters`` and ``conversation_map``: this module
    (default) or the page's caches (``dashboard.widgets.cached``)."""
    if method is None:
        return TrajectoriesData(conversation_map=compute.conversation_map(frame))
    ids, points, drawn = compute.selection_map_frames(dataset, frame, method)
    labelled = compute.turn_clusters(dataset, int(clusters)) if clusters else None
    values = feature_pair_table(frame, list(pair)) if pair else None
    return TrajectoriesData(None, ids, turn_map(points, drawn, labelled, search), values)
