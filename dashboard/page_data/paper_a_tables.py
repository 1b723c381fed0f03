"""The Paper A tables page's numbers: one of paper A's tables fitted on the page's sample and
stars (``engine.stats.paper_tables.build``, the twin of ``python -m engine analyze table N``)
and ours beside the published table row by row (``beside.beside``).

Every rating table says who rated (``ratings_agreement``): the judge, whether it was checked
against people (``engine.judging.people_check``), how many ratings per idea
and the raters' agreement per task and scale (``engine.stats.agreement``: ICC(3,k) as paper A's
Table 4, ICC(2,1), Krippendorff's alpha, N ideas and k raters), from the per-rater ``N*`` / ``U*``
columns (the authors' file, or our judge panel's), the ideas irrelevant by the majority rule left
out; with one rating per idea it says "one rating per item: agreement cannot be computed".

The scale (``ratings_scale``): paper A min-max scaled each rating within task over every idea
of the task in its study, human and LLM together (Methods). Ratings of our own judges are scaled
over the ideas of the dataset being analysed, another pool, so their means are on another
scale: the tables of means (``MEAN_TABLES``) then show ours and the published apart, never
beside (regression tables are still set beside; the note says their coefficients share that scale).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dashboard.page_data import beside
from engine.errors import InputError
from engine.stats import paper_tables
from engine.stats.agreement import ONE_RATING, no_agreement_reason, panel_agreement

RATER_SCORE = re.compile(r"^([NU])(\d+)$")
SCALES = {"N": "novelty", "U": "usefulness"}
# paper A's tables of mean (SD / SE / CI) scaled ratings: on another scale, never beside ours
MEAN_TABLES = ("5", "12", "13", "16", "17", "18", "fig1")
AGREEMENT_COLUMNS = ["task", "scale", "N", "raters", "ratings per idea", "ICC(3,k)", "ICC(3,k) low",
                     "ICC(3,k) high", "ICC(2,1)", "ICC(2,1) low", "ICC(2,1) high", "alpha (interval)",
                     "left out (a rating missing)", "note"]


@dataclass(frozen=True)
class RatingsAgreement:
    """Who rated the selection's ideas and how far they agree: ``text`` in one sentence,
    ``table`` per task and scale (empty with one rating per idea or no per-rater scores)."""

    judge: str
    ratings_per_item: str  # "5", "3 to 5", "1", or "unknown"
    n_items: int
    text: str
    table: pd.DataFrame
    people: str = ""  # checked against people? (``engine.judging.people_check``)


def _our_judges(frame: pd.DataFrame) -> list[str]:
    """The judges our engine recorded on the rows (``rater``: "llm:model"); empty for the authors' data."""
    if "rater" not in frame:
        return []
    return sorted(str(r).removeprefix("llm:") for r in frame["rater"].dropna().unique())


def _rater_columns(frame: pd.DataFrame) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {"N": [], "U": []}
    for column in frame.columns:
        match = RATER_SCORE.match(str(column))
        if match:
            found[match.group(1)].append(column)
    return {prefix: sorted(columns, key=lambda c: int(c[1:])) for prefix, columns in found.items()}


def ratings_agreement(frame: pd.DataFrame) -> RatingsAgreement | None:
    """The raters of the rated ideas of ``frame`` (None when no idea has a rating) and whether
    our judge was checked against people; see the module docstring."""
    from dataclasses import replace

    from dashboard.page_data.datasets import cached_runs_root
    from engine.judging.people_check import people_check

    found = _raters_agreement(frame)
    if found is None:
        return None
    ours = _our_judges(frame)
    people = "; ".join(people_check(j, cached_runs_root()) for j in ours) if ours else \
        "these are people's ratings (paper A's trained raters), not a judge's"
    return replace(found, people=people)


def _raters_agreement(frame: pd.DataFrame) -> RatingsAgreement | None:
    rated = frame[pd.to_numeric(frame["creativity"], errors="coerce").notna()] if "creativity" in frame \
        else frame.iloc[0:0]
    ours = _our_judges(frame)
    judge = "+".join(ours) if ours else "paper A's human raters (the authors' ratings file)"
    if rated.empty:
        if not ours:
            return None
        size = pd.to_numeric(frame["panel_size"], errors="coerce").max() if "panel_size" in frame else np.nan
        if not np.isfinite(size) or size <= 1:
            text = f"judge {judge}: {ONE_RATING}; no idea of the selection has a readable rating (N = 0 ideas)."
            return RatingsAgreement(judge, "1", 0, text, pd.DataFrame(columns=AGREEMENT_COLUMNS))
        text = (f"judge {judge}: {int(size)} raters per idea, but no idea of the selection has a readable "
                f"rating (N = 0 ideas): no agreement.")
        return RatingsAgreement(judge, str(int(size)), 0, text, pd.DataFrame(columns=AGREEMENT_COLUMNS))
    columns = _rater_columns(rated)
    irrelevant = rated["irrelevant"].fillna(False).astype(bool) if "irrelevant" in rated else \
        pd.Series(False, index=rated.index)
    relevant = rated[~irrelevant]
    left_out = (f"; {int(irrelevant.sum())} idea(s) irrelevant by the majority rule (more than half of "
                f"their raters gave 0) left out") if irrelevant.any() else ""
    if not columns["N"] and not columns["U"]:
        read = pd.to_numeric(rated["raters_read"], errors="coerce") if "raters_read" in rated else None
        if ours and (read is None or read.max() <= 1):
            text = f"judge {judge}: {ONE_RATING} (N = {len(rated)} ideas)."
            return RatingsAgreement(judge, "1", len(rated), text, pd.DataFrame(columns=AGREEMENT_COLUMNS))
        text = (f"judge {judge}: the per-rater scores are not in this dataset, so agreement cannot be computed "
                f"here (N = {len(rated)} ideas).")
        return RatingsAgreement(judge, "unknown", len(rated), text, pd.DataFrame(columns=AGREEMENT_COLUMNS))
    rows, counts = [], []
    for prefix, scale_columns in columns.items():
        if not scale_columns:
            continue
        for task, part in relevant.groupby("task", sort=True):
            found = panel_agreement(part[scale_columns], judge=judge)
            low, high = found["ratings_per_item"]["min"], found["ratings_per_item"]["max"]
            counts += [low, high]
            ci3, ci2 = found["icc3k_ci"] or [None, None], found["icc21_ci"] or [None, None]
            rows.append({"task": task, "scale": SCALES[prefix], "N": found["items"], "raters": found["raters"],
                         "ratings per idea": f"{high}" if low == high else f"{low} to {high}",
                         "ICC(3,k)": found["icc3k"], "ICC(3,k) low": ci3[0], "ICC(3,k) high": ci3[1],
                         "ICC(2,1)": found["icc21"], "ICC(2,1) low": ci2[0], "ICC(2,1) high": ci2[1],
                         "alpha (interval)": found["alpha"], "left out (a rating missing)": found["dropped_items"],
                         "note": found["note"]})
    table = pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)
    for column in AGREEMENT_COLUMNS[5:12]:
        table[column] = pd.to_numeric(table[column])
    low, high = (min(counts), max(counts)) if counts else (0, 0)
    per_item = f"{high}" if low == high else f"{low} to {high}"
    n_items = len(relevant)
    k = max((len(c) for c in columns.values()), default=0)
    every = [c for cs in columns.values() for c in cs]
    readable = int(relevant[every].notna().any(axis=1).sum()) if every else 0
    reason = no_agreement_reason(k, readable, high)
    if reason:
        asked = "" if k <= 1 else f"{k} raters asked; "
        text = f"judge {judge}: {asked}{reason} (N = {n_items} ideas){left_out}."
        return RatingsAgreement(judge, per_item, n_items, text, table.iloc[0:0])
    values = table["ICC(3,k)"].dropna()
    spread = (f"ICC(3,{k}) from {values.min():.2f} to {values.max():.2f} over {len(values)} task x scale cell(s)"
              if len(values) else f"no ICC could be computed ({'; '.join(sorted(set(table['note']) - {''}))})")
    text = (f"judge {judge}: {per_item} ratings per idea from {k} raters, N = {n_items} ideas in "
            f"{relevant['task'].nunique()} task(s); {spread}; ICC(3,k) as paper A's Table 4 and ICC(2,1) per "
            f"task and scale in the table{left_out}.")
    return RatingsAgreement(judge, per_item, n_items, text, table)


def ratings_scale(frame: pd.DataFrame) -> tuple[bool, str]:
    """(on paper A's scale, what to say): the authors' ratings are; our judges' are scaled over
    this dataset's own ideas of each task."""
    ours = _our_judges(frame)
    if not ours or "creativity" not in frame:
        return True, ""
    rated = frame[pd.to_numeric(frame["creativity"], errors="coerce").notna()]
    if rated.empty:
        return True, ""  # nothing rated: no mean to set beside the paper's
    per_task = rated.groupby("task").size() if len(rated) else pd.Series(dtype=int)
    counts = ", ".join(f"{task} {n}" for task, n in per_task.items()) or "none"
    return False, (f"Our ratings (judge {'+'.join(ours)}) are min-max scaled within task over this dataset's own "
                   f"ideas (rated ideas per task in the selection: {counts}), not over every idea of the task in "
                   f"paper A's study (human and LLM ideas together): their means are on another scale than the "
                   f"paper's, so the tables of means (Tables {', '.join(k for k in MEAN_TABLES if k != 'fig1')} "
                   f"and Figure 1) show ours and the published apart, never beside; coefficients of the "
                   f"regression tables are in this dataset's units too.")


@dataclass(frozen=True)
class PaperATableData:
    table: str  # the table's key ("1", "24", "fig1"...)
    lacking: list[str] = field(default_factory=list)  # what the data lack for it (then nothing is fitted)
    result: paper_tables.PaperTable | None = None
    # each table of ours beside the paper's, with its text
    compared: list[tuple[beside.Beside, pd.DataFrame]] = field(default_factory=list)
    error: str = ""  # why it could not be fitted on this selection
    agreement: RatingsAgreement | None = None  # who rated the selection's ideas, and their agreement
    scale_note: str = ""  # why our means are not on the paper's scale ("" when they are)
    held_apart: bool = False  # a table of means whose published numbers are not set beside ours


def paper_a_tables_page_data(frame: pd.DataFrame, table: str, sample: str, stars: str) -> PaperATableData:
    """Table ``table`` of paper A on the selection ``frame``, in ``sample`` (``engine.samples``)
    with ``stars`` ("paper" or "conventional"), with the raters' agreement and the scale note."""
    agreement = ratings_agreement(frame)
    on_scale, scale_note = ratings_scale(frame)
    lacking = paper_tables.missing_needs(table, frame)
    if lacking:
        return PaperATableData(table, list(lacking), agreement=agreement, scale_note=scale_note)
    try:
        result = paper_tables.build(table, frame, stars=stars, sample=sample)
    except InputError as error:
        return PaperATableData(table, error=str(error), agreement=agreement, scale_note=scale_note)
    held_apart = not on_scale and paper_tables.table_def(table).key in MEAN_TABLES
    compared = [] if held_apart else [(t, t.formatted()) for t in beside.beside(result)]
    return PaperATableData(table, result=result, compared=compared, agreement=agreement,
                           scale_note=scale_note, held_apart=held_apart)

