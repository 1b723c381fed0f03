"""Jupyter notebooks that reproduce a page: "Download as notebook" on every page.

The dashboard is the quick look; the notebook is the record. ``notebook(selection)`` writes
(``nbformat``) a notebook that finds the page's dataset by name (beside the notebook, in
``$CDL_CACHED_RUNS``, in the checkout's ``cached_runs/``; ``build.PREAMBLE``), loads it
(``engine.datasets.Dataset``), applies its sidebar filters, sample and options, and computes
the page's numbers with the engine's public functions (``engine.stats``, ``engine.samples``),
with the page's ``page_data`` function only where no engine function holds the step, and its
figures with ``dashboard.figures``. A ``headline`` cell holds the numbers the page leads with
as numbers; the last cell, ``page_numbers``, prints them and the page's tables as JSON, so a
test can run the notebook with ``jupyter nbconvert --execute`` and check that it and the page
agree.

No Streamlit here: ``dashboard.widgets.notebook_button`` puts the button on the pages.
Text from users and files (dataset names, filters, a search phrase) only ever enters a code
cell as a Python literal (``repr``), never a markdown cell.
"""

from dashboard.notebooks.build import Selection, notebook, notebook_bytes  # noqa: F401
