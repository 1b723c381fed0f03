"""The fidelity comparison of the nine features (engine.stats.mode_differences), its CLI and the
Design levers page's data; expected values from scipy / statsmodels and by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from dashboard.page_data import fidelity_levers as page
from engine.cli import main
from engine.datasets import Dataset
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.stats.mode_differences import mode_differences, mode_mechanics

REPO = Path(__file__).resolve().parents[3]
CACHED = REPO / "cached_runs" / "local_smollm2_fidelity"


def table() -> pd.DataFrame:
    """open: 3 paper and 3 release sessions; iterative: 2 and 2; instructed: paper only."""
    rng = np.random.default_rng(3)
    rows = []
    for structure, n in (("open", 3), ("iterative", 2)):
        for mode in ("paper", "release"):
            for i in range(n):
                row = {"conversation_id": f"{structure}-{mode}-{i}", "discussion": structure, "fidelity": mode,
                       "source": "llm", "model": "m", "n_turns": 5 + i, "calls": 7 + 2 * i,
                       "replies": json.dumps({"turns": 3, "reasked": i, "unreadable": 0, "read_as_agree": 1})
                       if mode == "release" else None, "stop_reason": "turn_limit"}
                row.update({f: float(rng.normal()) for f in PAPER_A_FEATURES})
                rows.append(row)
    rows.append({"conversation_id": "lone", "discussion": "instructed", "fidelity": "paper", "source": "llm",
                 **{f: 0.0 for f in PAPER_A_FEATURES}})
    frame = pd.DataFrame(rows)
    opened = (frame["discussion"] == "open")
    frame.loc[opened & (frame["fidelity"] == "paper"), "global_coherence"] = [1.0, 2.0, 3.0]
    frame.loc[opened & (frame["fidelity"] == "release"), "global_coherence"] = [2.0, 4.0, 6.0]
    return frame


def test_differences_match_scipy_and_hand_values():
    frame = table()
    diff = mode_differences(frame)
    assert list(dict.fromkeys(diff["structure"])) == ["open", "iterative"]  # instructed: one mode only
    row = diff[(diff["structure"] == "open") & (diff["feature"] == "global_coherence")].iloc[0]
    # release [2, 4, 6] vs paper [1, 2, 3]: diff 2; Welch: se = sqrt(4/3 + 1/3), df = 2.9412
    welch = stats.ttest_ind([2, 4, 6], [1, 2, 3], equal_var=False)
    se = math.sqrt(4 / 3 + 1 / 3)
    df = (5 / 3) ** 2 / ((4 / 3) ** 2 / 2 + (1 / 3) ** 2 / 2)
    half = stats.t.ppf(0.975, df) * se
    assert (row["n_paper"], row["n_release"], row["diff"]) == (3, 3, 2.0)
    assert row["p"] == pytest.approx(welch.pvalue) and row["ci_low"] == pytest.approx(2 - half)
    assert row["ci_high"] == pytest.approx(2 + half)
    # Hedges' g: pooled SD sqrt((2*4 + 2*1) / 4), d = 2 / 1.5811, J(4) = Γ(2) / (√2 Γ(1.5))
    j = 1 / (math.sqrt(2) * math.gamma(1.5))
    assert row["g"] == pytest.approx(j * 2 / math.sqrt(2.5))
    assert row["g_low"] < row["g"] < row["g_high"]
    # Holm over the nine features of a structure, as statsmodels computes it
    opened = diff[diff["structure"] == "open"]
    assert list(opened["p_holm"]) == pytest.approx(list(multipletests(opened["p"], method="holm")[1]))
    # iterative: 2 sessions a mode -> no interval, the reason given
    small = diff[diff["structure"] == "iterative"]
    assert small["ci_low"].isna().all() and small["p"].isna().all()
    assert set(small["note"]) == {"too few sessions for an interval (n = 2)"}
    # a feature no session of a mode has a value for (too short a conversation) says so
    frame.loc[frame["discussion"] == "open", "revisit_score"] = np.nan
    undefined = mode_differences(frame).set_index(["structure", "feature"]).loc[("open", "revisit_score")]
    assert undefined["n_paper"] == 0 and undefined["note"].startswith("undefined for every session")


def test_mechanics_counts_per_mode():
    mech = mode_mechanics(table()).set_index(["structure", "fidelity"])
    assert mech.loc[("open", "paper"), "sessions"] == 3 and mech.loc[("open", "release"), "turns_mean"] == 6.0
    assert mech.loc[("open", "release"), "calls_mean"] == 9.0  # 7, 9, 11
    assert mech.loc[("open", "release"), "read_as_agree"] == 3 and mech.loc[("open", "release"), "reasked"] == 3
    assert pd.isna(mech.loc[("open", "paper"), "read_as_agree"])  # not recorded
    assert mech.loc[("open", "paper"), "stop_reasons"] == "turn_limit 3"


def _save(tmp_path, frame) -> Path:
    folder = tmp_path / "fid"
    Dataset(name="fid", conversations=frame, manifest={"run": {"config": {"model": "local"}},
                                                       "embedding_model": "MiniLM"}).save(folder)
    return folder


def test_cli_prints_differences_with_n_and_writes_csv(tmp_path, capsys):
    folder = _save(tmp_path, table())
    out = tmp_path / "diff.csv"
    assert main(["analyze", "fidelity", "--dataset", str(folder), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "== open: release − paper, Welch 95% interval" in printed
    assert "too few sessions for an interval (n = 2)" in printed
    assert "neither paper reports this comparison" in printed
    written = pd.read_csv(out)
    assert len(written) == 2 * 9 and set(written["structure"]) == {"open", "iterative"}


def test_cli_refuses_a_dataset_without_both_modes(tmp_path, capsys):
    frame = table()
    folder = _save(tmp_path, frame[frame["fidelity"] == "paper"])
    assert main(["analyze", "fidelity", "--dataset", str(folder)]) == 2
    assert "no structure has sessions of both fidelities" in capsys.readouterr().err


def test_page_source_prefers_the_chosen_dataset_then_the_cached_one(tmp_path):
    frame = table()
    chosen = page.source(frame, "mine", tmp_path)
    assert chosen.name == "mine" and chosen.frame is frame
    _save(tmp_path, frame)
    (tmp_path / "fid").rename(tmp_path / page.FIDELITY_DATASET)
    other = page.source(frame.iloc[0:0], "paper_release", tmp_path)
    assert other.name == page.FIDELITY_DATASET and other.model == "local" and len(other.frame) == len(frame)
    # a dataset without the column at all (the paper release) falls back the same way
    assert page.source(frame.drop(columns=["fidelity"]), "paper_release", tmp_path).name == page.FIDELITY_DATASET
    missing = page.source(frame.iloc[0:0], "paper_release", tmp_path / "nowhere")
    assert missing.frame is None and "fidelity.yaml" in missing.note
    shown = page.differences_table(frame)
    row = shown[(shown["structure"] == "open") & (shown["feature"] == "global_coherence")].iloc[0]
    assert row["N paper / release"] == "3 / 3" and row["release − paper"] == "2.000"
    assert page.headline(frame).startswith("10 sessions (open, iterative); of 18 feature comparisons 9 have")


@pytest.mark.skipif(not (CACHED / "manifest.json").exists(), reason="the fidelity dataset is not built")
def test_cached_fidelity_dataset_holds_both_modes_of_three_structures():
    data = Dataset.load(CACHED, with_corpus=False)
    frame = data.conversations
    counts = frame.groupby(["discussion", "fidelity"]).size()
    assert set(counts.index) == {(s, m) for s in ("open", "instructed", "iterative") for m in ("paper", "release")}
    diff = mode_differences(frame)
    assert set(diff["structure"]) == {"open", "instructed", "iterative"} and len(diff) == 27
