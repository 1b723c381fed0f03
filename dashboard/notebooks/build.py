"""The notebook of one page (see ``dashboard.notebooks``): a preamble that finds the dataset by
name (beside the notebook, in ``$CDL_CACHED_RUNS``, in the checkout's ``cached_runs/``), loads it
and applies the filters, the page's own cells (written from the source of its recipe, named in the
page registry ``dashboard.pages``: ``cells.of_recipe``) and the ``page_numbers`` cell that prints,
as JSON, the page's headline numbers (``headline``) and tables."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import nbformat

from dashboard import pages
from dashboard.notebooks.cells import code, md, of_recipe

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


DATA_VARIABLE = "CDL_CACHED_RUNS"  # the folder of datasets the dashboard reads (dashboard.page_data.datasets)

PREAMBLE = """
import json
import os
import sys
from pathlib import Path

try:
    import engine
except ModuleNotFoundError:
    raise ModuleNotFoundError(f"this kernel's Python ({{sys.executable}}) has no Creativity Dynamics Lab engine: "
                              "run the notebook with the project's venv (make install), e.g. "
                              ".venv/bin/jupyter nbconvert --to notebook --execute --inplace NOTEBOOK") from None
import numpy as np
import pandas as pd

from dashboard.page_data.datasets import apply_filters, availability  # the sidebar's filter rule, the pickers' lists
from engine.datasets import Dataset

DATA_VARIABLE = {data_variable!r}


def find_data(reference, *, dataset: bool = True) -> Path:
    \"\"\"A dataset folder (one holding manifest.json; ``dataset=False``: a file) named by
    ``reference``, its path within a folder of datasets ("paper_release",
    "human_ratings/.../report.json"), looked for in this order: beside this notebook; in
    ${data_variable}; in the ``cached_runs/`` of the checkout the engine is imported from. A
    saved absolute path (an upload the dashboard saved elsewhere) is tried first, then its
    last part by the same rule. The error names every path tried.\"\"\"
    given = Path(str(reference)).expanduser()
    relative = Path(given.name) if given.is_absolute() else given
    tried = [given] if given.is_absolute() else []
    tried.append(Path.cwd() / relative)  # Jupyter and nbconvert run a notebook in its own folder
    if os.environ.get(DATA_VARIABLE, "").strip():
        tried.append(Path(os.environ[DATA_VARIABLE].strip()).expanduser() / relative)
    tried.append(Path(engine.__file__).resolve().parents[1] / "cached_runs" / relative)
    for path in tried:
        if (path / "manifest.json").is_file() if dataset else path.is_file():
            return path
    what = "dataset" if dataset else "file"
    raise FileNotFoundError(f"{{what}} {{str(relative)!r}} not found (tried: " + "; ".join(map(str, tried))
                            + f"): put it beside this notebook or set {{DATA_VARIABLE}} to the folder that holds it")


DATASET = find_data({dataset!r})
FILTERS = {filters!r}  # the sidebar's filters (empty = every row)
OPTIONS = {options!r}  # the page's own choices
dataset = Dataset.load(DATASET)


frame = apply_filters(dataset.conversations, FILTERS)
have = availability(dataset)  # what the dataset holds: features, ratings, paper B's methods
print(f"dataset {{dataset.name}} ({{DATASET}}): {{len(frame):,}} of {{len(dataset.conversations):,}} "
      f"conversations selected; filters: {{FILTERS or 'none'}}; engine from {{Path(engine.__file__).parent}}")
"""

NUMBERS = """
def plain(value):
    \"\"\"A number or table as JSON-able data (tables: index, columns, data); numbers stay numbers.\"\"\"
    if isinstance(value, pd.DataFrame):
        return json.loads(value.to_json(orient="split", double_precision=15, default_handler=str))
    if isinstance(value, pd.Series):
        return plain(value.to_frame())
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


print(json.dumps(plain({**page_numbers, "headline": headline}), default=str))
"""


DATASET_OPTIONS = ("folder", "pilot", "reference", "report")  # options naming a dataset or file (and "runs")


def notebook(selection: Selection, *, repo: Path = REPO_ROOT) -> nbformat.NotebookNode:
    """The page's notebook for ``selection`` (validated by nbformat)."""
    page = pages.page(selection.page)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    options = portable_options(selection.options, repo)
    cells = [
        md(f"""
# {page.title}: the page as a notebook

Written by the Creativity Dynamics Lab dashboard ({when}). It loads the page's dataset, applies the
sidebar's filters and the page's options, and computes the page's numbers with the engine's public
functions (`engine.stats`, `engine.samples`, `engine.measures`...; `dashboard.page_data` only where
no engine function holds the page's step), and its figures with `dashboard.figures`.

**Where the dataset is looked for** (`find_data`, first cell): by its folder name, first in a folder
of that name **beside this notebook**, then in the folder named by the environment variable
`{DATA_VARIABLE}`, then in the `cached_runs/` of the checkout the engine is imported from. A
dataset not found there stops the notebook with an error naming every path tried.

Run it with the project's Python (the `.venv` that `make install` creates, where `engine` and
`dashboard` are installed): `jupyter nbconvert --to notebook --execute --inplace <this file>`.
The `headline` cell holds the page's headline numbers as numbers (a table to read, formatted only
for display); the last cell prints them and the page's tables as JSON.
"""),
        code(PREAMBLE.format(data_variable=DATA_VARIABLE, dataset=dataset_reference(selection.dataset, repo),
                             filters=selection.filters, options=options), "setup"),
    ]
    cells += of_recipe(recipe_for(page, selection.options))
    cells.append(md("## The page's numbers\n\nThe headline numbers and the page's tables, as JSON "
                    "(tables: index, columns, data; numbers as numbers)."))
    cells.append(code(NUMBERS, "page-numbers"))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["creativity_dynamics_lab"] = {"page": selection.page,
                                              "dataset": dataset_reference(selection.dataset, repo),
                                              "filters": selection.filters, "options": options}
    nbformat.validate(nb)
    return nb


def recipe_for(page: pages.Page, options: dict):
    """The recipe (``dashboard.notebooks.recipes``) the page's notebook is written from: the one
    the registry names, or the one it names ``instead`` for these options."""
    recipe = pages.load(page.notebook)
    when, other = getattr(recipe, "instead", (None, None))
    return other if when is not None and when(options) else recipe


def data_folders(repo: Path) -> list[Path]:
    """The folders whose datasets a notebook finds by name: the dashboard's (``$CDL_CACHED_RUNS``
    or the checkout's ``cached_runs/``) and the checkout's ``cached_runs/``."""
    from dashboard.page_data.datasets import cached_runs_root

    return [cached_runs_root(), Path(repo) / "cached_runs"]


def dataset_reference(path: str, repo: Path = REPO_ROOT) -> str:
    """What the notebook writes for a dataset folder or a file of a folder of datasets: its path
    within one of ``data_folders`` ("paper_release"; no machine path: ``find_data`` looks it
    up), else its own path (an upload the dashboard saved under its cache folder)."""
    if not path:
        return ""
    for root in data_folders(repo):
        for inside, base in ((Path(path), Path(root)), (Path(path).resolve(), Path(root).resolve())):
            if inside != base and inside.is_relative_to(base):
                return inside.relative_to(base).as_posix()
    return str(path)


def portable_options(options: dict, repo: Path = REPO_ROOT) -> dict:
    """The page's options with every dataset folder (``DATASET_OPTIONS``, Compare's ``runs``)
    written as ``dataset_reference`` gives it, and Rate ideas' default ratings folder as None
    (``$CDL_RATINGS_DIR`` or the user's data folder of whoever runs the notebook)."""
    out = dict(options)
    for key in DATASET_OPTIONS:
        if isinstance(out.get(key), str) and out[key]:
            out[key] = dataset_reference(out[key], repo)
    if isinstance(out.get("runs"), dict):
        out["runs"] = {name: dataset_reference(path, repo) for name, path in out["runs"].items()}
    if out.get("ratings_dir"):  # the default ratings folder: the one of whoever runs the notebook
        from engine.judging.human_rating import ratings_root

        if Path(out["ratings_dir"]) == ratings_root():
            out["ratings_dir"] = None
    return out


def notebook_bytes(selection: Selection, *, repo: Path = REPO_ROOT) -> bytes:
    return nbformat.writes(notebook(selection, repo=repo)).encode("utf-8")


def file_name(selection: Selection) -> str:
    import re

    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", f"{selection.page}_{selection.dataset_name or Path(selection.dataset).name}")
    return f"{stem.strip('_')}.ipynb"
