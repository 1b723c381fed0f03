"""Design levers page: trajectory features by model × discussion structure, the
manipulability table (paper A, Tables 2, 24 and 25), ours beside the published one, and how
far the structures' implementation (the paper's text or the authors' code) moves the
features (``dashboard.page_data.fidelity_levers``)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.figures import mode_forest as fidelity_chart
from dashboard.page_data import datasets
from dashboard.page_data.analyses import small_model
from dashboard.page_data.design_levers import design_levers_page_data
from dashboard.widgets import cached, notebook_button, page_context, sample_picker, ui
from engine import samples
from engine.stats import published_a
from engine.stats.guards import not_comparable
from engine.stats.manipulability import guard_lines


def render(ctx: page_context.PageContext) -> None:
    """Draw the page; ``ctx``: the open dataset and the sidebar's selection."""
    st.title("Design levers")
    dataset, frame, have = ctx.opened()
    lacking = page_context.says_what_is_missing(ctx)
    everything = frame
    sample_name, frame = sample_picker.pick(st, frame, key="levers_sample", default="trajectory")
    ui.export_context(sample=f"{samples.sample(sample_name).title}, LLM rows")
    data = design_levers_page_data(everything, frame, sample_name, have, compute=cached)
    llm, features = data.llm, data.features
    if llm.empty or not features:
        if not lacking:  # the dataset has features, this selection has none
            st.info("Design levers need LLM conversations with trajectory features; this selection has "
                    f"{len(llm)} LLM rows and {len(features)} features.")
        notebook_button.render("design_levers", {"sample": sample_name})
        st.stop()

    st.subheader("Features by model × discussion")
    left, right = st.columns([1, 3])
    feature = left.selectbox("Feature", features, key="levers_feature")
    x_axis = left.selectbox("Bars", ["discussion", "model", "task", "persona", "team_size"], key="levers_x")
    colour = left.selectbox("Colour", ["model", "discussion", "task", "persona", "team_size"], key="levers_colour")
    notebook_button.render("design_levers", {"sample": sample_name, "feature": feature, "x": x_axis, "colour": colour})
    if x_axis == colour:
        left.warning("Choose two different factors.")
    else:
        ui.chart(right, cached.chart("group_means_with_ci", llm[[feature, x_axis, colour]], feature, x_axis, colour),
                 key="levers_means",
                 outcome=f"mean {feature} (95% CI)", n=f"{int(llm[feature].notna().sum()):,} conversations",
                           width="stretch")

    st.subheader("Manipulability: R² of each feature by design choices (Table 24)")
    st.caption("OLS of each feature on task; task + discussion; task + model; task + discussion + "
               "model; task + discussion × model. The LLM rows of the sample chosen above (the paper's: "
               "the trajectory sample, turn-by-turn structures instructed, open, iterative) with all "
               "nine features.")
    if data.error:
        st.warning(f"Cannot compute the manipulability table on this selection: {ui.escape(data.error)}")
    ours = data.ours

    paper = published_a.table24()
    headings = published_a.TABLE24_HEADINGS
    if ours is not None:
        rows, rows_text, difference, share = data.beside_paper, data.beside_paper_text, data.difference, data.share
        ui.export_context(n=f"{ours.attrs['n']:,} fitted", outcome="R² (%) of each trajectory feature on the design factors")
        made_by = small_model(llm)
        for line in guard_lines(ours):  # N < 10 k, or a column refused: above the numbers
            ui.caveat(st, line)
        ui.ours(f"This selection{f' ({made_by})' if made_by else ''}, N = {ours.attrs['n']:,}")
        for factor, level in ours.attrs.get("dropped_factors", {}).items():
            ui.caveat(st, f"factor {factor} dropped: 1 level ({level}). Every column that adds {factor} equals "
                          f"the same model without it.", "info")
        m1, m2, m3 = st.columns(3)
        fit = data.interaction_fit
        ours_label = f"ours, {made_by}" if made_by else "ours"
        if fit["refuse"]:
            m1.metric(f"Mean R², interaction model ({ours_label})", "refused",
                      help=f"N − k = {fit['df_resid']} (N = {fit['n']}, k = {fit['k']}): below 5 residual degrees of freedom")
        elif fit["small_sample"]:
            m1.metric(f"Mean adjusted R², interaction model ({ours_label})", f"{data.mean_interaction_adjusted:.1f}%")
            m1.caption(f"R² {data.mean_interaction:.1f}%; N = {fit['n']}, k = {fit['k']}")
        else:
            m1.metric(f"Mean R², interaction model ({ours_label})", f"{data.mean_interaction:.1f}%")
        m2.metric("Mean R², interaction model (published, Table 2)", f"{data.published_mean_interaction:.1f}%")
        if not fit["refuse"]:
            m3.metric("Ours − published",
                      f"{round(data.mean_interaction - data.published_mean_interaction, 1) + 0:+.1f} points")
        if made_by:
            ui.caveat(st, not_comparable(published_a.MODELS, f"{made_by}, N = {ours.attrs['n']:,} conversations"),
                      "caption")
        st.caption(ui.escape(rows.caption) + ". Rows in the paper's order, columns as the paper heads them.")
        order = [f for f in paper.index if f in ours.index] + [f for f in ours.index if f not in paper.index]
        ui.chart(st, cached.chart("percent_heatmap", ours.loc[order], "R² (%) computed here", zmax=60,
                                  column_labels=headings), key="levers_heatmap_ours")
    else:
        st.metric("Mean R², interaction model (published, Table 2)", f"{data.published_mean_interaction:.1f}%")
    ui.published("Paper A, Table 24, N = 3,574")
    ui.chart(st, cached.chart("percent_heatmap", paper, "R² (%) published", colorscale="Oranges", zmax=60,
                              column_labels=headings), key="levers_heatmap_paper",
             sample="the paper's trajectory sample, LLM rows", n=published_a.printed_n("24"),
             outcome="R² (%) of each trajectory feature on the design factors")

    if ours is not None:
        ui.beside("Table 24 row by row: ours, published, ours − published", "Paper A, Table 24, N = 3,574")
        ui.chart(st, cached.chart("percent_heatmap", difference, "Ours − published (percentage points)",
                                  colorscale="RdBu", zmin=-30, zmax=30, colour_title="points", column_labels=headings),
                 key="levers_heatmap_diff")
        ui.table(st, rows_text, key="levers_beside", hide_index=True)
        with st.expander("Ours unrounded, and Table 25's interaction share"):
            ui.table(st, ui.percent_table(ours), key="levers_table_ours")
            if guard_lines(ours):
                st.markdown("Ours, adjusted R² (%)")
                ui.table(st, ui.percent_table(data.adjusted), key="levers_table_ours_adjusted")
            st.markdown("N, k and N − k of each column's fit (engine.stats.guards)")
            ui.table(st, data.fits.rename(columns={"df_resid": "N − k"}), key="levers_table_fits")
            st.markdown("Table 25: interaction share")
            ui.table(st, share, key="levers_table25")
        if have.features_4b:
            with st.expander("Robustness: features from Qwen3-Embedding-4B"):
                if data.robust_error:
                    st.warning(ui.escape(data.robust_error))
                else:
                    robust = data.robust
                    ui.chart(st, cached.chart("percent_heatmap", robust, f"R² (%), 4B features, N = {robust.attrs['n']:,}",
                                              colorscale="Greens", zmax=60, column_labels=headings),
                                    key="levers_heatmap_4b")

    st.subheader("The paper's text or the authors' code: does the implementation move the features?")
    st.caption("Paper A's open, instructed and iterative structures run twice with the same task, team, "
               "turn limits and token budget: as the paper describes them (fidelity = paper) and as the "
               "authors' released code ran them (fidelity = release: how replies are read and re-asked, "
               "what each turn sees, who picks and who summarises; docs/reference/fidelity.md lists every "
               "difference). Each feature: release − paper, Welch's 95% interval, Holm's adjustment over "
               "the nine features, Hedges' g. Neither paper reports this comparison.")
    shown = cached.cached_fidelity_view(everything, dataset.name, str(datasets.cached_runs_root()))
    found = shown.source
    if found.frame is None:
        st.info(ui.escape(found.note))
    else:
        ui.ours(f"Dataset {found.name} ({found.note}); model {found.model}")
        st.markdown(ui.escape(shown.headline))
        forest_title = f"Release − paper, Hedges' g (95% CI), dataset {found.name}"
        ui.chart(st, cached.figure("fidelity_forest", (int(pd.util.hash_pandas_object(shown.differences).sum()), forest_title),
                                   lambda: fidelity_chart.mode_difference_forest(shown.differences, forest_title)),
                 key="levers_fidelity_forest")
        ui.table(st, shown.table, key="levers_fidelity_table", hide_index=True)
        with st.expander("How each mode ran (turns, calls, replies asked again or read as Agree)"):
            ui.table(st, shown.mechanics, key="levers_fidelity_mechanics", hide_index=True)


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
