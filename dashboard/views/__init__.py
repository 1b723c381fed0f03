"""Page scripts of the dashboard, one per page, run by ``st.navigation`` in ``app.py``."""
