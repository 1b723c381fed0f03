"""The sidebar shown on every page: dataset choice and the filters every page respects."""

from __future__ import annotations

import streamlit as st

from dashboard.page_data import datasets
from dashboard.widgets import cached, session, ui


def _reset_filters() -> None:
    for column in datasets.FILTER_COLUMNS:
        st.session_state.pop(f"filter_{column}", None)


def render() -> None:
    with st.sidebar:
        choices = session.dataset_choices()
        if not choices:
            st.warning("No dataset in cached_runs/: build one with "
                       "`python -m engine.dataset_builds.paper_release` or upload a file on the Data page.")
            return
        pending = st.session_state.pop("pending_dataset_choice", None)
        if pending in choices:
            st.session_state[session.DATASET_KEY] = pending
            _reset_filters()
        if st.session_state.get(session.DATASET_KEY) not in choices:
            st.session_state[session.DATASET_KEY] = choices[session.default_choice(choices)]
        st.selectbox("Dataset", choices, key=session.DATASET_KEY, on_change=_reset_filters,
                     format_func=session.choice_label)
        dataset = session.current_dataset()
        note = dataset.not_computed_note()  # registered features it cannot have, and why
        if note:
            st.caption(ui.escape(note))
        options = cached.kept("filter_options", (cached.frame_fingerprint(dataset.conversations),),
                              lambda: datasets.filter_options(dataset.conversations))
        st.caption("Filters (empty = all)")
        for column, values in options.items():
            key = f"filter_{column}"
            kept = [v for v in st.session_state.get(key) or [] if v in values]
            st.session_state[key] = kept
            st.multiselect(column.replace("_", " "), values, key=key, placeholder="all")
        shown = session.filtered_conversations()
        st.caption(f"{len(shown):,} of {len(dataset.conversations):,} conversations selected")
