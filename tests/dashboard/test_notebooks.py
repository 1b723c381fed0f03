""""Download as notebook": the notebooks of seven pages, each built from the selection the page
kept (dataset, sidebar filters, sample and options, as the button would write it), executed
on a kernel of this project's venv (nbclient, ``python3`` from ipykernel), their printed numbers
compared with the tables and metrics the page showed (AppTest)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import pages

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
RELEASE = REPO / "cached_runs" / "paper_release"
LOCAL = REPO / "cached_runs" / "local_smollm2"
STEERED = REPO / "cached_runs" / "local_smollm2_steered"

pytestmark = [
    pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built"),
]


def run_notebook(selection) -> dict:
    """Execute the page's notebook on this venv's kernel and return its printed page numbers."""
    import nbclient

    from dashboard.notebooks import notebook

    nb = notebook(selection, repo=REPO)
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=900, startup_timeout=600,
                            resources={"metadata": {"path": str(REPO)}}).execute()
    cell = next(c for c in nb.cells if "page-numbers" in c.metadata.get("tags", []))
    text = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
    return json.loads(text)


def table(value) -> pd.DataFrame:
    """A notebook's table (``to_json(orient="split")``) back as a DataFrame."""
    return pd.DataFrame(value["data"], index=value["index"], columns=value["columns"])


def same(page: pd.DataFrame, notebook_value: dict, **kwargs) -> None:
    ours = table(notebook_value)
    page = page.copy()
    assert list(map(str, ours.columns)) == list(map(str, page.columns))
    assert list(map(str, ours.index)) == list(map(str, page.index))
    for column in page.columns:
        left, right = page[column], ours[str(column)] if str(column) in ours else ours[column]
        if pd.api.types.is_numeric_dtype(left):
            np.testing.assert_allclose(left.to_numpy(float), pd.to_numeric(right, errors="coerce").to_numpy(float),
                                       rtol=1e-9, atol=1e-9, equal_nan=True, err_msg=str(column))
        else:
            assert left.astype(str).tolist() == right.astype(str).tolist(), column


def shown(at: AppTest, key: str):
    """What the page showed under ``key`` (``dashboard.widgets.ui`` keeps it for the Export page)."""
    return at.session_state["shown_items"][key][2]


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


def only_o3_high(at):
    at.multiselect(key="filter_model").set_value(["o3-high"])


@pytest.mark.slow  # a kernel per notebook, 20-60 s each on 2 cores
def test_data_and_llm_vs_human_notebooks_on_a_filtered_release(cached_runs_of):
    cached_runs_of(RELEASE.name)
    at = page("data_page", before=only_o3_high)
    chosen = selection(at, "data_page")
    assert chosen.filters == {"model": ["o3-high"]} and Path(chosen.dataset).resolve() == RELEASE.resolve()
    numbers = run_notebook(chosen)
    metrics = {m.label: m.value for m in at.metric}
    for label in ("Conversations selected", "LLM conversations", "Human conversations", "Mean turns"):
        assert numbers[label] == metrics[label]
    release = pd.read_parquet(RELEASE / "conversations.parquet")
    assert metrics["Conversations selected"] == f"{(release['model'] == 'o3-high').sum():,}"
    same(shown(at, "data_counts"), numbers["by model and task"])

    at = page("llm_vs_human")
    numbers = run_notebook(selection(at, "llm_vs_human"))
    same(shown(at, "lvh_effects"), numbers["effects"])
    assert numbers["LLM conversations"] == {m.label: m.value for m in at.metric}["LLM conversations"]


@pytest.mark.slow  # a kernel per notebook, 20-60 s each on 2 cores
def test_design_levers_regression_and_paper_table_notebooks(cached_runs_of):
    cached_runs_of(RELEASE.name)
    at = page("design_levers")
    numbers = run_notebook(selection(at, "design_levers"))
    same(shown(at, "levers_table_ours"), numbers["Table 24 (R² %)"])
    assert numbers["N"] == 3574  # the trajectory sample's LLM rows with all nine features (Table 24)

    at = page("regression")
    chosen = selection(at, "regression")
    assert chosen.options["blocks"]  # the blocks the page fitted, per team type
    numbers = run_notebook(chosen)
    for label in chosen.options["blocks"]:
        same(shown(at, f"reg_table_{label}"), numbers[f"{label} coefficients"])

    at = page("paper_a_tables", widgets=lambda at: at.selectbox(key="pat_table").set_value("25"))
    chosen = selection(at, "paper_a_tables")
    assert chosen.options["table"] == "25"
    numbers = run_notebook(chosen)
    for position, title in enumerate(numbers["parts"]):
        same(shown(at, f"pat_ours_25_{position}"), numbers["parts"][title])


@pytest.mark.slow
@pytest.mark.skipif(not (LOCAL / "manifest.json").exists() or not (STEERED / "manifest.json").exists(),
                    reason="local cached runs not built")
def test_trajectories_and_compare_runs_notebooks(cached_runs_of):
    cached_runs_of(LOCAL.name, STEERED.name)

    def local_with_clusters(at):
        at.selectbox(key="dataset_choice").set_value("local_smollm2")

    at = page("trajectories", before=local_with_clusters,
              widgets=lambda at: at.text_input(key="traj_search").input("plastic"))
    chosen = selection(at, "trajectories")
    assert chosen.options["search"] == "plastic" and chosen.options["method"] == "pca"
    numbers = run_notebook(chosen)
    same(shown(at, "traj_feature_values"), numbers["feature values"])
    index = pd.read_parquet(LOCAL / "turn_index.parquet")
    assert numbers["turns"] == len(index)
    selected = shown(at, "traj_selected")  # the search's table: every turn holding the phrase
    assert numbers["search hits"] == len(selected)

    at = page("compare", widgets=lambda at: at.multiselect(key="compare_datasets").set_value(
        ["local_smollm2", "local_smollm2_steered"]))
    chosen = selection(at, "compare")
    assert set(chosen.options["runs"]) == {"local_smollm2", "local_smollm2_steered"}
    numbers = run_notebook(chosen)
    same(shown(at, "compare_feature_differences"), numbers["feature differences"])
    same(shown(at, "compare_config"), numbers["config"])
    same(shown(at, "compare_diversity"), numbers["diversity"])


@pytest.mark.parametrize("name", pages.keys())
def test_every_page_has_the_button_and_its_notebook_is_valid_python(cached_runs_of, name):
    """Every page keeps its selection and offers "Download as notebook"; the notebook validates
    (nbformat) and every code cell parses; text from the dataset only in code cells."""
    import ast

    import nbformat

    from dashboard.notebooks import notebook_bytes

    cached_runs_of(RELEASE.name)
    at = page(name)
    assert any(b.proto.label == "Download as notebook" for b in at.get("download_button")), name
    written = nbformat.reads(notebook_bytes(selection(at, name)).decode("utf-8"), as_version=4)
    nbformat.validate(written)
    assert written.metadata["creativity_dynamics_lab"]["page"] == name
    for cell in written.cells:
        if cell.cell_type == "code":
            ast.parse(cell.source)
        else:
            assert "paper_release" not in cell.source  # names from files never in markdown
