"""The sample selectbox every page that fits a model shows (paper A's samples, ``engine.samples``).

The page says which sample it uses and its N, and the user can change it; the default is
the sample the paper uses for that page's tables.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.widgets import cached, ui
from engine import samples


def pick(where, frame: pd.DataFrame, key: str, default: str = "trajectory") -> tuple[str, pd.DataFrame]:
    """A selectbox of the samples with rows in ``frame``; returns (name, rows of that sample)."""
    names = cached.cached_samples_available(frame) or ["all"]
    if default not in names:
        default = names[0]
    if st.session_state.get(key) not in names:
        st.session_state[key] = default
    name = where.selectbox("Sample (paper A)", names, key=key,
                           format_func=lambda n: f"{samples.SAMPLES[n].title} ({samples.SAMPLES[n].tables})",
                           help="Which rows the models are fitted on; the paper's default for this page "
                                f"is the {samples.SAMPLES[default].title}.")
    label, rows = cached.cached_sample(frame, name)
    where.caption(ui.escape(f"{label}. {samples.sample(name).description}"))
    return name, rows
