"""Trajectories page: turns in a 2-D semantic map (PCA or UMAP), chosen conversations as
ordered paths coloured by turn, two conversations side by side (paper A, Figure 4)."""

from __future__ import annotations

import streamlit as st

from dashboard.figures import charts
from dashboard.page_data import trajectories
from dashboard.widgets import cached, ui
from engine.errors import InputError
from engine.features import FEATURE_NAMES

st.title("Trajectories")
dataset, frame, have = ui.page_context()

if not have.turn_embeddings:
    st.info(f"“{ui.escape(dataset.name)}” has no turn embeddings, so conversations cannot be drawn turn by "
            "turn (the paper release has one row of features per conversation, no turns). Open "
            "a dataset made by the engine (e.g. `local_smollm2`) or upload transcripts on the Data "
            "page. Below: a map of conversations by their nine features instead.")
    colour = st.selectbox("Colour by", [c for c in ("source", "model", "discussion", "task")
                                        if c in frame.columns], key="traj_map_colour")
    points = cached.cached_conversation_map(frame)
    if points.empty:
        st.warning("Too few conversations with all nine features for a map.")
    else:
        ui.ours(f"PCA of the z-scored nine features, {len(points):,} conversations")
        ui.chart(st, charts.scatter_map(points.fillna({colour: "(none)"}), colour,
                                           "Conversations by trajectory features (PCA)"),
                        key="traj_conversation_map")
    st.stop()

MAX_PATHS = 8  # paths drawn at once; more become unreadable (the table keeps every selected turn)

controls = st.columns([1, 1, 2, 1])
method = controls[0].radio("Projection", ["pca", "umap"], key="traj_method", horizontal=True,
                           help="Fitted on every turn of the dataset and cached on disk (UMAP: seed 42).")
with st.spinner(f"Projecting turns ({method.upper()})…"):
    try:
        ids, points, drawn = cached.map_frames(dataset, frame, method)
    except InputError as error:  # e.g. 2 turns in all: a 2-D projection needs 3
        st.info(f"No map of the turns: {ui.escape(error)}.")
        st.stop()
if not ids:
    st.warning("No conversation of this selection has turn embeddings.")
    st.stop()
clusters_on = controls[3].toggle("Cluster labels", key="traj_clusters",
                                 help="k-means of the turn embeddings, each cluster named by its c-TF-IDF "
                                      "keywords (engine.clusters).")
if clusters_on:
    k = controls[3].number_input("Clusters (k)", value=8, step=1, key="traj_k",
                                 help=f"2 to {min(30, len(points))}")
    if not 2 <= k <= min(30, len(points)):
        controls[3].error(f"k must be 2 to {min(30, len(points))}")
        clusters_on = False
    else:
        labelled = cached.turn_clusters(dataset, int(k))
        points = points.merge(labelled, on=["conversation_id", "turn"], how="left")
        drawn = drawn.merge(labelled, on=["conversation_id", "turn"], how="left")
colour_options = ["progress", "turn", "speaker", *[c for c in trajectories.MAP_FACTORS if c in points],
                  *(["cluster"] if clusters_on else []), *[f for f in FEATURE_NAMES if f in points]]
colour = controls[1].selectbox("Colour by", colour_options, key="traj_colour",
                               format_func=lambda c: "progress through the conversation" if c == "progress" else c)
query = controls[2].text_input("Search the turns", key="traj_search", placeholder="a word or phrase")
hits = trajectories.search_hits(points, query)
drawn_hits = trajectories.search_hits(drawn, query)
sampled = len(drawn) < len(points)

if sampled:
    ui.ours(f"{len(drawn):,} of {len(points):,} turns drawn ({drawn['conversation_id'].nunique():,} of "
            f"{len(ids):,} conversations), {method.upper()} of the turn embeddings; dataset {dataset.name}")
    st.caption(f"Showing {len(drawn):,} of {len(points):,} turns: whole conversations sampled uniformly at "
               f"random (seed 0) up to {trajectories.MAX_MAP_POINTS:,} turns, so the map stays fast. Search, "
               "the table, the paths and the reader use every turn; a lasso picks among the drawn ones.")
else:
    ui.ours(f"Every turn of {len(ids):,} conversations ({len(points):,} turns), {method.upper()} of the turn "
            f"embeddings; dataset {dataset.name}")
if fit_note := trajectories.umap_fit_note(cached.turn_points(dataset, method), method):
    st.caption(fit_note)
search_note = ""
if query.strip():
    search_note = (f"Search “{ui.escape(query)}”: {int(hits.sum()):,} turns"
                   + (f" ({int(drawn_hits.sum()):,} of them among the drawn points, ringed)." if sampled else "."))
st.caption("Drag to lasso turns (or use the box tool, or click one); hover a point for its full text. " + search_note)
event = ui.chart(st, charts.turn_map(drawn, colour, f"Turns in semantic space ({method.upper()})", hits=drawn_hits),
                 key="traj_explore", on_select="rerun", selection_mode=("points", "box", "lasso"))
picked = trajectories.selected_points(points, event)
if picked.empty and query.strip():
    picked = points[hits.to_numpy()]
if not picked.empty:
    source = "selection" if not trajectories.selected_points(points, event).empty else "search"
    in_selection = list(dict.fromkeys(picked["conversation_id"]))
    st.markdown(f"**{len(picked):,} turns** of **{len(in_selection):,} conversations** in the {source}")
    shown_columns = [c for c in ("conversation_id", "turn", "speaker", "phase", "round", colour, "text")
                     if c in picked.columns]
    ui.table(st, picked[list(dict.fromkeys(shown_columns))].reset_index(drop=True), key="traj_selected",
             hide_index=True)
    signature = (source, tuple(in_selection))
    if st.session_state.get("traj_last_selection") != signature:
        st.session_state["traj_last_selection"] = signature
        st.session_state["traj_conversations"] = in_selection[:MAX_PATHS]
        st.session_state["traj_reader"] = in_selection[0]
    if len(in_selection) > MAX_PATHS:
        st.info(f"The selection holds {len(in_selection):,} conversations; the paths below draw the first "
                f"{MAX_PATHS} (a cap for readability). Every selected turn is in the table above.")

conversation_label = trajectories.conversation_labels(frame).__getitem__  # one dict, not a lookup per option


default_pair = trajectories.contrasting_pair(frame[frame["conversation_id"].isin(ids)])
if "traj_conversations" not in st.session_state:
    st.session_state["traj_conversations"] = list(default_pair)
chosen = st.multiselect(f"Conversations drawn as paths (at most {MAX_PATHS})", ids, key="traj_conversations",
                        max_selections=MAX_PATHS, format_func=conversation_label)
ui.chart(st, charts.trajectory_paths(points, chosen, background_points=drawn, title=f"Chosen conversations as paths ({method.upper()})"),
         key="traj_map")

st.subheader("Transcript reader")
reader_options = list(dict.fromkeys([*chosen, *ids]))
if st.session_state.get("traj_reader") not in reader_options:
    st.session_state["traj_reader"] = reader_options[0]
reading = st.selectbox("Conversation", reader_options, key="traj_reader", format_func=conversation_label)
row = frame.set_index("conversation_id").loc[reading]
st.caption(" · ".join(f"{c}: {ui.escape(row[c])}" for c in ("source", "task", "model", "discussion", "n_turns")
                      if c in row.index and row[c] == row[c]))
ui.table(st, trajectories.transcript(dataset, reading), key="traj_transcript", hide_index=True,
         column_config={"text": st.column_config.TextColumn("text", width="large")})

st.subheader("Side by side (as Figure 4)")
a_col, b_col = st.columns(2)
first = a_col.selectbox("Left", ids, index=ids.index(default_pair[0]), key="traj_left", format_func=conversation_label)
second = b_col.selectbox("Right", ids, index=ids.index(default_pair[1]), key="traj_right",
                         format_func=conversation_label)
ui.chart(st, charts.trajectory_pair(points, first, second,
                                    title=f"Two conversations on shared axes ({method.upper()})"),
         key="traj_pair")
values = trajectories.feature_pair_table(frame, [first, second])
ui.ours("Feature values (and ratings when present)")
ui.table(st, values, key="traj_feature_values")
st.caption("Global coherence near its low end marks broad exploration, near its high end a "
           f"narrow focus (paper A, Figure 4). Features: {', '.join(FEATURE_NAMES)}.")
