"""Published numbers, task texts and headers checked against the papers' text and the
authors' release (values read from the seed files, or copied from the release by hand)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.cli import main
from engine.stats import published_a, published_b
from engine.tasks import get_task

SEEDS = Path(__file__).resolve().parents[4] / "shared/seeds"
RELEASE = Path(__file__).resolve().parents[4] / "shared/data/paper_release/comprehensive_trajectory_metrics.csv"
needs_seeds = pytest.mark.skipif(not SEEDS.exists(), reason=f"papers not at {SEEDS}")


@needs_seeds
def test_table26_has_the_r2_row_printed_in_paper_a():
    text = (SEEDS / "paper-multi-agent-creativity.txt").read_text(encoding="utf-8")
    table = text[text.index("Table 26: Robustness check"):]
    r2_line = next(line for line in table.splitlines() if line.startswith("$R^{2}$"))
    printed = [float(x) for x in re.findall(r"(\d+\.\d)%", r2_line)]
    assert printed == [17.6, 14.7, 15.3, 13.7]
    row = published_a.table26().set_index("feature").loc["R² (%)"]
    assert list(row) == printed


@needs_seeds
def test_paper_b_gives_120_comparisons_for_the_judge_only():
    text = (SEEDS / "paper-creative-mad.txt").read_text(encoding="utf-8")
    sentence = next(line for line in text.splitlines() if "79.0%" in line)
    assert "120 comparisons" in sentence.split("79.0%")[0].split("Human annotators")[0]  # the judge's
    assert "120" not in sentence.split("Human annotators")[1]
    rows = published_b.headlines().set_index("published")
    assert rows.loc["81.0%", "model / sample"] == "120 comparisons"
    assert "120" not in rows.loc["79.0%", "model / sample"]
    assert "not given" in rows.loc["79.0%", "model / sample"]


def test_task_prompts_are_the_releases_texts():
    # generation/prompts.py, PS_QUESTIONS (whitespace and the leading "Task: " aside), copied by hand
    assert get_task("sorry_pandemic").prompt == (
        'Imagine a new pandemic has emerged that is transmitted by saying the word "sorry". You are '
        "collaborating with other team members to come up with one creative idea to reduce its spread. "
        "The idea will be evaluated on its creativity (i.e., it should be both novel and useful).")
    assert get_task("employee_attrition").prompt == (
        "Voluntary attrition happens when an employee decides to leave the company, resulting in the "
        "reduction of valued talent in the workforce. You are collaborating with other team members to "
        "come up with one creative idea to improve access to stop voluntary employee attrition. The "
        "idea will be evaluated on its creativity (i.e., it should be both novel and useful).")


def test_minilm_is_not_said_to_be_paper_bs_model():
    import engine.embedding.embedder

    assert "the 22M model paper B uses" not in engine.embedding.embedder.__doc__
    assert "approximately 22M parameters" in engine.embedding.embedder.__doc__


@pytest.mark.skipif(not RELEASE.exists(), reason=f"paper release not at {RELEASE}")
def test_table_header_gives_the_n_the_fits_use(capsys):
    # Table 24 fits the LLM open/instructed/iterative conversations (N = 3,574, paper A), not
    # the 4,010 rows of the trajectory sample as read from the metrics file alone
    assert main(["analyze", "table", "24", "--metrics", str(RELEASE)]) == 0
    header = capsys.readouterr().out.split("-- ours")[0]
    assert "fitted on: N = 3,574 LLM conversations" in header
