"""The Regression page's numbers (paper A, Tables 1, 20-23, Figure 3a): one fit per team type
of the page's outcome on its predictor blocks (OLS with HC3 errors or a mixed model with task
intercepts, ``engine.stats.fit``), the LLM and human coefficients side by side (Table 23's
layout) and the R² ladder of Table 1 when the dataset has ratings
(``analyses.regression_ladder``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import pandas as pd

from dashboard.page_data import analyses
from dashboard.page_data.analyses import regression_ladder  # noqa: F401  (the default ``compute``'s)
from dashboard.page_data.feature_choices import feature_names
from engine import stats
from engine.errors import InputError
from engine.stats.guards import R2Headline, mixed_r2_guard, r2_headline
from engine.measures.trajectory import PAPER_A_FEATURES  # paper A's nine: the release's 4B columns

TEAMS = {"LLM": ["llm"], "Human": ["human"], "Both (side by side)": ["llm", "human"]}
FACTOR_BLOCKS = ("task", "model", "discussion", "persona", "team_size")
LABELS = {"llm": "LLM", "human": "Human"}


# how each estimator's 95% CIs are formed (``engine.stats.regression``): statsmodels gives robust
# and clustered OLS intervals with the normal quantile, plain OLS with Student's t; the mixed
# model's are Wald intervals on its REML standard errors
INTERVAL_METHODS = {
    "ols_hc3": ("95% CI: coefficient ± 1.96 · HC3 robust standard error (normal quantile)", "95% CI, HC3 SEs (normal)"),
    "ols_cluster": ("95% CI: coefficient ± 1.96 · cluster-robust standard error (normal quantile)",
                    "95% CI, clustered SEs (normal)"),
    "ols": ("95% CI: coefficient ± t(N − k) · OLS standard error (Student-t)", "95% CI, OLS SEs (t)"),
    "mixedlm": ("95% Wald CI: coefficient ± 1.96 · standard error of the REML mixed model (normal quantile)",
                "95% Wald CI, REML SEs (normal)"),
}


def interval_method(estimator: str) -> tuple[str, str]:
    """(full, short) description of the coefficient intervals of ``estimator``'s fits, for the
    coefficient plot's hover, caption and axis."""
    return INTERVAL_METHODS.get(estimator, ("95% CI from the fit's standard errors", "95% CI"))


def fit_table(frame: pd.DataFrame, outcome: str, blocks: tuple[str, ...], estimator: str, name: str,
              star_levels=(0.05, 0.01, 0.001)) -> dict:
    """One fit as plain data: ``{"table": coefficients, "summary": N, k, R²...}``."""
    result = analyses.fit_spec(frame, outcome, list(blocks), estimator, name, star_levels)
    return {"table": result.table, "summary": result.summary}


def with_4b_features(frame: pd.DataFrame) -> pd.DataFrame:
    """The release's Qwen3-Embedding-4B features (``<feature>_4b``, Table 26) in place of the
    0.6B ones, under the features' names."""
    swapped = {f"{f}_4b": f for f in PAPER_A_FEATURES if f"{f}_4b" in frame.columns}
    return frame.drop(columns=list(swapped.values())).rename(columns=swapped)


@dataclass(frozen=True)
class TeamFit:
    """One team type's fit: the blocks used, the factors left out (their one level, or None
    when they miss values), the fit as ``fit_table`` gives it, or why there is none."""

    label: str
    rows: int
    blocks: list[str] = field(default_factory=list)
    skipped: dict[str, str | None] = field(default_factory=dict)
    fit: dict | None = None
    error: str = ""  # a guard's refusal or a design the data cannot fit

    @property
    def too_few(self) -> bool:
        return self.rows < analyses.MIN_ROWS

    @property
    def r2(self) -> R2Headline | None:
        """The fit's R² to lead with (``engine.stats.guards.r2_headline``): a mixed model's
        conditional R² is a headline only with N ≥ 10·k and 5 or more task groups; otherwise
        ``headline`` is False and ``reason`` says which rule failed. None without a fit."""
        return r2_headline(self.fit["summary"]) if self.fit is not None else None


@dataclass(frozen=True)
class RegressionData:
    frame: pd.DataFrame  # the rows fitted (with the 4B features when asked)
    teams: list[TeamFit]
    compared: pd.DataFrame | None = None  # LLM vs human coefficients (two fits)
    compare_error: str = ""
    ladder_outcome: str | None = None
    ladder: pd.DataFrame | None = None  # Table 1's R² (%) per specification
    ladder_notes: list[str] = field(default_factory=list)
    ladder_n: pd.DataFrame | None = None  # N, k, N − k of each rung's fit

    @property
    def fits(self) -> dict[str, dict]:
        return {team.label: team.fit for team in self.teams if team.fit is not None}

    @property
    def used_blocks(self) -> dict[str, list[str]]:
        """The blocks of every team type a fit was tried on."""
        return {team.label: list(team.blocks) for team in self.teams if team.fit is not None or team.error}

    def terms(self, every_term: bool = False) -> list[str]:
        """The terms of the coefficient plot: the features every fit has (else, or with
        ``every_term``, every term but the intercept)."""
        tables = [fit["table"] for fit in self.fits.values()]
        if not tables:
            return []
        terms = [] if every_term else [f for f in feature_names() if all(f in set(t["term"]) for t in tables)]
        return terms or [t for t in tables[0]["term"] if t not in ("Intercept", "Group Var")]

    @property
    def ladder_warnings(self) -> list[str]:
        """The small-sample lines of the ladder, and one per mixed-effects rung whose R² is no
        headline (``engine.stats.guards.mixed_r2_guard`` on the rung's N and k and the task
        groups of its source's rows)."""
        if self.ladder_n is None:
            return []
        lines = analyses.ladder_warnings(self.ladder_n)
        for _, row in self.ladder_n.iterrows():
            if not str(row["specification"]).lower().startswith("mixed"):
                continue
            for source, name in LABELS.items():
                if f"{name} N" not in row or pd.isna(row[f"{name} N"]):
                    continue
                rows = self.frame[self.frame["source"] == source] if "source" in self.frame else self.frame
                groups = int(rows["task"].nunique()) if "task" in rows else None
                guard = mixed_r2_guard(int(row[f"{name} N"]), int(row[f"{name} k"]), groups)
                if not guard.headline:
                    lines.append(f"{name} / {row['specification']}: conditional R² {guard.reason}")
        return lines


def blocks_for(rows: pd.DataFrame, outcome: str, features, trajectory: bool, factors, estimator: str):
    """(blocks, skipped) of one team type: the trajectory block (or, for a feature as outcome,
    the other features of paper A's nine: a measure beyond them is never a predictor of paper
    A's specifications) and the chosen factors that vary in ``rows`` with no missing value;
    the mixed model takes task as its group, not as a block."""
    blocks, skipped = [], []
    if trajectory:
        if outcome in feature_names():
            blocks += [f for f in features if f != outcome and f in PAPER_A_FEATURES]
        else:
            blocks.append("trajectory")
    for block in factors:
        if estimator == "mixedlm" and block == "task":
            continue  # task is the random-intercept group
        if block in rows.columns and rows[block].nunique(dropna=True) >= 2 and rows[block].notna().all():
            blocks.append(block)
        else:
            skipped.append(block)
    return blocks, skipped


def regression_page_data(rows: pd.DataFrame, outcome: str, sources, estimator: str, *, features=(), ratings=(),
                         trajectory: bool = True, factors=("task",), star_levels=(0.05, 0.01, 0.001),
                         embedding: str = "0.6B", compute=sys.modules[__name__]) -> RegressionData:
    """The page's numbers on ``rows`` (the page's sample): ``outcome`` on the trajectory block
    (``trajectory``) and the chosen ``factors``, one fit per source of ``sources`` with
    ``estimator``; ``features`` and ``ratings`` the dataset has; ``embedding`` "4B" for the
    release's 4B features. ``compute`` gives ``fit_table`` and ``regression_ladder``: this
    module (default) or the page's caches of them (``dashboard.widgets.cached``)."""
    frame = with_4b_features(rows) if embedding == "4B" else rows
    teams = []
    for source in sources:
        part = frame[frame["source"] == source]
        label = LABELS[source]
        if len(part) < analyses.MIN_ROWS:
            teams.append(TeamFit(label, len(part)))
            continue
        blocks, skipped = blocks_for(part, outcome, features, trajectory, factors, estimator)
        constant = analyses.constant_factors(part, skipped) if skipped else {}
        team = TeamFit(label, len(part), blocks, {b: constant.get(b) for b in skipped})
        if blocks or estimator == "mixedlm":
            try:
                team = TeamFit(label, len(part), blocks, team.skipped,
                               fit=compute.fit_table(part, outcome, tuple(blocks), estimator, f"{label}: {outcome}",
                                                     tuple(star_levels)))
            except InputError as error:  # a guard (too few rows) or a design the data cannot fit
                team = TeamFit(label, len(part), blocks, team.skipped, error=str(error))
        teams.append(team)
    data = RegressionData(frame, teams)
    fits = data.fits
    compared, compare_error = None, ""
    if len(fits) == 2:
        (a_label, a), (b_label, b) = fits.items()
        try:
            compared = stats.compare_results(stats.RegressionResult(None, a["table"], a["summary"]),
                                             stats.RegressionResult(None, b["table"], b["summary"]),
                                             labels=(a_label, b_label))
        except InputError as error:
            compare_error = str(error)
    ladder_outcome = ladder = ladder_n = None
    notes: list[str] = []
    if ratings:
        ladder_outcome = "creativity" if "creativity" in ratings else ratings[0]
        ladder, notes, ladder_n = compute.regression_ladder(frame, ladder_outcome)
    return RegressionData(frame, teams, compared, compare_error, ladder_outcome, ladder, list(notes), ladder_n)
