"""Markdown and code cells (``nbformat``), the bricks of the pages' notebooks."""

from __future__ import annotations

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
