"""Creativity Dynamics Lab: the Streamlit entry point (``streamlit run dashboard/app.py``).

One ``st.navigation`` over the pages in ``dashboard/views/``; the sidebar holds the dataset
choice and the filters every page respects (see ``dashboard.widgets.session``).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import streamlit as st  # noqa: E402

from dashboard.widgets import sidebar  # noqa: E402

st.set_page_config(page_title="Creativity Dynamics Lab", page_icon=":material/hub:", layout="wide")

HERE = Path(__file__).parent
PAGES = [
    st.Page(HERE / "views" / "data_page.py", title="Data", icon=":material/table:", default=True),
    st.Page(HERE / "views" / "llm_vs_human.py", title="LLM vs human", icon=":material/groups:"),
    st.Page(HERE / "views" / "trajectories.py", title="Trajectories", icon=":material/timeline:"),
    st.Page(HERE / "views" / "design_levers.py", title="Design levers", icon=":material/tune:"),
    st.Page(HERE / "views" / "regression.py", title="Regression", icon=":material/functions:"),
    st.Page(HERE / "views" / "paper_a_tables.py", title="Paper A tables", icon=":material/table_chart:"),
    st.Page(HERE / "views" / "diversity.py", title="Diversity", icon=":material/scatter_plot:"),
    st.Page(HERE / "views" / "quality_diversity.py", title="Quality–Diversity", icon=":material/balance:"),
    st.Page(HERE / "views" / "steering.py", title="Steering", icon=":material/explore:"),
    st.Page(HERE / "views" / "pilot.py", title="Pilot", icon=":material/science:"),
    st.Page(HERE / "views" / "compare.py", title="Compare runs", icon=":material/compare_arrows:"),
    st.Page(HERE / "views" / "export.py", title="Export", icon=":material/download:"),
]

navigation = st.navigation(PAGES)
st.session_state["current_page_title"] = navigation.title
from dashboard.widgets import ui  # noqa: E402

ui.start_page()
sidebar.render()
navigation.run()
