"""What an error bar is, said on every chart that draws one, and no bar where the guards give none.

A chart with error bars names them three times: in the hover of every point (the interval or
SD, its n and the method, or why the point has none), in a short line under an axis title
("error bars: 95% CI, HC3 SEs"; under the category axis of vertical bars, where a second line
does not narrow the plot), and in full in ``fig.layout.meta["error_bars"]``, which
the pages print as a caption and the exports keep (``described``).

The guards decide where there is a bar: a spread or an interval from fewer than
``engine.stats.guards.MIN_GROUPS_FOR_INTERVAL`` groups (or sessions) is not drawn, and neither
is an undefined one. Plotly draws a NaN or 0 error as a cap on the point, which reads as "no
spread", so such points go in a trace of their own with no error bar (``split``), in the same
legend group, slot and look as the others.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from engine.stats.guards import MIN_GROUPS_FOR_INTERVAL

# the full descriptions (meta, captions) of the kinds of error bar the dashboard draws
SD_ACROSS_GROUPS = ("±1 SD of the per-group values across the diversity groups of a cell (population SD, "
                    f"divisor n); not drawn below {MIN_GROUPS_FOR_INTERVAL} groups")
SD_SHORT = f"error bars: ±1 SD across groups (≥ {MIN_GROUPS_FOR_INTERVAL} groups)"


def short_line(text: str) -> str:
    """'error bars: <text>' for an axis title."""
    return text if text.startswith("error bars:") else f"error bars: {text}"


def axis_title(base: str, short: str) -> str:
    """An axis title with the error bars' short line under it."""
    return f"{base}<br><span style='font-size:11px'>{short_line(short)}</span>"


def describe(fig: go.Figure, text: str) -> go.Figure:
    """Keep the full description of ``fig``'s error bars in ``layout.meta["error_bars"]``."""
    meta = dict(fig.layout.meta) if isinstance(fig.layout.meta, dict) else {}
    meta["error_bars"] = text
    fig.update_layout(meta=meta)
    return fig


def described(fig) -> str | None:
    """The full description of a figure's error bars (None for a chart without any)."""
    meta = fig.layout.meta if hasattr(fig, "layout") else (fig.get("layout") or {}).get("meta")
    return meta.get("error_bars") if isinstance(meta, dict) else None


def drawn(estimate, low, high, n=None, minimum: int = MIN_GROUPS_FOR_INTERVAL) -> np.ndarray:
    """Which points get an error bar: both ends finite, and ``n`` (when given) at least ``minimum``."""
    ok = np.isfinite(np.asarray(estimate, dtype=float)) & np.isfinite(np.asarray(low, dtype=float)) \
        & np.isfinite(np.asarray(high, dtype=float))
    if n is not None:
        ok &= np.asarray(pd.to_numeric(pd.Series(n), errors="coerce").fillna(0), dtype=float) >= minimum
    return ok


def split(frame: pd.DataFrame, mask) -> list[tuple[pd.DataFrame, bool]]:
    """``frame``'s rows with an error bar and without one, each part that has rows."""
    mask = np.asarray(mask, dtype=bool)
    parts = [(frame[mask], True), (frame[~mask], False)]
    return [(part, with_bar) for part, with_bar in parts if len(part)]


def asymmetric(estimate, low, high) -> dict:
    """A Plotly ``error_x``/``error_y`` from an interval's ends."""
    estimate = np.asarray(estimate, dtype=float)
    return dict(type="data", symmetric=False, array=np.asarray(high, dtype=float) - estimate,
                arrayminus=estimate - np.asarray(low, dtype=float))


def too_few(n, unit: str = "groups") -> str:
    """Why a point has no bar: 'no error bar: 2 groups (fewer than 3)'."""
    return f"no error bar: {n} {unit} (fewer than {MIN_GROUPS_FOR_INTERVAL})"
