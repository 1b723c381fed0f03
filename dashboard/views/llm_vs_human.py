"""LLM vs human page: feature and rating distributions, effect sizes, top-5% views (paper A,
Figure 1, Tables 5 and 12), with the paper's published numbers beside."""

from __future__ import annotations

import streamlit as st

from dashboard.figures import labels
from dashboard.page_data import analyses
from dashboard.page_data.llm_vs_human import llm_vs_human_page_data
from dashboard.widgets import cached, notebook_button, page_context, sample_picker, ui
from engine import samples
from engine.errors import InputError
from engine.stats import published_a


def render(ctx: page_context.PageContext) -> None:
    """Draw the page; ``ctx``: the open dataset and the sidebar's selection."""
    st.title("LLM vs human teams")
    dataset, frame, have = ctx.opened()
    page_context.says_what_is_missing(ctx)  # then what the page can show without it
    # Figure 1's sample (LLM-team and human ideas, baselines apart) when it has both sources here;
    # otherwise every row (e.g. paper B debates), said in the caption under the selectbox
    try:
        paper_ideas = samples.select(frame, "ideas")
        default_sample = "ideas" if paper_ideas["source"].nunique() == 2 else "all"
    except InputError:
        default_sample = "all"
    sample_name, frame = sample_picker.pick(st, frame, key="lvh_sample", default=default_sample)
    ui.export_context(sample=samples.sample(sample_name).title,
                      n="; ".join(f"{s} {c:,}" for s, c in frame["source"].value_counts().items()))

    c1, c2, c3 = st.columns(3)
    notice = st.container()
    features, outcomes = list(have.features), list(have.ratings)
    tab_features, tab_ratings, tab_published = st.tabs(["Trajectory features", "Ratings", "Published"], key="lvh_tabs")
    # each tab's choices in their place first, then the numbers, then what is shown, in the tabs' order
    feature_picker, feature_part = tab_features.container(), tab_features.container()
    rating_charts, rating_picker, rating_part = tab_ratings.container(), tab_ratings.container(), tab_ratings.container()
    chosen = feature_picker.multiselect("Features", features, default=features, key="lvh_features") if features else []
    outcome = rating_picker.selectbox("Outcome for the top-5% view", outcomes, key="lvh_top_outcome") if outcomes else None
    data = llm_vs_human_page_data(frame, chosen if features else None, outcome, outcomes, compute=cached)

    c1.metric("LLM conversations", f"{data.n_llm:,}")
    c2.metric("Human conversations", f"{data.n_human:,}")
    if not data.both:
        notice.info("This selection has fewer than two conversations of one source: group comparisons "
                    "need both LLM and human teams (the paper release has both). Distributions are shown "
                    "for what is here.")

    with feature_part:
        if not features:
            st.info("No trajectory features in this dataset.")
        else:
            ui.chart(st, cached.chart("distributions_by_group", frame, chosen, title="Trajectory features by source "
                                                          "(box = quartiles, dashed = mean)"),
                            key="lvh_feature_boxes", outcome="the trajectory features (Table 19)")
        if data.effects is not None:
            c3.metric("Features compared", len(data.effects))
            ui.ours("LLM − human: Hedges' g with 95% CI, Welch's t-test")
            ui.caveat(st, analyses.EFFECT_NOTE, "caption")
            ui.table(st, labels.regression_table(data.effects, 4), key="lvh_effects", hide_index=True)
            ui.chart(st, cached.chart("effect_size_forest", data.effects, "Hedges' g (95% CI from Welch's statistic)",
                                      value="g", x_title="Hedges' g (LLM − human)"), key="lvh_forest",
                     outcome="Hedges' g, LLM − human, of each trajectory feature")

    with rating_charts:
        if not outcomes:
            st.info("No ratings (novelty, usefulness, creativity) in this dataset: the paper release "
                    "does not include them. Join the authors' `ideas_with_ratings_clean.csv` on the Data "
                    "page, or open a dataset with judge ratings. The published Table 5 is in the next tab.")
        else:
            ui.chart(st, cached.chart("distributions_by_group", frame, outcomes, title="Ratings by source"),
                     key="lvh_rating_boxes", outcome=", ".join(outcomes))
            if {"novelty", "usefulness"} <= set(outcomes):
                ui.chart(st, cached.chart("novelty_usefulness_scatter", frame), key="lvh_scatter", outcome="novelty and usefulness")

    with rating_part:
        if data.top_error:
            st.warning(ui.escape(data.top_error))
        elif data.top is not None:
            overall = data.top
            ui.ours(f"Who is in the pooled top 5% of {outcome} (threshold = 95th percentile "
                    f"{overall['threshold'].iloc[0]:.3f})")
            ui.table(st, overall.drop(columns="by").round(4), key="lvh_top_table", hide_index=True)
            ui.chart(st, cached.chart("top_share_bar", overall, title=f"Share of the top 5% of {outcome}"),
                     key="lvh_top_bar", outcome=f"share of the pooled top 5% of {outcome}")
            ui.ours(f"Figure 1c-d: each group's own 95th percentile and its best 5% (int(5% of n) "
                    f"ideas of each group) on {outcome}")
            ui.table(st, data.within.round(4), key="lvh_p95", hide_index=True)
        if data.rating_effects is not None:
            ui.ours("LLM − human on the ratings: Hedges' g with 95% CI, Welch's t-test")
            ui.caveat(st, analyses.EFFECT_NOTE, "caption")
            ui.table(st, labels.regression_table(data.rating_effects, 4), key="lvh_rating_effects", hide_index=True)

    with tab_published:
        ui.published("Paper A, Table 5: creativity ratings by task and group, mean (SD), scaled to [0, 1]")
        ui.table(st, published_a.table5(), key="lvh_table5", hide_index=True)
        st.caption("These ratings come from five human raters per idea in the paper; they are not "
                   "recomputed here unless ratings are imported.")
    notebook_button.render("llm_vs_human", {"sample": sample_name, "features": list(chosen) if features else None,
                                            "outcome": outcome})


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
