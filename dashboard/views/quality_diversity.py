"""Quality–Diversity page: paper B's trade-off per condition (section 6), the Pareto
frontier, quality and intra-session diversity across rounds (sections 7.1, 7.2), the
ablation table (7.4), the consensus bias check, and the paper's published headlines."""

from __future__ import annotations

import streamlit as st

from dashboard.page_data import quality_diversity as qd
from dashboard.widgets import cached, notebook_button, page_context, ui
from dashboard.widgets.resources import get_embedder
from engine.stats import published_b
from engine.stats.guards import not_comparable


def render(ctx: page_context.PageContext) -> None:
    """Draw the page; ``ctx``: the open dataset and the sidebar's selection."""
    st.title("Quality–Diversity")
    dataset, frame, have = ctx.opened()
    GROUP = qd.GROUP

    if page_context.says_what_is_missing(ctx):  # the paper's headlines only
        ui.published("Paper B: headline results")
        ui.table(st, published_b.headlines(), key="qd_published", hide_index=True)
        notebook_button.render("quality_diversity", {})
        st.stop()

    methods = tuple(have.paper_b_methods)
    notebook_button.render("quality_diversity", {})
    numbers = qd.quality_diversity_page_data(dataset, frame, methods, get_embedder().encode, turns=have.turns,
                                             compute=cached)
    rubric, data, inter, summary = numbers.rubric, numbers.sessions, numbers.inter, numbers.summary
    ui.export_context(sample="paper-B sessions with a final output", n=f"{len(data):,} sessions")

    made_by = numbers.made_by
    st.caption(f"Dataset “{ui.escape(dataset.name)}”: {len(data):,} paper-B sessions with a final output "
               f"(sidebar filters applied), {data['task'].nunique()} task(s)"
               + (f", made by {ui.escape(made_by)}" if made_by else "") + f". Diversity: paper B's protocol, "
               f"runs of one condition and task split into groups of {GROUP} (15 runs → 3 groups), Vendi and "
               f"Div-BLEU per group. Quality: the judge's rubric score (1–10) of each final output; win rate: "
               f"average over the other conditions of pairwise comparisons asked in both orders, ties = 1/2.")
    ui.caveat(st, qd.INTERVALS, "caption")
    if numbers.agreement is not None:  # which judge, ratings per output, their agreement (or why none)
        ui.caveat(st, "Quality raters (rubric, final outputs): " + numbers.agreement["text"]
                  + " Against people: " + numbers.agreement["people"] + ".", "caption")
    if dataset.manifest.get("note"):
        ui.caveat(st, dataset.manifest["note"], "caption")
    if rubric.empty and summary["rubric"].notna().any():
        st.caption("Quality: the rubric scores the run's own judge gave the final outputs (no separate "
                   "`engine judge` records in this dataset: no win rates, no per-round quality).")
    elif rubric.empty:
        st.info("No judge ratings in this dataset: quality needs `python -m engine judge quality RUN_DIR` "
                "(and `judge pairwise`) on the run, then `python -m engine.dataset_builds.run_folder`.")
    short = numbers.incomplete
    if len(short):
        ui.caveat(st, f"{len(short)} condition × task cell(s) are incomplete (fewer than {GROUP} runs, or a "
                      f"partial last group left out); see the 'warning' column below.", "warning")

    ui.ours("Quality and diversity per condition" + (f" ({made_by})" if made_by else ""))
    shown = summary.drop(columns=["method"]).round(3)
    ui.table(st, shown, key="qd_summary", hide_index=True)

    vendi_figure = cached.chart("quality_diversity_scatter", summary, "vendi", "Vendi Score", summary["pareto (rubric × Vendi)"])
    ui.chart(st, vendi_figure, key="qd_vendi", show_key=False, outcome="rubric score (1–10) against Vendi Score")
    ui.chart(st, cached.chart("quality_diversity_scatter", summary, "div_bleu", "Div-BLEU", summary["pareto (rubric × Div-BLEU)"]),
             key="qd_bleu", show_key=False, outcome="rubric score (1–10) against Div-BLEU")
    ui.condition_key(st, vendi_figure, key="qd_codes")

    st.subheader("Across debate rounds (sections 7.1 and 7.2)")
    if not have.turns:
        st.info("No turns in this dataset: per-round views need the debate transcripts.")
    else:
        intra, rounds_quality = numbers.intra, numbers.rounds_quality
        if intra.empty:
            st.info("No session has two or more responses in a round.")
        else:
            ui.chart(st, cached.chart("rounds_lines", intra.assign(method=intra["condition"]), "vendi",
                                             "Intra-session Vendi across rounds (7.2)"), key="qd_intra")
        if rounds_quality.empty:
            st.info("No per-round ratings: run `python -m engine judge quality RUN_DIR --per-round`.")
        else:
            ui.chart(st, cached.chart("rounds_lines", rounds_quality.assign(method=rounds_quality["condition"]), "score",
                                             "Rubric score of the debaters' answers across rounds (7.1)"),
                     key="qd_round_quality")
            ui.table(st, rounds_quality.round(3), key="qd_round_quality_table", hide_index=True)

    st.subheader("Ablation (section 7.4)")
    ablation = numbers.ablation
    if ablation.empty:
        st.info("No debate conditions in the selection.")
    else:
        ui.ours("Lens and peer designs of the debates")
        ui.table(st, ablation.round(3), key="qd_ablation", hide_index=True)

    st.subheader("Consensus: how the final answers were picked")
    consensus = numbers.consensus
    if consensus.empty:
        st.info("No session in the selection records how its consensus was resolved.")
    else:
        st.caption("An unreadable judge pick is asked again, then resolved by a seeded random pick (never by "
                   "position); 'chose Agent i' counts the final answers taken from each agent: a bias check.")
        ui.table(st, consensus.round(3), key="qd_consensus", hide_index=True)

    ui.ours("Diversity per condition and task")
    ui.table(st, inter.drop(columns=["vendi_per_group", "div_bleu_per_group"]).round(4), key="qd_inter",
             hide_index=True)

    if numbers.by_benchmark is not None:  # tasks from paper B's benchmarks (the dataset's benchmark_of_task)
        st.subheader("Per benchmark (paper B, section 6)")
        ui.ours("Quality and diversity per benchmark and method (rubric: that benchmark's criteria)")
        ui.table(st, numbers.by_benchmark.round(3), key="qd_by_benchmark", hide_index=True)
        ui.beside("Creative-MAD's distance below the best quality score per benchmark: ours beside paper B's",
                  published_b.POOLED_SCOPE)
        ui.table(st, numbers.quality_gap.round(1), key="qd_quality_gap", hide_index=True)
        ui.caveat(st, not_comparable(published_b.MODELS, f"{made_by or 'this dataset'}, {len(data):,} runs")
                  + "; paper B compares six methods over its four benchmarks pooled, ours three per benchmark.",
                  "caption")

    if made_by:
        ui.caveat(st, not_comparable(published_b.MODELS, f"{made_by}, {len(data):,} runs"), "caption")
    ui.published("Paper B: headline results (" + published_b.SETUP + ")")
    ui.table(st, published_b.headlines(), key="qd_published", hide_index=True)
    ui.published("Paper B, section 7: findings stated in words")
    ui.table(st, published_b.ablation_findings(), key="qd_published_ablation", hide_index=True)


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
