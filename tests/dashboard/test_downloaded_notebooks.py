"""A downloaded notebook names its dataset, never a machine path, and finds it
beside itself, in ``CDL_CACHED_RUNS`` or in the ``cached_runs/`` of the checkout the engine is
imported from (an error naming every path tried otherwise), and runs under ``jupyter
nbconvert`` from any folder; the Trajectories notebook carries what the fragment shows."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.notebooks import Selection, notebook_bytes
from dashboard.notebooks.build import DATA_VARIABLE

REPO = Path(__file__).resolve().parents[2]
RELEASE = REPO / "cached_runs" / "paper_release"
needs_release = pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built")


def _setup_cell(written: bytes) -> str:
    cells = json.loads(written)["cells"]
    return next("".join(c["source"]) for c in cells if "setup" in c.get("metadata", {}).get("tags", []))


def _run(code: str, cwd: Path, **env) -> subprocess.CompletedProcess:
    """``code`` on this venv's Python in ``cwd``, importing this checkout, with ``env`` and no
    ``CDL_CACHED_RUNS`` unless given."""
    clean = {k: v for k, v in os.environ.items() if k != DATA_VARIABLE}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**clean, "PYTHONPATH": str(REPO), **env})


@needs_release
def test_notebook_names_its_dataset_and_finds_it_beside_itself_in_the_data_folder_or_the_checkout(tmp_path):
    """Before: ``DATASET = REPO / 'cached_runs/paper_release'`` with ``REPO`` found from the
    notebook's folder or ``CDL_REPO``: a notebook saved in Downloads did not run."""
    written = notebook_bytes(Selection(page="export", dataset=str(RELEASE), dataset_name="paper_release"))
    assert str(REPO) not in written.decode("utf-8")
    setup = _setup_cell(written)
    assert "DATASET = find_data('paper_release')" in setup and "sys.path" not in setup
    assert json.loads(written)["metadata"]["creativity_dynamics_lab"]["dataset"] == "paper_release"
    probe = setup + "\nprint('DATASET', DATASET); print('ROWS', len(dataset.conversations))\n"
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    checkout = _run(probe, downloads)  # nothing beside it, no variable: the checkout's cached_runs/
    assert checkout.returncode == 0, checkout.stderr[-2000:]
    assert f"DATASET {RELEASE}" in checkout.stdout and "ROWS 4010" in checkout.stdout
    data = tmp_path / "data"
    shutil.copytree(RELEASE, data / "paper_release")
    named = _run(probe, downloads, **{DATA_VARIABLE: str(data)})  # the variable before the checkout
    assert f"DATASET {data / 'paper_release'}" in named.stdout, named.stderr[-2000:]
    shutil.copytree(RELEASE, downloads / "paper_release")
    beside = _run(probe, downloads, **{DATA_VARIABLE: str(data)})  # beside the notebook first of all
    assert f"DATASET {downloads / 'paper_release'}" in beside.stdout, beside.stderr[-2000:]

    missing = notebook_bytes(Selection(page="export", dataset=str(tmp_path / "cached_runs" / "not_built")))
    failed = _run(_setup_cell(missing), downloads, **{DATA_VARIABLE: str(data)})
    assert failed.returncode != 0
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith("FileNotFoundError: dataset 'not_built' not found (tried: ")
    for tried in (tmp_path / "cached_runs" / "not_built", downloads / "not_built", data / "not_built",
                  REPO / "cached_runs" / "not_built"):
        assert str(tried) in last
    assert DATA_VARIABLE in last


@needs_release
@pytest.mark.slow
def test_jupyter_nbconvert_executes_a_downloaded_notebook_outside_the_checkout(tmp_path):
    """Before: ``jupyter nbconvert`` was not installed (``No module named nbconvert``); then a
    notebook ran only when saved inside the checkout."""
    written = notebook_bytes(Selection(page="export", dataset=str(RELEASE), dataset_name="paper_release"))
    path = tmp_path / "export_paper_release.ipynb"
    path.write_bytes(written)
    env = {k: v for k, v in os.environ.items() if k != DATA_VARIABLE}
    done = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
                           "--ExecutePreprocessor.kernel_name=python3", "--ExecutePreprocessor.timeout=900", str(path)],
                          capture_output=True, text=True, timeout=1200, env={**env, "PYTHONPATH": str(REPO)},
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    cells = json.loads(path.read_text())["cells"]
    printed = "".join("".join(o.get("text", "")) for c in cells if c["cell_type"] == "code"
                      for o in c.get("outputs", []))  # a stream's text is stored as a list of lines
    assert f"dataset paper_release ({RELEASE}): 4,010 of 4,010 conversations selected" in printed


def test_trajectories_notebook_button_is_inside_the_fragment_with_the_search():
    """Before: the button was rendered after the fragment, so a search in the fragment (which
    reruns only the fragment) left the notebook with the last full run's options (0 hits
    where the page showed 193)."""
    tree = ast.parse((REPO / "dashboard" / "views" / "trajectories.py").read_text())

    def renders_notebook(node) -> bool:
        return any(isinstance(n, ast.Call) and ast.unparse(n.func) == "notebook_button.render"
                   and n.args and getattr(n.args[0], "value", None) == "trajectories" for n in ast.walk(node))

    fragments = [f for f in tree.body if isinstance(f, ast.FunctionDef)
                 and any(ast.unparse(d) == "st.fragment" for d in f.decorator_list)]
    explore = next(f for f in fragments if "traj_search" in ast.unparse(f))
    assert renders_notebook(explore)
    call = next(n for n in ast.walk(explore) if isinstance(n, ast.Call) and ast.unparse(n.func) == "notebook_button.render")
    options = ast.unparse(call.args[1])
    assert "'search': query" in options and "'colour': colour" in options  # the fragment's own values
    top_level = [n for n in tree.body if not isinstance(n, ast.FunctionDef)]
    assert [n for n in top_level if renders_notebook(n) and "traj_search" in ast.unparse(n)] == []
