"""Run comparison page: two or more datasets or pilots side by side (features, ratings,
diversity), every number with the N it rests on."""

from __future__ import annotations

import streamlit as st

from dashboard.figures import charts
from dashboard.page_data import comparison
from dashboard.widgets import session, ui
from dashboard.widgets.resources import get_embedder
from engine.features import FEATURE_NAMES

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
    st.stop()

chosen = {name: session.dataset_by_choice(name) for name in picked}
ui.export_context(sample="each dataset whole (no sidebar filter)",
                  n="; ".join(f"{name} {len(d.conversations):,}" for name, d in chosen.items()))
frames = {name: d.conversations for name, d in chosen.items()}
manifests = {name: d.manifest for name, d in chosen.items()}
ui.ours("What each dataset holds")
ui.table(st, comparison.overview(frames, manifests), key="compare_overview", hide_index=True)
models = {m.get("embedding_model", "not recorded") for m in manifests.values()}
if len(models) > 1:
    st.warning("These datasets' features come from different embedding models ("
               + ui.escape(", ".join(sorted(models))) + "): compare their features by rank and shape, "
               "not by absolute value.")

both = comparison.combined(frames)
features = [f for f in FEATURE_NAMES if f in both and both[f].notna().any()]
st.subheader("Trajectory features")
if features:
    chosen = st.multiselect("Features", features, default=features[:6], key="compare_features")
    ui.chart(st, charts.distributions_by_group(both, chosen, group="dataset",
                                               title="Features by dataset (box = quartiles, dashed = mean)"),
             key="compare_feature_boxes")
    ui.ours("Mean, SD and N per dataset")
    ui.table(st, comparison.feature_summary(frames).loc[features].round(4), key="compare_feature_table")
else:
    st.info("None of these datasets has trajectory features.")

st.subheader("Ratings")
ratings = comparison.rating_summary(frames)
rated = [c for c in comparison.RATINGS if any(ratings.loc[c, f"{n} N"] > 0 for n in frames)]
if rated:
    ui.chart(st, charts.distributions_by_group(both, rated, group="dataset", title="Ratings by dataset"),
             key="compare_rating_boxes")
    ui.ours("Mean, SD and N per dataset")
    ui.table(st, ratings.loc[rated].round(4), key="compare_rating_table")
else:
    st.info("None of these datasets has ratings.")

st.subheader("Diversity of final outputs (paper B)")
group_size = st.number_input("Runs per diversity group (2 to 15)", value=5, step=1, key="compare_group_size")
if not 2 <= group_size <= 15:
    st.error(f"Runs per group: {group_size} is outside 2 to 15.")
    st.stop()


@st.cache_data(show_spinner="Embedding final outputs…", max_entries=8)
def diversity(keys: tuple[str, ...], size: int):
    return comparison.diversity_summary({k: frames[k] for k in keys}, get_embedder().encode, group_size=size)


table = diversity(tuple(picked), int(group_size))
ui.ours(f"Vendi and Div-BLEU in groups of {int(group_size)} runs of one task and discussion, averaged over cells")
ui.table(st, table.round(4), key="compare_diversity", hide_index=True)
if (table["groups"] == 0).any():
    st.caption("A dataset with 0 groups has no task/discussion cell with enough final outputs.")
