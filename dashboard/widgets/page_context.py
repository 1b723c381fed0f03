"""What a page's ``render(ctx)`` is given (``PageContext``: its registry entry, the open dataset,
the sidebar's selection) and the check of a page's needs (``Page.needs``) against that dataset,
which shows one message naming what is missing and how to get it."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from dashboard import pages
from dashboard.pages import Page
from dashboard.page_data import needs
from dashboard.page_data.datasets import Availability
from dashboard.widgets import cached, session, ui
from engine.datasets import Dataset


@dataclass(frozen=True)
class PageContext:
    """The page being drawn and the session's selection: the dataset chosen in the sidebar
    (None when there is none), its conversations after the sidebar's filters, what it holds."""

    page: Page
    dataset: Dataset | None
    frame: pd.DataFrame
    have: Availability | None
    selections: dict[str, list[str]] = field(default_factory=dict)

    def opened(self) -> tuple[Dataset, pd.DataFrame, Availability]:
        """(dataset, filtered table, availability), or stop the page with a message when there
        is no dataset or the filters leave no row."""
        if self.dataset is None:
            st.info("No dataset yet: build one (`python -m engine.dataset_builds.paper_release`) or "
                    "upload a file on the Data page.")
            st.stop()
        if self.frame.empty:
            st.warning("The sidebar filters leave no conversation: widen them.")
            st.stop()
        return self.dataset, self.frame, self.have

    def lacking(self) -> list[needs.Need]:
        """The page's needs the open dataset lacks (none without a dataset: ``opened`` says so)."""
        return [] if self.have is None else needs.missing(self.page.needs, self.have)


def context(page: Page) -> PageContext:
    """The context of ``page`` in this session."""
    dataset = session.current_dataset()
    have = cached.availability(dataset) if dataset is not None else None
    return PageContext(page, dataset, session.filtered_conversations(), have, session.current_selections())


def show(view_file: str) -> None:
    """Draw the page whose view is ``view_file``: its ``render`` (from the imported view module)
    with this session's context. Each view's file ends by calling this when Streamlit runs it as
    the page's script."""
    page = pages.by_path(view_file)
    page.render(context(page))


def says_what_is_missing(ctx: PageContext) -> bool:
    """Show the one message naming what the page needs and the open dataset lacks, and how to get
    it; True when something is missing (the page then shows what it can without it)."""
    lacking = ctx.lacking()
    if lacking:
        message = needs.message(ui.escape(ctx.dataset.name), lacking)  # the name is the user's; the rest ours
        st.info(message)
    return bool(lacking)
