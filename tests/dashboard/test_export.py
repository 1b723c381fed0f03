"""Exports (dashboard/exports/formats.py): CSV, LaTeX, HTML, the one-file report, PNG/SVG."""

from __future__ import annotations

import io
import shutil
import struct

import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard.exports import formats as export


@pytest.fixture
def table():
    return pd.DataFrame({"feature": ["global_coherence", "max_distance"], "r2_%": [52.6, 51.7]})


@pytest.fixture
def figure():
    return go.Figure(go.Bar(x=["llm", "human"], y=[3702, 308]), layout=dict(height=400))


def test_csv_round_trip(table):
    back = pd.read_csv(io.BytesIO(export.table_to_csv(table)))
    pd.testing.assert_frame_equal(back, table)


def test_csv_keeps_a_named_index():
    indexed = pd.DataFrame({"task": [5.9]}, index=pd.Index(["global_coherence"], name="feature"))
    assert export.table_to_csv(indexed).decode().splitlines() == ["feature,task", "global_coherence,5.9"]


def test_latex_is_booktabs_escaped_and_rounded(table):
    tex = export.table_to_latex(table, caption="Table 24", label="tab:t24", digits=1)
    assert "\\toprule" in tex and "\\bottomrule" in tex
    assert "global\\_coherence & 52.6 \\\\" in tex
    assert "r2\\_\\%" in tex  # column names escaped too
    assert "\\caption{Table 24}" in tex and "\\label{tab:t24}" in tex


def test_figure_html_is_self_contained(figure):
    page = export.figure_to_html(figure)
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert "3702" in page and "308" in page
    assert "<script src=" not in page.split("plotly.js")[0][-200:]  # inlined, no CDN tag
    assert len(page) > 1_000_000  # plotly.js itself is inside


def test_report_inlines_plotly_once_badges_published_and_escapes(table, figure):
    items = [export.ReportItem("Ours", figure=figure, table=table),
             export.ReportItem("Paper A, Table 24", table=table, published=True),
             export.ReportItem("Second figure", figure=figure)]
    page = export.html_report("Report <1>", items, context={"filter: task": "<script>alert(1)</script>"})
    assert page.count("<section") == 3
    assert page.count("class='badge pub'") == 1
    assert page.count("class='badge ours'") == 2
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert "<title>Report &lt;1&gt;</title>" in page
    # plotly.js (its licence banner) appears once although there are two figures
    assert page.count("plotly.js v") == 1
    assert page.count("global_coherence") == 2


def test_report_truncates_long_tables():
    long = pd.DataFrame({"x": range(250)})
    page = export.html_report("r", [export.ReportItem("long", table=long)])
    assert "First 30 of 250 rows" in page  # a report shows what a page shows, not a dump


def test_image_format_is_checked(figure):
    with pytest.raises(ValueError):
        export.figure_to_image(figure, "gif")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium for kaleido")
def test_png_and_svg_through_kaleido(figure):
    png = export.figure_to_image(figure, "png", width=500, height=300, scale=2)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (1000, 600)
    svg = export.figure_to_image(figure, "svg", width=500, height=300).decode()
    assert svg.lstrip().startswith("<svg") and 'width="500"' in svg


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium for kaleido")
def test_slide_deck_has_one_slide_sized_png_per_figure_with_its_provenance(table, figure):
    import io
    import zipfile

    items = [export.ReportItem("Ours", figure=figure, provenance="dataset x, 10 of 10 conversations selected"),
             export.ReportItem("A table only", table=table),
             export.ReportItem("Paper A, Table 24", figure=figure, published=True, provenance="paper A, Table 24")]
    archive = zipfile.ZipFile(io.BytesIO(export.slide_deck(items)))
    assert sorted(archive.namelist()) == ["01_ours.png", "02_paper_a_table_24.png", "slides.txt"]
    for name in ("01_ours.png", "02_paper_a_table_24.png"):
        png = archive.read(name)
        assert struct.unpack(">II", png[16:24]) == (1600, 900)
    text = archive.read("slides.txt").decode()
    assert "ours: dataset x, 10 of 10 conversations selected" in text and "published: paper A, Table 24" in text
    slide = export.slide_figure(items[2])
    # the stamp sits above the title, on the image, never under the plot (where the axis labels are)
    assert "<b>PUBLISHED</b> · paper A, Table 24" in slide.layout.title.text
    assert not slide.layout.annotations
