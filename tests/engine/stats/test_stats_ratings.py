"""Ratings: min-max within task, creativity product/additive, ICC(3,k)."""

import pandas as pd
import pytest

from engine.errors import InputError
from engine.stats import creativity_additive, creativity_product, icc3k, minmax_within_task

# Shrout & Fleiss (1979), Table 2: six targets rated by four judges.
SHROUT_FLEISS = pd.DataFrame([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8],
                              [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])


def test_icc3k_shrout_fleiss_worked_example():
    icc, low, high = icc3k(SHROUT_FLEISS)
    # Shrout & Fleiss report ICC(3,4) = .91; psych::ICC on these data gives the 95% CI
    # [0.676, 0.99] (F = 11.03 on 5 and 15 df).
    assert round(icc, 2) == 0.91
    assert round(low, 3) == 0.676
    assert round(high, 2) == 0.99


def test_icc3k_bad_input():
    with pytest.raises(InputError, match="at least 2 raters"):
        icc3k(SHROUT_FLEISS[[0]])
    with pytest.raises(InputError, match="at least 3 rated targets"):
        icc3k(SHROUT_FLEISS.head(2))


def test_minmax_within_task_by_hand():
    df = pd.DataFrame({"task": ["a", "a", "a", "b", "b"], "novelty": [2, 4, 6, 10, 20],
                       "usefulness": [1, 1, 3, 5, 0]})
    scaled = minmax_within_task(df, ["novelty", "usefulness"])
    assert scaled.novelty.tolist() == [0.0, 0.5, 1.0, 0.0, 1.0]
    assert scaled.usefulness.tolist() == [0.0, 0.0, 1.0, 1.0, 0.0]
    assert creativity_product(scaled).tolist() == [0.0, 0.0, 1.0, 0.0, 0.0]
    assert creativity_additive(scaled).tolist() == [0.0, 0.5, 2.0, 1.0, 1.0]
    assert df.novelty.tolist() == [2, 4, 6, 10, 20]  # input untouched


def test_minmax_flat_task_is_an_error():
    df = pd.DataFrame({"task": ["a", "a"], "novelty": [3, 3]})
    with pytest.raises(InputError, match="in task 'a' is the same"):
        minmax_within_task(df, "novelty")
