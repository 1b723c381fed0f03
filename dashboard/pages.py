"""The dashboard's pages, listed once: the app's navigation (``dashboard/app.py``), the pages'
notebooks (``dashboard.notebooks``), the browser tools (``devtools``), the benchmarks and the
tests all read this list.

Each page is a ``Page``: its key (the name of its view module and its URL), the title and icon
the sidebar shows, what it needs from the open dataset (``needs``, names of
``dashboard.page_data.needs.NEEDS``: the page says what is missing and how to get it), its view
(the module of ``dashboard/views/`` whose ``render(ctx)`` draws the page), its notebook (its
recipe, a function of ``dashboard.notebooks.recipes`` whose source is the notebook's cells) and,
where it has one, its ``page_data`` function (``dashboard.page_data``: the page's numbers, which
the page and its notebook both call). Views, notebooks and ``page_data`` functions are named by
dotted path and imported only when asked for (``load``), so this module imports nothing heavy
and no Streamlit.

Adding a page: its view, its notebook recipe, its ``page_data`` function, its test, and one line
below (ARCHITECTURE.md, "A dashboard page").
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

DASHBOARD = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Page:
    """One page of the dashboard. ``view`` and ``notebook`` default to the key's module in
    ``dashboard.views`` and its function in ``dashboard.notebooks.recipes``."""

    key: str
    title: str
    icon: str
    page_data: str | None = None  # "package.module.function"
    needs: tuple[str, ...] = ()  # what the open dataset must hold (dashboard.page_data.needs.NEEDS)
    view: str = ""  # "dashboard.views.<key>"
    notebook: str = ""  # "dashboard.notebooks.recipes.<key>"
    default: bool = False  # the page the app opens on

    def __post_init__(self) -> None:
        if not self.view:
            object.__setattr__(self, "view", f"dashboard.views.{self.key}")
        if not self.notebook:
            object.__setattr__(self, "notebook", f"dashboard.notebooks.recipes.{self.key}")

    @property
    def url_path(self) -> str:
        """The page's address in the served app (``/<key>``; the default page also at ``/``)."""
        return self.key

    @property
    def render(self):
        """The view's ``render(ctx)`` function, its module imported now."""
        return load(f"{self.view}.render")

    @property
    def path(self) -> Path:
        """The view's module file."""
        return DASHBOARD.parent.joinpath(*self.view.split(".")).with_suffix(".py")

    @property
    def script(self) -> str:
        """The view's file relative to the app's folder, ``views/<key>.py``, as
        ``AppTest.switch_page`` takes it (it opens the page whose URL is the file's name)."""
        return self.path.relative_to(DASHBOARD).as_posix()


PAGES: tuple[Page, ...] = (
    Page("data_page", "Data", ":material/table:", "dashboard.page_data.datasets.data_page_data", default=True),
    Page("llm_vs_human", "LLM vs human", ":material/groups:",
         "dashboard.page_data.llm_vs_human.llm_vs_human_page_data", needs=("features",)),
    Page("trajectories", "Trajectories", ":material/timeline:",
         "dashboard.page_data.trajectories.trajectories_page_data", needs=("turn_embeddings",)),
    Page("design_levers", "Design levers", ":material/tune:",
         "dashboard.page_data.design_levers.design_levers_page_data", needs=("features",)),
    Page("regression", "Regression", ":material/functions:", "dashboard.page_data.regression.regression_page_data",
         needs=("outcome",)),
    Page("paper_a_tables", "Paper A tables", ":material/table_chart:",
         "dashboard.page_data.paper_a_tables.paper_a_tables_page_data", needs=("features",)),
    Page("diversity", "Diversity", ":material/scatter_plot:", "dashboard.page_data.diversity.diversity_page_data",
         needs=("paper_b_runs",)),
    Page("quality_diversity", "Quality–Diversity", ":material/balance:",
         "dashboard.page_data.quality_diversity.quality_diversity_page_data", needs=("paper_b_runs",)),
    Page("steering", "Steering", ":material/explore:", "dashboard.page_data.steering.steering_page_data"),
    Page("pilot", "Pilot", ":material/science:", "dashboard.page_data.pilot_diagnosis.pilot_page_data"),
    Page("compare", "Compare runs", ":material/compare_arrows:", "dashboard.page_data.comparison.compare_page_data"),
    Page("rate_ideas", "Rate ideas", ":material/rate_review:", "dashboard.page_data.rating.rate_ideas_page_data"),
    Page("judges", "Judges", ":material/gavel:", "dashboard.page_data.judges.judges_page_data"),
    Page("export", "Export", ":material/download:", "dashboard.exports.report.catalog"),  # the report's own items
)


def keys() -> list[str]:
    return [page.key for page in PAGES]


def titles() -> list[str]:
    return [page.title for page in PAGES]


def page(key: str) -> Page:
    """The page of ``key``; a ``KeyError`` naming the keys for any other."""
    for candidate in PAGES:
        if candidate.key == key:
            return candidate
    raise KeyError(f"unknown page {key!r}; pages: {', '.join(keys())}")


def by_title(title: str) -> Page:
    for candidate in PAGES:
        if candidate.title == title:
            return candidate
    raise KeyError(f"no page titled {title!r}; titles: {', '.join(titles())}")


def by_path(path: str | Path) -> Page:
    """The page whose view module is the file ``path``."""
    for candidate in PAGES:
        if candidate.path == Path(path).resolve():
            return candidate
    raise KeyError(f"no page's view is {path}; views: {', '.join(page.script for page in PAGES)}")


def load(dotted: str):
    """The object a dotted path names (``"dashboard.notebooks.recipes.trajectories"``),
    its module imported now."""
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)
