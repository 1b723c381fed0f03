"""The Data page opens on the paper release (real data); the local runs are one click away and
labelled as a demonstration on the 135M model their manifest names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.page_data.datasets import demonstration

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
RELEASE = REPO / "cached_runs" / "paper_release"
LOCAL = REPO / "cached_runs" / "local_smollm2"
pytestmark = pytest.mark.skipif(not ((RELEASE / "manifest.json").exists() and (LOCAL / "manifest.json").exists()),
                                reason="cached runs not built")


def test_demonstration_label_reads_the_local_backend_from_the_manifest():
    local = json.loads((LOCAL / "manifest.json").read_text())
    assert local["run"]["backend"] == {**local["run"]["backend"], "backend": "local",
                                       "model": "SmolLM2-135M-Instruct.Q4_1"}
    assert demonstration(local) == "demonstration on a 135M model (SmolLM2-135M-Instruct.Q4_1, run locally)"
    assert demonstration(json.loads((RELEASE / "manifest.json").read_text())) is None
    assert demonstration({"run": {"backend": {"backend": "openai", "model": "gpt-4.1"}}}) is None
    assert demonstration({"run": {"backend": {"backend": "local", "model": "Qwen3-1.7B-Q8"}}}).startswith(
        "demonstration on a 1.7B model")


def test_data_page_opens_on_the_release_and_the_demo_runs_are_one_click_away(cached_runs_of):
    cached_runs_of("paper_release", "local_smollm2")
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception
    assert at.selectbox(key="dataset_choice").value == "paper_release"
    assert {m.label: m.value for m in at.metric}["Conversations selected"] == "4,010"
    button = at.button(key="data_open_local_smollm2")
    assert "demonstration on a 135M model" in button.label
    button.click().run()
    assert at.selectbox(key="dataset_choice").value == "local_smollm2"
    n_local = json.loads((LOCAL / "manifest.json").read_text())["n_conversations"]
    assert {m.label: m.value for m in at.metric}["Conversations selected"] == f"{n_local:,}"
    assert any("demonstration on a 135M model" in i.value for i in at.info)
    at.button(key="data_open_release").click().run()
    assert at.selectbox(key="dataset_choice").value == "paper_release"
