"""The page registry (``dashboard.pages``) is the one list of pages: every page it names has a
view script and a notebook that builds, the app's navigation is exactly its pages, and a page
and its notebook compute their numbers with the same ``page_data`` function (the Design levers
page and its notebook give the same Table 24, on the N counted here with pandas)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
import streamlit
from streamlit.testing.v1 import AppTest

from dashboard import pages
from dashboard.notebooks import Selection, notebook

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
RELEASE = REPO / "cached_runs" / "paper_release"
needs_release = pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built")

# options that take the two pages with a shorter notebook (no turn embeddings, fewer than two
# runs) to their full one
FULL = {"trajectories": {"method": "pca", "pair": ["a", "b"]}, "compare": {"runs": {"a": "x", "b": "y"}}}


def _code(nb) -> str:
    return "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")


def test_keys_and_titles_are_unique_and_one_page_opens_the_app():
    assert len(set(pages.keys())) == len(pages.PAGES) == len(set(pages.titles()))
    assert [p.key for p in pages.PAGES if p.default] == ["data_page"]
    assert pages.by_title("Quality–Diversity") is pages.page("quality_diversity")
    with pytest.raises(KeyError, match="unknown page 'nope'"):
        pages.page("nope")


@pytest.mark.parametrize("page", pages.PAGES, ids=pages.keys())
def test_every_page_has_its_view_its_notebook_and_its_page_data(page):
    assert page.view == f"dashboard.views.{page.key}"
    assert page.path == REPO / "dashboard" / "views" / f"{page.key}.py" and page.path.is_file()
    assert page.script == f"views/{page.key}.py"
    assert callable(page.render) and page.render.__module__ == page.view  # the view is a render(ctx) function
    assert pages.by_path(page.path) is page
    source = page.path.read_text(encoding="utf-8")  # run as the page's script, it only calls render
    assert source.rstrip().endswith('if __name__ == "__main__":  # Streamlit runs this file as the page '
                                    '(dashboard/app.py)\n    page_context.show(__file__)')
    from dashboard.page_data import needs

    assert needs.unknown(page.needs) == [], page.needs
    nb = notebook(Selection(page=page.key, dataset=str(RELEASE), options=FULL.get(page.key, {})), repo=REPO)
    nbformat.validate(nb)
    assert nb.cells[0].source.startswith(f"# {page.title}: the page as a notebook")
    code = _code(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            ast.parse(cell.source)
    assert "page_numbers =" in code
    function = pages.load(page.page_data)
    assert callable(function)
    # the page calls it by name; its notebook calls it too, or computes from the engine's public
    # functions (engine.stats: fit, paper_tables, manipulability, feature_effects) where they hold the step
    assert function.__name__ in page.path.read_text(encoding="utf-8")
    assert function.__name__ in code or "from engine import samples, stats" in code \
        or "from engine.stats import paper_tables" in code, page.key
    assert "headline = " in code  # the page's headline numbers, as numbers
    manual = (REPO / "docs" / "reference" / "dashboard.md").read_text(encoding="utf-8")
    assert f"| **{page.title}** |" in manual, "the page's row in docs/reference/dashboard.md's table of pages"


def test_registry_and_page_data_import_without_streamlit():
    """``dashboard.pages`` and every ``page_data`` function load in a plain Python process."""
    modules = sorted({p.page_data.rpartition(".")[0] for p in pages.PAGES})
    script = ("import sys\nimport dashboard.pages\n" + "".join(f"import {m}\n" for m in modules)
              + "assert 'streamlit' not in sys.modules, 'streamlit imported'\nprint('ok')")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


@needs_release
def test_the_apps_navigation_is_the_registry(runs_root, monkeypatch):
    """What ``st.navigation`` is given: the registry's pages in its order, each with its title,
    icon and script (a page's URL path is its script's name; the default page's is empty)."""
    given = []
    navigation = streamlit.navigation

    def recording(entries, *args, **kwargs):
        given.extend(entries)
        return navigation(entries, *args, **kwargs)

    monkeypatch.setattr(streamlit, "navigation", recording)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [(p.title, p.icon, p.url_path) for p in given] == [
        (p.title, p.icon, "" if p.default else p.path.stem) for p in pages.PAGES]
    assert at.session_state["current_page_title"] == pages.page("data_page").title


def _run_in_process(nb) -> dict:
    """The notebook's code cells run here, in order (``display`` shows nothing); its namespace."""
    namespace = {"display": lambda *values: None}
    for cell in nb.cells:
        if cell.cell_type == "code" and "page-numbers" not in cell.metadata.get("tags", []):
            exec(compile(cell.source, "<notebook cell>", "exec"), namespace)  # noqa: S102 (our own notebook)
    return namespace


@needs_release
def test_design_levers_page_and_notebook_compute_the_same_table_24(runs_root):
    from dashboard.page_data.datasets import availability
    from dashboard.page_data.design_levers import design_levers_page_data
    from engine import samples
    from engine.datasets import Dataset
    from engine.measures.trajectory import PAPER_A_FEATURES

    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    at.switch_page(pages.page("design_levers").script).run()
    assert not at.exception, [e.value for e in at.exception]
    chosen = at.session_state["notebook_selection_design_levers"]
    shown = at.session_state["shown_items"]["levers_table_ours"][2]  # what the page showed, as exported

    numbers = _run_in_process(notebook(chosen, repo=REPO))
    assert "manipulability" in numbers["stats"].__dict__  # the notebook computes with engine.stats
    from_notebook = numbers["page_numbers"]
    pd.testing.assert_frame_equal(from_notebook["Table 24 (R² %)"].astype(float).round(1), shown,
                                  check_names=False)  # the engine's table names its index "feature"

    # the function itself on the page's selection gives both
    dataset = Dataset.load(RELEASE)
    rows = samples.sample(chosen.options["sample"]).select(dataset.conversations)
    direct = design_levers_page_data(dataset.conversations, rows, chosen.options["sample"], availability(dataset))
    np.testing.assert_allclose(direct.ours.astype(float).round(1).to_numpy(), shown.to_numpy(), rtol=0, atol=0)

    # N: paper A's trajectory sample, its LLM rows with all nine features, counted with pandas
    release = pd.read_parquet(RELEASE / "conversations.parquet")
    llm = release[(release["source"] == "llm") & release["discussion"].isin(["instructed", "open", "iterative"])]
    assert numbers["headline"]["N"] == direct.ours.attrs["n"] == len(llm.dropna(subset=list(PAPER_A_FEATURES))) == 3574
