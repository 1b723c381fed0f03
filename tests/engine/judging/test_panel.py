"""Paper A's raters as far as a judge can be: a panel of five by default, irrelevance by a
majority of each idea's readable ratings, and the raters' agreement reported (never a number
with one rating per item). Expected values worked out by hand from paper A's Methods."""

from __future__ import annotations

import json
import math
import re

import pytest

from engine.judging.judge import DEFAULT_RATERS, panel_samples, rate_together
from engine.llm import ScriptedBackend
from engine.runs.grid import JudgeSpec, load_grid
from engine.runs.runner import run_grid
from engine.stats.agreement import ONE_RATING, icc


def shown(prompt):
    return re.findall(r"^Idea (\d+): (.*)$", prompt, re.M)


def test_panel_size_defaults_to_paper_a_five_raters():
    assert DEFAULT_RATERS == 5
    assert panel_samples(None, 1) == 5          # five samples (seeds) of one judge model
    assert panel_samples(None, 3) == 1          # several models: one rating from each
    assert panel_samples(2, 3) == 2
    assert JudgeSpec().samples == 5 and JudgeSpec().raters == 5
    assert JudgeSpec(models=["b", "c"]).samples == 1 and JudgeSpec(models=["b", "c"]).raters == 3
    assert JudgeSpec(samples=1).raters == 1


def test_one_model_gives_five_sampled_raters_with_distinct_seeds():
    backend = ScriptedBackend(responder=lambda m: "\n".join(f"Idea {n}: Novelty 5, Usefulness 5"
                                                            for n, _ in shown(m[-1]["content"])))
    frame = rate_together(["idea one on bottles", "idea two on bags", "idea three on cups"], "plastic_waste",
                          backend)
    assert frame.attrs["raters"] == [f"scripted#{r}" for r in range(1, 6)]
    assert frame.attrs["judge"] == "scripted x5" and frame.attrs["samples"] == 5
    assert [h["temperature"] for h in backend.history] == [0.7] * 5
    assert len({h["seed"] for h in backend.history}) == 5
    assert [c for c in frame.columns if re.match(r"^N\d$", c)] == ["N1", "N2", "N3", "N4", "N5"]


def test_several_models_give_one_rating_each_at_temperature_zero():
    def answer(m):
        return "\n".join(f"Idea {n}: Novelty 4, Usefulness 6" for n, _ in shown(m[-1]["content"]))

    first, second = ScriptedBackend(responder=answer, model="m1"), ScriptedBackend(responder=answer, model="m2")
    frame = rate_together(["idea one on bottles", "idea two on bags"], "plastic_waste", [first, second])
    assert frame.attrs["raters"] == ["m1#1", "m2#1"] and frame.attrs["judge"] == "m1+m2"
    assert [h["temperature"] for h in first.history + second.history] == [0.0, 0.0]


# rater r's score (novelty = usefulness) of each idea; None: the rater's reply leaves it out
PANEL = {"idea a on refills": [0, 0, 0, 5, 6],      # 3 zeros of 5 readable -> irrelevant
         "idea b on deposits": [0, 0, 4, 5, 6],     # 2 of 5 -> relevant
         "idea c on barges": [0, 0, 3, None, None],  # 2 of 3 readable -> irrelevant
         "idea d on games": [2, 3, 2, 3, 2],
         "idea e on maps": [8, 9, 7, 9, 8]}


def panel_responder():
    calls = []

    def respond(messages):  # one batch per rater, raters asked in order (concurrency 1)
        calls.append(1)
        r = len(calls) - 1
        lines = []
        for n, text in shown(messages[-1]["content"]):
            score = PANEL[text][r]
            if score is not None:
                lines.append(f"Idea {n}: Novelty {score}, Usefulness {score}")
        return "\n".join(lines)

    return respond


def test_irrelevant_by_majority_of_readable_ratings_counted():
    frame = rate_together(list(PANEL), "plastic_waste", ScriptedBackend(responder=panel_responder(), concurrency=1))
    assert list(frame["irrelevant"]) == [True, False, True, False, False]
    assert frame.attrs["irrelevant"] == 2 and "more than half" in frame.attrs["irrelevant_rule"]
    assert list(frame["raters_read"]) == [5, 5, 3, 5, 5]
    assert frame.attrs["ratings_per_item"] == {"min": 3, "max": 5}
    assert frame.attrs["unreadable_verdicts"] == 2
    # relevant ideas' mean raw novelty: b 15/5 = 3, d 12/5 = 2.4, e 41/5 = 8.2 -> scaled over
    # 2.4..8.2: d 0, b 0.6/5.8, e 1; the irrelevant ones get none
    assert frame["novelty_raw"].tolist()[1] == 3.0
    assert frame["novelty"].tolist()[1] == pytest.approx(0.6 / 5.8)
    assert frame["novelty"].tolist()[3] == 0.0 and frame["novelty"].tolist()[4] == 1.0
    assert math.isnan(frame["novelty"].tolist()[0]) and math.isnan(frame["novelty"].tolist()[2])


def test_agreement_per_task_and_scale_over_relevant_ideas():
    frame = rate_together(list(PANEL), "plastic_waste", ScriptedBackend(responder=panel_responder(), concurrency=1))
    rows = {row["scale"]: row for row in frame.attrs["icc"]}
    relevant = [PANEL["idea b on deposits"], PANEL["idea d on games"], PANEL["idea e on maps"]]
    expected = icc(relevant)  # engine.stats.agreement, checked against Shrout & Fleiss (1979)
    novelty = rows["novelty"]
    assert novelty["n_ideas"] == 3 and novelty["k_raters"] == 5 and novelty["dropped"] == 0
    assert novelty["icc"] == pytest.approx(expected.values["ICC(3,k)"])
    assert novelty["icc21"] == pytest.approx(expected.values["ICC(2,1)"])
    assert novelty["text"].startswith("judge scripted x5: 5 ratings per item from 5 raters, N = 3 items: ICC(3,5) = ")


def test_one_rater_says_agreement_cannot_be_computed():
    frame = rate_together(list(PANEL), "plastic_waste", ScriptedBackend(responder=panel_responder(), concurrency=1),
                          samples=1)
    assert frame.attrs["judge"] == "scripted"
    for row in frame.attrs["icc"]:
        assert row["note"] == ONE_RATING and math.isnan(row["icc"]) and math.isnan(row["icc21"])
        assert "one rating per item: agreement cannot be computed" in row["text"]


def batch_judge(messages):
    prompt = messages[-1]["content"]
    if "Novelty: <number>" in prompt:  # alone: one idea, two lines
        return "Novelty: 6\nUsefulness: 4"
    return "\n".join(f"Idea {n}: Novelty {3 + int(n)}, Usefulness 5" for n, _ in shown(prompt))


GRID = {"name": "p", "model": "scripted", "seed": 1, "concurrency": 1, "tasks": ["plastic_waste"],
        "conditions": [{"method": "direct", "replicates": 3}]}


def test_grid_judge_records_its_panel_and_agreement(tmp_path):
    counter = iter(range(1, 100))
    team = ScriptedBackend(responder=lambda m: f"plan {next(counter)} with a deposit scheme")
    grid = {**GRID, "judge": {"model": "scripted", "rubric": False}}
    assert load_grid(grid).judge.samples == 5
    judge = ScriptedBackend(responder=batch_judge)
    run_grid(grid, tmp_path, backend=team, judge_backend=judge, progress=False, cache=False)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["config"]["judge"]["samples"] == 5
    summary = manifest["judge_summary"]
    assert summary["judge"] == "scripted x5" and len(summary["raters"]) == 5
    assert summary["ratings_per_item"] == {"min": 5, "max": 5} and len(judge.history) == 5
    # every rater gives the same scores: the ideas differ, the raters do not -> ICC(3,5) = 1
    novelty = next(row for row in summary["icc"] if row["scale"] == "novelty")
    assert novelty["icc"] == pytest.approx(1.0) and novelty["n_ideas"] == 3


def test_alone_mode_summary_says_one_rating_per_item(tmp_path):
    counter = iter(range(1, 100))
    team = ScriptedBackend(responder=lambda m: f"plan {next(counter)} with a deposit scheme")
    grid = {**GRID, "judge": {"model": "scripted", "rubric": False, "mode": "alone"}}
    run_grid(grid, tmp_path, backend=team, judge_backend=ScriptedBackend(responder=batch_judge),
             progress=False, cache=False)
    summary = json.loads((tmp_path / "manifest.json").read_text())["judge_summary"]
    assert summary["mode"] == "alone" and summary["agreement"] == ONE_RATING
    assert summary["ratings_per_item"] == {"min": 1, "max": 1} and summary["ideas"] == 3
