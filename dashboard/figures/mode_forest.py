"""The fidelity comparison's chart: Hedges' g (release − paper) of each trajectory feature with
its 95% interval, one series per discussion structure (``engine.stats.mode_differences``)."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from dashboard.figures import error_bars, style
from dashboard.figures.labels import readable_term
from engine.stats.guards import METHOD_HEDGES, MIN_GROUPS_FOR_INTERVAL


def mode_difference_forest(differences: pd.DataFrame, title: str) -> go.Figure:
    """``differences``: ``engine.stats.mode_differences.mode_differences``. Rows without an interval
    (fewer than ``MIN_GROUPS_FOR_INTERVAL`` sessions in a mode) are left out of the chart; the
    table beside it says why. The interval (``engine.stats.guards.hedges_g``) is named in every
    hover, under the axis title and in ``layout.meta["error_bars"]``."""
    rows = differences.dropna(subset=["g", "g_low", "g_high"])
    fig = go.Figure()
    structures = list(dict.fromkeys(rows["structure"]))
    looks = style.series_styles(structures, "discussion")
    offsets = {s: (i - (len(structures) - 1) / 2) * 0.22 for i, s in enumerate(structures)}
    features = list(dict.fromkeys(differences["feature"]))
    position = {f: i for i, f in enumerate(features)}
    for structure in structures:
        part = rows[rows["structure"] == structure]
        look = looks[structure]
        fig.add_trace(go.Scatter(
            x=part["g"], y=[position[f] + offsets[structure] for f in part["feature"]], mode="markers",
            name=structure, marker=style.marker(look, size=9),
            error_x=dict(type="data", symmetric=False, array=part["g_high"] - part["g"],
                         arrayminus=part["g"] - part["g_low"], color=look.colour),
            customdata=[[readable_term(f), n1, n2, lo, hi] for f, n1, n2, lo, hi in
                        zip(part["feature"], part["n_paper"], part["n_release"], part["g_low"], part["g_high"])],
            hovertemplate="%{customdata[0]}: g = %{x:.2f}, 95% CI [%{customdata[3]:.2f}, %{customdata[4]:.2f}]"
                          "<br>N paper %{customdata[1]}, release %{customdata[2]}<br>" + METHOD_HEDGES
                          + "<extra>" + structure + "</extra>"))
    fig.add_vline(x=0, line_dash="dot", line_color="#888")
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(features))),
                     ticktext=[readable_term(f) for f in features], autorange="reversed")
    finite = [v for v in list(rows["g_low"]) + list(rows["g_high"]) if not math.isnan(v)]
    if finite:
        reach = max(abs(v) for v in finite) * 1.08
        fig.update_xaxes(range=[-reach, reach])
    error_bars.describe(fig, f"95% CI of Hedges' g: {METHOD_HEDGES}; not drawn below {MIN_GROUPS_FOR_INTERVAL} "
                             "sessions in a mode")
    return style.finish(fig, title, height=style.height_for_legend(120 + 34 * len(features), structures),
                        xaxis_title=error_bars.axis_title("Hedges' g, release − paper",
                                                          "95% CI, noncentral t of Welch's t"))
