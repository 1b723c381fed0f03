"""The figures and tables of the current selection, as a list of ``ReportItem`` for the Export
page and the one-file HTML report. Built from the same functions the pages use."""

from __future__ import annotations

import pandas as pd

from dashboard import analyses, charts, published
from dashboard.data import FILTER_COLUMNS, Availability
from dashboard.export import ReportItem
from engine.datasets import Dataset
from engine.errors import InputError


def selection_context(dataset: Dataset, frame: pd.DataFrame, selections: dict[str, list[str]]) -> dict[str, str]:
    """What a reader of an export needs to know about where the numbers come from."""
    manifest = dataset.manifest
    context = {"dataset": dataset.name, "description": manifest.get("description", ""),
               "source": manifest.get("source", ""),
               "conversations": f"{len(frame):,} of {len(dataset.conversations):,}"}
    if manifest.get("licence_note"):
        context["licence"] = manifest["licence_note"]
    for column in FILTER_COLUMNS:
        if selections.get(column):
            context[f"filter: {column}"] = ", ".join(selections[column])
    return context


def catalog(dataset: Dataset, frame: pd.DataFrame, have: Availability, *, cached: bool = True) -> list[ReportItem]:
    """Every exportable item for this selection; ``cached`` uses the Streamlit caches."""
    compare = analyses.cached_feature_comparison if cached else (lambda f, c: analyses.feature_comparison(f, list(c)))
    manip = analyses.cached_manipulability if cached else analyses.manipulability_percent
    items: list[ReportItem] = []
    counts = frame.groupby([c for c in ("source", "model", "discussion") if c in frame.columns],
                           dropna=False).size().rename("conversations").reset_index()
    items.append(ReportItem("Conversations by source, model and discussion", table=counts))
    features = list(have.features)
    if features:
        items.append(ReportItem("Trajectory features by source",
                                figure=charts.distributions_by_group(frame, features,
                                                                     title="Trajectory features by source"),
                                caption="Box = quartiles, dashed line = mean."))
        sources = set(frame["source"].dropna()) if "source" in frame else set()
        if {"llm", "human"} <= sources:
            from engine import samples

            try:  # Figure 1's sample (paper A's teams and humans) when it has both sources
                rows = samples.select(frame, "ideas")
                name = "ideas" if rows["source"].nunique() == 2 else "all"
            except InputError:
                name = "all"
            rows = samples.select(frame, name)
            table = compare(rows, tuple(features))
            if len(table):
                items.append(ReportItem("LLM minus human: Cohen's d with 95% CI", table=table,
                                        figure=charts.effect_size_forest(table),
                                        caption=samples.sample(name).label(frame) + "."))
    if have.ratings:
        items.append(ReportItem("Ratings by source", figure=charts.distributions_by_group(
            frame, list(have.ratings), title="Ratings by source")))
    try:
        ours = manip(frame)
    except (InputError, KeyError):
        ours = None
    if ours is not None:
        items.append(ReportItem(f"Manipulability (Table 24 layout), N = {ours.attrs['n']:,}", table=ours.round(1),
                                figure=charts.percent_heatmap(ours, "R² (%) computed here", zmax=60),
                                caption="R² (%) of each trajectory feature by design choices."))
    items.append(ReportItem("Paper A, Table 24 (R² %)", table=published.table24(), published=True,
                            figure=charts.percent_heatmap(published.table24(), "R² (%) published",
                                                          colorscale="Oranges", zmax=60)))
    items.append(ReportItem("Paper A, Table 1: R² ladder (%)", table=published.table1(), published=True,
                            figure=charts.r2_ladder(published.table1(), title="Published R² ladder")))
    items.append(ReportItem("Paper A, Table 5: ratings by task and group", table=published.table5(),
                            published=True))
    items.append(ReportItem("Paper A, Table 23: LLM vs human coefficients", table=published.table23(),
                            published=True))
    items.append(ReportItem("Selected conversations", table=frame.reset_index(drop=True)))
    return items


def shown_as_items(shown: dict) -> list[ReportItem]:
    """Figures and tables the pages showed in this session (``ui.shown_items()``), as items."""
    items = []
    for key, (kind, page, value) in shown.items():
        if kind == "figure":
            title = (value.layout.title.text or key) if value.layout.title else key
            items.append(ReportItem(f"{page}: {title}", figure=value, slug=export_slug(page, key)))
        elif kind == "table" and isinstance(value, pd.DataFrame):
            items.append(ReportItem(f"{page}: table {key}", table=value, slug=export_slug(page, key)))
    return items


def export_slug(page: str, key: str) -> str:
    from dashboard.export import slugify

    return slugify(f"{page}_{key}")
