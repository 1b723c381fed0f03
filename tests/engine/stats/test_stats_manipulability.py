"""Table 24 / Table 2 of paper A reproduced from the authors' released metrics."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.importers.paper_release import read_metrics
from engine.stats.published_a import published_reference
from engine.stats import MANIPULABILITY_COLUMNS, interaction_share, manipulability

RELEASE = Path(__file__).resolve().parents[4] / "shared/data/paper_release/comprehensive_trajectory_metrics.csv"


@pytest.fixture(scope="module")
def paper_sample():
    if not RELEASE.exists():
        pytest.skip(f"paper release not at {RELEASE}")
    df = read_metrics(RELEASE)
    return df[(df.source == "llm") & df.discussion.isin(["instructed", "open", "iterative"])]


@pytest.fixture(scope="module")
def table24(paper_sample):
    return manipulability(paper_sample)


def test_n_is_3574(table24):
    assert table24.attrs["n"] == 3574
    assert list(table24.columns) == list(MANIPULABILITY_COLUMNS)
    assert list(table24.index) == list(PAPER_A_FEATURES)


def test_reproduces_table24_to_one_decimal(table24):
    published = published_reference()["table24"]
    for feature, values in published.items():
        ours = tuple(round(100 * v, 1) for v in table24.loc[feature])
        assert ours == pytest.approx(values, abs=1e-9), feature


def test_reproduces_table2_mean_row(table24):
    assert tuple(round(100 * v, 1) for v in table24.mean()) == (1.8, 13.3, 11.8, 22.8, 26.8)


def test_each_cell_equals_statsmodels_formula(paper_sample):
    """Independent check: R² from statsmodels' formula API on the same complete rows."""
    data = paper_sample.dropna(subset=list(PAPER_A_FEATURES))
    formulas = {"task": "C(task)", "task+discussion": "C(task) + C(discussion)",
                "task+model": "C(task) + C(model)", "additive": "C(task) + C(discussion) + C(model)",
                "interaction": "C(task) + C(discussion) * C(model)"}
    ours = manipulability(paper_sample)
    for feature in ("semantic_spread", "max_distance"):
        for column, rhs in formulas.items():
            expected = smf.ols(f"{feature} ~ {rhs}", data=data).fit().rsquared
            assert ours.loc[feature, column] == pytest.approx(expected, abs=1e-10)


def test_interaction_share_is_table25(table24):
    share = interaction_share(table24)
    # Table 25: semantic spread 11.2% additive, 13.6% interaction, 24.8% full, 55% from interaction
    row = share.loc["semantic_spread"]
    assert round(100 * row["interaction_increment"], 1) == 13.6
    assert round(100 * row["share_from_interaction"]) == 55
    assert share.index[0] == "semantic_spread"  # Table 25's first row


def test_one_level_factor_and_missing_column():
    df = pd.DataFrame({f: np.random.default_rng(0).normal(size=30) for f in PAPER_A_FEATURES})
    df["task"] = np.resize(["a", "b", "c"], 30)
    df["discussion"] = np.resize(["open", "iterative"], 30)
    with pytest.raises(InputError, match="manipulability needs column 'model'"):
        manipulability(df)
    with pytest.raises(InputError, match="factor 'model' has 1 level"):
        manipulability(df.assign(model="gpt-4.1"))
