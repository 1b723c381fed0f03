"""trajectories page (in progress)."""
import streamlit as st

st.title("trajectories")
st.info("coming")
