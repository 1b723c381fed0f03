"""Creativity Dynamics Lab: the Streamlit entry point (``streamlit run dashboard/app.py``).

One ``st.navigation`` over the pages of the page registry (``dashboard.pages``): each page is its
view module's file (``dashboard/views/<key>.py``, at the URL ``/<key>``), whose two last lines call
its ``render(ctx)`` with the open dataset and the sidebar's selection
(``dashboard.widgets.page_context.show``); a page by file keeps ``AppTest.switch_page`` and the
browser tests' URLs working. The sidebar holds the dataset choice and the filters every page
respects (see ``dashboard.widgets.session``).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import streamlit as st  # noqa: E402

from dashboard import pages  # noqa: E402
from dashboard.widgets import sidebar  # noqa: E402
from engine.maps.warm_up import warm_up_in_background  # noqa: E402

# UMAP's compiled code loaded (or compiled once, into the on-disk cache) while the first page
# renders, so switching the map to UMAP does not wait for it; once per process, off with
# CDL_UMAP_WARMUP=0
warm_up_in_background()

st.set_page_config(page_title="Creativity Dynamics Lab", page_icon=":material/hub:", layout="wide")

from dashboard.widgets import ui  # noqa: E402

PAGES = [st.Page(page.path, title=page.title, icon=page.icon, url_path=page.url_path, default=page.default)
         for page in pages.PAGES]
navigation = st.navigation(PAGES, expanded=True)  # every page listed: no "View more"
st.session_state["current_page_title"] = navigation.title

ui.start_page()
sidebar.render()
navigation.run()
