"""The Design levers page's numbers (paper A, Tables 2, 24 and 25): the LLM rows of the page's
sample the feature means are drawn from, and the manipulability table (R² of each feature on
the design factors, ``analyses.manipulability_percent``) beside the published Table 24, with
Table 25's interaction share and the Qwen3-Embedding-4B robustness table when the release has
those columns."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pandas as pd

from dashboard.page_data import beside
from dashboard.page_data.analyses import manipulability_percent  # noqa: F401  (the default ``compute``'s)
from dashboard.page_data.datasets import Availability
from engine.errors import InputError
from engine.stats import interaction_share, published_a
from engine.stats.manipulability import adjusted_r2


def levers_tables(ours: pd.DataFrame):
    """(``beside.Beside`` of our Table 24 beside the published one, its text, ours − published
    as numbers, Table 25's interaction share)."""
    rows = beside.manipulability_beside(ours)
    return rows, rows.formatted(), beside.values_of(rows, beside.DIFF), interaction_share(ours / 100).round(3)


@dataclass(frozen=True)
class DesignLeversData:
    llm: pd.DataFrame  # the LLM rows of the page's sample
    features: list[str]
    ours: pd.DataFrame | None = None  # Table 24 computed here, in percent (attrs: n, fits); None: not computed
    error: str = ""  # why not
    beside_paper: beside.Beside | None = None  # ours beside the published Table 24
    beside_paper_text: pd.DataFrame | None = None
    difference: pd.DataFrame | None = None  # ours − published, percentage points
    share: pd.DataFrame | None = None  # Table 25
    robust: pd.DataFrame | None = None  # Table 24 on the release's 4B features
    robust_error: str = ""

    @property
    def interaction_fit(self) -> dict:
        """N, k, N − k and the guards' verdicts of the interaction model's fit."""
        return self.ours.attrs["fits"]["interaction"]

    @property
    def mean_interaction(self) -> float:
        """Mean R² (%) over the features of the interaction model (Table 2's headline)."""
        return float(self.ours["interaction"].mean())

    @property
    def adjusted(self) -> pd.DataFrame:
        """Table 24 as adjusted R² (%), from each column's N and k."""
        return adjusted_r2(self.ours)

    @property
    def mean_interaction_adjusted(self) -> float:
        return float(self.adjusted["interaction"].mean())

    @property
    def published_mean_interaction(self) -> float:
        return float(published_a.table24()["interaction"].mean())

    @property
    def fits(self) -> pd.DataFrame:
        """N, k, N − k, small sample and refused of each column's fit."""
        return pd.DataFrame(self.ours.attrs["fits"]).T[["n", "k", "df_resid", "small_sample", "refuse"]]


def design_levers_page_data(frame: pd.DataFrame, rows: pd.DataFrame, sample: str, have: Availability, *,
                            compute=sys.modules[__name__]) -> DesignLeversData:
    """The page's numbers: ``frame`` is the selection, ``rows`` its rows in ``sample`` (the
    page's sample picker, ``engine.samples``), ``have`` what the dataset holds. Nothing is
    fitted without LLM rows or features. ``compute`` gives ``manipulability_percent`` and
    ``levers_tables``: this module (default) or the page's caches of them
    (``dashboard.widgets.cached``)."""
    llm = rows[rows["source"] == "llm"] if "source" in rows else rows
    features = list(have.features)
    if llm.empty or not features:
        return DesignLeversData(llm, features)
    try:
        ours = compute.manipulability_percent(frame, "", sample)
    except InputError as error:
        return DesignLeversData(llm, features, error=str(error))
    shown, text, difference, share = compute.levers_tables(ours)
    robust, robust_error = None, ""
    if have.features_4b:
        try:
            robust = compute.manipulability_percent(frame, "_4b", sample)
        except InputError as error:
            robust_error = str(error)
    return DesignLeversData(llm, features, ours, "", shown, text, difference, share, robust, robust_error)
