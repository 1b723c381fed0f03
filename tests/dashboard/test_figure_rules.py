"""Every chart on every page, over every cached dataset, meets the figure rules
(``dashboard.figures.checks``): no two legend entries alike in colour and mark, the legend
outside the plot and horizontal when its names are long, score axes set inside the score's
range, no two colours of a chart closer than the colour threshold (CIEDE2000, normal vision
and three simulated colour-vision deficiencies) and compared datasets (Compare runs) or
sources (LLM, human) in distinct hue families. The charts are read as the browser gets them (the Plotly JSON Streamlit sends), from the
session's one render of every page per dataset (``tests.support.page_renders``: the
Trajectories map also coloured by 8 and by 20 clusters), and the export catalog's figures of
each dataset are held to the same rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dashboard.figures import checks
from tests.support.page_renders import DATASETS

REPO = Path(__file__).resolve().parents[2]
# legend names that are compared runs: they must not share a hue family
COMPARED = (*DATASETS, "LLM", "Human", "llm", "human")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not DATASETS, reason="no cached dataset")]


def page_figures(page_renders, dataset: str) -> dict[str, list[dict]]:
    """``{page: [figure JSON, ...]}`` of every page (and of the clustered Trajectories maps)
    shown with ``dataset`` chosen, after checking that none raised."""
    shown = page_renders(dataset)
    raised = {page: render.exceptions for page, render in shown.items() if render.exceptions}
    assert not raised, (dataset, raised)
    return {page: render.figures for page, render in shown.items()}


def _title(figure: dict) -> str:
    title = (figure.get("layout") or {}).get("title") or {}
    return title.get("text", "") if isinstance(title, dict) else str(title)


# charts each dataset must show at least (so the rules are not checked on nothing)
AT_LEAST = {"paper_release": {"llm_vs_human": 2, "design_levers": 3, "regression": 1},
            "local_smollm2": {"llm_vs_human": 3, "trajectories": 3, "diversity": 4, "quality_diversity": 3},
            "local_smollm2_paper_b": {"trajectories": 3, "diversity": 4, "quality_diversity": 4},
            "local_smollm2_steered": {"trajectories": 3, "steering": 1}}


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_chart_of_every_page_meets_the_rules(page_renders, dataset):
    figures = page_figures(page_renders, dataset)
    for page, minimum in AT_LEAST.get(dataset, {}).items():
        assert len(figures[page]) >= minimum, (dataset, page, len(figures[page]))
    found = {f"{page}: {_title(figure)!r}": problems
             for page, shown in figures.items() for figure in shown
             if (problems := checks.problems(figure, COMPARED))}
    shared = sum(len(checks.shared_colours(figure)) for shown in figures.values() for figure in shown)
    print(f"{dataset}: {sum(len(v) for v in figures.values())} charts, {sum(map(len, found.values()))} problems, "
          f"{shared} pairs of legend entries sharing a colour (told apart by marks)")
    print(json.dumps(found, indent=1, ensure_ascii=False))
    assert found == {}, f"{dataset}: {json.dumps(found, indent=1, ensure_ascii=False)}"
    assert sum(len(v) for v in figures.values()) >= 8


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_export_catalog_figure_meets_the_rules(dataset):
    from dashboard.exports import report
    from dashboard.page_data.datasets import availability
    from engine.datasets import Dataset

    data = Dataset.load(REPO / "cached_runs" / dataset)
    items = report.catalog(data, data.conversations, availability(data))
    drawn = [item for item in items if item.figure is not None]
    assert drawn
    found = {item.title: problems for item in drawn if (problems := checks.problems(item.figure, COMPARED))}
    assert found == {}
