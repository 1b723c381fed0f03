"""The trajectory features the pages and notebooks offer to pick from and show, read from one
place: every picker, feature list and feature table of the dashboard goes through here.

``feature_names()`` is every registered feature (``engine.measures.registry``: paper A's nine
of Table 19, forward flow, discursive diversity and any a plugin adds), in the registry's
order; ``feature_choices(table)`` the ones a table holds. Paper A's own computations (Table 24's nine, the release's 4B columns) keep
paper A's list.
"""

from __future__ import annotations

import pandas as pd

from engine.measures.registry import feature_names

__all__ = ["feature_choices", "feature_names"]


def feature_choices(table: pd.DataFrame) -> list[str]:
    """The features ``table`` has a column for with at least one value, in ``feature_names()``
    order: what a picker offers."""
    return [f for f in feature_names() if f in table.columns and table[f].notna().any()]
