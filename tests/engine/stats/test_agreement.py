"""engine.stats.agreement: Shrout & Fleiss ICCs and Krippendorff's interval alpha."""

import numpy as np
import pytest

from engine.errors import InputError
from engine.stats.agreement import ONE_RATING, icc, krippendorff_alpha, panel_agreement

# Shrout & Fleiss (1979), Table 2: six targets (rows) rated by four judges (columns).
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", reliability data of
# 4 observers (A-D) x 12 units, values 1-5, blanks missing; printed as observers x units,
# here transposed to units x observers.
n = np.nan
KRIPPENDORFF_2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],  # observer A
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],  # observer B
    [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],  # observer C
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n],  # observer D
]).T


def test_shrout_fleiss_table_4_coefficients():
    result = icc(SHROUT_FLEISS)
    # their Table 3 mean squares: BMS 11.24, WMS 6.26, JMS 32.49, EMS 1.02
    assert {k: round(v, 2) for k, v in result.mean_squares.items()} == \
        {"BMS": 11.24, "WMS": 6.26, "JMS": 32.49, "EMS": 1.02}
    # their Table 4: ICC(1,1) .17, ICC(2,1) .29, ICC(3,1) .71, ICC(1,4) .44, ICC(2,4) .62, ICC(3,4) .91
    printed = {"ICC(1,1)": 0.17, "ICC(2,1)": 0.29, "ICC(3,1)": 0.71, "ICC(1,k)": 0.44,
               "ICC(2,k)": 0.62, "ICC(3,k)": 0.91}
    assert {k: round(result.values[k], 2) for k in printed} == printed
    assert (result.n, result.k, result.dropped) == (6, 4, 0)
    assert result.label("ICC(3,k)") == "ICC(3,4)"


def test_shrout_fleiss_intervals():
    # the 95% bounds R's psych::ICC prints for these data (its documented example):
    # ICC1 [-0.13, 0.72], ICC2 [0.02, 0.76], ICC3 [0.34, 0.95], ICC1k [-0.88, 0.91],
    # ICC2k [0.07, 0.93], ICC3k [0.68, 0.99]
    expected = {"ICC(1,1)": (-0.13, 0.72), "ICC(2,1)": (0.02, 0.76), "ICC(3,1)": (0.34, 0.95),
                "ICC(1,k)": (-0.88, 0.91), "ICC(2,k)": (0.07, 0.93), "ICC(3,k)": (0.68, 0.99)}
    intervals = icc(SHROUT_FLEISS).intervals
    assert {k: tuple(round(v, 2) for v in intervals[k]) for k in expected} == expected


def test_icc_worked_by_hand_and_incomplete_rows_dropped():
    # rows (1,2), (3,3), (5,7); grand mean 3.5; row means 1.5, 3, 6 -> SS_rows = 2(4 + .25 + 6.25) = 21,
    # BMS = 10.5; column means 3, 4 -> SS_cols = 3(.25 + .25) = 1.5 = JMS; SS_total = 23.5 -> SS_err = 1,
    # EMS = .5; WMS = (1.5 + 1) / 3 = 5/6.
    # ICC(1,1) = (10.5 - 5/6)/(10.5 + 5/6) = 29/34; ICC(1,2) = (10.5 - 5/6)/10.5 = 58/63;
    # ICC(2,1) = 10/(11 + 2(1)/3) = 6/7; ICC(2,2) = 10/(10.5 + 1/3) = 12/13;
    # ICC(3,1) = 10/11; ICC(3,2) = 10/10.5 = 20/21.
    result = icc([[1, 2], [3, 3], [np.nan, 4], [5, 7]])
    assert result.dropped == 1 and result.n == 3 and result.k == 2
    expected = {"ICC(1,1)": 29 / 34, "ICC(1,k)": 58 / 63, "ICC(2,1)": 6 / 7, "ICC(2,k)": 12 / 13,
                "ICC(3,1)": 10 / 11, "ICC(3,k)": 20 / 21}
    for kind, value in expected.items():
        assert result.values[kind] == pytest.approx(value)


def test_icc_refuses_what_it_cannot_compute():
    with pytest.raises(InputError, match="at least 2 raters"):
        icc([[1], [2], [3]])
    with pytest.raises(InputError, match="at least 3 items"):
        icc([[1, 2], [3, 4], [np.nan, 1]])
    with pytest.raises(InputError, match="same mean"):
        icc([[1, 2], [2, 1], [1.5, 1.5]])
    with pytest.raises(InputError, match="expected a number"):
        icc([[1, "x"], [3, 4], [5, 6]])


def test_krippendorff_2011_example_interval_alpha():
    result = krippendorff_alpha(KRIPPENDORFF_2011)
    # Krippendorff (2011) gives interval alpha = 0.849 for these data; unit 12 (one value) is
    # not pairable: 11 units, 40 values.
    assert round(result.alpha, 3) == 0.849
    assert (result.units, result.values) == (11, 40)


def test_krippendorff_worked_by_hand():
    # units (1,2), (3,3), (2,2), (4,-): the last has one value and is left out; n = 6 values.
    # D_o = (1/6) [2 (1-2)^2 / 1 + 0 + 0] = 1/3; D_e over ordered pairs of {1,2,3,3,2,2}: unordered
    # squared differences: 1 with each 2 (x3): 3, 1 with each 3 (x2): 8, 2-3 (3 x 2 = 6 pairs): 6,
    # 2-2 and 3-3: 0 -> 17, ordered 34, / (6 * 5) = 34/30; alpha = 1 - (1/3)/(34/30) = 1 - 10/34 = 12/17.
    result = krippendorff_alpha([[1, 2], [3, 3], [2, 2], [4, np.nan]])
    assert result.alpha == pytest.approx(12 / 17) and result.units == 3 and result.values == 6
    assert result.observed == pytest.approx(1 / 3) and result.expected == pytest.approx(34 / 30)
    with pytest.raises(InputError, match="at least 3 items"):
        krippendorff_alpha([[1, 2], [3, 3], [2, np.nan]])


def test_panel_agreement_says_judge_ratings_and_agreement():
    summary = panel_agreement(SHROUT_FLEISS, judge="m x4")
    assert summary["items"] == 6 and summary["raters"] == 4
    assert summary["ratings_per_item"] == {"min": 4, "max": 4}
    assert round(summary["icc3k"], 2) == 0.91 and round(summary["icc21"], 2) == 0.29
    assert summary["text"].startswith("judge m x4: 4 ratings per item from 4 raters, N = 6 items: ICC(3,4) = 0.91")
    assert "ICC(2,1) = 0.29" in summary["text"]


def test_panel_agreement_one_rating_per_item_gives_no_number():
    summary = panel_agreement([[3.0], [5.0], [7.0], [2.0]], judge="m")
    assert summary["note"] == ONE_RATING
    assert summary["icc3k"] is None and summary["icc21"] is None and summary["alpha"] is None
    assert summary["text"] == "judge m: one rating per item: agreement cannot be computed (N = 4 items)."
    assert not any(ch.isdigit() for ch in summary["text"].split("(N =")[0])


def test_panel_agreement_counts_dropped_and_too_few():
    # 4 items, 2 raters, one item with a rating missing: 3 complete rows, as by hand above.
    summary = panel_agreement([[1, 2], [3, 3], [np.nan, 4], [5, 7]])
    assert summary["dropped_items"] == 1 and summary["complete_items"] == 3
    assert summary["icc3k"] == pytest.approx(20 / 21)
    assert "(1 with a missing rating left out)" in summary["text"]
    assert summary["alpha_items"] == 3 and "over the 3 items with two or more ratings" in summary["text"]
    few = panel_agreement([[1, 2], [3, 5]])
    assert few["icc3k"] is None and few["alpha"] is None
    assert "ICC: an ICC needs at least 3 items" in few["note"] and "alpha: Krippendorff's alpha needs" in few["note"]


def test_a_panel_with_nothing_readable_is_not_called_one_rating():
    nothing = panel_agreement([[np.nan] * 5] * 4, judge="m x5")
    assert nothing["note"] == "no item has a readable rating: agreement cannot be computed"
    assert nothing["text"] == ("judge m x5: 5 raters asked; no item has a readable rating: agreement cannot be "
                               "computed (N = 0 items with a readable rating, 4 without).")
    sparse = panel_agreement([[1, np.nan], [np.nan, 3], [2, np.nan]])
    assert sparse["note"] == "at most one readable rating per item: agreement cannot be computed"
    assert sparse["icc3k"] is None and sparse["alpha"] is None
