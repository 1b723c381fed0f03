"""regression page (in progress)."""
import streamlit as st

st.title("regression")
st.info("coming")
