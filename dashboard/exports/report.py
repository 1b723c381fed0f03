"""The figures and tables of the current selection, as a list of ``ReportItem`` for the Export
page and the one-file HTML report. Built from the same functions the pages use."""

from __future__ import annotations

import pandas as pd

from dashboard.exports.formats import ReportItem
from dashboard.figures import charts
from dashboard.page_data import analyses
from dashboard.page_data.datasets import FILTER_COLUMNS, Availability
from engine.datasets import Dataset
from engine.errors import InputError
from engine.stats import published_a


def selection_context(dataset: Dataset, frame: pd.DataFrame, selections: dict[str, list[str]]) -> dict[str, str]:
    """What a reader of an export needs to know about where the numbers come from."""
    manifest = dataset.manifest
    context = {"dataset": dataset.name, "description": manifest.get("description", ""),
               "source": manifest.get("source", ""),
               "conversations": f"{len(frame):,} of {len(dataset.conversations):,}"}
    if manifest.get("licence_note"):
        context["licence"] = manifest["licence_note"]
    if manifest.get("note"):  # the dataset's own caveat ("not a finding...") travels with every export
        context["note"] = manifest["note"]
    for column in FILTER_COLUMNS:
        if selections.get(column):
            context[f"filter: {column}"] = ", ".join(selections[column])
    return context


def where_from(dataset: Dataset, frame: pd.DataFrame, selections: dict[str, list[str]] | None = None) -> str:
    """The provenance of numbers computed on this selection: dataset, N, filters."""
    filters = [f"{c} = {', '.join(map(str, v))}" for c, v in (selections or {}).items() if v]
    return ", ".join([f"dataset {dataset.name}",
                      f"{len(frame):,} of {len(dataset.conversations):,} conversations selected", *filters])


def catalog(dataset: Dataset, frame: pd.DataFrame, have: Availability, *, compute=analyses,
            selections: dict[str, list[str]] | None = None) -> list[ReportItem]:
    """Every exportable item for this selection. ``compute`` gives ``feature_comparison`` and
    ``manipulability_percent``: ``dashboard.page_data.analyses`` (default) or the page's
    caches of them (``dashboard.widgets.cached``)."""
    compare, manip = compute.feature_comparison, compute.manipulability_percent
    where = where_from(dataset, frame, selections)
    items: list[ReportItem] = []
    counts = frame.groupby([c for c in ("source", "model", "discussion") if c in frame.columns],
                           dropna=False).size().rename("conversations").reset_index()
    items.append(ReportItem("Conversations by source, model and discussion", table=counts, provenance=where,
                            caption=f"N = {len(frame):,} conversations of {dataset.name}.",
                            n=f"{len(frame):,} conversations", outcome="number of conversations"))
    features = list(have.features)
    if features:
        n_by_source = ", ".join(f"{k} {v:,}" for k, v in frame["source"].value_counts().items()) \
            if "source" in frame else f"{len(frame):,}"
        items.append(ReportItem("Trajectory features by source",
                                figure=charts.distributions_by_group(frame, features,
                                                                     title="Trajectory features by source"),
                                provenance=where, n=f"{n_by_source} conversations",
                                outcome="the nine trajectory features (Table 19)",
                                caption=f"Box = quartiles, dashed line = mean; N = {n_by_source} "
                                        f"conversations of {dataset.name}."))
        sources = set(frame["source"].dropna()) if "source" in frame else set()
        if {"llm", "human"} <= sources:
            from engine import samples

            try:  # Figure 1's sample (paper A's teams and humans) when it has both sources
                rows = samples.select(frame, "ideas")
                name = "ideas" if rows["source"].nunique() == 2 else "all"
            except InputError:
                name = "all"
            rows = samples.select(frame, name)
            table = compare(rows, list(features))
            if len(table):
                items.append(ReportItem("LLM minus human: Hedges' g with 95% CI", table=table,
                                        figure=charts.effect_size_forest(
                                            table, "Hedges' g (95% CI from Welch's statistic)", value="g",
                                            x_title="Hedges' g (LLM − human)"), provenance=where,
                                        sample=samples.sample(name).title, n=_sources_n(rows),
                                        outcome="Hedges' g, LLM − human, of the nine trajectory features",
                                        caption=samples.sample(name).label(frame) + ". " + analyses.EFFECT_NOTE))
    if have.ratings:
        rated = frame.dropna(subset=list(have.ratings), how="all")
        items.append(ReportItem("Ratings by source", figure=charts.distributions_by_group(
            frame, list(have.ratings), title="Ratings by source"), provenance=where,
            n=f"{len(rated):,} rated conversations", outcome=", ".join(have.ratings),
            caption=f"N = {len(rated):,} rated conversations of {dataset.name}."))
    try:
        ours = manip(frame)
    except (InputError, KeyError):
        ours = None
    if ours is not None:
        from engine.stats.guards import not_comparable
        from engine.stats.manipulability import guard_lines

        dropped = "; ".join(f"factor {f} dropped: 1 level ({v})" for f, v in ours.attrs.get("dropped_factors", {}).items())
        made_by = analyses.small_model(frame)
        caveats = guard_lines(ours) + ([not_comparable(published_a.MODELS, f"{made_by}, N = {ours.attrs['n']:,} "
                                                       "conversations")] if made_by else [])
        items.append(ReportItem(f"Manipulability (Table 24 layout), N = {ours.attrs['n']:,}"
                                + (f" ({made_by})" if made_by else ""), table=ours.round(1),
                                figure=charts.percent_heatmap(_in_paper_order(ours), "R² (%) computed here", zmax=60,
                                                              column_labels=published_a.TABLE24_HEADINGS),
                                provenance=f"{where}; LLM rows of paper A's trajectory sample, N = {ours.attrs['n']:,}",
                                sample="paper A's trajectory sample, LLM rows", n=f"{ours.attrs['n']:,} fitted",
                                outcome="R² (%) of each trajectory feature on the design factors",
                                caption="R² (%) of each trajectory feature by design choices."
                                        + (f" {dropped}." if dropped else "")
                                        + "".join(f" {line}." for line in caveats)))
    items.append(ReportItem("Paper A, Table 24 (R² %)", table=published_a.table24(), published=True,
                            provenance="paper A, Table 24 (N = 3,574 LLM conversations)",
                            n=published_a.printed_n("24"),
                            outcome="R² (%) of each trajectory feature on the design factors",
                            figure=charts.percent_heatmap(published_a.table24(), "R² (%) published",
                                                          colorscale="Oranges", zmax=60,
                                                          column_labels=published_a.TABLE24_HEADINGS)))
    items.append(ReportItem("Paper A, Table 1: R² ladder (%)", table=published_a.table1(), published=True,
                            provenance="paper A, Table 1", n=published_a.printed_n("1"),
                            outcome="R² (%) of creativity",
                            figure=charts.r2_ladder(published_a.table1(), title="Published R² ladder")))
    items.append(ReportItem("Paper A, Table 5: ratings by task and group", table=published_a.table5(),
                            published=True, provenance="paper A, Table 5", n=published_a.printed_n("5"),
                            outcome="creativity, novelty and usefulness ratings (0–1)"))
    items.append(ReportItem("Paper A, Table 23: LLM vs human coefficients", table=published_a.table23(),
                            published=True, provenance="paper A, Table 23", n=published_a.printed_n("23"),
                            outcome="creativity (standardized coefficients, trajectory + task)"))
    return items


def _in_paper_order(ours: pd.DataFrame) -> pd.DataFrame:
    """Our Table 24 in the paper's row order (ours-only rows after)."""
    paper = list(published_a.table24().index)
    return ours.loc[[f for f in paper if f in ours.index] + [f for f in ours.index if f not in paper]]


def _sources_n(rows: pd.DataFrame) -> str:
    if "source" not in rows:
        return f"{len(rows):,}"
    return "; ".join(f"{source} {count:,}" for source, count in rows["source"].value_counts().items())


def shown_as_items(shown: dict) -> list[ReportItem]:
    """Figures and tables the pages showed in this session (``ui.shown_items()``), as items.

    Each is titled and labelled by the block heading it was shown under (``ui.ours`` /
    ``ui.published``): published blocks keep their paper-and-table heading, ours carry the
    dataset, N and filters of the selection at the time and, as caption, every caveat the page
    showed before it (``ui.caveat``: small samples, refused fits, intervals, other models).
    Never an internal widget key."""
    items = []
    for key, entry in shown.items():
        kind, page, value = entry[:3]
        provenance = entry[3] if len(entry) > 3 else {}
        heading = provenance.get("heading")
        is_published = bool(heading) and heading[0] == "published"
        block = heading[1] if heading else ""
        paper = heading[2] if heading and heading[0] == "beside" and len(heading) > 2 else ""
        if kind == "figure":
            title = (value.layout.title.text or "") if value.layout.title else ""
            title = title or block or f"{page} figure"
        elif kind == "table" and isinstance(value, pd.DataFrame):
            title = block or f"{page} table"
        else:
            continue
        title = html_to_text(title)
        if is_published:
            source = block
        else:
            source = provenance.get("selection", "")
            if block and block != title:
                source = f"{block}; {source}" if source else block
            if paper:
                source = f"{source}; beside published: {paper}"
        said = provenance.get("context") or {}
        caveats = [] if is_published else list(provenance.get("caveats") or [])  # what the page said of the sample
        items.append(ReportItem(f"{page}: {title}", figure=value if kind == "figure" else None,
                                table=value if kind == "table" else None, published=is_published,
                                provenance=source, slug=export_slug(page, key), caption=" ".join(caveats),
                                sample=said.get("sample", ""), n=said.get("n", ""),
                                outcome=said.get("outcome", "") or _outcome_of(value, title), beside=paper,
                                caveats=caveats))
    return _unique_titles(items)


def _outcome_of(value, title: str) -> str:
    """What a shown figure plots when the page did not say: its y-axis title (or the title)."""
    layout = getattr(value, "layout", None)
    axis = getattr(layout, "yaxis", None) if layout is not None else None
    text = axis.title.text if axis is not None and axis.title and axis.title.text else ""
    return html_to_text(text) if text else title


def html_to_text(title: str) -> str:
    """A Plotly title as text (its ``<br>`` line breaks as spaces)."""
    return str(title).replace("<br>", " ").replace("<br/>", " ")


def _unique_titles(items: list[ReportItem]) -> list[ReportItem]:
    seen: dict[str, int] = {}
    for item in items:
        count = seen.get(item.title, 0) + 1
        seen[item.title] = count
        if count > 1:
            item.title = f"{item.title} ({count})"
    return items


def export_slug(page: str, key: str) -> str:
    from dashboard.exports.formats import slugify

    return slugify(f"{page}_{key}")
