"""Idea files (``analyze table --ideas``) are checked row by row, and a table that cannot be
computed says so in one line: ratings and counts out of their range (the judges' 0-10 scale,
avg_* ratings scaled to 0-1, 1-100 agents...) and ideas listed twice are named with their row;
constant ratings never give ``p 0.0000 ***`` (a fit with nothing to explain is refused); Table 4
and Table 20 on one row, human-only or constant data end in one line, not a traceback; blank
ratings are reported as blank, not as a missing ``--ideas``.

The ideas file is built by ``tests/support/ideas_fixture.py`` (real metrics ids, SYNTHETIC ratings).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.errors import InputError
from tests.support.cli_run import cli, refused
from tests.support.ideas_fixture import RELEASE, build_ideas

pytestmark = pytest.mark.skipif(not RELEASE.exists(), reason="needs the paper release metrics file")


@pytest.fixture(scope="module")
def ideas() -> pd.DataFrame:
    return build_ideas()


def write(frame: pd.DataFrame, folder, name="ideas.csv"):
    path = folder / name
    frame.to_csv(path, index=False)
    return path


def table(number, path):
    return cli(["analyze", "table", str(number), "--ideas", path, "--metrics", RELEASE])


def constant(ideas: pd.DataFrame) -> pd.DataFrame:
    frame = ideas.copy()
    for column in frame.columns:
        if column.startswith("avg_"):
            frame[column] = 0.5
        elif column[:1] in "NU" and column[1:].isdigit():
            frame[column] = 5
    return frame


def test_constant_ratings_never_give_stars(ideas, tmp_path):
    path = write(constant(ideas), tmp_path)
    for number in (7, 9, 29):  # the old code printed coefficient 0.0000, se 0.0000, p 0.0000 ***
        outcome = table(number, path)
        assert "***" not in outcome.out.split("published")[0].replace("*** p <", ""), outcome.out[:3000]
        refused(outcome, "no variation")


def test_a_fit_without_variation_or_without_residual_is_refused():
    from engine.stats.regression import fit
    from engine.stats.spec import RegressionSpec

    rows = pd.DataFrame({"y": [0.5] * 20, "x": np.arange(20.0), "task": ["a", "b"] * 10})
    spec = RegressionSpec(name="flat", outcome="y", blocks=["x"], estimator="ols_hc3", zscore=False)
    with pytest.raises(InputError, match="no variation"):
        fit(spec, rows)
    exact = rows.assign(y=2.0 * rows["x"] + 1.0)  # y reproduced exactly by x: no residual
    with pytest.raises(InputError, match="exactly"):
        fit(spec, exact)
    noisy = exact.assign(y=exact["y"] + np.tile([0.1, -0.1], 10))
    assert fit(spec, noisy).coef("x") == pytest.approx(2.0, abs=0.02)


@pytest.mark.parametrize("column, value, expected", [
    ("avg_novelty_rating", 1e308, "expected 0 to 1"), ("avg_creativity_rating", -0.2, "expected 0 to 1"),
    ("N2", 57, "expected 0 to 10"), ("U5", -1, "expected 0 to 10"),
    ("number_of_agents", -4, "expected 1 to 100"), ("number_of_agents", "1e308", "expected 1 to 100"),
    ("number_of_agents", 2.5, "whole number"), ("run_num", "1e300", "expected 0 to 1e+06"),
])
def test_values_out_of_range_are_named_with_row_and_column(ideas, tmp_path, column, value, expected):
    frame = ideas.copy()
    frame[column] = frame[column].astype(object)
    frame.loc[7, column] = value
    path = write(frame, tmp_path)
    for command in (["analyze", "table", "4", "--ideas", path, "--metrics", RELEASE],
                    ["import", path, tmp_path / "out.csv"]):
        refused(cli(command), str(path), "row 8", f"'{column}'", expected)


def test_an_idea_listed_twice_is_named_with_both_rows(ideas, tmp_path):
    frame = pd.concat([ideas, ideas.iloc[[3] * 300]], ignore_index=True)
    path = write(frame, tmp_path)
    refused(table(4, path), str(path), f"row {len(ideas) + 1}", "appears twice (also on row 4)")


@pytest.mark.parametrize("number", [4, 20])
@pytest.mark.parametrize("subset", ["one row", "human only", "constant"])
def test_tables_4_and_20_on_degenerate_data_end_in_one_line(ideas, tmp_path, number, subset):
    frame = {"one row": ideas.iloc[:1], "constant": constant(ideas),
             "human only": ideas[ideas["data_type"].eq("human") | ideas["source"].eq("human_data")]}[subset]
    outcome = table(number, write(frame, tmp_path))
    if outcome.code == 0:  # Table 4 on human ideas: their raters' ICC is defined
        assert subset == "human only" and number == 4 and "ICC" in outcome.out
        return
    line = refused(outcome, f"Table {number}: nothing could be computed")
    expected = {("one row", 4): "at least 3 rated targets", ("one row", 20): "fewer than the 10",
                ("human only", 20): "no LLM rows", ("constant", 4): "the same mean rating",
                ("constant", 20): "constant"}[subset, number]
    assert expected in line, line


def test_blank_ratings_say_so_instead_of_asking_for_the_ideas_file(ideas, tmp_path):
    frame = ideas.copy()
    for column in ("avg_novelty_rating", "avg_usefulness_rating", "avg_creativity_rating"):
        frame[column] = np.nan
    path = write(frame, tmp_path)
    line = refused(table(20, path), str(path), "no creativity / novelty / usefulness value in any row")
    assert "pass --ideas" not in line
