"""Running a page's notebook and comparing its numbers with the page's (the notebook tests of
``test_notebooks.py`` and of a page's own test module): the page in AppTest, the selection its
"Download as notebook" button keeps, the notebook executed in one shared Jupyter kernel, and each
number compared to ``TOLERANCE`` and counted (``COMPARED``)."""

from __future__ import annotations

import json
import numbers
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from dashboard import pages

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
RUNS = REPO / "cached_runs"
TOLERANCE = 1e-9


# -- comparing numbers, counted --------------------------------------------------------------
COMPARED = {"numbers": 0, "max_difference": 0.0, "pages": set(), "seconds": {}}


def close(page: str, expected, got, what: str) -> None:
    """One number of the page against the notebook's, to ``TOLERANCE`` (both missing: equal)."""
    COMPARED["numbers"] += 1
    COMPARED["pages"].add(page)
    if expected is None or (isinstance(expected, float) and np.isnan(expected)):
        assert got is None or (isinstance(got, float) and np.isnan(got)), (page, what, expected, got)
        return
    assert isinstance(got, numbers.Real) and not isinstance(got, (bool, np.bool_)), (page, what, got)  # not text
    difference = abs(float(expected) - float(got))
    COMPARED["max_difference"] = max(COMPARED["max_difference"], difference)
    assert difference <= TOLERANCE * max(1.0, abs(float(expected))), (page, what, expected, got)


def table(value) -> pd.DataFrame:
    """A notebook's table (``to_json(orient="split")``) back as a DataFrame."""
    return pd.DataFrame(value["data"], index=value["index"], columns=value["columns"])


def same_table(page: str, expected: pd.DataFrame, notebook_value: dict, what: str) -> None:
    """Every numeric cell of ``expected`` against the notebook's table, text cells as text."""
    ours = table(notebook_value)
    assert list(map(str, ours.columns)) == list(map(str, expected.columns)), what
    assert len(ours) == len(expected), what
    for column in expected.columns:
        left, right = expected[column].reset_index(drop=True), ours[str(column)].reset_index(drop=True)
        if pd.api.types.is_bool_dtype(left):
            assert left.tolist() == right.tolist(), (what, column)
        elif pd.api.types.is_numeric_dtype(left):
            for position, value in enumerate(left):
                got = right[position]
                close(page, None if pd.isna(value) else float(value), None if got is None else got,
                      f"{what}[{column}][{position}]")
        else:
            assert left.astype(str).tolist() == right.astype(str).tolist(), (what, column)


# -- the page, its selection and its executed notebook --------------------------------------
def page(name: str, before=None, widgets=None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    if before is not None:
        before(at)
        at.run()
    if not pages.page(name).default:
        at.switch_page(pages.page(name).script).run()
    if widgets is not None:
        widgets(at)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def selection(at: AppTest, name: str):
    return at.session_state[f"notebook_selection_{name}"]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def shown(at: AppTest, key: str):
    """What the page showed under ``key`` (``dashboard.widgets.ui`` keeps it for the Export page)."""
    return at.session_state["shown_items"][key][2]


def execute(chosen, tmp_path: Path, datasets: tuple[str, ...]) -> dict:
    """The page's notebook as its button writes it, saved in ``tmp_path/downloads`` (outside the
    checkout) with a copy of ``datasets`` beside it, run in the module's one Jupyter kernel
    (``KERNEL``: the notebooks share it, each started on an empty namespace, in its own folder,
    with this test's ``CDL_*`` settings); its printed numbers."""
    import nbformat
    from nbclient import NotebookClient

    from dashboard.notebooks import notebook_bytes
    from dashboard.notebooks.build import file_name

    folder = tmp_path / "downloads"
    folder.mkdir(parents=True)
    assert not folder.resolve().is_relative_to(REPO.resolve())
    for name in datasets:
        shutil.copytree((RUNS / name).resolve(), folder / name)
    written = notebook_bytes(chosen)
    assert str(REPO) not in written.decode("utf-8") and str(tmp_path) not in written.decode("utf-8")
    path = folder / file_name(chosen)
    path.write_bytes(written)
    (tmp_path / "no_datasets").mkdir(exist_ok=True)
    settings = {**{k: v for k, v in os.environ.items() if k.startswith("CDL_")},
                "CDL_CACHED_RUNS": str(tmp_path / "no_datasets")}
    notebook = nbformat.reads(written.decode("utf-8"), as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(fresh_start(folder, settings)))
    started = time.perf_counter()
    NotebookClient(notebook, km=KERNEL.manager(), timeout=900, kernel_name="python3").execute()
    COMPARED["seconds"][chosen.page] = time.perf_counter() - started
    cells = notebook.cells[1:]
    printed = "".join("".join(o.get("text", "")) for c in cells if c["cell_type"] == "code"
                      for o in c.get("outputs", []) if o.get("output_type") == "stream")
    assert f"({folder / datasets[0]})" in printed  # the copy beside the notebook, by the notebook's rule
    assert f"engine from {REPO / 'engine'}" in printed  # the code under test
    cell = next(c for c in cells if "page-numbers" in c["metadata"].get("tags", []))
    return json.loads("".join("".join(o.get("text", "")) for o in cell["outputs"] if o.get("output_type") == "stream"))


def fresh_start(folder: Path, settings: dict[str, str]) -> str:
    """The code run before each notebook in the shared kernel: an empty namespace, the notebook's
    folder as the working folder (where Jupyter runs a notebook), and exactly these ``CDL_*``
    environment variables."""
    return (f"%reset -f\nimport os\nos.chdir({str(folder)!r})\n"
            "for _name in [k for k in os.environ if k.startswith('CDL_')]:\n    del os.environ[_name]\n"
            f"os.environ.update({settings!r})\ndel _name")


class SharedKernel:
    """One ``python3`` Jupyter kernel for a test module's notebooks (started on first use, with
    ``PYTHONPATH`` = this checkout, so the kernel imports the code under test)."""

    def __init__(self):
        self._manager = None

    def manager(self):
        if self._manager is None:
            from jupyter_client.manager import KernelManager

            self._manager = KernelManager(kernel_name="python3")
            self._manager.start_kernel(env={**os.environ, "PYTHONPATH": str(REPO)})
        return self._manager

    def shutdown(self) -> None:
        if self._manager is not None:
            self._manager.shutdown_kernel(now=True)
            self._manager = None


KERNEL = SharedKernel()


def as_int_text(value) -> str:
    return f"{int(value):,}"
