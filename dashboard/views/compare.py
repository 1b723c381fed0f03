"""Run comparison page: two or more datasets or pilots side by side as a run tracker shows them
(one distinct colour per run, differences from a reference run with their intervals, what
differs in the runs' configurations), every number with the N it rests on."""

from __future__ import annotations

import streamlit as st

from dashboard.figures import charts, compare_runs
from dashboard.figures.labels import readable_term
from dashboard.page_data import comparison
from dashboard.page_data.datasets import cached_runs_root
from dashboard.widgets import cached, notebook_button, page_context, session, ui
from dashboard.widgets.resources import get_embedder
from engine.stats import guards


def render(ctx: page_context.PageContext) -> None:
    """Draw the page; ``ctx``: the open dataset and the sidebar's selection."""
    st.title("Compare runs")
    st.caption("Pick two or more datasets, uploads or pilots (the sidebar filters do not apply here: each "
               "dataset is taken whole).")
    choices = session.dataset_choices()
    current = st.session_state.get(session.DATASET_KEY)
    default = ([current] if current in choices else []) + [c for c in choices if c != current][:1]
    default = default[:2]
    picked = st.multiselect("Datasets", choices, default=default, key="compare_datasets")
    if len(picked) < 2:
        st.info("Choose at least two datasets to compare.")
        notebook_button.render("compare", {"runs": {name: str(notebook_button.dataset_folder(session.dataset_by_choice(name)))
                                                    for name in picked}}, filters={})
        st.stop()
    if st.session_state.get("compare_reference") not in picked:
        st.session_state["compare_reference"] = picked[0]
    reference = st.selectbox("Reference run (the others are compared with it)", picked, key="compare_reference")

    chosen = {name: session.dataset_by_choice(name) for name in picked}
    ui.export_context(sample="each dataset whole (no sidebar filter)",
                      n="; ".join(f"{name} {len(d.conversations):,}" for name, d in chosen.items()),
                      rests_on="runs compared, each whole: " + "; ".join(
                          f"{name} ({len(d.conversations):,} conversations, embedding "
                          f"{d.manifest.get('embedding_model') or 'not recorded'})" for name, d in chosen.items())
                      + f"; reference run {reference}")
    frames = {name: d.conversations for name, d in chosen.items()}
    manifests = {name: d.manifest for name, d in chosen.items()}
    runs = cached.runs_key(frames)  # what every chart below rests on: the runs by name and content

    # the page's choices first, each in its place; the numbers of every section below once they are made
    holdings = st.container()
    st.subheader("What differs in their configurations")
    include_same = st.toggle("Show identical settings too", key="compare_config_all")
    config_section = st.container()
    notebook_button.render("compare", {
        "runs": {name: str(notebook_button.dataset_folder(d)) for name, d in chosen.items()}, "reference": reference,
        "group_size": int(st.session_state.get("compare_group_size", 5)),
        "features": list(st.session_state.get("compare_features") or []), "include_same": bool(include_same)},
        dataset=next(iter(chosen.values())), filters={})
    feature_section, rating_section = st.container(), st.container()
    st.subheader("Diversity of final outputs (paper B)")
    group_size = st.number_input("Runs per diversity group (2 to 15)", value=5, step=1, key="compare_group_size")
    valid_size = group_size in comparison.GROUP_SIZES
    data = comparison.compare_page_data(frames, manifests, reference, include_same=include_same,
                                        group_size=int(group_size), embed=get_embedder().encode if valid_size else None,
                                        compute=cached)

    with holdings:
        ui.ours("What each dataset holds")
        ui.table(st, data.overview, key="compare_overview", hide_index=True)
        if len(data.embedding_models) > 1:
            # kept with every figure and table below, on the page and in the exports and the report
            ui.caveat(st, "These datasets' features come from different embedding models ("
                      + ", ".join(sorted(data.embedding_models)) + "): a cosine from one model has no place on "
                      "another's scale, so their features are compared by rank and shape only (z-scores within each "
                      "run, the order of the discussion structures within each run); standardised differences "
                      f"(Hedges' g) are computed only for the runs on {reference}'s model ("
                      + ", ".join(data.same_scale) + ").")

    with config_section:
        configs = data.config
        st.caption(f"{int(configs['differs'].sum()) if len(configs) else 0:,} settings of the runs' manifests differ "
                   "(how each dataset was made: command, model, grid, seeds, versions); \"(not recorded)\" where a run's "
                   "manifest lacks the setting.")
        ui.table(st, configs, key="compare_config")

    def differences(table, columns, key: str, what: str) -> None:
        """The difference of each run from the reference, as a forest of Hedges' g and a table."""
        if table.empty:
            st.caption(f"No {what} present in the reference run and another run.")
            return
        ui.ours(f"Difference from {reference}: Welch's 95% interval of the difference of means, Holm's p over the "
                f"{what} of each pair, Hedges' g with its interval")
        labels = {c: readable_term(c) for c in columns}
        title = f"{what.capitalize()}: run − {reference} (Hedges' g)"
        ui.chart(st, cached.figure("compare_difference_forest", (runs, tuple(columns), reference, title),
                                   lambda: compare_runs.difference_forest(table, title, labels)), key=f"{key}_forest")
        shown = table.drop(columns=["reference"]).round(4)
        ui.table(st, shown, key=f"{key}_differences", hide_index=True)
        if (table["note"] != "").any():
            st.caption(f"No interval where a run has fewer than {guards.MIN_GROUPS_FOR_INTERVAL} sessions with a value.")

    with feature_section:
        features = data.features
        st.subheader("Trajectory features")
        if features:
            shown_features = st.multiselect("Features", features, default=features[:6], key="compare_features")
            if data.other_scale:  # shapes, not values: each run on its own model's scale
                title = ("Features by dataset as z-scores within each run (shapes only: the embedding models "
                         "differ; box = quartiles, dashed = mean)")
                ui.chart(st, cached.figure("compare_feature_shapes", (runs, tuple(shown_features)),
                                           lambda: charts.distributions_by_group(
                                               comparison.within_run_scale(frames, shown_features), shown_features,
                                               group="dataset", title=title)),
                         key="compare_feature_shapes")
            else:
                ui.chart(st, cached.figure("compare_feature_boxes", (runs, tuple(shown_features)),
                                           lambda: charts.distributions_by_group(
                                               comparison.combined(frames), shown_features, group="dataset",
                                               title="Features by dataset (box = quartiles, dashed = mean)")),
                         key="compare_feature_boxes")
            ui.ours("Mean, SD and N per dataset" + (" (each on its own embedding model's scale: not comparable "
                                                    "across models)" if data.other_scale else ""))
            ui.table(st, data.feature_summary.loc[features].round(4), key="compare_feature_table")
            if data.ranks is not None and len(data.ranks):
                ui.ours("Within each run, the discussion structures ranked by their mean (1 = highest), with N: "
                        "ranks compare across embedding models where values do not")
                ui.table(st, data.ranks.round(4), key="compare_feature_ranks")
            if data.other_scale:
                st.caption("No standardised difference for " + ui.escape(", ".join(data.other_scale))
                           + f": their features come from another embedding model than {ui.escape(reference)}'s.")
            if data.feature_differences is not None and len(data.same_scale) > 1:
                differences(data.feature_differences, features, "compare_feature", "features")
        else:
            st.info("None of these datasets has trajectory features.")

    with rating_section:
        st.subheader("Ratings")
        rated = data.rated
        if rated:
            ui.chart(st, cached.figure("compare_rating_boxes", (runs, tuple(rated)),
                                       lambda: charts.distributions_by_group(comparison.combined(frames), rated,
                                                                             group="dataset", title="Ratings by dataset")),
                     key="compare_rating_boxes")
            sources = comparison.rating_sources(frames, cached_runs_root())
            if sources["judge"].nunique() > 1:
                ui.caveat(st, "These ratings come from different judges (" + ", ".join(sources["judge"].unique())
                          + "): they are not one scale, so a difference between runs mixes the runs and the judges.")
            ui.ours("Who rated each dataset, and whether that judge was checked against people")
            ui.table(st, sources, key="compare_rating_sources", hide_index=True)
            ui.ours("Mean, SD and N per dataset")
            ui.table(st, data.ratings.loc[rated].round(4), key="compare_rating_table")
            differences(data.rating_differences, rated, "compare_rating", "ratings")
        else:
            st.info("None of these datasets has ratings.")

    if not valid_size:
        st.error(f"Runs per group: {group_size} is outside 2 to 15.")
        st.stop()
    table = data.diversity
    ui.ours(f"Vendi and Div-BLEU in groups of {int(group_size)} runs of one task and discussion, averaged over "
            "groups, with the 95% interval of that mean inside each score's range")
    ui.table(st, table.round(4), key="compare_diversity", hide_index=True)
    if (table["groups"] == 0).any():
        st.caption("A dataset with 0 groups has no task/discussion cell with enough final outputs.")
    diversity_diff = data.diversity_differences
    if len(diversity_diff):
        ui.ours(f"Diversity difference from {reference} (Welch's 95% interval over groups, pooled over each run's "
                "task × discussion cells)")
        ui.table(st, diversity_diff.drop(columns=["reference"]).round(4), key="compare_diversity_differences",
                 hide_index=True)


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
