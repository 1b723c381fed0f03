"""The LLM judge: parsing, within-task min-max scaling, creativity, rubric and swapped pairwise."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from engine.judging.judge import (combine_swapped, pairwise_win_rate, rate_ideas, rubric_scores,
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
    assert bool(frame["irrelevant"][0]) and math.isnan(frame["novelty"][0])


def test_scaling_leaves_zero_rated_ideas_out_of_the_range():
    # task a: raw novelty 0 (irrelevant), 4, 8 -> range 4..8: NaN, 0, 1 (with the 0 kept: 0, .5, 1)
    frame = pd.DataFrame({"task": ["a"] * 3, "novelty_raw": [0.0, 4.0, 8.0],
                          "usefulness_raw": [0.0, 2.0, 6.0]})
    out = scale_within_task(frame)
    assert list(out["irrelevant"]) == [True, False, False]
    assert math.isnan(out["novelty"][0]) and list(out["novelty"][1:]) == [0.0, 1.0]


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


# -- consensual assessment ------------------------------------------------------------------
from engine.judging.judge import parse_batch, rate_together  # noqa: E402


def batch_ideas(prompt):
    return re.findall(r"^Idea (\d+): (.*)$", prompt, re.M)


def test_parse_batch_reads_labelled_and_bare_pairs():
    text = ("Idea 1: Novelty 7, Usefulness 5\n**Idea 2:** Novelty: 0 Usefulness: 0\n"
            "Idea 3: 4, 9\nIdea 4: Novelty 12, Usefulness 3\nIdea 1: Novelty 1, Usefulness 1\n"
            "Idea 9: Novelty 5, Usefulness 5")
    # idea 4 out of range, the repeated idea 1 and the unknown idea 9 are not read
    assert parse_batch(text, 4) == {0: (7.0, 5.0), 1: (0.0, 0.0), 2: (4.0, 9.0)}


def test_ideas_of_a_task_are_rated_together_in_shuffled_batches():
    # 5 ideas of one task, batch size 3 -> ceil(5/3) = 2 batches of 3 and 2; every idea is
    # shown exactly once per rater, with the other ideas of its batch.
    seen = []

    def respond(messages):
        shown = batch_ideas(messages[-1]["content"])
        seen.append([text for _, text in shown])
        return "\n".join(f"Idea {n}: Novelty 5, Usefulness 5" for n, _ in shown)

    ideas = [f"idea number {i} about bottles" for i in range(5)]
    frame = rate_together(ideas, "plastic_waste", ScriptedBackend(responder=respond), batch_size=3,
                          samples=1)
    assert sorted(len(batch) for batch in seen) == [2, 3]
    assert sorted(text for batch in seen for text in batch) == sorted(ideas)
    assert seen[0] + seen[1] != ideas  # shuffled (seeded), not in input order
    assert frame.attrs["calls"] == 2 and frame.attrs["raters"] == ["scripted#1"]


def test_zero_rated_ideas_are_excluded_before_scaling_and_counted():
    # raw novelty a=2, b=6, c=10, off-topic=0 (irrelevant). Without the exclusion the range
    # would be 0..10 and b would scale to .6; with it the range is 2..10: a 0, b .5, c 1.
    scores = {"idea a on refills": (2, 3), "idea b on deposits": (6, 9),
              "idea c on barges": (10, 5), "a poem about cats": (0, 0)}

    def respond(messages):
        shown = batch_ideas(messages[-1]["content"])
        return "\n".join(f"Idea {n}: Novelty {scores[t][0]}, Usefulness {scores[t][1]}" for n, t in shown)

    frame = rate_together(list(scores), "plastic_waste", ScriptedBackend(responder=respond))
    assert list(frame["irrelevant"]) == [False, False, False, True]
    assert list(frame["novelty"][:3]) == [0.0, 0.5, 1.0]
    # usefulness 3, 9, 5 over 3..9 -> 0, 1, 1/3; creativity b = .5 * 1
    assert list(frame["usefulness"][:3]) == pytest.approx([0.0, 1.0, 1 / 3])
    assert frame["creativity"][1] == 0.5 and math.isnan(frame["creativity"][3])
    assert frame.attrs["irrelevant"] == 1


def test_several_samples_are_averaged_with_icc_and_unreadable_counted():
    # Two samples (raters) of one judge on 4 ideas, one batch each.
    # rater 1 novelty: w 2, x 4, y 6, z 8 ; rater 2: w 3, x 4, y 8, z 9 (usefulness = novelty)
    # means: 2.5, 4, 7, 8.5 -> scaled (x - 2.5) / 6: 0, .25, .75, 1
    # ICC(3,2) by hand: targets means 2.5 4 7 8.5, grand 5.5; SS_rows = 2 * (9+2.25+2.25+9) = 45,
    # MS_rows = 15; rater means 5, 6: SS_cols = 4 * (.25+.25) = 2; SS_total = 12.25+2.25 ... :
    # values - 5.5: -3.5 -1.5 .5 2.5 / -2.5 -1.5 2.5 3.5 -> squares 12.25 2.25 .25 6.25 6.25
    # 2.25 6.25 12.25 = 48; SS_err = 48 - 45 - 2 = 1, MS_err = 1/3; ICC = (15 - 1/3) / 15 = 44/45
    table = {1: {"w": 2, "x": 4, "y": 6, "z": 8}, 2: {"w": 3, "x": 4, "y": 8, "z": 9}}
    calls = []

    def respond(messages):  # first call = rater 1 (sample 1), second = rater 2
        calls.append(1)
        rater = table[len(calls)]
        return "\n".join(f"Idea {n}: Novelty {rater[t[0]]}, Usefulness {rater[t[0]]}"
                         for n, t in batch_ideas(messages[-1]["content"]))

    ideas = ["w is a deposit idea", "x is a refill idea", "y is a barge idea", "z is a game idea"]
    backend = ScriptedBackend(responder=respond, concurrency=1)
    frame = rate_together(ideas, "plastic_waste", backend, samples=2)
    # two samples of one model: sampled (0.7), each with its own seed
    assert [h["temperature"] for h in backend.history] == [0.7, 0.7]
    assert len({h["seed"] for h in backend.history}) == 2
    assert frame.attrs["raters"] == ["scripted#1", "scripted#2"]
    assert list(frame["novelty_raw"]) == [2.5, 4.0, 7.0, 8.5]
    assert list(frame["novelty"]) == [0.0, 0.25, 0.75, 1.0]
    icc = {row["scale"]: row for row in frame.attrs["icc"]}
    assert icc["novelty"]["icc"] == pytest.approx(44 / 45) and icc["novelty"]["k_raters"] == 2
    assert icc["novelty"]["n_ideas"] == 4


def test_unreadable_replies_are_counted_never_replaced():
    # 3 ideas; the judge leaves idea 2 of the batch out, and a second task's reply is
    # unreadable twice (1 retry) -> its ideas stay NaN.
    def respond(messages):
        prompt = messages[-1]["content"]
        shown = batch_ideas(prompt)
        if "sorry" in prompt.lower() or "pandemic" in prompt.lower():
            return "I cannot rate these."
        return "\n".join(f"Idea {n}: Novelty {3 + int(n)}, Usefulness 4" for n, _ in shown if n != "2")

    frame = pd.DataFrame({"idea": ["one idea on bottles", "two idea on bags", "three idea on cups",
                                   "an apology idea"],
                          "task": ["plastic_waste"] * 3 + ["sorry_pandemic"]})
    out = rate_together(frame, None, ScriptedBackend(responder=respond), samples=1)
    assert out["novelty_raw"].isna().sum() == 2          # one left out + the unreadable task
    assert out.attrs["unreadable_verdicts"] == 2 and out.attrs["unreadable_replies"] == 2
    assert out.attrs["retries"] == 1 and out.attrs["never_read"] == 2
