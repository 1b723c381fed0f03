"""Damaged run folders and pilot caches: one line and exit 2 (or, for a cache, computed
again and said so), never a traceback; refusals that come before any paid call.

* ``manifest.json`` holding ``{``; a ``quality.jsonl`` line without ``kind`` or with a score
  that is text; a ``quality.jsonl`` that is a folder: ``judge`` and ``dataset build`` stop
  with one line naming the file (and line and field).
* The pilot's caches (``prediction.json``, ``features_pilot.csv``) cut short, empty, or
  without their rows are computed again (they hold nothing the run folders do not) with a
  one-line note, and the report is the one an undamaged folder gives; an immutable
  ``report.json`` is one line.
* ``pilot --baseline creative_mad`` (not in the paper release: nothing can be predicted
  against it) is refused before the pilot's calls; ``run --method direct --models m1,m2``
  (models beyond the team would never be called, yet the session was filed as "mixed") is
  refused.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from engine.cli import main
from engine.errors import InputError
from engine.llm import ScriptedBackend
from engine.runs.runner import run_grid

GRID = {"name": "d", "model": "scripted", "seed": 0, "tasks": ["plastic_waste"],
        "conditions": [{"method": "direct", "replicates": 2}]}


@pytest.fixture
def run_dir(tmp_path):
    run_grid(GRID, tmp_path / "run", backend=ScriptedBackend(responder=lambda m: "Idea: reuse."),
             progress=False, cache=False)
    return tmp_path / "run"


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_a_manifest_cut_to_one_brace_is_one_line(run_dir, tmp_path, capsys):
    (run_dir / "manifest.json").write_text("{")
    assert main(["judge", "quality", str(run_dir), "--dry-run"]) == 2
    assert one_line(capsys) == f"error: file {run_dir / 'manifest.json'}: not valid JSON (damaged or cut short)"
    assert main(["dataset", "build", str(run_dir), "--out", str(tmp_path / "ds")]) == 2
    assert one_line(capsys).endswith("manifest.json: not valid JSON (damaged or cut short)")
    assert main(["run", "--method", "direct", "--task", "plastic_waste", "--out", str(run_dir)]) == 2
    assert "manifest.json: not valid JSON" in one_line(capsys)


@pytest.mark.parametrize("record, field", [
    ({"key": "k", "judge": "j", "score": 5}, "kind"),
    ({"kind": "ratings", "key": "k", "judge": "j"}, "kind"),
    ({"kind": "rubric", "key": "k", "judge": "j", "round": None, "score": "five"}, "score"),
    ({"kind": "rubric", "key": "k", "judge": "j", "round": "1", "score": 5}, "round"),
])
def test_a_quality_record_that_cannot_be_read_is_named(run_dir, tmp_path, capsys, record, field):
    good = {"kind": "rubric", "key": "k0", "judge": "j", "conversation_id": "c", "task": "plastic_waste",
            "round": None, "speaker": None, "score": 6.0}
    (run_dir / "quality.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(record) + "\n")
    assert main(["judge", "quality", str(run_dir), "--dry-run"]) == 2
    line = one_line(capsys)
    assert line.startswith(f"error: file {run_dir / 'quality.jsonl'}, row 2, field '{field}': "), line


def test_a_quality_file_that_is_a_folder_is_one_line(run_dir, capsys):
    (run_dir / "quality.jsonl").mkdir()
    assert main(["judge", "quality", str(run_dir), "--dry-run"]) == 2
    assert one_line(capsys) == f"error: file {run_dir / 'quality.jsonl'}: is a folder, expected a file"


# -- the pilot --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pilot_study(tmp_path_factory):
    from engine.diagnosis.prescribe import BUDGETS, Budget, prescribe_and_verify
    from tests.engine.diagnosis.test_pilot import FakeEmbedder, scripted_backend, synthetic_reference

    BUDGETS["tiny"] = Budget("tiny", ("plastic_waste",), 2, 3, dict(BUDGETS["small"].defaults),
                             BUDGETS["small"].designs)
    out = tmp_path_factory.mktemp("pilot")
    reference = synthetic_reference()
    study = prescribe_and_verify(out, budget="tiny", backend=scripted_backend(), embedder=FakeEmbedder(),
                            reference=reference, progress=False, say=lambda _: None)
    yield out, study.report, reference
    BUDGETS.pop("tiny", None)


def rerun(out, reference, backend=None):
    from engine.diagnosis.prescribe import prescribe_and_verify
    from tests.engine.diagnosis.test_pilot import FakeEmbedder

    return prescribe_and_verify(out, budget="tiny", backend=backend or ScriptedBackend([]), embedder=FakeEmbedder(),
                           reference=reference, progress=False, say=lambda _: None).report


def comparable(report: dict) -> dict:
    """The report without timings, numbers to 6 digits (a cached prediction keeps 10)."""
    text = json.dumps({k: v for k, v in report.items() if k != "timings"}, default=str)
    return json.loads(text, parse_float=lambda s: round(float(s), 6))


def cut_short(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])


@pytest.mark.parametrize("name, damage", [
    ("prediction.json", cut_short),
    ("prediction.json", lambda p: p.write_bytes(b"")),
    ("prediction.json", lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "rows": None}))),
    ("prediction.json", lambda p: p.write_text(json.dumps({"key": json.loads(p.read_text())["key"]}))),
    ("features_pilot.csv", cut_short),
    ("features_pilot.csv", lambda p: p.write_bytes(b"")),
    ("features_verify.csv", lambda p: p.write_text(p.read_text().splitlines()[0] + "\n")),
])
def test_a_damaged_pilot_cache_is_computed_again_and_said(pilot_study, tmp_path, capsys, name, damage):
    source, report, reference = pilot_study
    out = tmp_path / "pilot"
    shutil.copytree(source, out)
    damage(out / name)
    capsys.readouterr()
    again = rerun(out, reference)  # no call: every session is done
    assert comparable(again) == comparable(report)
    err = capsys.readouterr().err
    assert f"note: file {out / name}: damaged" in err and "computed again" in err


def test_an_immutable_report_is_one_line(pilot_study, tmp_path):
    source, _, reference = pilot_study
    out = tmp_path / "pilot"
    shutil.copytree(source, out)
    if subprocess.run(["chattr", "+i", str(out / "report.json")], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        with pytest.raises(InputError) as caught:
            rerun(out, reference)
    finally:
        subprocess.run(["chattr", "-i", str(out / "report.json")], check=True)
    assert str(caught.value) == f"file {out / 'report.json'}: cannot write (Operation not permitted)"


def test_a_baseline_the_release_lacks_is_refused_before_any_call(tmp_path, capsys):
    from engine.diagnosis.prescribe import prescribe_and_verify

    backend = ScriptedBackend(responder=lambda m: "idea")
    with pytest.raises(InputError, match="baseline 'creative_mad' is not in the paper release"):
        prescribe_and_verify(tmp_path / "p", baseline="creative_mad", backend=backend, progress=False,
                        say=lambda _: None)
    assert backend.history == [] and not (tmp_path / "p").exists()
    assert main(["pilot", "--baseline", "creative_mad", "--out", str(tmp_path / "p"), "--dry-run"]) == 2
    line = one_line(capsys)
    assert line.startswith("error: field 'baseline': baseline 'creative_mad' is not in the paper release "
                           "(instructed, open, iterative)")


def test_a_single_agent_method_with_several_models_is_refused(tmp_path, capsys):
    args = ["run", "--method", "direct", "--task", "plastic_waste", "--out", str(tmp_path), "--dry-run"]
    assert main([*args, "--models", "m1,m2"]) == 2
    line = one_line(capsys)
    assert "field 'conditions[0].models': 2 models for 1 agent(s) of direct" in line
    assert "run each model with --model" in line
    assert main([*args, "--models", "m1"]) == 0  # one model for one agent: filed under it
    capsys.readouterr()
    debate = ["run", "--method", "homo_mad", "--agents", "2", "--task", "plastic_waste", "--out",
              str(tmp_path / "b"), "--dry-run"]
    assert main([*debate, "--models", "m1,m2,m3"]) == 2 and "3 models for 2 agent(s)" in one_line(capsys)
    assert main([*debate, "--models", "m1,m2"]) == 0
