"""Hand-made nasty files (tests/data/bad/) through the command line and the dashboard upload.

Each file must stop its command with exit code 2 and one line on stderr that names the
file, and the row and field where the damage is, within 10 s; no traceback, no hang, no
silent acceptance. The expected row and field were worked out by reading each file.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from engine.cli import main
from engine.stats.reference import default_release_path

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
RELEASE = str(default_release_path())
APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")

# file -> (row, field, a fragment of the reason); None where the damage has no row/field
EXPECTED = {
    "grid_not_utf8.yaml": (1, None, "not UTF-8"),
    "grid_deep.yaml": (1, None, "nested more than 64 levels"),
    "grid_alias_bomb.yaml": (None, None, "alias bomb"),
    "grid_python_tag.yaml": (6, None, "could not determine a constructor"),
    "grid_duplicate_key.yaml": (6, None, "'model' appears twice"),
    "grid_tabs.yaml": (3, None, "'\\t'"),
    "grid_list_top.yaml": (None, None, "must be a mapping"),
    "grid_two_documents.yaml": (6, None, "another document"),
    "grid_unknown_method.yaml": (None, "conditions[0].method", "unknown method 'brainstorm_party'"),
    "grid_replicates_huge.yaml": (None, "conditions.0.replicates", "less than or equal to 10000"),
    "grid_empty.yaml": (None, None, "must be a mapping"),
    "grid_nul_byte.yaml": (1, None, "U+0000 is not allowed"),
    "grid_conditions_string.yaml": (None, "conditions", "valid list"),
    "grid_unknown_task.yaml": (None, "conditions[0].tasks", "unknown task 'no_such_task'"),
    "spec_star_levels_5.yaml": (None, "star_levels", "got 5"),
    "spec_estimator_list.yaml": (None, "estimator", "['ols'] is not one of"),
    "spec_alias_bomb.yaml": (None, None, "alias bomb"),
    "spec_zscore_string.yaml": (None, "zscore", "true or false"),
    "spec_blocks_mapping.yaml": (None, "blocks", "list of block names"),
    "spec_name_number.yaml": (None, "name", "non-empty name"),
    "tasks_lone_surrogate.jsonl": (2, "prompt", "lone surrogate"),
    "tasks_array_line.jsonl": (2, None, "expected a JSON object"),
    "tasks_deep.jsonl": (1, None, "nested too deeply"),
    "tasks_bad_id.jsonl": (1, "id", "letters, digits"),
    "pilot_abc.csv": (2, "semantic_spread", "got 'abc'"),
    "pilot_inf.csv": (2, "semantic_spread", "'inf' is not a plausible"),
    "pilot_huge.csv": (2, "semantic_spread", "'1e308' is not a plausible"),
    "pilot_minus_huge.csv": (2, "semantic_spread", "'-1e308' is not a plausible"),
    "pilot_nan_word.csv": (2, "semantic_spread", "got 'NaNx'"),
    "pilot_ragged.csv": (3, "semantic_spread", "11 cells but the header has 10"),  # the last column overflowed
    "pilot_not_utf8.csv": (4, None, "not UTF-8"),
    "pilot_missing_feature.csv": (None, "revisit_score", "lacks 'revisit_score'"),
    "pilot_broken.parquet": (None, None, "not a readable Parquet file"),
    "pilot_text_in_number.parquet": (2, "path_length", "'1e999' is not a plausible"),
    "corpus_meta_not_json.parquet": (2, "meta", "not valid JSON"),
    "corpus_header_not_json.parquet": (None, "corpus (schema metadata)", "not valid JSON"),
    "transcripts_lone_surrogate.jsonl": (2, "text", "lone surrogate"),
    "transcripts_markdown_turn.csv": (1, "turn", "expected an integer"),
    "transcripts_html_speaker.csv": (2, "turn", "appears twice"),
    "transcripts_ragged.csv": (2, "text", "5 cells but the header has 4"),
    "transcripts_unterminated_quote.csv": (1, None, "not a readable CSV row"),
    "transcripts_header_only.csv": (None, None, "no data rows"),
    "transcripts_turn_float.csv": (1, "turn", "got '1.5'"),
    "transcripts_json_list.jsonl": (1, None, "expected a JSON object"),
    "transcripts_team_size_inf.csv": (1, "team_size", "got 'inf'"),
    "transcripts_rating_inf.csv": (1, "creativity", "got '-inf'"),
    "transcripts_source_robot.csv": (1, "source", "got 'robot'"),
    "convokit_broken": (2, "timestamp", "got 'soon'"),
}


def command(path: Path, tmp_path: Path) -> list[str]:
    name = path.name
    if name.startswith("grid_"):
        argv = ["run", "--grid", path, "--out", tmp_path / "out"]
    elif name.startswith("spec_"):
        argv = ["analyze", "regress", "--spec", path, "--metrics", RELEASE]
    elif name.startswith("tasks_"):
        argv = ["run", "--tasks-file", path, "--method", "direct", "--out", tmp_path / "out"]
    elif name.startswith("pilot_"):
        argv = ["analyze", "diagnose", "--pilot", path, "--reference", RELEASE]
    elif name.startswith("corpus_"):
        argv = ["features", path, "--no-progress"]
    else:
        argv = ["import", path, tmp_path / "out.jsonl"]
    return [str(a) for a in argv]


def test_every_bad_file_has_an_expectation():
    assert sorted(p.name for p in BAD.iterdir()) == sorted(EXPECTED)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_file_gives_one_line_naming_file_row_and_field(name, tmp_path, capsys):
    path = BAD / name
    row, field, reason = EXPECTED[name]
    started = time.perf_counter()
    code = main(command(path, tmp_path))
    assert time.perf_counter() - started < 10
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    line = lines[0]
    shown = str(path / "utterances.jsonl") if path.is_dir() else str(path)
    assert line.startswith(f"error: file {shown}"), line
    assert (f", row {row}" in line) if row is not None else ", row " not in line, line
    assert (f"field '{field}'" in line) if field is not None else "field '" not in line, line
    assert reason in line, line
    assert not (tmp_path / "out.jsonl").exists()  # nothing half-written


# -- the same kind of files uploaded on the dashboard's Data page (AppTest) ---------------
UPLOADS = ["transcripts_markdown_turn.csv", "transcripts_lone_surrogate.jsonl", "pilot_inf.csv",
           "pilot_ragged.csv", "pilot_text_in_number.parquet", "corpus_meta_not_json.parquet",
           "transcripts_html_speaker.csv"]


@pytest.mark.timeout(120)
def test_bad_files_uploaded_on_the_data_page_give_one_error_each(runs_root):
    from streamlit.testing.v1 import AppTest

    for name in UPLOADS:
        row, field, reason = EXPECTED[name]
        at = AppTest.from_file(APP, default_timeout=60)
        at.run()
        started = time.perf_counter()
        at.file_uploader(key="upload_file").upload(name, (BAD / name).read_bytes()).run()
        at.button(key="upload_load").click().run()
        assert time.perf_counter() - started < 10
        assert not at.exception, (name, [e.value for e in at.exception])
        shown = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]  # markdown escapes undone
        assert len(shown) == 1, (name, shown)
        assert f"file {name}" in shown[0] and reason in shown[0], shown
        if row is not None:
            assert f"row {row}" in shown[0], shown
        if field is not None:
            assert f"field '{field}'" in shown[0], shown
