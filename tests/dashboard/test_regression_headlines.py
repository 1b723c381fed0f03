"""The Regression page on the cached local dataset: a mixed model's conditional R² at N = 24,
k = 11 is no headline (no metric), its raw numbers are shown labelled "not a headline at this
N" with the rule that failed (``engine.stats.guards.mixed_r2_guard``), and the coefficient
plot says how its intervals were formed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.cached_runs import cached_runs_folder

REPO = Path(__file__).resolve().parents[2]
LOCAL = REPO / "cached_runs" / "local_smollm2"

pytestmark = pytest.mark.skipif(not (LOCAL / "manifest.json").exists(), reason="cached_runs/local_smollm2 is not built")


def test_local_mixed_model_r2_is_shown_raw_not_as_a_headline(tmp_path, monkeypatch):
    from dashboard.page_data.datasets import availability
    from dashboard.page_data.regression import regression_page_data
    from engine import samples
    from engine.datasets import Dataset

    for key, value in cached_runs_folder(tmp_path, "local_smollm2")[1].items():
        monkeypatch.setenv(key, value)
    at = AppTest.from_file(str(REPO / "dashboard" / "app.py"), default_timeout=600)
    at.run()
    at.switch_page("views/regression.py").run()
    at.selectbox(key="reg_outcome").set_value("forward_flow")
    at.radio(key="reg_estimator").set_value("mixedlm")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    labels = [m.label for m in at.metric]
    assert not any("R²" in label for label in labels), labels
    # the numbers the page fits, worked out by the page's own data function on the same sample
    dataset = Dataset.load(LOCAL, with_corpus=False)
    have = availability(dataset)
    frame = samples.select(dataset.conversations, "trajectory")
    summary = regression_page_data(frame, "forward_flow", ["llm"], "mixedlm", features=have.features,
                                   ratings=have.ratings).teams[0].fit["summary"]
    n, k = summary["n"], summary["k"]
    assert n < 10 * k
    texts = [t.value for t in at.text]
    assert any(t.startswith("LLM (SmolLM2-135M): conditional R² ") and f"{100 * summary['conditional_r2']:.1f}%" in t
               and f"marginal R² {summary['marginal_r2']:.3f}" in t for t in texts), texts
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert any(c.startswith("LLM: not a headline at this N: ") and f"N = {n} rows for k = {k}" in c
               and f"({10 * k} needed)" in c for c in captions), captions
    assert any(c.startswith("Error bars: 95% Wald CI") for c in captions)
    coefficients = next(json.loads(chart.proto.spec) for chart in at.get("plotly_chart")
                        if json.loads(chart.proto.spec)["layout"]["title"]["text"].startswith("Standardized"))
    assert "REML" in coefficients["layout"]["meta"]["error_bars"]


PAPER_B = REPO / "cached_runs" / "local_smollm2_paper_b"


@pytest.mark.skipif(not (PAPER_B / "manifest.json").exists(), reason="cached_runs/local_smollm2_paper_b is not built")
def test_diversity_page_says_what_its_error_bars_are_and_draws_none_from_two_groups(tmp_path, monkeypatch):
    import pandas as pd

    for key, value in cached_runs_folder(tmp_path, "local_smollm2_paper_b")[1].items():
        monkeypatch.setenv(key, value)
    at = AppTest.from_file(str(REPO / "dashboard" / "app.py"), default_timeout=600)
    at.run()
    at.switch_page("views/diversity.py").run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "n_groups" in d.value.columns and "div_bleu_sd" in d.value.columns)
    cells = table.dropna(subset=["div_bleu"])
    few = int((cells["n_groups"] < 3).sum())
    assert few > 0
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert any(c.startswith("Bars: the mean over a cell's diversity groups; error bars: ±1 SD") and
               f"{few} of {len(cells)} condition/task cells have fewer" in c for c in captions), captions
    bars = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    bleu = next(b for b in bars if b["layout"]["title"]["text"].startswith("Div-BLEU"))
    with_sd = sum(len(t["x"]) if isinstance(t["x"], list) else 1 for t in bleu["data"]
                  if (t.get("error_y") or {}).get("array") is not None)
    assert with_sd == int((cells["n_groups"] >= 3).sum())
    assert bleu["layout"]["meta"]["error_bars"].startswith("±1 SD")
    assert isinstance(table, pd.DataFrame)
