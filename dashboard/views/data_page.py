"""Data page: what the chosen dataset holds, a preview of the filtered rows, and uploads."""

from __future__ import annotations

import os

import streamlit as st

from dashboard.page_data import datasets, import_summary, uploads
from dashboard.pilot import history as pilot_history
from dashboard.widgets import cached, notebook_button, page_context, session, ui
from dashboard.widgets.resources import get_embedder
from engine.errors import InputError


def render(ctx: page_context.PageContext) -> None:
    """Draw the page; ``ctx``: the open dataset and the sidebar's selection."""
    st.title("Data")
    dataset, frame, have = ctx.opened()

    manifest = dataset.manifest
    if manifest.get("import_summary"):  # an upload: what the import did, before anything else
        with st.container(border=True, key="data_import_summary"):
            st.markdown("**Import summary**")
            st.text("\n".join(import_summary.summary_lines(manifest["import_summary"])))
    choices = session.dataset_choices()
    demonstrations = {n: label for n, label in session.demonstrations().items() if n in choices}
    current_demo = datasets.demonstration(manifest)
    if current_demo:
        st.info(f"**Local runs: a {ui.escape(current_demo)}.** They show the tool working end to end on "
                "real output of a small model; they are not findings about strong models.")
        if "paper_release" in choices and st.button("Back to the paper release (real data)", key="data_open_release"):
            st.session_state["pending_dataset_choice"] = "paper_release"
            st.rerun()
    elif demonstrations:
        st.caption("Local runs made with this tool, each a demonstration on a small model (one click opens it):")
        buttons = st.columns(len(demonstrations))
        for column, (name, label) in zip(buttons, demonstrations.items()):
            if column.button(f"{name}: {label.split(' (')[0]}", key=f"data_open_{name}",
                             help=f"A {label}."):
                st.session_state["pending_dataset_choice"] = name
                st.rerun()
    st.markdown(f"**{ui.escape(dataset.name)}**: {ui.escape(manifest.get('description', ''))}")
    if manifest.get("licence_note"):
        st.caption(f"Source: {ui.escape(manifest.get('source', 'unknown'))}. {ui.escape(manifest['licence_note'])}")
    if manifest.get("note"):  # how the data were made and what they cannot support
        st.warning(ui.escape(manifest["note"]))
    for key, heading in (("can_show", "What this dataset can show"), ("cannot_show", "What it cannot show")):
        if manifest.get(key):
            st.caption(heading)
            st.text("\n".join(f"- {line}" for line in manifest[key]))

    if manifest.get("ideas"):
        kinds = ", ".join(f"{k}: {v:,}" for k, v in manifest["ideas"].get("by_source_and_type", {}).items())
        st.caption(f"Idea-level data (one row per idea): {ui.escape(kinds)}"
                   + (f"; data_type inferred on {manifest['ideas']['data_type_inferred']} row(s)"
                      if manifest["ideas"].get("data_type_inferred") else ""))
    if manifest.get("ideas_with_metrics"):
        joined = manifest["ideas_with_metrics"]
        without = ", ".join(f"{k}: {v:,}" for k, v in joined.get("without_metrics_by", {}).items())
        st.caption(f"Trajectory features filled for {joined['with_metrics']:,} of {joined['ideas']:,} ideas; "
                   f"{joined['without_metrics']:,} have no conversation metrics ({ui.escape(without or 'none')}); "
                   f"{joined['metrics_without_idea']:,} conversations have no idea.")

    numbers = cached.kept("data_page", (cached.content_key(dataset), cached.selection_key(ctx.selections)),
                          lambda: datasets.data_page_data(frame))
    for column, (label, value) in zip(st.columns(4), numbers.headline.items()):
        column.metric(label, value)
    notebook_button.render("data_page")

    missing = [label for label, ok in (("turn texts", have.turns), ("turn embeddings", have.turn_embeddings),
                                       ("ratings (novelty/usefulness/creativity)", bool(have.ratings)),
                                       ("paper-B debate methods", bool(have.paper_b_methods))) if not ok]
    if missing:
        st.info("This dataset has no " + ", no ".join(missing) + ". Pages that need them say so; "
                "everything else works on what is here.")

    if numbers.by_model_and_task is not None:
        st.subheader("Conversations by model and task")
        ui.table(st, numbers.by_model_and_task, key="data_counts")

    st.subheader("Rows")
    ui.table(st, frame.head(500), key="data_rows", hide_index=True)
    st.caption(f"First {min(500, len(frame))} of {len(frame):,} rows; the Export page writes them all.")

    st.divider()
    st.subheader("Pilot run history")

    pilots = pilot_history.listing()
    st.caption(f"Every pilot run on the Pilot page is kept in {ui.escape(pilot_history.history_root())} "
               "(set CDL_PILOT_DIR to move it; API keys are never saved). Open one to explore it on every page.")
    if pilots.empty:
        st.caption("No pilot yet.")
    else:
        ui.table(st, pilots.drop(columns=["path"]), key="data_pilots", hide_index=True)
        chosen_pilot = st.selectbox("Pilot", list(pilots["name"]), key="data_pilot_choice")
        if st.button("Open this pilot", key="data_pilot_open"):
            st.session_state["pending_dataset_choice"] = session.PILOT_PREFIX + chosen_pilot
            st.rerun()

    st.divider()
    st.subheader("Upload a dataset")
    max_mb = float(os.environ.get("CDL_MAX_UPLOAD_MB", uploads.DEFAULT_MAX_MB))
    st.caption(f"CSV/TSV, JSONL or Parquet, at most {max_mb:g} MB: the paper's metrics CSV, a table "
               "with one row per conversation, or transcripts with one row per turn "
               "(`conversation_id, turn, speaker, text`, which are embedded on upload). "
               "Nothing uploaded is executed or unpickled; it stays in this session only.")
    upload = st.file_uploader("File", type=[s.lstrip(".") for s in uploads.ALLOWED_SUFFIXES], key="upload_file")
    with st.expander("Column mapping and metadata (optional)", expanded=False):
        mapping_text = st.text_input(
            "Column mapping", key="upload_map", placeholder="dialog_id=conversation_id, utterance=text",
            help="Rename your columns to ours before reading, as the CLI's --map: theirs=ours, comma-separated. "
                 "Transcripts need conversation_id, turn, speaker, text.")
        m1, m2, m3, m4 = st.columns(4)
        source_choice = m1.selectbox("Source", ["(from the file)", "llm", "human"], key="upload_source",
                                     help="Applied where the file has no source; without it, rows count as LLM.")
        metadata = {"source": "" if source_choice == "(from the file)" else source_choice,
                    "task": m2.text_input("Task", key="upload_task"),
                    "model": m3.text_input("Model", key="upload_model"),
                    "discussion": m4.text_input("Discussion", key="upload_discussion")}
        st.caption("Each field fills the rows where the file leaves it blank; the dataset's description "
                   "says what was set.")
        debate_labels = {"": "(not paper-B debates)",
                         "custom": "custom debate: a condition of its own, named by its protocol",
                         **{m: f"paper B's {m}" for m in import_summary.PAPER_B}}
        debate_as = st.selectbox(
            "Debates of other protocol names are", list(debate_labels), key="upload_debate_as",
            format_func=debate_labels.__getitem__,
            help="Transcripts whose protocol is none of the papers' methods (e.g. mad_debate) can be used on the "
                 "Diversity and Quality–Diversity pages, read as one of paper B's methods or as a custom debate. "
                 "Factors the file does not record (lenses, peer selection, consensus) are left unknown, never "
                 "assumed.")
    if upload is not None and st.button("Load this file", key="upload_load"):
        try:
            with st.spinner("Reading…"):
                loaded = uploads.read_upload(upload.name, upload.getvalue(), max_mb=max_mb,
                                             embedder_factory=get_embedder,
                                             mapping=uploads.parse_mapping(mapping_text), metadata=metadata,
                                             debate_as=debate_as or None)
        except InputError as error:
            st.error(f"Could not use this upload: {ui.escape(error)}")
            if "column mapping" in str(error) or "--map" in str(error):
                st.info("Rename your columns here: open “Column mapping and metadata” above and write "
                        "theirs=ours pairs (e.g. dialog_id=conversation_id, utterance=text), then load again.")
        else:
            label = session.add_upload(loaded.name, loaded)
            st.session_state["pending_dataset_choice"] = label
            st.success(f"Loaded {len(loaded.conversations):,} conversations as “{ui.escape(label)}”.")
            st.rerun()

    if {"file_id", "question_id"} <= set(dataset.conversations.columns) and not have.ratings:
        st.subheader("Add the authors' ratings")
        st.caption("The release's `ideas_with_ratings_clean.csv` (not redistributed here), recognised by "
                   "its columns: every idea is kept (none, progressive, baselines and human ideas too) and "
                   "gets the features of its conversation (file_id + question_id) where there is one. "
                   "A bare ratings table keyed by file_id + question_id is joined onto the conversations.")
        ratings = st.file_uploader("Ratings CSV", type=["csv"], key="ratings_file")
        if ratings is not None and st.button("Join ratings", key="ratings_join"):
            from engine.importers.ratings import join_ratings

            try:
                uploads.check_upload(ratings.name, ratings.getvalue(), max_mb)
                import tempfile
                from pathlib import Path

                from engine.importers.kinds import table_kind
                from engine.importers.ratings import ideas_with_metrics, read_ideas

                with tempfile.TemporaryDirectory(prefix="cdl-ratings-") as folder, \
                        uploads.named_as(ratings.name, Path(folder) / "ratings.csv"):
                    path = Path(folder) / "ratings.csv"
                    path.write_bytes(ratings.getvalue())
                    header = uploads.csv_header(path)
                    if table_kind(header) == "ideas":  # the authors' file: every idea kept
                        joined = ideas_with_metrics(read_ideas(path), dataset.conversations)
                        info = dict(joined.attrs["ideas_with_metrics"], ideas_path=ratings.name)
                        extra = {"ideas_with_metrics": info, "ideas": joined.attrs.get("ideas", {})}
                    else:  # a bare ratings table keyed like the metrics: joined onto them
                        joined = join_ratings(dataset.conversations, path)
                        extra = {"ratings_join": dict(joined.attrs.get("ratings_join", {}),
                                                      ratings_path=ratings.name)}
            except InputError as error:
                st.error(f"Could not join these ratings: {ui.escape(error)}")
            else:
                from engine.datasets import Dataset

                rated = Dataset(name=f"{dataset.name}+ratings", conversations=joined,
                                manifest=dict(manifest, **extra))
                st.session_state["pending_dataset_choice"] = session.add_upload(rated.name, rated)
                st.rerun()


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
