"""Exports carry their context on the artefact itself (dashboard/exports/stamp.py, formats.py):
every image and slide says ours / published, dataset, sample, N and outcome; LaTeX captions
say the same with the right outcome; the HTML report keeps the page's caveats; no text of a
slide runs into another (measured on the rendered SVG's layout boxes in Chromium)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.exports import formats as export
from dashboard.exports import report
from dashboard.exports.stamp import Stamp
from dashboard.figures import charts
from engine.measures.trajectory import PAPER_A_FEATURES

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
RELEASE = REPO / "cached_runs" / "paper_release"
PAPER_B = REPO / "cached_runs" / "local_smollm2_paper_b"
FEATURES = list(PAPER_A_FEATURES)
needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
needs_release = pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper_release not built")


def _svg_text(svg: bytes) -> str:
    """Every text drawn in an SVG, entities decoded, as one string."""
    import html

    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", t)) for t in re.findall(r"<text[^>]*>(.*?)</text>",
                                                                                  svg.decode(), flags=re.S))


@pytest.fixture(scope="module")
def release_items():
    from engine.datasets import Dataset
    from dashboard.page_data import datasets

    dataset = Dataset.load(RELEASE)
    frame = dataset.conversations
    items = report.catalog(dataset, frame, datasets.availability(dataset))
    return dataset, frame, items, report.selection_context(dataset, frame, {})


def _qd_summary():
    labels = ["homo_mad [no CLA, all peers] N=3 R=1 T=1 SmolLM2-135M-Instruct.Q4_1",
              "creative_mad [CLA, distant k=1] N=3 R=1 T=1 SmolLM2-135M-Instruct.Q4_1",
              "creative_mad [CLA, all peers] N=3 R=1 T=1 SmolLM2-135M-Instruct.Q4_1",
              "creative_mad [no CLA, distant k=1] N=3 R=1 T=1 SmolLM2-135M-Instruct.Q4_1",
              "direct N=1 T=1 SmolLM2-135M-Instruct.Q4_1"]
    rng = np.random.default_rng(5)
    rows = []
    for label in labels:
        vendi, rubric = 2.5 + rng.random(), 1 + 3 * rng.random()
        rows.append({"condition": label, "vendi": vendi, "vendi_lo": vendi - 1.4, "vendi_hi": vendi + 1.1,
                     "div_bleu": 0.9, "div_bleu_lo": 0.8, "div_bleu_hi": 1.0,
                     "rubric": rubric, "rubric_lo": rubric - 0.5, "rubric_hi": rubric + 2})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------ stamps
@needs_release
@needs_chromium
def test_an_exported_svg_says_whose_numbers_on_the_image(release_items):
    dataset, frame, items, context = release_items
    ours = next(i for i in items if i.title == "Trajectory features by source")
    text = _svg_text(export.item_image(ours, "svg", context, width=1000))
    counts = frame["source"].value_counts()
    assert "OURS" in text and "dataset paper_release" in text
    assert f"N = llm {counts['llm']:,}, human {counts['human']:,} conversations" in text
    assert "outcome: the nine trajectory features (Table 19)" in text
    assert "sample: every selected conversation" in text
    published = next(i for i in items if i.title == "Paper A, Table 24 (R² %)")
    text = _svg_text(export.item_image(published, "svg", context, width=1000))
    assert "PUBLISHED" in text and "paper A, Table 24" in text and "N = 3,574" in text
    assert "OURS" not in text


@needs_release
@needs_chromium
def test_every_png_export_is_stamped(release_items):
    """PNG and SVG go through one path: the stamped figure is taller by the stamp's lines."""
    import struct

    dataset, frame, items, context = release_items
    item = next(i for i in items if i.figure is not None and not i.published)
    plain = export.figure_to_image(item.figure, "png", width=800, scale=1)
    stamped = export.item_image(item, "png", context, width=800, scale=1)
    assert struct.unpack(">II", stamped[16:24])[1] > struct.unpack(">II", plain[16:24])[1]


def test_stamp_of_an_item_names_dataset_sample_n_and_outcome():
    item = export.ReportItem("Regression: LLM vs human coefficients on local_coherence", table=pd.DataFrame(),
                             provenance="LLM vs human coefficients on local_coherence; dataset paper_release, "
                                        "4,010 of 4,010 conversations selected, task = plastic_waste",
                             sample="paper A's trajectory sample", n="LLM 3,574; Human 308 fitted",
                             outcome="local_coherence")
    stamp = item.stamp()
    assert stamp == Stamp("ours", "dataset paper_release", "paper A's trajectory sample",
                          "LLM 3,574; Human 308 fitted", "local_coherence", "task = plastic_waste")
    caption = re.search(r"\\caption\{(.*?)\}\n", export.item_latex(export.ReportItem(
        item.title, table=pd.DataFrame({"term": ["a"], "coef": [0.1]}), provenance=item.provenance,
        sample=item.sample, n=item.n, outcome=item.outcome)), flags=re.S).group(1)
    assert "OURS" in caption and "outcome: local\\_coherence" in caption and "N = LLM 3,574; Human 308" in caption
    assert "dataset paper\\_release" in caption


# ------------------------------------------------------------------------------ pages
def _open(page: str, widgets=None, dataset: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=600)
    if dataset:
        at.session_state["dataset_choice"] = dataset
    at.run()
    at.switch_page(f"views/{page}.py").run()
    if widgets:
        widgets(at)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@needs_release
def test_latex_of_the_regression_comparison_has_the_right_outcome_and_fitted_n(runs_root):
    from dashboard.widgets import ui

    def local_coherence_both(at):
        at.selectbox(key="reg_outcome").set_value("local_coherence")
        at.radio(key="reg_sample").set_value("Both (side by side)")

    at = _open("regression", local_coherence_both)
    items = report.shown_as_items(at.session_state[ui.SHOWN_KEY])
    table = next(i for i in items if "LLM vs human coefficients on local_coherence" in i.title)
    assert "as Table 23)" not in table.title  # the paper's Table 23 is on creativity
    release = pd.read_parquet(RELEASE / "conversations.parquet")
    trajectory = release[(release.source == "human") | release.discussion.isin(["instructed", "open", "iterative"])]
    llm = trajectory[trajectory.source == "llm"].dropna(subset=FEATURES)
    human = trajectory[trajectory.source == "human"].dropna(subset=FEATURES)
    tex = export.item_latex(table)
    caption = re.search(r"\\caption\{(.*?)\}\n", tex, flags=re.S).group(1)
    assert "outcome: local\\_coherence" in caption and "creativity" in caption  # says the paper's differs
    assert f"N = LLM {len(llm):,}; Human {len(human):,} fitted" in caption
    assert "dataset paper\\_release" in caption and "OURS" in caption


@pytest.mark.skipif(not (PAPER_B / "manifest.json").exists(), reason="local_smollm2_paper_b not built")
def test_html_report_keeps_the_caveats_the_page_showed(cached_runs_of):
    import json

    from dashboard.widgets import ui
    from engine.datasets import Dataset

    cached_runs_of("local_smollm2_paper_b")
    at = _open("quality_diversity")
    manifest = json.loads((PAPER_B / "manifest.json").read_text())
    note = manifest["note"]
    items = report.shown_as_items(at.session_state[ui.SHOWN_KEY])
    dataset = Dataset.load(PAPER_B)
    context = report.selection_context(dataset, dataset.conversations, {})
    page = export.html_report("r", items, context=context)
    caveats = re.search(r"<div class='caveats'>(.*?)</div>", page, flags=re.S).group(1)
    assert "not a finding" in note and note.replace("'", "&#x27;") in caveats
    shown = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]  # the page's warnings, unescaped
    for warning in shown:
        assert warning.replace("'", "&#x27;") in page, warning
    figure_item = next(i for i in items if i.figure is not None)
    assert note in figure_item.caveats


# ------------------------------------------------------------------------------ slides
def _slide_items():
    summary = _qd_summary()
    items = [export.ReportItem("Quality–Diversity: Rubric score vs Vendi Score (95% CIs)",
                               figure=charts.quality_diversity_scatter(summary, "vendi", "Vendi Score"),
                               provenance="dataset local_smollm2_paper_b, 110 of 110 conversations selected",
                               sample="paper-B sessions with a final output", n="110 sessions",
                               outcome="rubric score (1–10) against Vendi Score"),
             export.ReportItem("Diversity: Vendi Score (semantic)", figure=charts.diversity_bars(
                 summary.assign(method=summary["condition"], task="plastic_waste"), "vendi", "Vendi Score"),
                 provenance="dataset local_smollm2_paper_b, 110 of 110 conversations selected", outcome="Vendi")]
    return items


@pytest.mark.slow
@needs_chromium
@needs_release
def test_no_text_of_a_slide_runs_into_another(release_items):
    from devtools.text_overlaps import svg_overlaps

    dataset, frame, items, context = release_items
    slides = [i for i in items if i.figure is not None] + _slide_items()
    found = {}
    for item in slides:
        svg = export.figure_to_image(export.slide_figure(item, context), "svg", width=1600, height=900)
        measured = svg_overlaps(svg, width=1600, height=900)
        assert measured["texts"] > 5, item.title
        if measured["overlaps"] or measured["outside"]:
            found[item.title] = (measured["overlaps"][:3], measured["outside"][:3])
        text = _svg_text(svg)
        assert ("PUBLISHED" if item.published else "OURS") in text, item.title
        assert "N = " in text and "outcome: " in text and "sample: " in text, item.title
        assert text.count(item.title.split(":")[0]) >= 1
    assert found == {}
    coded = _slide_items()[0]
    text = _svg_text(export.figure_to_image(export.slide_figure(coded, context), "svg", width=1600, height=900))
    assert "CMAD·d1: Creative-MAD, distant peers, k = 1" in text  # the codes' key is on the slide
