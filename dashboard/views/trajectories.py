"""Trajectories page: turns in a 2-D semantic map (PCA or UMAP), chosen conversations as
ordered paths coloured by turn, two conversations side by side (paper A, Figure 4)."""

from __future__ import annotations

import streamlit as st

from dashboard import analyses, charts, trajectories, ui
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
    points = analyses.cached_conversation_map(frame)
    if points.empty:
        st.warning("Too few conversations with all nine features for a map.")
    else:
        ui.ours(f"PCA of the z-scored nine features, {len(points):,} conversations")
        ui.chart(st, charts.scatter_map(points.fillna({colour: "(none)"}), colour,
                                           "Conversations by trajectory features (PCA)"),
                        key="traj_conversation_map")
    st.stop()

left, right = st.columns([1, 3])
method = left.radio("Projection", ["pca", "umap"], key="traj_method", horizontal=True,
                    help="Fitted on every turn of the dataset and cached on disk (UMAP: seed 42).")
with st.spinner(f"Projecting turns ({method.upper()})…"):
    points = trajectories.turn_points(dataset, method)
projected = set(points["conversation_id"])  # once: per conversation it made the page quadratic
ids = [c for c in frame["conversation_id"] if c in projected]
if not ids:
    st.warning("No conversation of this selection has turn embeddings.")
    st.stop()
points = points[points["conversation_id"].isin(ids)]
left.caption(f"{len(points):,} turns of {len(ids):,} conversations")
default_pair = trajectories.contrasting_pair(frame[frame["conversation_id"].isin(ids)])
chosen = left.multiselect("Conversations drawn", ids, default=list(default_pair), key="traj_conversations",
                          max_selections=6)
ui.chart(right, charts.trajectory_paths(points, chosen, title=f"Turns in semantic space ({method.upper()})"),
                   key="traj_map")

st.subheader("Side by side (as Figure 4)")
a_col, b_col = st.columns(2)
first = a_col.selectbox("Left", ids, index=ids.index(default_pair[0]), key="traj_left")
second = b_col.selectbox("Right", ids, index=ids.index(default_pair[1]), key="traj_right")
ui.chart(st, charts.trajectory_pair(points, first, second,
                                    title=f"Two conversations on shared axes ({method.upper()})"),
         key="traj_pair")
values = trajectories.feature_pair_table(frame, [first, second])
ui.ours("Feature values (and ratings when present)")
ui.table(st, values, key="traj_feature_values")
st.caption("Global coherence near its low end marks broad exploration, near its high end a "
           f"narrow focus (paper A, Figure 4). Features: {', '.join(FEATURE_NAMES)}.")
