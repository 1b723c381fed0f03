"""The LLM vs human page's numbers (paper A, Figure 1, Tables 5 and 12): how many conversations
of each source, each chosen feature and rating LLM − human (Welch's interval and p, Hedges' g
with its interval: ``analyses.feature_comparison``), who is in the pooled top 5% of an outcome
and each group's own best 5% (``engine.stats.top_share``, ``top_within_groups``)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from dashboard.page_data import analyses
from engine import stats
from engine.errors import InputError


@dataclass(frozen=True)
class LlmVsHumanData:
    n_llm: int
    n_human: int
    effects: pd.DataFrame | None  # the chosen features, LLM − human; None: no features, or not both sources
    rating_effects: pd.DataFrame | None  # the ratings, LLM − human
    top: pd.DataFrame | None  # the pooled top 5% of ``outcome`` (the "overall" rows of ``top_share``)
    within: pd.DataFrame | None  # each group's own 95th percentile and best 5% (Figure 1c-d)
    top_error: str = ""  # why there is no top-5% view of the outcome

    @property
    def both(self) -> bool:
        """Two conversations or more of each source: what a group comparison needs."""
        return self.n_llm >= 2 and self.n_human >= 2


def llm_vs_human_page_data(rows: pd.DataFrame, features: list[str] | None, outcome: str | None = None,
                           ratings=(), *, compute=analyses) -> LlmVsHumanData:
    """The page's numbers on ``rows`` (the page's sample of the selection): ``features`` chosen
    (None when the dataset has none), the ``ratings`` present, ``outcome`` of the top-5% view
    (None: no view). ``compute`` gives ``feature_comparison``: ``analyses`` or the page's cache
    of it (``dashboard.widgets.cached``)."""
    counts = rows["source"].value_counts()
    n_llm, n_human = int(counts.get("llm", 0)), int(counts.get("human", 0))
    both = n_llm >= 2 and n_human >= 2
    effects = compute.feature_comparison(rows, list(features)) if both and features is not None else None
    rating_effects = compute.feature_comparison(rows, list(ratings)) if both and ratings else None
    top = within = None
    error = ""
    if outcome:
        try:
            shares = stats.top_share(rows, outcome, q=0.95)
        except InputError as problem:
            error = str(problem)
        else:
            top = shares[shares["by"] == "overall"]
            within = stats.top_within_groups(rows, outcome, 0.05)
    return LlmVsHumanData(n_llm, n_human, effects, rating_effects, top, within, error)
