"""The Paper A tables page's numbers: one of paper A's tables fitted on the page's sample and
stars (``engine.stats.paper_tables.build``, the twin of ``python -m engine analyze table N``)
and ours beside the published table row by row (``beside.beside``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from dashboard.page_data import beside
from engine.errors import InputError
from engine.stats import paper_tables


@dataclass(frozen=True)
class PaperATableData:
    table: str  # the table's key ("1", "24", "fig1"...)
    lacking: list[str] = field(default_factory=list)  # what the data lack for it (then nothing is fitted)
    result: paper_tables.PaperTable | None = None
    # each table of ours beside the paper's, with its text
    compared: list[tuple[beside.Beside, pd.DataFrame]] = field(default_factory=list)
    error: str = ""  # why it could not be fitted on this selection


def paper_a_tables_page_data(frame: pd.DataFrame, table: str, sample: str, stars: str) -> PaperATableData:
    """Table ``table`` of paper A on the selection ``frame``, in ``sample`` (``engine.samples``)
    with ``stars`` ("paper" or "conventional")."""
    lacking = paper_tables.missing_needs(table, frame)
    if lacking:
        return PaperATableData(table, list(lacking))
    try:
        result = paper_tables.build(table, frame, stars=stars, sample=sample)
    except InputError as error:
        return PaperATableData(table, error=str(error))
    return PaperATableData(table, result=result, compared=[(t, t.formatted()) for t in beside.beside(result)])
