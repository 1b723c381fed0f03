"""diversity page (in progress)."""
import streamlit as st

st.title("diversity")
st.info("coming")
