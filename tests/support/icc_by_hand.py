"""Shrout & Fleiss (1979) ICCs from the two-way ANOVA mean squares, written out in numpy for the
tests that check the Rate ideas page (independent of ``engine.stats.agreement``)."""

from __future__ import annotations

import numpy as np


def shrout_fleiss(ratings) -> dict[str, float]:
    """ICC(3,k), ICC(2,1), ICC(2,k) of an items x raters array with no missing value."""
    x = np.asarray(ratings, dtype=float)
    n, k = x.shape
    grand = x.mean()
    between_items = k * np.sum((x.mean(axis=1) - grand) ** 2) / (n - 1)      # BMS
    between_raters = n * np.sum((x.mean(axis=0) - grand) ** 2) / (k - 1)     # JMS
    residual = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + grand
    error = np.sum(residual ** 2) / ((n - 1) * (k - 1))                      # EMS
    return {"ICC(3,k)": (between_items - error) / between_items,
            "ICC(2,1)": (between_items - error) / (between_items + (k - 1) * error
                                                   + k * (between_raters - error) / n),
            "ICC(2,k)": (between_items - error) / (between_items + (between_raters - error) / n)}
