"""dashboard.figures.diagnosis: only compared features are drawn, each with its 95% interval."""

import numpy as np
import pandas as pd

from dashboard.figures.diagnosis import diagnosis_positions, drawn_rows


def evidence():
    return pd.DataFrame([
        {"feature": "global_coherence", "percentile": 80.0, "percentile_low": 62.5, "percentile_high": 97.5,
         "flag": "high", "pilot_mean": 0.9, "reference_p50": 0.7},
        {"feature": "path_length", "percentile": 12.0, "percentile_low": 3.0, "percentile_high": 21.0,
         "flag": "not compared", "pilot_mean": 2.0, "reference_p50": 5.0},
        {"feature": "semantic_spread", "percentile": 20.0, "percentile_low": 0.0, "percentile_high": 55.0,
         "flag": "unclear", "pilot_mean": 0.1, "reference_p50": 0.2},
        {"feature": "max_distance", "percentile": np.nan, "percentile_low": np.nan, "percentile_high": np.nan,
         "flag": "not comparable", "pilot_mean": 0.5, "reference_p50": 0.6}])


def test_not_compared_and_not_comparable_features_are_left_off():
    assert list(drawn_rows(evidence())["feature"]) == ["global_coherence", "semantic_spread"]


def test_whiskers_are_the_interval_and_the_legend_says_what_they_are():
    fig = diagnosis_positions(evidence(), n_pilot=5)
    dots = next(t for t in fig.data if t.name.startswith("pilot"))
    assert list(dots.x) == [80.0, 20.0]
    assert list(dots.error_x.array) == [17.5, 35.0]        # 97.5 - 80, 55 - 20
    assert list(dots.error_x.arrayminus) == [17.5, 20.0]   # 80 - 62.5, 20 - 0
    assert "95% t-interval of the mean rank, N = 5" in dots.name
    assert len(dots.y) == 2


def test_nothing_to_draw_says_so():
    only = evidence().iloc[[1, 3]]
    fig = diagnosis_positions(only, n_pilot=5)
    assert fig.layout.annotations[0].text.startswith("no feature is compared")
