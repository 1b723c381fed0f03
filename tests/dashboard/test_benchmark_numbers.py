"""Per-benchmark numbers of the Diversity and Quality-Diversity pages (paper B, section 6), on
hand-made tables: values worked out by hand, paper B's published gains as printed in its
section 6 (pooled over its four benchmarks, said so)."""

from __future__ import annotations

import pandas as pd
import pytest

from dashboard.page_data import diversity, quality_diversity as qd
from engine.stats import published_b

BENCHMARKS = {"m1": "macgyver", "m2": "macgyver", "a1": "arena_hard_creative"}
OWN = {"creative_mad": "CLA + EPS (Creative-MAD)", "homo_mad": "neither (Homo MAD)", "direct": None}


def _inter(rows):
    return pd.DataFrame([{"method": m, "condition": m, "ablation": OWN[m], "k": 1 if m == "creative_mad" else None,
                          "task": t, "n_runs": 10, "n_groups": 2, "vendi": v, "div_bleu": b,
                          "vendi_per_group": [v, v], "div_bleu_per_group": [b, b], "warning": ""}
                         for m, t, v, b in rows])


INTER = _inter([("creative_mad", "m1", 3.0, 0.6), ("creative_mad", "m2", 2.0, 0.4),
                ("homo_mad", "m1", 2.0, 0.5), ("homo_mad", "m2", 2.0, 0.5),
                ("direct", "m1", 4.0, 0.9),
                ("creative_mad", "a1", 1.5, 0.3), ("homo_mad", "a1", 2.0, 0.2),
                ("homo_mad", "plastic_waste", 9.0, 0.9)])  # not a benchmark task: left out


def test_benchmark_diversity_averages_each_benchmarks_task_cells():
    table = diversity.benchmark_diversity(INTER, BENCHMARKS).set_index(["benchmark", "method"])
    assert table.loc[("macgyver", "creative_mad"), "vendi"] == pytest.approx(2.5)   # (3 + 2) / 2
    assert table.loc[("macgyver", "creative_mad"), "div_bleu"] == pytest.approx(0.5)
    assert table.loc[("macgyver", "creative_mad"), ["tasks", "groups", "runs"]].tolist() == [2, 4, 20]
    assert table.loc[("arena_hard_creative", "homo_mad"), "vendi"] == pytest.approx(2.0)
    assert len(table) == 5  # macgyver x 3 methods, arena x 2; plastic_waste is no benchmark's


def test_benchmark_gains_are_ours_per_benchmark_beside_the_published_pooled_gains():
    gains = diversity.benchmark_gains(INTER, BENCHMARKS).set_index("benchmark")
    assert gains.loc["macgyver", "Vendi gain % · ours"] == pytest.approx(25.0)        # 2.5 vs 2.0
    assert gains.loc["macgyver", "Div-BLEU gain % · ours"] == pytest.approx(0.0)      # 0.5 vs 0.5
    assert gains.loc["arena_hard_creative", "Vendi gain % · ours"] == pytest.approx(-25.0)  # 1.5 vs 2.0
    assert gains.loc["arena_hard_creative", "Div-BLEU gain % · ours"] == pytest.approx(50.0)  # 0.3 vs 0.2
    assert gains.loc["macgyver", "runs (Creative-MAD / Homo MAD) · ours"] == "20 / 20"
    # 4 groups a side on MacGyver, 2 on Arena-Hard: below the guard's 10 a side, no interval, said so
    assert gains.loc["macgyver", "Vendi gain % interval · ours"] == \
        "none: too few groups for a bootstrap interval (4 and 4; at least 10 a side)"
    # paper B, section 6, as printed: +26.2 % / +24.0 % (Qwen3-8B), +23.3 % / +24.0 % (Gemma-3-12B)
    assert gains.loc["macgyver", "Vendi gain % · published (Qwen3-8B)"] == 26.2
    assert gains.loc["arena_hard_creative", "Div-BLEU gain % · published (Gemma-3-12B-Instruct)"] == 24.0
    assert gains.loc["macgyver", "Vendi gain % · published (Gemma-3-12B-Instruct)"] == 23.3
    assert "pooled over its four benchmarks" in gains.loc["macgyver", "published scope"]


def test_no_published_gain_for_a_benchmark_paper_b_did_not_use():
    assert published_b.benchmark_gains("my_benchmark").empty
    assert len(published_b.benchmark_gains("macgyver")) == 2


def test_benchmark_summary_and_quality_gap_by_hand():
    sessions = pd.DataFrame({"conversation_id": list("abcdef"), "discussion":
                             ["direct", "homo_mad", "homo_mad", "creative_mad", "creative_mad", "creative_mad"],
                             "task": ["m1", "m1", "m2", "m1", "m2", "a1"], "team_size": [1, 3, 3, 3, 3, 3],
                             "rounds": [None, 1, 1, 1, 1, 1], "temperature": 1.0, "model": "m", "k": 1,
                             "replicate": 0})
    rubric = pd.DataFrame({"kind": "rubric", "conversation_id": list("abcdef") + ["d"],
                           "round": [None] * 6 + [0], "score": [6.0, 8.0, 8.0, 7.0, None, 5.0, 1.0]})
    summary = qd.benchmark_summary(INTER, sessions, rubric, BENCHMARKS).set_index(["benchmark", "method"])
    mac = summary.loc["macgyver"]
    assert mac.loc["homo_mad", "rubric"] == 8.0 and mac.loc["direct", "rubric"] == 6.0
    # Creative-MAD on MacGyver: d = 7, e unreadable -> mean 7 over 1 rated of 2 sessions
    assert mac.loc["creative_mad", ["sessions", "rubric", "rubric_n", "rubric_missing"]].tolist() == [2, 7.0, 1, 1]
    assert mac.loc["creative_mad", "vendi"] == pytest.approx(2.5)
    gap = qd.benchmark_quality_gap(summary.reset_index()).set_index("benchmark")
    assert gap.loc["macgyver", "best method · ours"] == "homo_mad"
    assert gap.loc["macgyver", "Creative-MAD below the best % · ours"] == pytest.approx(12.5)  # (8 - 7) / 8
    assert gap.loc["arena_hard_creative", "Creative-MAD below the best % · ours"] == pytest.approx(0.0)
    assert gap.loc["macgyver", "Creative-MAD below the best · published (Qwen3-8B)"] == "within 1.2%"
    assert gap.loc["macgyver", "Creative-MAD below the best · published (Gemma-3-12B-Instruct)"] == "within 0.4%"


def test_a_dataset_without_benchmark_tasks_has_no_per_benchmark_block():
    class Plain:
        manifest = {"name": "x"}

    assert diversity.task_benchmarks(Plain()) == {}
    Plain.manifest = {"benchmark_of_task": {"m1": "macgyver", "t": ""}}
    assert diversity.task_benchmarks(Plain()) == {"m1": "macgyver"}
