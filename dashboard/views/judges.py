"""Judges page: how far a judge (or semantic distance) agrees with people, on items people rated
(``engine.judging.validate``; the reports of ``python -m engine judge validate``), with the
published anchors kept apart."""

from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

from dashboard.figures import judges as judge_figures
from dashboard.page_data import judges as jd
from dashboard.page_data.datasets import cached_runs_root
from dashboard.page_data.uploads import check_upload
from dashboard.widgets import notebook_button, page_context, ui
from dashboard.widgets.resources import get_embedder
from engine.errors import InputError


def render(ctx: page_context.PageContext) -> None:
    """Draw the page; ``ctx``: the open dataset and the sidebar's selection."""
    REPORT_KEY = "judges_report"

    st.title("Judges")
    st.caption("Every creativity score of our own runs comes from an LLM judge. This page says how far a judge "
               "agrees with people on items people rated: correlations with 95% intervals, weighted kappa where "
               "the judge answers on the people's scale, the people's own agreement where a file has several raters, "
               "the largest disagreements and a calibration table. Make a judge's report with "
               "`python -m engine judge validate FILE --measure judge --judge-model ... --out REPORT.json`. The sidebar's "
               "dataset and filters do not apply here: each block names the file it rests on.")

    root = cached_runs_root()
    saved = jd.saved_reports(root)
    files = jd.rated_files(root)
    source = st.radio("Source", ["A saved validation report", "Semantic distance on a rated file", "A report file (JSON)"],
                      horizontal=True, key="judges_source")
    report, report_path = None, None
    try:
        if source == "A saved validation report":
            if not saved:
                st.info("No validation report under the cached runs (cached_runs/human_ratings/*/reports/).")
            else:
                labels = list(saved)
                default = next((i for i, label in enumerate(labels) if "judge" in label), 0)
                label = st.selectbox("Report", labels, index=default, key="judges_saved")
                report_path = saved[label]
                report = jd.read_report(report_path.read_bytes(), str(report_path))
        elif source == "Semantic distance on a rated file":
            choices = [*files, "(upload a rated file)"]
            chosen = st.selectbox("Rated file", choices, key="judges_file")
            scale = st.selectbox("Scale of an ideas file (N*/U* rater columns)", ["(a file of items)", "novelty",
                                                                                  "usefulness"], key="judges_scale")
            scale = None if scale.startswith("(") else scale
            path = files.get(chosen)
            if chosen == "(upload a rated file)":
                upload = st.file_uploader("Rated items (.csv, .jsonl, .parquet)", type=["csv", "jsonl", "parquet"],
                                          key="judges_upload")
                if upload is not None:
                    suffix = check_upload(upload.name, upload.getvalue())
                    folder = Path(tempfile.mkdtemp(prefix="cdl-judges-"))
                    path = folder / f"upload{suffix}"
                    path.write_bytes(upload.getvalue())
            if path is not None and st.button("Score with semantic distance", key="judges_compute"):
                embedder = get_embedder()
                with st.spinner("Embedding prompts and responses…"):
                    st.session_state[REPORT_KEY] = jd.semdis_report(path, embedder.encode, embedder.model_name, scale)
            report = st.session_state.get(REPORT_KEY)
        else:
            upload = st.file_uploader("Validation report (.json)", type=["json"], key="judges_report_upload")
            if upload is not None:
                check_upload(upload.name, upload.getvalue())
                report = jd.read_report(upload.getvalue(), upload.name)
    except InputError as error:
        st.error(ui.escape(error))
        report = None

    notebook_button.render("judges", {"report": str(report_path) if report_path else None})
    if report is None:
        st.stop()

    data = jd.judges_page_data(report)
    ui.export_context(rests_on=data.provenance, n=f"{report.get('n', 0):,} items")
    ui.ours("The measure against people (ours)")
    st.caption(ui.escape(data.provenance))
    if report.get("unreadable"):
        ui.caveat(st, f"{report['unreadable']:,} items had no readable score from the measure: counted and left out, "
                      "never filled.", "warning")
    ui.table(st, data.summary.round(4), key="judges_summary", hide_index=True, n=f"{report.get('n', 0):,} items")
    left, right = st.columns(2)
    with left:
        ui.chart(st, judge_figures.agreement_scatter(data.scores, data.measure_label, data.human_label,
                                                     "Each item: the measure against the people's mean"),
                 key="judges_scatter", n=f"{report.get('n', 0):,} items")
    with right:
        ui.chart(st, judge_figures.calibration_chart(data.calibration, data.measure_label, data.human_label,
                                                     "Calibration: the people's mean by bin of the measure"),
                 key="judges_calibration", n=f"{report.get('n', 0):,} items")

    ui.ours("The people's own agreement, and the measure beside them")
    if data.people.empty:
        st.caption(ui.escape(report.get("people_note") or "no people's agreement in this report"))
    else:
        ui.table(st, data.people.round(4), key="judges_people", hide_index=True)
    if not data.beside.empty:
        st.caption("Each rater, and the measure, against the mean of the other raters (Spearman): both face the same "
                   "panel of k − 1 people (paper B's way of setting a judge beside its annotators).")
        ui.table(st, data.beside.round(4), key="judges_beside", hide_index=True)
    st.caption(ui.escape(f"The judge's own raters: {data.panel}"))

    ui.ours("Per prompt")
    ui.table(st, data.per_prompt.round(4), key="judges_per_prompt", hide_index=True)
    ui.ours("The largest disagreements (percentile ranks)")
    st.caption("gap > 0: the measure ranks the item higher than the people do. Texts shown as text.")
    ui.table(st, data.disagreements.round(4), key="judges_disagreements", hide_index=True)
    ui.ours("Calibration table")
    ui.table(st, data.calibration.round(4), key="judges_calibration_table", hide_index=True)

    ui.published("Published anchors (other data, other statistics: never one scale with ours)")
    ui.table(st, data.published, key="judges_published", hide_index=True)


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
