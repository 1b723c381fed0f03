"""The Judges page's charts: a measure against people's ratings (``engine.judging.validate``).

* ``agreement_scatter``: one dot per item, the measure against the people's mean, unreadable
  items left off (their count in the title's note).
* ``calibration_chart``: the people's mean rating in each bin of the measure, with its 95%
  t-interval where the bin has at least 3 items (no whisker below that), N per bin on hover.
"""

from __future__ import annotations


import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.figures import style
from dashboard.figures.charts import empty_figure

DOT = "#0072b2"
MAX_DOTS = 20_000  # a scatter of more is drawn on a seeded sample (said on the chart)




def agreement_scatter(scores: pd.DataFrame, measure_label: str, human_label: str, title: str) -> go.Figure:
    shown = scores.dropna(subset=["measure", "human"])
    if shown.empty:
        return empty_figure("no item has both a readable measure and a people's rating")
    note = ""
    if len(shown) > MAX_DOTS:
        shown = shown.sample(MAX_DOTS, random_state=0)
        note = f" (a random {MAX_DOTS:,} of {len(scores):,} items drawn)"
    fig = go.Figure(go.Scattergl(
        x=shown["measure"], y=shown["human"], mode="markers", name="item",
        marker=dict(size=5, color=DOT, opacity=0.35),
        customdata=np.stack([[style.plain_text(v) for v in shown["item"]], [style.plain_text(v) for v in shown["prompt"]]], axis=1),
        hovertemplate="item %{customdata[0]} (%{customdata[1]})<br>measure %{x:.3f}, people %{y:.2f}<extra></extra>"))
    style.finish(fig, title + note, height=420)
    fig.update_xaxes(title=style.plain_text(measure_label))
    fig.update_yaxes(title=human_label)
    return fig


def calibration_chart(calibration: pd.DataFrame, measure_label: str, human_label: str, title: str) -> go.Figure:
    if calibration.empty:
        return empty_figure("no bin of the measure has a rated item")
    low = calibration["human_ci_low"].astype(float)
    high = calibration["human_ci_high"].astype(float)
    centre = calibration["human_mean"].astype(float)
    fig = go.Figure(go.Scatter(
        x=calibration["measure_mean"], y=centre, mode="markers+lines", name="people's mean in the bin",
        error_y=dict(type="data", symmetric=False, array=(high - centre).fillna(0).to_numpy(),
                     arrayminus=(centre - low).fillna(0).to_numpy(), color="#444", thickness=1.2, width=4),
        marker=dict(size=9, color=DOT), customdata=calibration["n"],
        hovertemplate="measure %{x:.3f}: people %{y:.2f} (N = %{customdata})<extra></extra>"))
    style.finish(fig, title + " (whiskers: 95% t-interval, bins of 3+ items)", height=380)
    fig.update_xaxes(title=f"{style.plain_text(measure_label)} (bin mean)")
    fig.update_yaxes(title=human_label)
    return fig
