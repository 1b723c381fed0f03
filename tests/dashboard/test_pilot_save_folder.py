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
