"""Compare runs page (AppTest): two cached datasets side by side, numbers from the Parquet files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "dashboard" / "app.py")
RELEASE = REPO / "cached_runs" / "paper_release"
LOCAL = REPO / "cached_runs" / "local_smollm2"
pytestmark = pytest.mark.skipif(not ((RELEASE / "manifest.json").exists() and (LOCAL / "manifest.json").exists()),
                                reason="cached runs not built")


def test_two_datasets_side_by_side(cached_runs_of):
    cached_runs_of(RELEASE.name, LOCAL.name)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/compare.py").run()
    at.multiselect(key="compare_datasets").set_value(["local_smollm2", "paper_release"]).run()
    assert not at.exception, [e.value for e in at.exception]
    release, local = (pd.read_parquet(p / "conversations.parquet") for p in (RELEASE, LOCAL))
    overview = next(d.value for d in at.dataframe if "embedding model" in d.value.columns).set_index("dataset")
    assert overview.loc["paper_release", "conversations"] == len(release)
    assert overview.loc["local_smollm2", "conversations"] == len(local)
    assert any("different embedding models" in w.value for w in at.warning)
    features = next(d.value for d in at.dataframe if "paper_release mean" in d.value.columns
                    and "global_coherence" in d.value.index)
    assert features.loc["global_coherence", "paper_release mean"] == pytest.approx(
        release["global_coherence"].mean(), abs=1e-4)
    assert features.loc["global_coherence", "local_smollm2 N"] == local["global_coherence"].notna().sum()
    diversity = next(d.value for d in at.dataframe if "vendi" in d.value.columns).set_index("dataset")
    assert diversity.loc["paper_release", "groups"] == 0  # the release has no final outputs
    ok = local[(local["final_idea"].fillna("").str.strip() != "") & (local["status"].fillna("ok") == "ok")]
    sizes = ok.groupby(["discussion", "task"]).size()
    assert diversity.loc["local_smollm2", "cells"] == (sizes >= 5).sum()
    assert diversity.loc["local_smollm2", "groups"] == (sizes[sizes >= 5] // 5).sum()
