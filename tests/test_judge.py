"""The LLM judge: parsing, within-task min-max scaling, creativity, rubric and swapped pairwise."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from engine.judge import (combine_swapped, pairwise_win_rate, rate_ideas, rubric_scores,
                          scale_within_task)
from engine.llm import ScriptedBackend


def test_scaling_within_task_by_hand():
    frame = pd.DataFrame({"task": ["a", "a", "a", "b", "b"],
                          "novelty_raw": [2.0, 6.0, 10.0, 3.0, 3.0],
                          "usefulness_raw": [5.0, 9.0, 1.0, 1.0, 4.0]})
    out = scale_within_task(frame)
    # task a: novelty (x-2)/8 -> 0, .5, 1; usefulness (x-1)/8 -> .5, 1, 0
    assert list(out["novelty"][:3]) == [0.0, 0.5, 1.0]
    assert list(out["usefulness"][:3]) == [0.5, 1.0, 0.0]
    assert list(out["creativity"][:3]) == [0.0, 0.5, 0.0]
    # task b: no novelty range -> NaN; usefulness (x-1)/3 -> 0, 1
    assert out["novelty"][3:].isna().all() and list(out["usefulness"][3:]) == [0.0, 1.0]


def test_rate_ideas_parses_retries_and_records_missing():
    replies = {"idea one": ["Novelty: 8\nUsefulness: 4"],
               "idea two": ["I think it is nice", "Novelty: 2\nUsefulness: 6"],
               "idea three": ["no numbers", "still none", "nope"],
               "idea four": ["**Novelty:** 5\n**Usefulness:** 10"]}

    def respond(messages):
        idea = re.search(r"Idea: (idea \w+)", messages[-1]["content"]).group(1)
        return replies[idea].pop(0)

    backend = ScriptedBackend(responder=respond)
    frame = rate_ideas(["idea one", "idea two", "idea three", "idea four"], "plastic_waste", backend)
    assert list(frame["novelty_raw"][[0, 1, 3]]) == [8, 2, 5]
    assert math.isnan(frame["novelty_raw"][2]) and math.isnan(frame["creativity"][2])
    # novelty (8,2,5) -> 1, 0, .5 ; usefulness (4,6,10) -> 0, 1/3, 1
    assert frame["novelty"][0] == 1.0 and frame["usefulness"][3] == 1.0
    assert frame["creativity"][3] == pytest.approx(0.5)
    assert len(backend.history) == 1 + 2 + 3 + 1  # retries: 1 + 2 extra asks at most


def test_irrelevant_idea_scores_zero():
    backend = ScriptedBackend(responder=lambda m: "Novelty: 0\nUsefulness: 0")
    frame = rate_ideas(["off topic"], "plastic_waste", backend)
    assert frame["novelty_raw"][0] == 0 and frame["usefulness_raw"][0] == 0


def test_rubric_scores():
    backend = ScriptedBackend(["Score: 7", "Score: 11", "Score: 3", "blah", "x", "y",
                               "The answer to the task is: 8.", "between 2 and 9"] + ["z"] * 2)
    assert rubric_scores(["a"], "plastic_waste", backend) == [7.0]
    assert rubric_scores(["b"], "plastic_waste", backend) == [3.0]  # 11 out of range: asked again
    assert math.isnan(rubric_scores(["c"], "plastic_waste", backend)[0])
    assert rubric_scores(["d"], "plastic_waste", backend) == [8.0]  # the only number, short reply
    assert math.isnan(rubric_scores(["e"], "plastic_waste", backend)[0])  # two numbers: ambiguous
    temperatures = [h["temperature"] for h in backend.history]
    assert temperatures[:3] == [0.0, 0.0, 0.7]  # a retry samples instead of repeating itself


def test_combine_swapped_verdicts():
    assert combine_swapped("A", "B") == 1.0      # X shown first wins, X shown second wins
    assert combine_swapped("B", "A") == 0.0
    assert combine_swapped("A", "A") == 0.5      # position bias: split verdict counts as a tie
    assert combine_swapped("tie", "B") == 0.5
    assert combine_swapped(None, "A") is None


def test_pairwise_win_rate_swaps_positions():
    # the judge always prefers the response mentioning 'gold', else says tie
    def respond(messages):
        prompt = messages[-1]["content"]
        a = prompt.split("Response A:")[1].split("Response B:")[0]
        b = prompt.split("Response B:")[1]
        if "gold" in a and "gold" not in b:
            return "A"
        if "gold" in b and "gold" not in a:
            return "B"
        return "tie"

    backend = ScriptedBackend(responder=respond)
    result = pairwise_win_rate(["gold plan", "tin plan"], ["silver plan"], "plastic_waste", backend)
    # gold vs silver: 1 ; tin vs silver: tie 0.5 -> mean 0.75 over 2 pairs, 4 judge calls
    assert result == {"win_rate": 0.75, "comparisons": 2, "missing": 0}
    assert len(backend.history) == 4
