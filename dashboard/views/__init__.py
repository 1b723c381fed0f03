"""The dashboard's pages, one module per page, each a ``render(ctx)`` function the app (``app.py``) calls: layout and widgets only."""
