"""Round three: a downloaded notebook finds the checkout from where it is (or ``CDL_REPO``),
never from the absolute path of the checkout that wrote it, and runs under ``jupyter
nbconvert``; the Trajectories notebook carries what the fragment shows; the Export page's
report title and file names follow the dataset now selected."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.notebooks import Selection, notebook_bytes
from dashboard.notebooks.build import REPO_VARIABLE

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
RELEASE = REPO / "cached_runs" / "paper_release"
LOCAL = REPO / "cached_runs" / "local_smollm2"
needs_release = pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built")


def _setup_cell(written: bytes) -> str:
    cells = json.loads(written)["cells"]
    return next("".join(c["source"]) for c in cells if "setup" in c.get("metadata", {}).get("tags", []))


def _run(code: str, cwd: Path, **env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k != REPO_VARIABLE and k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**clean, **env})


@needs_release
def test_notebook_names_no_machine_path_and_finds_the_checkout_from_its_folder_or_cdl_repo(tmp_path):
    """Before: ``REPO = Path('/work/...')`` and ``DATASET = Path('/work/.../cached_runs/...')``
    were written into every notebook."""
    written = notebook_bytes(Selection(page="export", dataset=str(RELEASE), dataset_name="paper_release"))
    assert str(REPO) not in written.decode("utf-8")
    setup = _setup_cell(written)
    assert "DATASET = REPO / 'cached_runs/paper_release'" in setup
    assert json.loads(written)["metadata"]["creativity_dynamics_lab"]["dataset"] == "cached_runs/paper_release"
    probe = setup + "\nprint('REPO', REPO); print('ROWS', len(dataset.conversations))\n"
    inside = _run(probe, REPO / "docs")  # a notebook saved in a folder of the checkout
    assert inside.returncode == 0, inside.stderr[-2000:]
    assert f"REPO {REPO}" in inside.stdout and "ROWS 4010" in inside.stdout
    outside = _run(probe, tmp_path)  # saved in Downloads: no checkout above it
    assert outside.returncode != 0
    last = outside.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: the Creativity Dynamics Lab checkout is not at ") and REPO_VARIABLE in last
    named = _run(probe, tmp_path, **{REPO_VARIABLE: str(REPO)})
    assert named.returncode == 0 and f"REPO {REPO}" in named.stdout, named.stderr[-2000:]
    wrong = _run(probe, tmp_path, **{REPO_VARIABLE: str(tmp_path)})
    assert f"{REPO_VARIABLE}={tmp_path}" in wrong.stderr.strip().splitlines()[-1]


@needs_release
@pytest.mark.slow
def test_jupyter_nbconvert_executes_a_downloaded_notebook(tmp_path):
    """Before: ``jupyter nbconvert`` was not installed (``No module named nbconvert``)."""
    jupyter = Path(sys.executable).with_name("jupyter")
    assert jupyter.exists(), "jupyter (jupyter_core, with nbconvert) is part of the install"
    written = notebook_bytes(Selection(page="export", dataset=str(RELEASE), dataset_name="paper_release"))
    folder = REPO / "cached_runs" / f".nbconvert-test-{os.getpid()}"  # a notebook saved inside the checkout
    folder.mkdir()
    try:
        path = folder / "export_paper_release.ipynb"
        path.write_bytes(written)
        env = {k: v for k, v in os.environ.items() if k != REPO_VARIABLE}
        done = subprocess.run([str(jupyter), "nbconvert", "--to", "notebook", "--execute", "--inplace",
                               "--ExecutePreprocessor.timeout=900", str(path)], capture_output=True, text=True,
                              timeout=1200, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        cells = json.loads(path.read_text())["cells"]
        printed = "".join("".join(o.get("text", "")) for c in cells if c["cell_type"] == "code"
                          for o in c.get("outputs", []))  # a stream's text is stored as a list of lines
        assert "dataset paper_release: 4,010 of 4,010 conversations selected" in printed
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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


@needs_release
@pytest.mark.skipif(not (LOCAL / "manifest.json").exists(), reason="local cached runs not built")
def test_export_title_and_file_names_follow_the_dataset_now_selected(cached_runs_of):
    """Before: the title typed (or defaulted) for the first dataset stayed after another was
    chosen (an upload's report was titled "paper_release")."""
    cached_runs_of(RELEASE.name, LOCAL.name)
    at = AppTest.from_file(APP, default_timeout=600)
    at.session_state["dataset_choice"] = "paper_release"
    at.run()
    at.switch_page("views/export.py").run()
    assert not at.exception, [e.value for e in at.exception]
    title = next(t for t in at.text_input if t.label == "Report title")
    assert title.value == "Creativity dynamics: paper_release"
    at.selectbox(key="dataset_choice").set_value("local_smollm2").run()
    assert not at.exception, [e.value for e in at.exception]
    title = next(t for t in at.text_input if t.label == "Report title")
    assert title.value == "Creativity dynamics: local_smollm2"
    assert any(b.label.startswith("Make the slide deck") for b in at.button)
