"""Trajectories page: turns in a 2-D semantic map (PCA or UMAP) explored as in corpus maps
(click a point to read its turn, lasso or box to select many, search, cluster names on the
map), chosen conversations as ordered paths, two conversations side by side (paper A, Figure 4).

The map, the selection, the reader and the paths are one fragment: a click reruns only them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd
import streamlit as st

from dashboard.figures import charts, explore_map, raster
from dashboard.page_data import trajectories
from dashboard.page_data.feature_choices import feature_choices, feature_names
from dashboard.widgets import cached, notebook_button, page_context, ui
from engine.datasets import Dataset
from engine.errors import InputError


MAX_PATHS = 8  # paths drawn at once; more become unreadable (the table lists the selected turns)
TABLE_ROWS = 10_000  # rows of the selection table sent to the browser


@dataclass(frozen=True)
class TurnMap:
    """What the map's fragment and the reader draw from: the dataset, the selection, the
    projection and its turns (``cached.map_frames``), and the conversations found by id."""

    dataset: Dataset
    frame: pd.DataFrame
    method: str
    ids: list
    all_points: pd.DataFrame
    all_drawn: pd.DataFrame
    map_key: tuple
    conversation_label: Callable[[str], str]
    found: list


def _reset_reader_turn() -> None:
    st.session_state.pop("traj_reader_turn", None)


@st.fragment
def explore(turn_map: TurnMap) -> None:
    """The map of turns, its controls, the chosen conversations as paths and the notebook button."""
    dataset, frame, method, ids, map_key, found = (turn_map.dataset, turn_map.frame, turn_map.method, turn_map.ids,
                                                   turn_map.map_key, turn_map.found)
    all_points, all_drawn, conversation_label = turn_map.all_points, turn_map.all_drawn, turn_map.conversation_label
    # the numbers of trajectories.trajectories_page_data, made one by one between the widgets
    labelled = None
    controls = st.columns([1, 2, 1])
    clusters_on = controls[2].toggle("Cluster labels", key="traj_clusters",
                                     help="k-means of the turn embeddings, each cluster named by its c-TF-IDF "
                                          "keywords (engine.maps.topic_labels), the names written on the map.")
    if clusters_on:
        k = controls[2].number_input("Clusters (k)", value=8, step=1, key="traj_k",
                                     help=f"2 to {min(30, len(all_points))}")
        if not 2 <= k <= min(30, len(all_points)):
            controls[2].error(f"k must be 2 to {min(30, len(all_points))}")
            clusters_on = False
        else:
            labelled = cached.turn_clusters(dataset, int(k))
            if st.session_state.get("traj_colour_before_clusters") is None:  # colour by cluster when switched on
                st.session_state["traj_colour_before_clusters"] = st.session_state.get("traj_colour", "progress")
                st.session_state["traj_colour"] = "cluster"
    if not clusters_on and st.session_state.pop("traj_colour_before_clusters", None) is not None \
            and st.session_state.get("traj_colour") == "cluster":
        st.session_state["traj_colour"] = "progress"
    colour_options = ["progress", "turn", "speaker", *[c for c in trajectories.MAP_FACTORS if c in all_points],
                      *(["cluster"] if clusters_on else []), *feature_choices(all_points)]
    if st.session_state.get("traj_colour") not in colour_options:
        st.session_state["traj_colour"] = "progress"
    colour = controls[0].selectbox("Colour by", colour_options, key="traj_colour",
                                   format_func=lambda c: "progress through the conversation" if c == "progress" else c)
    query = controls[1].text_input("Search the turns", key="traj_search", placeholder="a word or phrase")
    shown = trajectories.turn_map(all_points, all_drawn, labelled, query)
    points, drawn, hits, drawn_hits = shown.points, shown.drawn, shown.hits, shown.drawn_hits
    sampled = len(drawn) < len(points)

    if sampled:
        ui.ours(f"Every one of {len(points):,} turns ({len(ids):,} conversations) in the map's image, "
                f"{len(drawn):,} drawn over it as points; {method.upper()} of the turn embeddings; dataset "
                f"{dataset.name}")
        st.caption(f"What is drawn and what is aggregated: all {len(points):,} turns are aggregated into the "
                   f"image, {raster.RASTER_CELLS}×{raster.RASTER_CELLS} cells, each cell coloured by its turns "
                   "(the mean of a number; the mix of the categories' colours) and more opaque the more turns it "
                   f"holds (log scale). {len(drawn):,} turns, whole conversations ({drawn['conversation_id'].nunique():,}) "
                   f"sampled at random (seed 0), are drawn over it as points to hover and click (more than "
                   f"{trajectories.MAX_MAP_POINTS:,} points would make the page slow). A lasso or box selects "
                   "among every turn, drawn or not (resolved on the server); search, the table, the paths and "
                   "the reader use every turn too.")
    else:
        ui.ours(f"Every turn of {len(ids):,} conversations ({len(points):,} turns), {method.upper()} of the turn "
                f"embeddings; dataset {dataset.name}")
    if fit_note := trajectories.umap_fit_note(cached.turn_points(dataset, method), method):
        st.caption(fit_note)
    search_note = ""
    if query.strip():
        search_note = (f"Search “{ui.escape(query)}”: {int(hits.sum()):,} turns"
                       + (f" ({int(drawn_hits.sum()):,} of them among the drawn points, ringed)." if sampled else "."))
    st.caption("Click a point to read its turn in the reader below; drag to pan, scroll to zoom; the lasso and "
               "box tools (top right of the map) select many turns; hover for an excerpt. " + search_note)
    figure = cached.figure("turn_map", (*map_key, colour, query, int(k) if clusters_on else None), lambda: (
        explore_map.turn_map(drawn, colour, f"Turns in semantic space ({method.upper()})" + (
            f": all {len(points):,} in the image, {len(drawn):,} drawn as points" if sampled else ""), hits=drawn_hits,
                             cluster_column="cluster" if clusters_on else None,
                             aggregate=points if sampled else None)))
    event = ui.chart(st, figure, key="traj_explore", on_select="rerun", selection_mode=("points", "box", "lasso"),
                     config={"scrollZoom": True})
    selected = trajectories.selected_points(points, event)
    picked = selected if not selected.empty else (points[hits.to_numpy()] if query.strip() else selected)
    if not picked.empty:
        source = "selection" if not selected.empty else "search"
        in_selection = list(dict.fromkeys(picked["conversation_id"]))
        signature = (source, trajectories.selection_digest_of_points(picked))  # short, for millions of turns
        if st.session_state.get("traj_last_selection") != signature:
            st.session_state["traj_last_selection"] = signature
            st.session_state["traj_conversations"] = in_selection[:MAX_PATHS]
            st.session_state["traj_reader"], st.session_state["traj_reader_turn"] = trajectories.focus(picked)
        if len(picked) > 1:
            st.markdown(f"**{len(picked):,} turns** of **{len(in_selection):,} conversations** in the {source}")
            shown_columns = [c for c in ("conversation_id", "turn", "speaker", "phase", "round", colour, "text")
                             if c in picked.columns]
            if len(picked) > TABLE_ROWS:
                st.caption(f"The table lists the first {TABLE_ROWS:,} of the {len(picked):,} turns (in the "
                           "dataset's order); narrow the selection to list them all.")
            ui.table(st, picked[list(dict.fromkeys(shown_columns))].head(TABLE_ROWS).reset_index(drop=True),
                     key="traj_selected", hide_index=True)
            if len(in_selection) > MAX_PATHS:
                st.info(f"The selection holds {len(in_selection):,} conversations; the paths below draw the first "
                        f"{MAX_PATHS} (a cap for readability); the table above lists the selected turns.")

    reader(points, turn_map)

    default_pair = cached.contrasting_pair(frame[frame["conversation_id"].isin(ids)], map_key)
    if "traj_conversations" not in st.session_state:
        st.session_state["traj_conversations"] = list(default_pair)
    path_options = trajectories.picker_options(ids, [*st.session_state["traj_conversations"], *found])
    chosen = st.multiselect(f"Conversations drawn as paths (at most {MAX_PATHS})", path_options,
                            key="traj_conversations", max_selections=MAX_PATHS, format_func=conversation_label)
    ui.chart(st, cached.figure("paths", (*map_key, tuple(chosen)), lambda: explore_map.paths_on_density(
        points, chosen, points, title=f"Chosen conversations as paths ({method.upper()})")), key="traj_map")
    # inside the fragment: a search, a selection or a colour changed here reruns only the fragment,
    # and the notebook must carry what the page shows now, not the options of the last full run
    notebook_button.render("trajectories", {
        "method": method, "colour": colour, "search": query,
        "clusters": int(k) if clusters_on else None, "conversations": list(chosen),
        "pair": [st.session_state.get("traj_left", default_pair[0]),
                 st.session_state.get("traj_right", default_pair[1])]})


def reader(points, turn_map: TurnMap) -> None:
    """The transcript reader: the focused turn in full, then the whole conversation, wrapped."""
    dataset, frame, ids, found, conversation_label = (turn_map.dataset, turn_map.frame, turn_map.ids,
                                                      turn_map.found, turn_map.conversation_label)
    st.subheader("Transcript reader")
    chosen = st.session_state.get("traj_conversations") or []
    reader_options = trajectories.picker_options(list(dict.fromkeys([*chosen, *ids])),
                                                 [*found, st.session_state.get("traj_reader"), *chosen])
    if st.session_state.get("traj_reader") not in reader_options:
        st.session_state["traj_reader"] = reader_options[0]
    left, right = st.columns([3, 1])
    reading = left.selectbox("Conversation", reader_options, key="traj_reader", format_func=conversation_label,
                             on_change=_reset_reader_turn)
    turns = cached.transcript(dataset, reading)
    turn_numbers = [int(t) for t in turns["turn"]]
    if st.session_state.get("traj_reader_turn") not in turn_numbers:
        st.session_state["traj_reader_turn"] = turn_numbers[0] if turn_numbers else None
    focus_turn = right.selectbox("Turn", turn_numbers, key="traj_reader_turn",
                                 format_func=lambda t: f"turn {t} of {len(turn_numbers)}")
    row = frame.set_index("conversation_id").loc[reading]
    st.caption(" · ".join(f"{c}: {ui.escape(row[c])}" for c in ("source", "task", "model", "discussion", "n_turns")
                          if c in row.index and row[c] == row[c]))
    blocks = trajectories.reader_blocks(turns, focus_turn)
    focused = next((b for b in blocks if b["focused"]), None)
    if focused is not None:
        with st.container(border=True, key="traj_reader_focus"):
            st.markdown(f"**Reading turn {focus_turn}** of {ui.escape(reading)} · {ui.escape(focused['header'])}")
            st.markdown(ui.escape(trajectories.as_paragraphs(focused["text"])))
    with st.container(height=420, key="traj_reader_all"):
        for block in blocks:  # one element per turn: the browser lays out half as many
            mark = "▶ " if block["focused"] else ""
            st.markdown(f"{mark}**turn {block['turn']}** · {ui.escape(block['header'])}\n\n"
                        + ui.escape(trajectories.as_paragraphs(block["text"])))
    if st.toggle("The conversation as a table (distance of each turn to the previous one)", key="traj_table_on"):
        ui.table(st, turns, key="traj_transcript", hide_index=True)


def render(ctx: page_context.PageContext) -> None:
    """Draw the page; ``ctx``: the open dataset and the sidebar's selection."""
    st.title("Trajectories")
    dataset, frame, have = ctx.opened()

    if page_context.says_what_is_missing(ctx):  # no turns to draw: conversations by their features instead
        st.caption("Below: a map of conversations by their nine features instead of turn by turn.")
        colour = st.selectbox("Colour by", [c for c in ("source", "model", "discussion", "task")
                                            if c in frame.columns], key="traj_map_colour")
        points = trajectories.trajectories_page_data(dataset, frame, compute=cached).conversation_map
        if points.empty:
            st.warning("Too few conversations with all nine features for a map.")
        else:
            ui.ours(f"PCA of the z-scored nine features, {len(points):,} conversations")
            ui.chart(st, charts.scatter_map(points.fillna({colour: "(none)"}), colour,
                                            "Conversations by trajectory features (PCA)"),
                     key="traj_conversation_map")
        notebook_button.render("trajectories", {"colour": colour})
        st.stop()

    method = st.radio("Projection", ["pca", "umap"], key="traj_method", horizontal=True,
                      help="Fitted on every turn of the dataset and cached on disk (UMAP: seed 42).")
    with st.spinner(f"Projecting turns ({method.upper()})…"):
        try:
            ids, all_points, all_drawn = cached.map_frames(dataset, frame, method)
        except InputError as error:  # e.g. 2 turns in all: a 2-D projection needs 3
            st.info(f"No map of the turns: {ui.escape(error)}.")
            st.stop()
    ui.export_context(sample="every selected conversation with turn embeddings", n=f"{len(all_points):,} turns",
                      outcome=f"turn embeddings ({method.upper()})")
    if not ids:
        st.warning("No conversation of this selection has turn embeddings.")
        st.stop()
    map_key = cached.map_key(dataset, frame, method)  # the figures below are built once per selection and options
    conversation_label = trajectories.conversation_labels(frame).__getitem__  # one dict, not a lookup per option
    found = []  # a conversation found by its id: every picker lists it
    if len(ids) > trajectories.PICKER_LIMIT:
        wanted = st.text_input(f"Find a conversation by its id (any of the {len(ids):,})", key="traj_find").strip()
        st.caption(f"The conversation pickers below list {trajectories.PICKER_LIMIT:,} of the {len(ids):,} "
                   "conversations (those chosen, selected on the map or found here first, then the dataset's order): "
                   "every option goes to the browser on each rerun. Find any other by its id.")
        if wanted and wanted in set(ids):
            found = [wanted]
            if st.session_state.get("traj_found_last") != wanted:  # a new find opens in the reader
                st.session_state["traj_found_last"] = wanted
                st.session_state["traj_reader"] = wanted
                st.session_state.pop("traj_reader_turn", None)
        elif wanted:
            st.warning(f"No conversation “{ui.escape(wanted)}” in this selection.")

    explore(TurnMap(dataset, frame, method, ids, all_points, all_drawn, map_key, conversation_label, found))

    st.subheader("Side by side (as Figure 4)")
    default_pair = cached.contrasting_pair(frame[frame["conversation_id"].isin(ids)], map_key)
    a_col, b_col = st.columns(2)
    pair_options = trajectories.picker_options(ids, [*default_pair, st.session_state.get("traj_left"),
                                                     st.session_state.get("traj_right"), *found])
    first = a_col.selectbox("Left", pair_options, index=pair_options.index(default_pair[0]), key="traj_left",
                            format_func=conversation_label)
    second = b_col.selectbox("Right", pair_options, index=pair_options.index(default_pair[1]), key="traj_right",
                             format_func=conversation_label)
    ui.chart(st, cached.figure("pair", (*map_key, first, second), lambda: charts.trajectory_pair(
        all_points, first, second, title=f"Two conversations on shared axes ({method.upper()})")), key="traj_pair")
    values = trajectories.feature_pair_table(frame, [first, second])
    ui.ours("Feature values (and ratings when present)")
    ui.table(st, values, key="traj_feature_values")
    st.caption("Global coherence near its low end marks broad exploration, near its high end a "
               f"narrow focus (paper A, Figure 4). Features: {', '.join(feature_names())}.")


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
