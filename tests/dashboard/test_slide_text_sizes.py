"""Slides a hall can read (``dashboard.exports.formats.slide_figure``): on every slide of the
deck made from each cached dataset's export catalog, rendered by kaleido as the deck is (SVG
here, so the text stays text) and opened in Chromium at 1600 × 900, the title's letters are at
least 28 px, every other text (axis titles, tick labels, legend, notes, the provenance stamp,
the codes' key) at least 18 px, each measured twice: the font size Chromium computes for the
rendered text, and the height of its rendered box. No two texts overlap and none is cut at
the slide's edge (``devtools.text_overlaps``). The same holds for the slides of every chart
the pages show (the deck's "also include the figures shown on the pages"), read as the browser
gets them (the session's one render of every page, ``tests.support.page_renders``), over every
cached dataset, the Trajectories map with its 8 cluster names written on
it included (``dashboard.figures.label_layout`` places them for the page; the slide's larger
plot keeps them apart at its larger font)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dashboard.exports import formats as export
from dashboard.exports import report

REPO = Path(__file__).resolve().parents[2]
DATASETS = sorted(p.parent.name for p in (REPO / "cached_runs").glob("*/manifest.json"))
TITLE_MIN_PX, TEXT_MIN_PX = 28, 18

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("chromium") is None, reason="needs chromium"),
              pytest.mark.skipif(not DATASETS, reason="no cached dataset")]

# every drawn piece of text of the slide's SVG: its text, whether it is the slide's title
# heading (in the title, outside the stamp's own smaller span), the rendered font size and the
# height of its rendered box, in CSS pixels of the 1600-px-wide page
MEASURE_JS = """
() => {
  const svg = document.querySelector('body > svg');
  const walker = document.createTreeWalker(svg, NodeFilter.SHOW_TEXT);
  const out = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = (node.textContent || '').trim();
    if (!text) continue;
    const element = node.parentElement;
    if (element.closest('.hoverlayer, .modebar')) continue;
    const style = window.getComputedStyle(element);
    if (style.display === 'none' || style.visibility === 'hidden' || parseFloat(style.opacity) === 0) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const box = range.getBoundingClientRect();
    if (box.width < 1 || box.height < 1) continue;
    const inTitle = !!element.closest('.gtitle');
    const inStamp = !!element.closest('tspan[style*="font-size"]');
    out.push({text: text.slice(0, 60), heading: inTitle && !inStamp, stamp: inTitle && inStamp,
              size: parseFloat(style.fontSize), height: box.height});
  }
  return out;
}
"""


def slide_svgs(dataset: str) -> list[tuple[str, str]]:
    """``[(title, svg)]`` of every slide of the dataset's deck, rendered in one kaleido session."""
    from dashboard.page_data.datasets import availability
    from engine.datasets import Dataset

    data = Dataset.load(REPO / "cached_runs" / dataset)
    frame = data.conversations
    items = [i for i in report.catalog(data, frame, availability(data)) if i.figure is not None]
    return render(items, report.selection_context(data, frame, {}))


def render(items, context=None) -> list[tuple[str, str]]:
    width, height = export.SLIDE_SIZE
    rendered = export.render_pngs([export.slide_figure(i, context) for i in items], width=width, height=height,
                                  fmt="svg")
    failed = {i.title: r for i, r in zip(items, rendered) if not isinstance(r, bytes)}  # a reason, not an image
    assert not failed, failed
    return [(i.title, r.decode("utf-8")) for i, r in zip(items, rendered)]


@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium for the module's slides (each measured in a page of its own)."""
    from devtools.browser import open_chromium

    with open_chromium() as browser:
        yield browser


def measure(svgs: list[tuple[str, str]], browser) -> dict[str, dict]:
    """``{title: {"texts": [...], "layout": text_overlaps result}}`` of each slide, opened in
    ``browser`` (an open Chromium) at the slide's size."""
    from devtools.text_overlaps import CHECK_JS, MIN_OVERLAP

    width, height = export.SLIDE_SIZE
    out = {}
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        for title, svg in svgs:
            page.set_content(f"<html><body style='margin:0'>{svg}</body></html>")
            layout = page.evaluate(CHECK_JS, ["body > svg", MIN_OVERLAP])
            out[title] = {"texts": page.evaluate(MEASURE_JS), "layout": layout[0] if layout else {}}
    finally:
        page.close()
    return out


def too_small(texts: list[dict]) -> list[str]:
    """Texts under their minimum: the title's heading under 28 px, any other under 18 px,
    by computed font size or by rendered height."""
    found = []
    for t in texts:
        least = TITLE_MIN_PX if t["heading"] else TEXT_MIN_PX
        if t["size"] < least or t["height"] < least:
            found.append(f"{t['text']!r}: font {t['size']:.1f} px, box {t['height']:.1f} px (< {least} px)")
    return found


def slide_problems(dataset: str, slides: dict[str, dict]) -> dict[str, list[str]]:
    """Per slide, its texts under their minimum, overlapping or cut; prints the sizes found."""
    assert slides, dataset
    found, sizes = {}, []
    for title, measured in slides.items():
        texts = measured["texts"]
        assert any(t["heading"] for t in texts), (title, "no title measured")
        assert any(t["stamp"] for t in texts), (title, "no provenance stamp measured")
        sizes += texts
        problems = too_small(texts)
        layout = measured["layout"]
        if layout.get("overlaps"):
            problems.append(f"overlapping texts {layout['overlaps'][:3]}")
        if layout.get("outside"):
            problems.append(f"texts cut at the slide's edge {layout['outside'][:3]}")
        if problems:
            found[title] = problems
    headings = [t["size"] for t in sizes if t["heading"]]
    others = [t["size"] for t in sizes if not t["heading"]]
    print(f"{dataset}: {len(slides)} slides, title {min(headings):.0f}-{max(headings):.0f} px, "
          f"other texts {min(others):.0f}-{max(others):.0f} px (smallest box "
          f"{min(t['height'] for t in sizes if not t['heading']):.1f} px)")
    return found


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_slide_of_every_dataset_is_readable_from_the_back_row(chromium, dataset):
    found = slide_problems(dataset, measure(slide_svgs(dataset), chromium))
    assert found == {}, found


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_chart_the_pages_show_is_readable_as_a_slide(page_renders, chromium, dataset):
    import plotly.graph_objects as go

    from tests.support.page_renders import clusters_key

    shown = page_renders(dataset)  # the session's one render of every page (as test_figure_rules reads it)
    raised = {page: rendered.exceptions for page, rendered in shown.items() if rendered.exceptions}
    assert not raised, (dataset, raised)
    items = [export.ReportItem(f"{page} {number}: " + str(((figure.get("layout") or {}).get("title") or {})
                                                       .get("text", ""))[:50].replace("<br>", " "),
                               figure=go.Figure(figure), provenance=f"dataset {dataset}")
             for page, rendered in shown.items() if page != clusters_key(20)  # the map's 8 cluster names
             for number, figure in enumerate(rendered.figures)]
    assert len(items) >= 8
    found = slide_problems(dataset, measure(render(items), chromium))
    assert found == {}, found


def test_the_sizes_are_what_the_slide_says():
    """The stated sizes meet the hall's minimum (28 px title, 18 px text on a 1600-px slide),
    and ``at_least`` raises a figure's smaller fonts (a 12-px data label, an 11-px note)."""
    import plotly.graph_objects as go

    assert export.SLIDE_SIZE[0] == 1600
    assert export.SLIDE_TITLE_PX >= 28 and export.SLIDE_TEXT_PX >= 18 and export.SLIDE_STAMP_PX >= 18
    fig = go.Figure(go.Bar(x=[1, 2], y=[3, 4], text=["a", "b"], textfont=dict(size=12)))
    fig.add_annotation(text="note", x=1, y=1, font=dict(size=11))
    fig.update_layout(xaxis=dict(tickfont=dict(size=24)))
    raised = export.at_least(fig, 20)
    assert raised.data[0].textfont.size == 20 and raised.layout.annotations[0].font.size == 20
    assert raised.layout.xaxis.tickfont.size == 24  # larger ones stay
