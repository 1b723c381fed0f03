"""Diversity grouped by the full condition (engine.protocols.conditions, dashboard.page_data.diversity)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.page_data import diversity as diversity_data
from engine.protocols.conditions import ablation_name, add_condition
from engine.measures.diversity import vendi_score


def frame_of(rows):
    return pd.DataFrame(rows)


def run_rows(method, n, *, task="t", start=0, **factors):
    return [{"conversation_id": f"{method}-{task}-{factors}-{i}", "discussion": method, "task": task,
             "replicate": i, "final_idea": f"idea {start + i}", "team_size": 3, "rounds": 1,
             "temperature": 1.0, "model": "m", **factors} for i in range(n)]


def embed(texts):
    """idea j -> unit vector e_(j mod 4) in 4-D."""
    return np.array([np.eye(4)[int(t.split()[1]) % 4] for t in texts])


def test_ablation_names_and_method_defaults():
    table = add_condition(frame_of([
        {"discussion": "creative_mad"}, {"discussion": "homo_mad"},
        {"discussion": "creative_mad", "peers": "all"}, {"discussion": "creative_mad", "lenses": False},
        {"discussion": "creative_mad", "peers": "closest", "k": 1}, {"discussion": "direct"}]))
    assert table["ablation"].tolist() == ["CLA + EPS (Creative-MAD)", "neither (Homo MAD)", "CLA only",
                                          "EPS only", "CLA + closest-k", None]
    assert ablation_name("hetero_mad", False, "all") == "personas only (Hetero MAD)"
    # k only identifies a condition when peers are selected
    assert table["cond_k"].tolist()[1] is None and table["cond_k"].tolist()[4] == 1


def test_inter_session_table_never_pools_conditions_and_warns():
    rows = (run_rows("creative_mad", 5, k=1, peers="distant", lenses=True)
            + run_rows("creative_mad", 5, start=1, k=2, peers="distant", lenses=True)
            + run_rows("creative_mad", 5, start=2, k=1, peers="distant", lenses=True, temperature=0.7)
            + run_rows("homo_mad", 1))
    table = diversity_data.inter_session_table(frame_of(rows), ("creative_mad", "homo_mad"), embed)
    assert len(table) == 4  # k=1, k=2, T=0.7 and the lone homo run: four conditions
    by = table.set_index("condition")
    k1 = by.loc["creative_mad [CLA, distant k=1] N=3 R=1 T=1 m"]
    # ideas 0..4 -> e0 e1 e2 e3 e0: Vendi of that set, by the definition
    assert k1["vendi"] == pytest.approx(vendi_score(np.eye(4)[[0, 1, 2, 3, 0]]))
    assert k1["n_runs"] == 5 and k1["n_groups"] == 1 and k1["warning"] == ""
    assert by.loc["creative_mad [CLA, distant k=1] N=3 R=1 T=0.7 m", "n_runs"] == 5
    lone = by.loc["homo_mad [no CLA, all peers] N=3 R=1 T=1 m"]
    assert lone["n_groups"] == 0 and np.isnan(lone["vendi"]) and "diversity undefined" in lone["warning"]


def test_gain_over_uses_each_method_s_own_design_and_paper_k():
    table = pd.DataFrame({"method": ["creative_mad", "creative_mad", "creative_mad", "homo_mad", "homo_mad"],
                          "ablation": ["CLA + EPS (Creative-MAD)", "CLA + EPS (Creative-MAD)", "CLA only",
                                       "neither (Homo MAD)", "neither (Homo MAD)"],
                          "k": [2, 3, None, None, None], "vendi": [3.0, 9.0, 9.0, 2.0, 2.0]})
    assert diversity_data.gain_over(table, "vendi") == pytest.approx(50.0)
