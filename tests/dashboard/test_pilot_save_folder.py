"""The Pilot page's "Save as dataset" proposes a folder outside the checkout (the pilot history
root) and refuses one inside it, so a user's data never mixes with cached_runs/."""

from __future__ import annotations

from pathlib import Path

from dashboard.pilot import history

REPO = Path(__file__).resolve().parents[2]


def test_the_proposed_folder_is_under_the_history_root(tmp_path, monkeypatch):
    monkeypatch.setenv("CDL_PILOT_DIR", str(tmp_path / "pilots"))
    proposed = history.save_folder("pilot_open_plastic_waste_20260101-120000")
    assert proposed == tmp_path / "pilots" / "pilot_open_plastic_waste_20260101-120000"
    assert history.save_refusal(proposed) is None


def test_a_folder_inside_the_checkout_is_refused(tmp_path, monkeypatch):
    # before: the page proposed cached_runs/pilot_... and saved there
    monkeypatch.setenv("CDL_PILOT_DIR", str(tmp_path / "pilots"))
    for target in (REPO / "cached_runs" / "pilot_x", REPO, REPO / "cached_runs" / ".." / "docs" / "p"):
        message = history.save_refusal(target)
        assert message is not None and "inside the project's checkout" in message
        assert str(tmp_path / "pilots" / target.name) in message  # says where instead
    assert not (REPO / "cached_runs" / "pilot_x").exists()


def test_a_folder_holding_a_dataset_is_refused(tmp_path):
    (tmp_path / "manifest.json").write_text("{}")
    assert history.save_refusal(tmp_path) == f"{tmp_path} already holds a dataset; choose another folder."


def test_the_page_proposes_the_history_root_and_refuses_cached_runs(runs_root, monkeypatch, tmp_path):
    import itertools

    from engine.llm import ScriptedBackend
    from tests.dashboard.test_dashboard_pilot import patch_backend, start_pilot, varied_reply

    monkeypatch.setenv("CDL_PILOT_DIR", str(tmp_path / "pilots"))
    patch_backend(monkeypatch, ScriptedBackend(responder=varied_reply(itertools.count()), model="test-model"))
    at = start_pilot(replicates=1, agents=2, turn_limit=2)
    assert not at.exception, [e.value for e in at.exception]
    proposed = Path(at.text_input(key="pilot_save_folder").value)
    assert proposed.parent == tmp_path / "pilots" and proposed.name.startswith("pilot_open_")
    inside = REPO / "cached_runs" / "pilot_should_not_exist"
    at.text_input(key="pilot_save_folder").input(str(inside)).run()
    at.button(key="pilot_save").click().run()
    assert any("inside the project's checkout" in e.value.replace("\\", "") for e in at.error)  # shown escaped
    assert not inside.exists()
