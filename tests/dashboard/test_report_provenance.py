"""The HTML report: every block carries its provenance; published tables are never labelled
as computed from the dataset; no dumps, no internal keys, no literal backslash-n; the Export
page's report title and file names follow the dataset now selected."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.exports import formats as export
from dashboard.exports import report
from dashboard.page_data import datasets

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
RELEASE = REPO / "cached_runs" / "paper_release"
LOCAL = REPO / "cached_runs" / "local_smollm2"
pytestmark = pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built")


def sections(page: str) -> list[str]:
    return re.findall(r"<section id='[^']*'>(.*?)</section>", page, flags=re.S)


def provenance(section: str) -> str:
    found = re.findall(r"<p class='provenance'>(.*?)</p>", section, flags=re.S)
    assert len(found) == 1, section[:300]
    return found[0]


def test_every_catalog_block_has_its_provenance():
    from engine.datasets import Dataset

    dataset = Dataset.load(RELEASE)
    frame = dataset.conversations[dataset.conversations["model"].isin(["gpt-4.1", "o3-high"])
                                  | (dataset.conversations["source"] == "human")]
    selections = {"model": ["gpt-4.1", "o3-high", "(none)"]}
    items = report.catalog(dataset, frame, datasets.availability(dataset), selections=selections)
    page = export.html_report("r", items, context=report.selection_context(dataset, frame, selections))
    blocks = sections(page)
    assert len(blocks) == len(items)
    n = f"{len(frame):,} of {len(dataset.conversations):,} conversations selected"
    for item, block in zip(items, blocks):
        label = provenance(block)
        if item.published:
            assert label.startswith("published: paper A, Table "), label
            assert "computed from this dataset" not in block and "ours" not in label
        else:
            assert label.startswith("ours: dataset paper_release, " + n), label
            assert "model = gpt-4.1, o3-high" in label
    published_titles = {i.title for i in items if i.published}
    assert {"Paper A, Table 24 (R² %)", "Paper A, Table 1: R² ladder (%)", "Paper A, Table 5: ratings by task and group",
            "Paper A, Table 23: LLM vs human coefficients"} <= published_titles
    # no row dump (the old report ended with every selected conversation, 200 rows shown)
    assert all(len(re.findall(r"<tr", b)) <= 31 + 1 for b in blocks)
    assert "\\n" not in re.sub(r"<script.*?</script>", "", page, flags=re.S)


def test_export_of_shown_items_uses_headings_not_keys(runs_root):
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("views/llm_vs_human.py").run()
    at.switch_page("views/design_levers.py").run()
    at.switch_page("views/export.py").run()
    assert not at.exception, [e.value for e in at.exception]
    options = at.selectbox(key="export_item").options
    assert not [o for o in options if re.search(r"\b(lvh|levers)_\w+", o)], options
    from dashboard.widgets import ui

    shown = report.shown_as_items(at.session_state[ui.SHOWN_KEY])
    table24 = next(i for i in shown if i.title == "Design levers: R² (%) published")
    assert table24.published and table24.provenance_label().startswith("published: Paper A, Table 24")
    ours = next(i for i in shown if i.title == "Design levers: R² (%) computed here")
    assert not ours.published
    assert ours.provenance_label().startswith("ours: This selection, N = 3,574; dataset paper_release, 4,010 of 4,010")


@pytest.mark.skipif(not (LOCAL / "manifest.json").exists(), reason="local cached runs not built")
def test_export_title_and_file_names_follow_the_dataset_now_selected(cached_runs_of):
    """Before: the title typed (or defaulted) for the first dataset stayed after another was
    chosen (an upload's report was titled "paper_release")."""
    cached_runs_of(RELEASE.name, LOCAL.name)
    at = AppTest.from_file(APP, default_timeout=600)
    at.session_state["dataset_choice"] = "paper_release"
    at.run()
    at.switch_page("views/export.py").run()
    assert not at.exception, [e.value for e in at.exception]
    title = next(t for t in at.text_input if t.label == "Report title")
    assert title.value == "Creativity dynamics: paper_release"
    at.selectbox(key="dataset_choice").set_value("local_smollm2").run()
    assert not at.exception, [e.value for e in at.exception]
    title = next(t for t in at.text_input if t.label == "Report title")
    assert title.value == "Creativity dynamics: local_smollm2"
    assert any(b.label.startswith("Make the slide deck") for b in at.button)
