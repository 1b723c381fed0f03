"""What the Rate ideas page shows about a dataset's human ratings (no Streamlit here): the ideas
that can be rated, the shared order (as written, or as it would be), every rater's progress,
the export and the raters' agreement (``engine.judging.human_rating``: paper A's Consensual
Assessment Technique, Methods "Creativity evaluation"), and paper A's own Table 4 beside it,
labelled published. Rating itself goes through ``engine.judging.human_rating.rate``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from engine.judging import human_rating as hr
from engine.stats import published_a

PROGRESS_COLUMNS = ("rater", "ideas rated", "of", "next idea", "ratings saved", "last saved (UTC)")


@dataclass(frozen=True)
class RatingPageData:
    """``items`` of the dataset; ``order`` (None without an idea to rate; ``order_written``:
    whether ``order.json`` exists yet); ``progress`` one row per rater; ``export`` (None
    before any rating); ``agreement``; ``notes`` said while reading the raters' files;
    ``published`` paper A's Table 4 (ICC(3,5) of its five judges)."""

    items: hr.ItemList
    order: hr.Order | None
    order_written: bool
    progress: pd.DataFrame
    export: hr.Export | None
    agreement: hr.Agreement | None
    notes: list[str] = field(default_factory=list)
    published: pd.DataFrame | None = None


def rateable(dataset) -> int:
    """How many ideas of ``dataset`` can be rated (0: none, or no idea texts at all)."""
    return len(hr.idea_items(dataset).items)


def progress_table(order: hr.Order, raters: dict) -> pd.DataFrame:
    rows = []
    for name, found in raters.items():
        done = sum(i in found.latest for i in order.sequence)
        following = hr.next_position(order, found.latest)
        rows.append({"rater": name, "ideas rated": done, "of": len(order.sequence),
                     "next idea": "all rated" if following is None else str(following + 1),
                     "ratings saved": len(found.records),
                     "last saved (UTC)": max((r.get("time", "") for r in found.records), default="")})
    return pd.DataFrame(rows, columns=list(PROGRESS_COLUMNS))


def rate_ideas_page_data(dataset, root: str | Path | None = None) -> RatingPageData:
    """The page's numbers for ``dataset`` with the ratings under ``root`` (default
    ``engine.judging.human_rating.ratings_root()``). Reads only: the order is written when a
    rater starts (``human_rating.open_order``)."""
    root = Path(root) if root else hr.ratings_root()
    items = hr.idea_items(dataset)
    empty = pd.DataFrame(columns=list(PROGRESS_COLUMNS))
    if not items.items:
        return RatingPageData(items, None, False, empty, None, None, published=published_a.table4())
    order = hr.planned_order(items, root)
    written = order.path.exists()
    raters = hr.all_raters(order) if written else {}
    notes = [note for found in raters.values() for note in found.notes]
    export = hr.export_table(order, items, raters) if raters else None
    return RatingPageData(items, order, written, progress_table(order, raters), export,
                          hr.agreement(order, raters), notes, published_a.table4())


def exact_values(agreement: hr.Agreement) -> str:
    """The agreement table's coefficients in full (9 decimals), one line per scale and task."""
    lines = []
    for row in agreement.table.to_dict("records"):
        k = row["k raters"]

        def value(column: str) -> str:
            number = row[column]
            return "–" if number is None or pd.isna(number) else f"{number:.9f}"

        lines.append(f"{row['scale']} ({row['task']}): ICC(3,{k}) = {value('ICC(3,k)')}; ICC(2,1) = "
                     f"{value('ICC(2,1)')}; ICC(2,{k}) = {value('ICC(2,k)')}; alpha = {value('alpha (interval)')}; "
                     f"N = {row['N items']} ideas, k = {k} raters" + (f"; {row['note']}" if row["note"] else ""))
    return "\n".join(lines)
