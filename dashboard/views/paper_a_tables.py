"""Paper A's tables page: every table the data allow, on the paper's sample for that table,
ours beside the published one (``engine.stats.paper_tables``; the CLI twin is
``python -m engine analyze table N``)."""

from __future__ import annotations

import streamlit as st

from dashboard.page_data import beside
from dashboard.page_data.analyses import small_model
from dashboard.page_data.paper_a_tables import paper_a_tables_page_data
from dashboard.widgets import cached, notebook_button, page_context, ui
from engine import samples
from engine.errors import InputError
from engine.stats import paper_tables, published_a
from engine.stats.guards import not_comparable


def render(ctx: page_context.PageContext) -> None:
    """Draw the page; ``ctx``: the open dataset and the sidebar's selection."""
    st.title("Paper A tables")
    dataset, frame, have = ctx.opened()
    page_context.says_what_is_missing(ctx)  # then what the page can show without it

    keys = list(paper_tables.TABLES)

    def _name(key: str) -> str:
        definition = paper_tables.TABLES[key]
        return f"{'Figure 1' if key == 'fig1' else 'Table ' + key}: {definition.title}"

    left, middle, right = st.columns([2, 2, 1])
    # the selection's tables and labels, kept per dataset content and sidebar filters
    selection = (cached.content_key(dataset), cached.selection_key(ctx.selections))
    labels = cached.kept("pat_labels", selection,  # what the data lack, before choosing
                         lambda: {k: paper_tables.picker_label(k, frame) for k in keys})
    key = left.selectbox("Table", keys, format_func=labels.get, key="pat_table")
    definition = paper_tables.table_def(key)
    choices = list(cached.kept("samples_available", selection, lambda: samples.available(frame))) or [definition.sample]
    if definition.sample not in choices:
        choices = [definition.sample, *choices]
    if st.session_state.get("pat_sample_for") != key:  # a new table starts on the paper's sample
        st.session_state["pat_sample"] = definition.sample
        st.session_state["pat_sample_for"] = key
    sample_name = middle.selectbox("Sample", choices, key="pat_sample",
                                   format_func=lambda n: f"{samples.SAMPLES[n].title} ({samples.SAMPLES[n].tables})"
                                   + (" [the paper's]" if n == definition.sample else ""))
    stars = right.selectbox("Stars", ["paper", "conventional"], key="pat_stars",
                            help="paper: the levels the paper's table uses (Tables 7, 15, 20, 21: .10/.05/.01); "
                                 "conventional: .05/.01/.001")

    try:
        st.caption(ui.escape(samples.sample(sample_name).label(frame)) + ". "
                   + ui.escape(samples.sample(sample_name).description))
    except InputError as error:
        st.caption(ui.escape(str(error)))

    notebook_button.render("paper_a_tables", {"table": key, "sample": sample_name, "stars": stars})
    with st.spinner("Fitting…"):
        data = cached.figure("paper_a_table", (selection, key, stars, sample_name),
                             lambda: paper_a_tables_page_data(frame, key, sample_name, stars))
    result, compared = data.result, data.compared
    if data.agreement is not None:  # who rated the ideas, ratings per idea, their agreement (or why none)
        ui.caveat(st, "Ratings: " + data.agreement.text + " Against people: " + data.agreement.people + ".", "caption")
        if not data.agreement.table.empty:
            with st.expander("Raters' agreement by task and scale (ours; ICC(3,k) as paper A's Table 4)"):
                ui.table(st, data.agreement.table.round(3), key="pat_agreement", hide_index=True,
                         n=f"{data.agreement.n_items:,} rated ideas")
    if data.scale_note:
        ui.caveat(st, data.scale_note, "info" if data.held_apart else "caption")
    if data.lacking:
        st.info(ui.escape(f"{_name(key)} needs " + "; and ".join(data.lacking) + ". The authors' file is not "
                          "shipped here: load ideas_with_ratings_clean.csv on the Data page (Add the authors' "
                          "ratings). The published table is shown below."))
    elif data.error:
        st.warning(ui.escape(f"Cannot compute {_name(key)} on this selection: {data.error}"))

    published_table = definition.published() if definition.published else None
    where = f"Paper A, {'Figure 1' if key == 'fig1' else 'Table ' + key}"
    if result is not None:
        levels = result.star_levels
        sample_title = samples.sample(result.sample).title
        made_by = small_model(frame)
        if made_by:  # a small model's numbers beside the paper's: said before the first table
            sample_title += f" ({made_by})"
            ui.caveat(st, not_comparable(published_a.MODELS, f"{made_by}, N = {result.n:,} rows"), "caption")
        for position, (table, text) in enumerate(compared):
            ui.beside(f"{_name(key)}, {table.title}: {dataset.name}, {sample_title}, N fitted = {table.n_ours}",
                      f"{where} (N = {table.n_published or 'not printed'})")
            st.caption(ui.escape(f"{table.caption}. The sample has {result.n:,} rows; rows missing a value a fit "
                                 f"needs are left out of it. Ours rounded to the decimals the paper prints; "
                                 f"stars: * p < {levels[0]:g}, ** p < {levels[1]:g}, *** p < {levels[2]:g}."))
            ui.table(st, text, key=f"pat_beside_{key}_{position}", hide_index=True,
                     outcome=beside.outcome_of(key), sample=sample_title, n=f"{table.n_ours} fitted")
        title = "Ours in full (every column, unrounded)" if compared else None
        box = st.expander(title) if title else st.container()
        with box:
            if not compared:
                ui.ours(f"{_name(key)}: {dataset.name}, {sample_title}, {result.n:,} rows in the sample")
                st.caption(f"stars: * p < {levels[0]:g}, ** p < {levels[1]:g}, *** p < {levels[2]:g}")
            for position, (part_title, part) in enumerate(result.parts.items()):
                st.markdown(f"*{ui.escape(part_title)}*")
                ui.table(st, part, key=f"pat_ours_{key}_{position}", hide_index=True, outcome=beside.outcome_of(key),
                         sample=sample_title, n=f"{result.n:,} rows in the sample")
        for note in result.notes:
            st.text(f"note: {note}")
    if published_table is not None:
        box = st.expander(f"{where} as printed") if result is not None else st.container()
        with box:
            ui.published(where)
            ui.table(st, published_table, key=f"pat_published_{key}", hide_index=True, outcome=beside.outcome_of(key),
                     n=published_a.printed_n(key) or "as printed")
            for name, value in published_table.attrs.items():
                if hasattr(value, "to_dict"):
                    st.caption(f"published {ui.escape(name)}:")
                    ui.table(st, value, key=f"pat_published_{key}_{name}", hide_index=True)
                else:
                    st.text(f"published {name}: {value}")


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
