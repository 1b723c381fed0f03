"""The notebook of one page (see ``dashboard.notebooks``): a preamble that loads the dataset and
applies the filters, the page's own cells (its recipe, named in the page registry
``dashboard.pages``), and the ``page_numbers`` cell that prints, as JSON, the numbers the page
shows."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import nbformat

from dashboard import pages
from dashboard.notebooks.cells import code, md

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Selection:
    """What a page shows: its dataset folder, the sidebar filters, the page's own options (a
    JSON-able dict: sample, outcome, chosen features...)."""

    page: str
    dataset: str
    filters: dict[str, list[str]] = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    dataset_name: str = ""

    def __post_init__(self) -> None:
        if self.page not in pages.keys():
            raise ValueError(f"unknown page {self.page!r}; pages: {', '.join(pages.keys())}")
        self.filters = {str(k): [str(v) for v in values] for k, values in (self.filters or {}).items() if values}
        json.dumps(self.options)  # options must be plain data: they are written into the notebook


PREAMBLE = '''
import json
import sys
from pathlib import Path

REPO = Path({repo!r})  # the project this notebook was written from
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np
import pandas as pd

from dashboard.page_data.datasets import apply_filters, availability
from engine.datasets import Dataset

DATASET = Path({dataset!r})
FILTERS = {filters!r}  # the sidebar's filters (empty = every row)
OPTIONS = {options!r}  # the page's own choices

dataset = Dataset.load(DATASET)
frame = apply_filters(dataset.conversations, FILTERS)
have = availability(dataset)
print(f"dataset {{dataset.name}}: {{len(frame):,}} of {{len(dataset.conversations):,}} conversations selected; "
      f"filters: {{FILTERS or 'none'}}")
'''

NUMBERS = '''
def plain(value):
    """A number or table as JSON-able data (tables: index, columns, data)."""
    if isinstance(value, pd.DataFrame):
        return json.loads(value.to_json(orient="split", double_precision=10, default_handler=str))
    if isinstance(value, pd.Series):
        return plain(value.to_frame())
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


print(json.dumps(plain(page_numbers), default=str))
'''


def notebook(selection: Selection, *, repo: Path = REPO_ROOT) -> nbformat.NotebookNode:
    """The page's notebook for ``selection`` (validated by nbformat)."""
    page = pages.page(selection.page)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cells = [
        md(f"""
# {page.title}: the page as a notebook

Written by the Creativity Dynamics Lab dashboard ({when}). It loads the page's dataset, applies the
sidebar's filters and the page's options, and computes the page's numbers and figures with the same
functions the page calls: `engine` (statistics, projections, diversity) and `dashboard.page_data` /
`dashboard.figures` (the tables and charts the page assembles). Run it with the project's Python
(the `.venv` that `make install` creates); the last cell prints the page's numbers as JSON.
"""),
        code(PREAMBLE.format(repo=str(repo), dataset=str(selection.dataset), filters=selection.filters,
                             options=selection.options), "setup"),
    ]
    cells += pages.load(page.notebook)(selection)
    cells.append(md("## The page's numbers\n\nWhat the page shows, as JSON (tables: index, columns, data)."))
    cells.append(code(NUMBERS, "page-numbers"))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["creativity_dynamics_lab"] = {"page": selection.page, "dataset": str(selection.dataset),
                                              "filters": selection.filters, "options": selection.options}
    nbformat.validate(nb)
    return nb


def notebook_bytes(selection: Selection, *, repo: Path = REPO_ROOT) -> bytes:
    return nbformat.writes(notebook(selection, repo=repo)).encode("utf-8")


def file_name(selection: Selection) -> str:
    import re

    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", f"{selection.page}_{selection.dataset_name or Path(selection.dataset).name}")
    return f"{stem.strip('_')}.ipynb"
