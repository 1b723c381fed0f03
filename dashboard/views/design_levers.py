"""Design levers page: trajectory features by model × discussion structure and the
manipulability table (paper A, Tables 2, 24 and 25), ours beside the published one."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.figures import charts
from dashboard.widgets import cached, sample_picker, ui
from engine.errors import InputError
from dashboard.page_data.analyses import small_model
from engine.stats import interaction_share, published_a
from engine.stats.guards import not_comparable
from engine.stats.manipulability import adjusted_r2, guard_lines
from engine.stats.published_a import MANIPULABILITY_COLUMNS

st.title("Design levers")
dataset, frame, have = ui.page_context()
everything = frame
sample_name, frame = sample_picker.pick(st, frame, key="levers_sample", default="trajectory")
llm = frame[frame["source"] == "llm"] if "source" in frame else frame
features = list(have.features)
if llm.empty or not features:
    st.info("Design levers need LLM conversations with trajectory features; this selection has "
            f"{len(llm)} LLM rows and {len(features)} features.")
    st.stop()

st.subheader("Features by model × discussion")
left, right = st.columns([1, 3])
feature = left.selectbox("Feature", features, key="levers_feature")
x_axis = left.selectbox("Bars", ["discussion", "model", "task", "persona", "team_size"], key="levers_x")
colour = left.selectbox("Colour", ["model", "discussion", "task", "persona", "team_size"], key="levers_colour")
if x_axis == colour:
    left.warning("Choose two different factors.")
else:
    ui.chart(right, charts.group_means_with_ci(llm, feature, x_axis, colour), key="levers_means",
                       width="stretch")

st.subheader("Manipulability: R² of each feature by design choices (Table 24)")
st.caption("OLS of each feature on task; task + discussion; task + model; task + discussion + "
           "model; task + discussion × model. The LLM rows of the sample chosen above (the paper's: "
           "the trajectory sample, turn-by-turn structures instructed, open, iterative) with all "
           "nine features.")
try:
    ours = cached.cached_manipulability(everything, "", sample_name)
except InputError as error:
    st.warning(f"Cannot compute the manipulability table on this selection: {ui.escape(error)}")
    ours = None

col_ours, col_paper = st.columns(2)
made_by = small_model(llm)
with col_ours:
    if ours is not None:
        lines = guard_lines(ours)
        for line in lines:
            ui.caveat(st, line)
        ui.ours(f"This selection{f' ({made_by})' if made_by else ''}, N = {ours.attrs['n']:,}")
        for factor, level in ours.attrs.get("dropped_factors", {}).items():
            st.info(f"factor {factor} dropped: 1 level ({ui.escape(level)}). Every column that adds {factor} equals "
                    f"the same model without it.")
        fit = ours.attrs["fits"]["interaction"]
        if fit["refuse"]:
            st.metric("Mean R², interaction model", "refused",
                      help=f"N − k = {fit['df_resid']} (N = {fit['n']}, k = {fit['k']})")
        elif fit["small_sample"]:
            st.metric(f"Mean adjusted R², interaction model{f' ({made_by})' if made_by else ''}",
                      f"{adjusted_r2(ours)['interaction'].mean():.1f}%")
            st.caption(f"R² {ours['interaction'].mean():.1f}%; N = {fit['n']}, k = {fit['k']}")
        else:
            st.metric(f"Mean R², interaction model{f' ({made_by})' if made_by else ''}",
                      f"{ours['interaction'].mean():.1f}%")
        if made_by:
            ui.caveat(st, not_comparable(published_a.MODELS, f"{made_by}, N = {ours.attrs['n']:,} conversations"),
                      "caption")
        ui.chart(st, charts.percent_heatmap(ours, "R² (%) computed here", zmax=60),
                        key="levers_heatmap_ours")
with col_paper:
    paper = published_a.table24()
    ui.published("Paper A, Table 24, N = 3,574")
    st.metric("Mean R², interaction model", f"{paper['interaction'].mean():.1f}%")
    ui.chart(st, charts.percent_heatmap(paper, "R² (%) published", colorscale="Oranges", zmax=60),
                    key="levers_heatmap_paper")

if ours is not None:
    with st.expander("Tables (ours, difference from published, Table 25 decomposition)"):
        st.markdown("Ours (%)")
        ui.table(st, ui.percent_table(ours), key="levers_table_ours")
        if guard_lines(ours):
            st.markdown("Ours, adjusted R² (%)")
            ui.table(st, ui.percent_table(adjusted_r2(ours)), key="levers_table_ours_adjusted")
        fits = pd.DataFrame(ours.attrs["fits"]).T[["n", "k", "df_resid", "small_sample", "refuse"]]
        st.markdown("N, k and N − k of each column's fit")
        ui.table(st, fits.rename(columns={"df_resid": "N − k"}), key="levers_table_fits")
        st.markdown("Ours − published (percentage points)")
        ui.table(st, ui.percent_table(ours[list(MANIPULABILITY_COLUMNS)] - paper.loc[ours.index]),
                     key="levers_table_diff")
        st.markdown("Table 25: interaction share")
        ui.table(st, interaction_share(ours / 100).round(3), key="levers_table25")
    if have.features_4b:
        with st.expander("Robustness: features from Qwen3-Embedding-4B"):
            try:
                robust = cached.cached_manipulability(everything, "_4b", sample_name)
            except InputError as error:
                st.warning(ui.escape(error))
            else:
                ui.chart(st, charts.percent_heatmap(robust, f"R² (%), 4B features, N = {robust.attrs['n']:,}",
                                                       colorscale="Greens", zmax=60),
                                key="levers_heatmap_4b")
