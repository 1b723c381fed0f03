"""Run comparison page: two or more datasets or pilots side by side as a run tracker shows them
(one distinct colour per run, differences from a reference run with their intervals, what
differs in the runs' configurations), every number with the N it rests on."""

from __future__ import annotations

import streamlit as st

from dashboard.figures import charts, compare_runs
from dashboard.figures.labels import readable_term
from dashboard.page_data import comparison
from dashboard.widgets import cached, notebook_button, session, ui
from dashboard.widgets.resources import get_embedder
from engine.measures.trajectory import FEATURE_NAMES
from engine.stats import guards

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
                  n="; ".join(f"{name} {len(d.conversations):,}" for name, d in chosen.items()))
frames = {name: d.conversations for name, d in chosen.items()}
manifests = {name: d.manifest for name, d in chosen.items()}
# what every table and chart below rests on: the runs by name and content (cached.kept, cached.figure)
runs = tuple((name, cached.frame_fingerprint(frame)) for name, frame in frames.items())
ui.ours("What each dataset holds")
ui.table(st, comparison.overview(frames, manifests), key="compare_overview", hide_index=True)
models = {m.get("embedding_model", "not recorded") for m in manifests.values()}
if len(models) > 1:
    st.warning("These datasets' features come from different embedding models ("
               + ui.escape(", ".join(sorted(models))) + "): compare their features by rank and shape, "
               "not by absolute value.")

st.subheader("What differs in their configurations")
include_same = st.toggle("Show identical settings too", key="compare_config_all")
configs = comparison.config_differences(manifests, include_same=include_same)
st.caption(f"{int(configs['differs'].sum()) if len(configs) else 0:,} settings of the runs' manifests differ "
           "(how each dataset was made: command, model, grid, seeds, versions); \"(not recorded)\" where a run's "
           "manifest lacks the setting.")
ui.table(st, configs, key="compare_config")

notebook_button.render("compare", {
    "runs": {name: str(notebook_button.dataset_folder(d)) for name, d in chosen.items()}, "reference": reference,
    "group_size": int(st.session_state.get("compare_group_size", 5)),
    "features": list(st.session_state.get("compare_features") or []), "include_same": bool(include_same)},
    dataset=next(iter(chosen.values())), filters={})


def differences(columns, key: str, what: str) -> None:
    """The difference of each run from the reference, as a forest of Hedges' g and a table."""
    table = cached.kept("compare_run_differences", (runs, tuple(columns), reference),
                        lambda: comparison.run_differences(frames, columns, reference))
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


features = [f for f in FEATURE_NAMES if any(f in frame and frame[f].notna().any() for frame in frames.values())]
st.subheader("Trajectory features")
if features:
    shown_features = st.multiselect("Features", features, default=features[:6], key="compare_features")
    ui.chart(st, cached.figure("compare_feature_boxes", (runs, tuple(shown_features)),
                               lambda: charts.distributions_by_group(
                                   comparison.combined(frames), shown_features, group="dataset",
                                   title="Features by dataset (box = quartiles, dashed = mean)")),
             key="compare_feature_boxes")
    ui.ours("Mean, SD and N per dataset")
    summary = cached.kept("compare_feature_summary", runs, lambda: comparison.feature_summary(frames))
    ui.table(st, summary.loc[features].round(4), key="compare_feature_table")
    differences(features, "compare_feature", "features")
else:
    st.info("None of these datasets has trajectory features.")

st.subheader("Ratings")
ratings = cached.kept("compare_rating_summary", runs, lambda: comparison.rating_summary(frames))
rated = [c for c in comparison.RATINGS if any(ratings.loc[c, f"{n} N"] > 0 for n in frames)]
if rated:
    ui.chart(st, cached.figure("compare_rating_boxes", (runs, tuple(rated)),
                               lambda: charts.distributions_by_group(comparison.combined(frames), rated,
                                                                     group="dataset", title="Ratings by dataset")),
             key="compare_rating_boxes")
    ui.ours("Mean, SD and N per dataset")
    ui.table(st, ratings.loc[rated].round(4), key="compare_rating_table")
    differences(rated, "compare_rating", "ratings")
else:
    st.info("None of these datasets has ratings.")

st.subheader("Diversity of final outputs (paper B)")
group_size = st.number_input("Runs per diversity group (2 to 15)", value=5, step=1, key="compare_group_size")
if not 2 <= group_size <= 15:
    st.error(f"Runs per group: {group_size} is outside 2 to 15.")
    st.stop()


@st.cache_data(show_spinner="Embedding final outputs…", max_entries=8)
def diversity_groups(keys: tuple[tuple[str, str], ...], size: int):
    """Kept per runs' names and contents (``runs``): a dataset uploaded again under the same
    name with other outputs is embedded again."""
    return comparison.diversity_groups({name: frames[name] for name, _ in keys}, get_embedder().encode,
                                       group_size=size)


groups = diversity_groups(runs, int(group_size))
table = cached.kept("compare_diversity", (runs, int(group_size)),
                    lambda: comparison.diversity_summary(frames, None, int(group_size), groups=groups))
ui.ours(f"Vendi and Div-BLEU in groups of {int(group_size)} runs of one task and discussion, averaged over "
        "groups, with the 95% interval of that mean inside each score's range")
ui.table(st, table.round(4), key="compare_diversity", hide_index=True)
if (table["groups"] == 0).any():
    st.caption("A dataset with 0 groups has no task/discussion cell with enough final outputs.")
diversity_diff = cached.kept("compare_diversity_differences", (runs, int(group_size), reference),
                             lambda: comparison.diversity_differences(groups, reference))
if len(diversity_diff):
    ui.ours(f"Diversity difference from {reference} (Welch's 95% interval over groups, pooled over each run's "
            "task × discussion cells)")
    ui.table(st, diversity_diff.drop(columns=["reference"]).round(4), key="compare_diversity_differences",
             hide_index=True)
