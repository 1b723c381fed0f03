"""A recipe's cells (``dashboard.notebooks.cells.of_recipe``): its docstring as the markdown cell,
its body split at ``# %%`` lines as code cells written as the source holds them, the final
``return`` left out; and the recipe a page's options choose (``build.recipe_for``)."""

from __future__ import annotations

import pytest

from dashboard import pages
from dashboard.notebooks import recipes
from dashboard.notebooks.build import recipe_for
from dashboard.notebooks.cells import of_recipe


def a_recipe(frame, OPTIONS):
    """## A page

    Its numbers."""
    # the rows the page shows
    rows = frame[frame["source"] == OPTIONS["source"]]
    rows.head()
    # %%
    if len(rows):
        print(len(rows))
    # %%
    headline = {"rows": len(rows)}
    page_numbers = {"rows": rows}
    return headline, page_numbers


def test_a_recipe_becomes_its_docstring_and_its_cells():
    cells = of_recipe(a_recipe)
    assert [(c.cell_type, c.source) for c in cells] == [
        ("markdown", "## A page\n\nIts numbers."),
        ("code", '# the rows the page shows\nrows = frame[frame["source"] == OPTIONS["source"]]\nrows.head()'),
        ("code", "if len(rows):\n    print(len(rows))"),
        ("code", 'headline = {"rows": len(rows)}\npage_numbers = {"rows": rows}'),
    ]


def no_return(frame):
    """Text."""
    frame.head()


def test_a_recipe_without_its_final_return_is_refused():
    with pytest.raises(ValueError, match="no_return needs a docstring .* and a final return"):
        of_recipe(no_return)


def test_the_options_choose_the_recipe_a_page_names_instead():
    trajectories, compare = pages.page("trajectories"), pages.page("compare")
    assert recipe_for(trajectories, {"method": "pca"}) is recipes.trajectories
    assert recipe_for(trajectories, {}) is recipes.trajectories_by_features  # no turn embeddings: no method
    assert recipe_for(compare, {"runs": {"a": "x", "b": "y"}}) is recipes.compare
    assert recipe_for(compare, {"runs": {"a": "x"}}) is recipes.compare_fewer_than_two
    assert recipe_for(pages.page("data_page"), {}) is recipes.data_page


@pytest.mark.parametrize("page", pages.PAGES, ids=pages.keys())
def test_every_recipe_returns_what_its_last_cell_prints(page):
    """The page-numbers cell prints ``headline`` and ``page_numbers``: every recipe sets both."""
    import ast
    import inspect

    for recipe in {recipe_for(page, {}), pages.load(page.notebook)}:
        function = next(n for n in ast.parse(inspect.getsource(recipe)).body if isinstance(n, ast.FunctionDef))
        assert ast.unparse(function.body[-1]) == "return (headline, page_numbers)", recipe.__name__
