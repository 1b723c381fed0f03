"""Long-lived objects shared by every session (``st.cache_resource``): the embedder."""

from __future__ import annotations

import streamlit as st


@st.cache_resource(show_spinner="Loading the embedding model…")
def get_embedder():
    """The project's cached sentence embedder (bundled all-MiniLM-L6-v2, offline)."""
    from engine.embedding.embedder import Embedder

    return Embedder()
