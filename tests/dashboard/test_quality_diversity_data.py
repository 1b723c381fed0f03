"""Tables of the Quality–Diversity page, on hand-made inputs; values worked out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dashboard.page_data import quality_diversity as qd


def test_mean_ci_is_a_student_t_interval():
    mean, low, high, n = qd.mean_ci([1.0, 2.0, 3.0, None, float("nan")])
    half = stats.t.ppf(0.975, 2) * 1.0 / np.sqrt(3)  # sd of 1, 2, 3 is 1
    assert (mean, n) == (2.0, 3) and low == pytest.approx(2 - half) and high == pytest.approx(2 + half)
    assert np.isnan(qd.mean_ci([4.0])[1])


def test_pareto_frontier_by_hand():
    summary = pd.DataFrame({"rubric": [5.0, 6.0, 4.0, 6.0, np.nan], "vendi": [3.0, 2.0, 2.5, 2.0, 9.0]})
    # A (5, 3) and B (6, 2) trade off; C (4, 2.5) is beaten by A; D ties B (neither beats the
    # other); the NaN row is never on the frontier
    assert qd.pareto(summary).tolist() == [True, True, False, True, False]


def test_condition_summary_pools_groups_of_all_tasks_and_joins_quality():
    inter = pd.DataFrame({"method": ["homo_mad", "homo_mad"], "condition": ["H", "H"],
                          "ablation": ["neither (Homo MAD)"] * 2, "k": [None, None], "task": ["t1", "t2"],
                          "vendi_per_group": [[2.0, 3.0], [4.0]], "div_bleu_per_group": [[0.5, 0.7], [0.6]]})
    conversations = pd.DataFrame({"conversation_id": ["a", "b", "c"], "discussion": "homo_mad",
                                  "task": ["t1", "t1", "t2"], "team_size": 3, "rounds": 1,
                                  "temperature": 1.0, "model": "m"})
    rubric = pd.DataFrame({"kind": "rubric", "conversation_id": ["a", "b", "c", "a"],
                           "round": [None, None, None, 0], "score": [6.0, None, 8.0, 1.0]})
    pairwise = pd.DataFrame(columns=["task", "condition_x", "condition_y", "score_x"])
    summary = qd.condition_summary(inter, conversations, rubric, pairwise)
    assert len(summary) == 2  # the label built from the data, and the inter table's "H"
    built = summary[summary["condition"] != "H"].iloc[0]
    assert built["rubric"] == 7.0 and built["rubric_n"] == 2 and built["rubric_missing"] == 1
    given = summary[summary["condition"] == "H"].iloc[0]
    assert given["vendi"] == pytest.approx(3.0) and given["groups"] == 3
    assert given["div_bleu"] == pytest.approx(0.6)


def test_consensus_table_counts_unparsed_and_chosen_agents():
    conversations = pd.DataFrame({
        "conversation_id": list("abcd"), "discussion": "creative_mad", "task": "t", "team_size": 3,
        "rounds": 1, "temperature": 1.0, "model": "m", "k": 1,
        "consensus_choice": [0, 2, 2, 1], "consensus_parsed": [True, False, False, True],
        "consensus_resolution": ["judge", "random_fallback", "random_fallback", "judge_retry"],
        "consensus_agent": ["Agent 1", "Agent 3", "Agent 3", "Agent 2"],
        "consensus_lens": ["logical", "critical", "critical", "emotional"]})
    row = qd.consensus_table(conversations).iloc[0]
    assert (row["sessions"], row["unparsed"], row["unparsed_share"]) == (4, 2, 0.5)
    assert (row["chose Agent 1"], row["chose Agent 2"], row["chose Agent 3"]) == (1, 1, 2)
    assert row["lenses chosen"] == "critical 2, emotional 1, logical 1"
    assert row["unparsed resolved by"] == "seeded random pick"
    # runs made before the resolution was recorded: the unreadable picks went to Agent 1
    old = conversations.drop(columns=["consensus_resolution", "consensus_agent", "consensus_lens"])
    old["consensus_choice"] = [0, 0, 0, 1]
    row = qd.consensus_table(old).iloc[0]
    assert row["chose Agent 1"] == 3 and row["unparsed resolved by"].startswith("position")
