"""Charts of the Compare runs page: differences between runs with their intervals, one
distinct colour per run (``dashboard.figures.style``), as run trackers show deltas.

* ``difference_forest``: per column (feature or rating), each run's standardised difference
  from the reference run (Hedges' g, ``engine.stats.guards.hedges_g``) with its 95% interval,
  0 marked; columns without an interval (too few sessions) are drawn without a bar.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.figures import error_bars, style
from engine.stats.guards import METHOD_HEDGES, MIN_GROUPS_FOR_INTERVAL


def run_styles(runs) -> dict:
    """One look per run, distinct within the chart (``style.series_styles``)."""
    return style.series_styles([str(r) for r in runs], "dataset")


def difference_forest(table: pd.DataFrame, title: str, labels: dict[str, str] | None = None) -> go.Figure:
    """``table`` from ``dashboard.page_data.comparison.run_differences``: one trace per run,
    x = Hedges' g of run minus reference, error bars its interval, y = column."""
    fig = go.Figure()
    if table.empty:
        fig.add_annotation(text="no column to compare", showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
        return style.finish(fig, title)
    labels = labels or {}
    columns = list(dict.fromkeys(table["column"]))
    names = [labels.get(c, c) for c in columns]
    runs = list(dict.fromkeys(table["run"]))
    looks = run_styles(runs)
    n = len(runs)
    for position, run in enumerate(runs):
        part = table[table["run"] == run].set_index("column").reindex(columns)
        offset = (position - (n - 1) / 2) * 0.22
        part = part.assign(_y=np.arange(len(columns)) + offset, _name=names)
        mask = error_bars.drawn(part["g"], part["g_low"], part["g_high"])
        for piece, has_bar in error_bars.split(part, mask):
            g = piece["g"].to_numpy(float)
            spread = [f"95% CI [{lo:.2f}, {hi:.2f}]" if has_bar else (str(note) if isinstance(note, str) and note
                                                                     else "no interval")
                      for lo, hi, note in zip(piece["g_low"], piece["g_high"], piece.get("note", [""] * len(piece)))]
            fig.add_trace(go.Scatter(
                x=g, y=piece["_y"], mode="markers", name=html.escape(str(run), quote=False),
                legendgroup=str(run), showlegend=has_bar or not mask.any(),
                marker=style.marker(looks[str(run)], size=10),
                error_x=dict(**error_bars.asymmetric(g, piece["g_low"], piece["g_high"]), color=looks[str(run)].colour)
                if has_bar else None,
                customdata=np.stack([piece["_name"], piece["difference"].to_numpy(float), piece["p"].to_numpy(float),
                                     spread], axis=1),
                hovertemplate="%{customdata[0]}: g = %{x:.2f}, %{customdata[3]}<br>difference %{customdata[1]:.3f}, "
                              "p = %{customdata[2]:.3f}<br>" + METHOD_HEDGES
                              + f"<extra>{html.escape(str(run), quote=False)}</extra>"))
    fig.add_vline(x=0, line_dash="dot", line_color="#888")
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(columns))), ticktext=names, autorange="reversed")
    reference = html.escape(str(table["reference"].iloc[0]), quote=False)
    error_bars.describe(fig, f"95% CI of Hedges' g: {METHOD_HEDGES}; not drawn below {MIN_GROUPS_FOR_INTERVAL} "
                             "sessions a run")
    return style.finish(fig, title, height=140 + 34 * len(columns),
                        xaxis_title=error_bars.axis_title(f"Hedges' g, run − {reference}",
                                                          "95% CI, noncentral t of Welch's t"))
