"""Jupyter notebooks that reproduce a page: "Download as notebook" on every page.

The dashboard is the quick look; the notebook is the record. ``notebook(selection)`` writes
(``nbformat``) a notebook that loads the page's dataset (``engine.datasets.Dataset``), applies
its sidebar filters, sample and options, and computes the page's numbers and figures with the
same public functions the page calls: its ``page_data`` function (``dashboard.pages`` names it)
for the numbers, ``dashboard.figures`` for the charts. Its last cell,
``page_numbers``, prints the numbers the page shows as JSON, so a test can check that the
notebook and the page agree.

No Streamlit here: ``dashboard.widgets.notebook_button`` puts the button on the pages.
Text from users and files (dataset names, filters, a search phrase) only ever enters a code
cell as a Python literal (``repr``), never a markdown cell.
"""

from dashboard.notebooks.build import Selection, notebook, notebook_bytes  # noqa: F401
