"""The Diversity page's headline gain with its bootstrap interval over groups."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.page_data import diversity as diversity_data


def table(creative, homo):
    rows = []
    for task, (c, h) in enumerate(zip(creative, homo)):
        rows.append({"method": "creative_mad", "task": f"t{task}", "vendi": np.mean(c), "vendi_per_group": c})
        rows.append({"method": "homo_mad", "task": f"t{task}", "vendi": np.mean(h), "vendi_per_group": h})
    return pd.DataFrame(rows)


def test_gain_and_interval_over_groups():
    creative = [[5.0, 6.0, 7.0], [4.0, 5.0, 6.0]] * 2
    homo = [[4.0, 4.5, 5.0], [3.0, 4.0, 5.0]] * 2
    result = diversity_data.gain_interval(table(creative, homo), "vendi", n_boot=4000)
    # by hand: task-averaged means 5.5 and 4.25 -> +29.41%
    assert result["gain"] == pytest.approx(100 * (5.5 - 4.25) / 4.25)
    assert result["low"] < result["gain"] < result["high"]
    assert result["groups"] == {"creative_mad": 12, "homo_mad": 12} and result["cells"] == {"creative_mad": 4, "homo_mad": 4}
    # the extreme resamples bound the interval: all-lowest vs all-highest groups
    worst = 100 * (np.mean([5, 4]) - np.mean([5, 5])) / np.mean([5, 5])
    best = 100 * (np.mean([7, 6]) - np.mean([4, 3])) / np.mean([4, 3])
    assert worst <= result["low"] and result["high"] <= best


def test_fewer_than_ten_groups_a_side_give_no_bootstrap_interval():
    # 6 groups a side: a percentile bootstrap of so few values undercovers, so none is given
    t = table([[5.0, 6.0, 7.0], [4.0, 5.0, 6.0]], [[4.0, 4.5, 5.0], [3.0, 4.0, 5.0]])
    result = diversity_data.gain_interval(t, "vendi")
    assert result["gain"] == pytest.approx(100 * (5.5 - 4.25) / 4.25)
    assert result["low"] is None and result["high"] is None
    assert result["reason"] == "too few groups for a bootstrap interval (6 and 6; at least 10 a side)"


def test_one_group_per_cell_gives_no_interval():
    """The old headline: one group per cell, SD 0, shown without any uncertainty."""
    result = diversity_data.gain_interval(table([[5.0], [6.0]], [[4.0], [5.0]]), "vendi")
    assert result["gain"] == pytest.approx(100 * (5.5 - 4.5) / 4.5)
    assert result["low"] is None and result["high"] is None and result["single_group_cells"] == 4
