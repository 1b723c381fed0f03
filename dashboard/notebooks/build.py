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


REPO_VARIABLE = "CDL_REPO"  # the environment variable that names the checkout a notebook runs with

PREAMBLE = '''
import json
import os
import sys
from pathlib import Path


def project_folder() -> Path:
    """The project's checkout: the folder named by ${repo_variable}, else this notebook's folder
    or the first of its parents holding engine/ and dashboard/ (Jupyter and nbconvert run a
    notebook in its own folder)."""
    named = os.environ.get({repo_variable!r}, "").strip()
    here = Path.cwd().resolve()
    for folder in [Path(named).expanduser()] if named else [here, *here.parents]:
        if (folder / "engine" / "__init__.py").is_file() and (folder / "dashboard").is_dir():
            return folder.resolve()
    where = f"{repo_variable}={{named}}" if named else f"{{here}} or a folder above it"
    raise RuntimeError(f"the Creativity Dynamics Lab checkout is not at {{where}}: set {repo_variable} to the "
                       "checkout's folder, or put this notebook inside the checkout")


REPO = project_folder()
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np
import pandas as pd

from dashboard.page_data.datasets import apply_filters, availability
from engine.datasets import Dataset

DATASET = {dataset}
FILTERS = {filters!r}  # the sidebar's filters (empty = every row)
OPTIONS = {options!r}  # the page's own choices
if not (DATASET / "manifest.json").is_file():
    raise RuntimeError(f"the dataset folder {{DATASET}} (no manifest.json there) was not found: build it "
                       "(see the README) or change DATASET above")

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
(the `.venv` that `make install` creates), from a folder inside the checkout or with `{REPO_VARIABLE}`
set to it: `jupyter nbconvert --to notebook --execute --inplace <this file>`. The last cell prints
the page's numbers as JSON.
"""),
        code(PREAMBLE.format(repo_variable=REPO_VARIABLE, dataset=dataset_expression(selection.dataset, repo),
                             filters=selection.filters, options=selection.options), "setup"),
    ]
    cells += pages.load(page.notebook)(selection)
    cells.append(md("## The page's numbers\n\nWhat the page shows, as JSON (tables: index, columns, data)."))
    cells.append(code(NUMBERS, "page-numbers"))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["creativity_dynamics_lab"] = {"page": selection.page, "dataset": _shown_path(selection.dataset, repo),
                                              "filters": selection.filters, "options": selection.options}
    nbformat.validate(nb)
    return nb


def _shown_path(dataset: str, repo: Path) -> str:
    """A dataset folder inside the checkout relative to it (no machine path), else as given."""
    try:
        return Path(dataset).resolve().relative_to(Path(repo).resolve()).as_posix()
    except ValueError:
        return str(dataset)


def dataset_expression(dataset: str, repo: Path) -> str:
    """The notebook's ``DATASET``: ``REPO / "cached_runs/..."`` for a folder inside the checkout,
    so the notebook runs in any checkout; a folder outside it (an upload saved under the cache)
    by its own path."""
    shown = _shown_path(dataset, repo)
    return f"REPO / {shown!r}" if not Path(shown).is_absolute() else f"Path({shown!r})"


def notebook_bytes(selection: Selection, *, repo: Path = REPO_ROOT) -> bytes:
    return nbformat.writes(notebook(selection, repo=repo)).encode("utf-8")


def file_name(selection: Selection) -> str:
    import re

    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", f"{selection.page}_{selection.dataset_name or Path(selection.dataset).name}")
    return f"{stem.strip('_')}.ipynb"
