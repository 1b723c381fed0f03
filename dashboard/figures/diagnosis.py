"""The Pilot page's chart: where a pilot's features sit within a reference it compares with.

Drawn only from ``engine.diagnosis.diagnose``'s evidence when both sides were embedded by one
model and made by one implementation; a feature the diagnosis did not compare (``not
compared``: no reference conversation of similar length) is left off the chart, never drawn
against references of every length. Each dot is the pilot's mean percentile rank, its whisker
the 95% t-interval of that mean at the pilot's N (paper A's Table 19 features; the flag rule of
``engine.diagnosis.diagnose``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.figures import style
from dashboard.figures.charts import empty_figure
from dashboard.figures.labels import readable_term

DRAWN_FLAGS = ("low", "high", "typical", "unclear", "not assessed")
FLAG_COLOUR = {"low": "#d55e00", "high": "#d55e00"}
OTHER_COLOUR = "#0072b2"


def drawn_rows(evidence: pd.DataFrame) -> pd.DataFrame:
    """The evidence rows the chart draws: compared features with a finite percentile."""
    if evidence.empty or "percentile" not in evidence:
        return evidence.iloc[0:0]
    keep = evidence["flag"].astype(str).isin(DRAWN_FLAGS) & np.isfinite(evidence["percentile"].astype(float))
    return evidence[keep]


def diagnosis_positions(evidence: pd.DataFrame, n_pilot: int,
                        title: str = "Where the pilot sits in the reference") -> go.Figure:
    """Bands: the reference's 10th-90th and 25th-75th percentiles; tick: its median; dot: the
    pilot's mean percentile rank with its 95% t-interval (N = ``n_pilot``)."""
    rows = drawn_rows(evidence)
    if rows.empty:
        return empty_figure("no feature is compared with this reference (see the table)")
    labels = [readable_term(f) for f in rows["feature"]]
    fig = go.Figure()
    fig.add_trace(go.Bar(y=labels, x=[80] * len(labels), base=[10] * len(labels), orientation="h",
                         marker_color="#e3e7ee", name="reference 10th-90th pct", hoverinfo="skip"))
    fig.add_trace(go.Bar(y=labels, x=[50] * len(labels), base=[25] * len(labels), orientation="h",
                         marker_color="#c3cad6", name="reference 25th-75th pct", hoverinfo="skip"))
    fig.add_trace(go.Scatter(y=labels, x=[50] * len(labels), mode="markers", name="reference median",
                             marker=dict(symbol="line-ns-open", size=18, color="#555"),
                             customdata=rows["reference_p50"],
                             hovertemplate="reference median %{customdata:.3f}<extra></extra>"))
    low = rows.get("percentile_low", pd.Series(np.nan, index=rows.index)).astype(float)
    high = rows.get("percentile_high", pd.Series(np.nan, index=rows.index)).astype(float)
    centre = rows["percentile"].astype(float)
    flags = rows["flag"].astype(str)
    interval = f"95% t-interval of the mean rank, N = {n_pilot}"
    fig.add_trace(go.Scatter(
        y=labels, x=centre, mode="markers", name=f"pilot mean percentile rank ({interval})",
        error_x=dict(type="data", symmetric=False, array=(high - centre).fillna(0).to_numpy(),
                     arrayminus=(centre - low).fillna(0).to_numpy(), color="#444", thickness=1.2, width=4),
        marker=dict(size=13, color=[FLAG_COLOUR.get(f, OTHER_COLOUR) for f in flags],
                    line=dict(color="white", width=1)),
        customdata=np.stack([rows["pilot_mean"].astype(float), flags, low.round(1), high.round(1)], axis=1),
        hovertemplate=("pilot mean %{customdata[0]:.3f}, percentile %{x:.1f} "
                       "[%{customdata[2]}-%{customdata[3]}] (%{customdata[1]})<extra></extra>")))
    names = ["reference 10th-90th pct", "reference 25th-75th pct", "reference median",
             f"pilot mean percentile rank ({interval})"]
    style.finish(fig, title, barmode="overlay", height=style.height_for_legend(150 + 36 * len(labels), names))
    fig.update_xaxes(range=[0, 100], autorange=False, title="percentile rank within the reference", dtick=10)
    fig.update_yaxes(autorange="reversed")
    return fig
