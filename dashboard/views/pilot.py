"""pilot page (in progress)."""
import streamlit as st

st.title("pilot")
st.info("coming")
