"""Markdown and code cells (``nbformat``), the bricks of the pages' notebooks, and the cells a
recipe's source makes (``of_recipe``)."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap

import nbformat


def md(text: str):
    """A markdown cell: the notebook's own words only (no text from a user or a file)."""
    return nbformat.v4.new_markdown_cell(text.strip("\n"))


def code(text: str, *tags: str):
    """A code cell; ``tags`` go in its metadata (``setup``, ``page-numbers``)."""
    cell = nbformat.v4.new_code_cell(text.strip("\n"))
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


CELL_MARK = "# %%"  # splits a recipe's body into code cells
re_cells = re.compile(r"^# %%$", re.M)


def of_recipe(recipe) -> list:
    """The cells of a recipe (``dashboard.notebooks.recipes``): its docstring as a markdown cell,
    then its body, split at ``CELL_MARK`` lines, as code cells, written as the function's source
    holds them (dedented), its final ``return`` left out."""
    function = ast.parse(textwrap.dedent(inspect.getsource(recipe))).body[0]
    lines = textwrap.dedent(inspect.getsource(recipe)).split("\n")
    statements = function.body
    docstring = ast.get_docstring(function)
    if docstring is None or not isinstance(statements[-1], ast.Return):
        raise ValueError(f"recipe {recipe.__name__} needs a docstring (its markdown) and a final return")
    first, last = statements[1].lineno - 1, statements[-1].lineno - 1  # 0-based lines of the body
    while first > 0 and lines[first - 1].strip().startswith("#") and lines[first - 1].strip() != CELL_MARK:
        first -= 1  # comments just above the first statement belong to it
    body = textwrap.dedent("\n".join(lines[first:last]))
    chunks = [chunk.strip("\n") for chunk in re_cells.split(body)]
    return [md(docstring), *(code(chunk) for chunk in chunks if chunk.strip())]
