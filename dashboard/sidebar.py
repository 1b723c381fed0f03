"""The sidebar shown on every page: dataset choice and the filters every page respects."""

from __future__ import annotations

import streamlit as st

from dashboard import data


def _reset_filters() -> None:
    for column in data.FILTER_COLUMNS:
        st.session_state.pop(f"filter_{column}", None)


def render() -> None:
    with st.sidebar:
        choices = data.dataset_choices()
        if not choices:
            st.warning("No dataset in cached_runs/: build one with "
                       "`python -m dashboard.build_paper_release` or upload a file on the Data page.")
            return
        pending = st.session_state.pop("pending_dataset_choice", None)
        if pending in choices:
            st.session_state[data.DATASET_KEY] = pending
            _reset_filters()
        if st.session_state.get(data.DATASET_KEY) not in choices:
            st.session_state[data.DATASET_KEY] = choices[data.default_choice(choices)]
        st.selectbox("Dataset", choices, key=data.DATASET_KEY, on_change=_reset_filters)
        dataset = data.current_dataset()
        options = data.filter_options(dataset.conversations)
        st.caption("Filters (empty = all)")
        for column, values in options.items():
            key = f"filter_{column}"
            kept = [v for v in st.session_state.get(key) or [] if v in values]
            st.session_state[key] = kept
            st.multiselect(column.replace("_", " "), values, key=key, placeholder="all")
        shown = data.filtered_conversations()
        st.caption(f"{len(shown):,} of {len(dataset.conversations):,} conversations selected")
