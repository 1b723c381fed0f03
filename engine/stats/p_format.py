"""One way to print a p-value, as the papers print them: ``<0.001`` below one in a thousand,
otherwise three decimals; a missing p as a dash. Every table of the project that prints p
(regressions, Hedges' g comparisons, the exports) goes through ``format_p``."""

from __future__ import annotations

import math

SMALLEST_PRINTED = 0.001


def format_p(value) -> str:
    """``<0.001``, ``0.042``, or ``–`` for a missing value (None, NaN)."""
    if value is None:
        return "–"
    value = float(value)
    if math.isnan(value):
        return "–"
    return f"<{SMALLEST_PRINTED}" if value < SMALLEST_PRINTED else f"{value:.3f}"
