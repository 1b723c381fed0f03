"""Export page: every figure as PNG/SVG and interactive HTML, every table as CSV and LaTeX,
and a one-file HTML report of the current selection."""

from __future__ import annotations

import hashlib

import streamlit as st

from dashboard.exports import formats as export
from dashboard.exports import report
from dashboard.exports.stamp import stamp_figure
from dashboard.widgets import cached, notebook_button, page_context, ui


def render(ctx: page_context.PageContext) -> None:
    """Draw the page; ``ctx``: the open dataset and the sidebar's selection."""
    st.title("Export")
    dataset, frame, have = ctx.opened()
    selections = ctx.selections
    # the standard set is made once per dataset content and filters (its figures included)
    items = list(cached.figure("export_catalog", (cached.content_key(dataset), cached.selection_key(selections)),
                               lambda: report.catalog(dataset, frame, have, compute=cached, selections=selections)))
    shown = report.shown_as_items(ui.shown_items())
    context = report.selection_context(dataset, frame, ctx.selections)

    notebook_button.render("export", {})
    st.subheader("One-file HTML report")
    st.caption("Every item below in one self-contained HTML page (plotly.js inlined, opens offline, "
               "charts stay interactive), with the dataset, licence and filters on top.")
    # keyed by the dataset's content: a title typed for another dataset (or the one before an
    # upload) never names this one; the files' names follow the title
    title = st.text_input("Report title", value=f"Creativity dynamics: {dataset.name}",
                          key=f"export_title_{hashlib.sha1(repr(cached.content_key(dataset)).encode()).hexdigest()[:12]}")
    include_shown = st.checkbox(f"Also include the {len(shown)} figures and tables shown on the pages in this "
                                "session", value=False, key="export_include_shown", disabled=not shown)
    report_items = items + (shown if include_shown else [])
    st.download_button("Download the HTML report", key="export_report",
                       data=lambda: export.html_report(title, report_items, context=context).encode("utf-8"),
                       file_name=f"{export.slugify(title)}.html", mime="text/html", icon=":material/description:")

    figures = [item for item in report_items if item.figure is not None]
    limit_minutes = export.DECK_LIMIT_S / 60
    st.caption(f"The slide deck: each of the {len(figures)} figures as a 1600×900 PNG (zip), its provenance line on "
               f"the slide and in slides.txt. Made in one browser session (Chromium, kaleido), each slide within "
               f"{export.SLIDE_LIMIT_S:.0f} s and the whole deck within {limit_minutes:.0f} minutes; a slide that "
               f"fails is named here and in slides.txt. Text sized for a hall: title {export.SLIDE_TITLE_PX} px, "
               f"labels and legend at least {export.SLIDE_TEXT_PX} px, provenance {export.SLIDE_STAMP_PX} px.")
    deck_key = (title, cached.content_key(dataset)[1:], cached.selection_key(selections), include_shown,
                tuple(item.slug for item in figures))
    if st.button(f"Make the slide deck ({len(figures)} figures)", key="export_make_slides", disabled=not figures,
                 icon=":material/slideshow:"):
        with st.spinner(f"Rendering {len(figures)} slides (at most {limit_minutes:.0f} minutes)..."):
            try:
                st.session_state["export_slide_deck"] = (deck_key, export.make_slide_deck(report_items, context=context))
            except RuntimeError as error:
                st.session_state.pop("export_slide_deck", None)
                st.error(ui.escape(f"The slide deck could not be made: {error}"))
    made = st.session_state.get("export_slide_deck")
    if made and made[0] == deck_key:
        deck = made[1]
        if deck.failed:
            st.warning(ui.escape(f"{len(deck.failed)} of {len(figures)} slides could not be made: "
                                 + "; ".join(f"{name} ({reason})" for name, reason in deck.failed)))
        st.download_button(f"Download the slide deck ({len(deck.made)} slides, zip)", key="export_slides",
                           data=deck.data, file_name=f"{export.slugify(title)}_slides.zip", mime="application/zip",
                           icon=":material/download:")

    st.subheader("Figures and tables")
    st.caption("The standard set for this selection, then everything the other pages showed in this session "
               "(visit a page, come back, and its figures are here).")
    choices = items + shown
    names = [item.title for item in choices]
    name = st.selectbox("Item", names, key="export_item")
    item = choices[names.index(name)]
    st.caption(ui.escape(item.provenance_label(context)))
    st.caption("Written on every file exported from here: " + ui.escape(item.stamp(context).text()))
    for caveat in ([context["note"]] if context.get("note") else []) + item.caveats:
        st.caption(ui.escape(caveat))
    if item.figure is not None:
        st.plotly_chart(item.figure, key="export_preview", width="stretch")
        c1, c2, c3 = st.columns(3)
        c1.download_button("Interactive HTML", key="export_fig_html",
                           data=lambda: export.figure_to_html(stamp_figure(item.figure, item.stamp(context),
                                                                           width=1000)).encode("utf-8"),
                           file_name=f"{item.slug}.html", mime="text/html")
        for column, fmt in ((c2, "png"), (c3, "svg")):
            column.download_button(fmt.upper(), key=f"export_fig_{fmt}",
                                   data=lambda fmt=fmt: export.item_image(item, fmt, context),
                                   file_name=f"{item.slug}.{fmt}",
                                   mime="image/png" if fmt == "png" else "image/svg+xml")
    if item.table is not None:
        st.dataframe(item.table.head(200), key="export_table_preview")
        c1, c2 = st.columns(2)
        c1.download_button("CSV", key="export_table_csv", data=export.table_to_csv(item.table),
                           file_name=f"{item.slug}.csv", mime="text/csv")
        c2.download_button("LaTeX", key="export_table_latex",
                           data=lambda: export.item_latex(item, context).encode("utf-8"),
                           file_name=f"{item.slug}.tex", mime="text/x-tex")


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
