"""The "Download as notebook" button every page shows (``dashboard.notebooks`` writes the
notebook). The page passes its own options; the dataset and the sidebar's filters come from
the session. The selection is kept in the session (``selection_key(page)``) so a test can
build the same notebook the button would give."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.notebooks import Selection, notebook_bytes
from dashboard.notebooks.build import file_name
from dashboard.widgets import session


def selection_key(page: str) -> str:
    return f"notebook_selection_{page}"


def dataset_folder(dataset) -> Path:
    """The dataset's folder; an upload (kept in this session only) is saved first, under the
    project's cache folder (``CDL_CACHE_DIR``), so the notebook can load it."""
    if dataset.path is not None and (Path(dataset.path) / "manifest.json").exists():
        return Path(dataset.path)
    import hashlib

    from engine.embedding.embedder import default_cache_path

    digest = hashlib.sha1(dataset.conversations.to_csv(index=False).encode("utf-8")).hexdigest()[:12]
    folder = default_cache_path().parent / "notebook_datasets" / f"{dataset.name}-{digest}"
    if not (folder / "manifest.json").exists():
        dataset.save(folder)
    return folder


def render(page: str, options: dict | None = None, *, where=None, dataset=None, filters=None) -> Selection:
    """The download button of ``page`` with the page's ``options`` (plain data)."""
    from dataclasses import replace

    where = where or st
    dataset = dataset if dataset is not None else session.current_dataset()
    saved = dataset is not None and dataset.path is not None
    selection = Selection(page=page, dataset=str(dataset.path) if saved else "",
                          filters=session.current_selections() if filters is None else filters,
                          options=dict(options or {}), dataset_name=dataset.name if dataset is not None else "")
    st.session_state[selection_key(page)] = selection

    def written() -> bytes:  # on click: an upload is saved only when its notebook is asked for
        folder = selection.dataset or (str(dataset_folder(dataset)) if dataset is not None else "")
        return notebook_bytes(replace(selection, dataset=folder))

    where.download_button("Download as notebook", key=f"notebook_{page}", data=written,
                          file_name=file_name(selection), mime="application/x-ipynb+json", icon=":material/code:",
                          help="A Jupyter notebook that computes this page's numbers and figures with the engine "
                               "on this dataset, filters and options: the record of what the page shows.")
    return selection
