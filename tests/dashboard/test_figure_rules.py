"""Every chart on every page, over every cached dataset, meets the figure rules
(``dashboard.figures.checks``): no two legend entries alike in colour and mark, the legend
outside the plot and horizontal when its names are long, score axes set inside the score's
range, no two colours of a chart closer than the colour threshold (CIEDE2000, normal vision
and three simulated colour-vision deficiencies) and compared datasets (Compare runs) or
sources (LLM, human) in distinct hue families. The charts are read as the browser gets them (the Plotly JSON Streamlit sends), and
the export catalog's figures of each dataset are held to the same rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import pages
from dashboard.figures import checks
from tests.support.cached_runs import cached_runs_folder

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
PAGES = pages.keys()
DATASETS = sorted(p.parent.name for p in (REPO / "cached_runs").glob("*/manifest.json"))

CLUSTER_KS = (8, 20)
# legend names that are compared runs: they must not share a hue family
COMPARED = (*DATASETS, "LLM", "Human", "llm", "human")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not DATASETS, reason="no cached dataset")]


@pytest.fixture(scope="module")
def every_dataset(tmp_path_factory):
    """The dashboard pointed at all cached datasets, one embedding cache for the module."""
    root, env = cached_runs_folder(tmp_path_factory.mktemp("rules"), *DATASETS)
    patch = pytest.MonkeyPatch()
    for key, value in env.items():
        patch.setenv(key, value)
    yield root
    patch.undo()


def page_figures(dataset: str, cluster_ks=None) -> dict[str, list[dict]]:
    """``{page: [figure JSON, ...]}`` of every page opened with ``dataset`` chosen, and of the
    Trajectories page with its map coloured by ``cluster_ks`` clusters (``CLUSTER_KS`` unless
    given)."""
    at = AppTest.from_file(APP, default_timeout=600)
    at.session_state["dataset_choice"] = dataset
    at.run()
    out = {}
    for page in PAGES:
        at.switch_page(pages.page(page).script)
        at.run()
        assert not at.exception, (dataset, page, [e.value for e in at.exception])
        out[page] = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    # the map coloured by cluster (the Trajectories page's "Cluster labels"), at the default k
    # and at more clusters than the palette keeps apart
    for k in CLUSTER_KS if cluster_ks is None else cluster_ks:
        at.switch_page(pages.page("trajectories").script)
        at.session_state["traj_clusters"] = True
        at.session_state["traj_k"] = k
        at.run()
        assert not at.exception, (dataset, "trajectories", k, [e.value for e in at.exception])
        out[f"trajectories (clusters, k = {k})"] = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    return out


def _title(figure: dict) -> str:
    title = (figure.get("layout") or {}).get("title") or {}
    return title.get("text", "") if isinstance(title, dict) else str(title)


# charts each dataset must show at least (so the rules are not checked on nothing)
AT_LEAST = {"paper_release": {"llm_vs_human": 2, "design_levers": 3, "regression": 1},
            "local_smollm2": {"llm_vs_human": 3, "trajectories": 3, "diversity": 4, "quality_diversity": 3},
            "local_smollm2_paper_b": {"trajectories": 3, "diversity": 4, "quality_diversity": 4},
            "local_smollm2_steered": {"trajectories": 3, "steering": 1}}


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_chart_of_every_page_meets_the_rules(every_dataset, dataset):
    figures = page_figures(dataset)
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
