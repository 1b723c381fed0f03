"""Diversity page: Vendi Score and Div-BLEU by full condition (method, lenses, peers, k, N,
R, model, temperature, consensus) and task, intra-session diversity across debate rounds,
inter-session PCA of final outputs (paper B, sections 6 and 7), and the consensus bias
check (unreadable picks, which agents the final outputs came from)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.page_data import diversity as diversity_data
from dashboard.widgets import cached, notebook_button, page_context, ui
from dashboard.widgets.resources import get_embedder
from engine.stats import published_b
from engine.stats.guards import not_comparable


def render(ctx: page_context.PageContext) -> None:
    """Draw the page; ``ctx``: the open dataset and the sidebar's selection."""
    st.title("Diversity")
    dataset, frame, have = ctx.opened()

    if page_context.says_what_is_missing(ctx):  # set-level diversity needs paper B's runs: the paper's gains only
        ui.published("Paper B, section 6: Creative-MAD's diversity gain over Homo MAD")
        ui.table(st, published_b.diversity_gains(), key="div_published", hide_index=True)
        notebook_button.render("diversity", {})
        st.stop()

    methods = st.multiselect("Methods", list(have.paper_b_methods), default=list(have.paper_b_methods),
                             key="div_methods")
    group_size = st.number_input("Runs per diversity group", min_value=2, max_value=15, value=5,
                                 key="div_group_size", help="Paper B: 15 runs per query in 3 groups of 5.")
    st.caption(f"Paper B's protocol (the default): the runs of one condition on one query are split into "
               f"groups of {int(group_size)} (15 runs → 3 groups of 5); Vendi and Div-BLEU are computed per "
               f"group and averaged. A condition is everything that defines a run (method, lenses, peers, k, "
               f"N, R, model, temperature, consensus), so runs that differ are never pooled.")
    @st.cache_data(show_spinner=False, max_entries=16)
    def output_map(selection: pd.DataFrame, chosen: tuple[str, ...]) -> pd.DataFrame:
        return diversity_data.final_output_map(selection, chosen, get_embedder().encode)

    notebook_button.render("diversity", {"methods": list(methods), "group_size": int(group_size)})
    if not methods:
        st.warning("Choose at least one method.")
        st.stop()
    chosen = tuple(methods)
    data = diversity_data.diversity_page_data(dataset, frame, chosen, get_embedder().encode, group_size=int(group_size),
                                              turns=have.turns, compute=cached)
    inter = data.inter
    ui.export_context(sample=f"paper-B sessions with a final output ({', '.join(chosen)}), groups of {int(group_size)} runs",
                      n=f"{int(inter['n_runs'].sum()):,} runs" if "n_runs" in inter else None)
    ui.ours(f"Inter-session diversity of final outputs per condition, groups of {int(group_size)} runs")
    metric_columns = st.columns(2)
    paper_gains = published_b.diversity_gains().set_index("model")
    made_by = data.made_by
    ours_label = f"{made_by}, {data.headline_rows:,} runs" if made_by else ""
    for column, metric, published_column in zip(metric_columns, ("vendi", "div_bleu"),
                                                ("semantic (Vendi) gain %", "lexical (Div-BLEU) gain %")):
        gain = data.gains[metric]
        column.metric(f"Creative-MAD vs Homo MAD, {metric}" + (f" ({ours_label})" if made_by else ""),
                      "n/a" if gain is None else f"{gain:+.1f}%")
        interval = data.intervals[metric]
        if interval is not None:
            groups = interval["groups"]
            basis = (f"over {groups['creative_mad']} Creative-MAD and {groups['homo_mad']} Homo MAD groups of "
                     f"{int(group_size)} runs ({interval['cells']['creative_mad']} and {interval['cells']['homo_mad']} "
                     "task cells)")
            if interval["low"] is None and interval.get("reason"):
                column.caption(ui.escape(f"No interval: {interval['reason']}; {basis}."))
            elif interval["low"] is None:
                column.caption(f"No interval: {interval['single_group_cells']} cell(s) have a single group, so the "
                               f"spread between groups is unknown; {basis}. Smaller groups or more runs give one.")
            else:
                column.caption(f"{100 * interval['level']:.0f}% bootstrap interval [{interval['low']:+.1f}%, "
                               f"{interval['high']:+.1f}%], {interval['n_boot']:,} resamples of the groups {basis}.")
        column.caption(f":orange-badge[published] paper B, section 6: "
                       + ", ".join(f"{model} {value:+.1f}%" for model, value in paper_gains[published_column].items()))
        if made_by:
            ui.caveat(column, not_comparable(published_b.MODELS, ours_label), "caption")
    short = data.short
    if len(short):
        single = int((short["n_runs"] < 2).sum())
        ui.caveat(st, f"{len(short)} condition/task cell(s) have fewer than {int(group_size)} runs and get no "
                      f"diversity value" + (f"; {single} of them have a single text (diversity undefined)" if single else "")
                      + ". See the 'warning' column.", "warning")
    # the per-group arrays are not drawn, and a frame holding arrays cannot be hashed (chart cache)
    by_condition = data.by_condition
    vendi_bars = cached.chart("diversity_bars", by_condition, "vendi", "Vendi Score (semantic)")
    ui.chart(st, vendi_bars, key="div_vendi", show_key=False, outcome="Vendi Score of the final outputs")
    ui.chart(st, cached.chart("diversity_bars", by_condition, "div_bleu", "Div-BLEU (lexical)"), key="div_bleu", show_key=False,
             outcome="Div-BLEU of the final outputs")
    st.caption(data.spread_note())
    ui.condition_key(st, vendi_bars, key="div_codes")
    ui.table(st, data.shown.round(4), key="div_inter_table", hide_index=True)

    consensus = data.consensus
    if len(consensus):
        ui.ours("Consensus bias check: unreadable picks and where the final outputs came from")
        st.caption("A final output that always comes from one agent makes inter-session diversity measure that "
                   "agent. Unreadable judge picks are asked again, then resolved by a seeded random pick.")
        ui.table(st, consensus.round(3), key="div_consensus", hide_index=True)

    st.subheader("Intra-session diversity across rounds (section 7.2)")
    if not have.turns:
        st.info("No turns in this dataset: per-round diversity needs the debate transcripts.")
    else:
        intra = data.intra
        if intra.empty:
            st.info("No session has two or more responses in a round.")
        else:
            intra_vendi = cached.chart("rounds_lines", intra, "vendi")
            ui.chart(st, intra_vendi, key="div_intra_vendi", show_key=False)
            ui.chart(st, cached.chart("rounds_lines", intra, "div_bleu"), key="div_intra_bleu", show_key=False)
            ui.condition_key(st, intra_vendi, key="div_intra_codes")

    st.subheader("Inter-session map of final outputs (section 7.3)")
    tasks = sorted(frame.loc[frame["discussion"].isin(chosen), "task"].dropna().unique())
    task = st.selectbox("Task", tasks, key="div_task") if tasks else None
    if task is not None:
        points = output_map(frame[frame["task"] == task], chosen)
        if points.empty:
            st.info("Fewer than three final outputs for this task.")
        else:
            ui.chart(st, cached.chart("scatter_map", points, "method", f"Final outputs, PCA ({task})"),
                            key="div_map")

    if data.by_benchmark is not None:  # tasks from paper B's benchmarks (the dataset's benchmark_of_task)
        st.subheader("Per benchmark (paper B, section 6)")
        ui.ours(f"Inter-session diversity per benchmark and method, groups of {int(group_size)} runs")
        ui.table(st, data.by_benchmark.round(4), key="div_by_benchmark", hide_index=True)
        ui.beside("Creative-MAD vs Homo MAD per benchmark: ours beside paper B's published gains",
                  published_b.POOLED_SCOPE)
        ui.table(st, data.benchmark_gains.round(1), key="div_benchmark_gains", hide_index=True)
        ui.caveat(st, not_comparable(published_b.MODELS, ours_label or "this dataset's model")
                  + "; and paper B's gains are pooled over its four benchmarks.", "caption")

    ui.published("Paper B, section 6: Creative-MAD's diversity gain over Homo MAD")
    ui.table(st, published_b.diversity_gains(), key="div_published", hide_index=True)


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
