"""Paper A's judge options (one shared order, paraphrased ideas) and paper B's judge-based
selection for Direct and Self-Refine; expected values worked out from the papers' text."""

from __future__ import annotations

import asyncio
import json
import random
import re

import numpy as np
import pytest

from engine.corpus import Corpus
from engine.errors import InputError
from engine.judging.judge import rate_together
from engine.llm import BackendError, ScriptedBackend
from engine.protocols import expected_calls, make_config, run_session
from engine.runs.runner import run_grid

IDEAS = [f"idea number {i} about bottles" for i in range(7)]


def shown(prompt):
    return [text for _, text in re.findall(r"^Idea (\d+): (.*)$", prompt, re.M)]


def orders_seen(order, samples=3):
    seen = []

    def respond(messages):
        batch = shown(messages[-1]["content"])
        seen.append(batch)
        return "\n".join(f"Idea {n + 1}: Novelty 5, Usefulness 5" for n in range(len(batch)))

    frame = rate_together(IDEAS, "plastic_waste", ScriptedBackend(responder=respond, concurrency=1),
                          samples=samples, batch_size=4, order=order, seed=11)
    return seen, frame


def expected_batches(key):
    """The documented rule: the task's ideas shuffled by random.Random(key), cut into
    ceil(7 / 4) = 2 near-equal batches (4 and 3)."""
    order = list(range(7))
    random.Random(key).shuffle(order)
    return [[IDEAS[i] for i in order[:4]], [IDEAS[i] for i in order[4:]]]


def test_shared_order_every_rater_reads_the_same_sequence():
    # paper A: "All five judges evaluated ideas in the same randomized sequence"
    seen, frame = orders_seen("shared")
    want = expected_batches("11:plastic_waste")
    assert seen == want * 3  # rater 1's two batches, then rater 2's, then rater 3's
    assert frame.attrs["order"] == "shared"


def test_shuffled_order_each_rater_its_own_sequence():
    seen, frame = orders_seen("shuffled")
    want = [batch for r in range(3) for batch in expected_batches(f"11:plastic_waste:scripted#{r + 1}")]
    assert seen == want
    assert len({tuple(b) for b in seen}) > 2  # not all raters alike
    with pytest.raises(InputError, match="order"):
        rate_together(IDEAS, "plastic_waste", ScriptedBackend(responder=lambda m: ""), order="sorted")


def test_grid_paraphrases_ideas_before_rating_and_counts_failures(tmp_path):
    # 3 sessions of Direct on one task; the paraphraser rewrites "plan N" as "PARA plan N", and
    # fails (an error after its retries) on plan 2: that idea is rated as written, counted.
    counter = iter(range(1, 100))
    team = ScriptedBackend(responder=lambda m: f"plan {next(counter)} with a deposit scheme")
    rated = []

    def judge(messages):
        prompt = messages[-1]["content"]
        if "Score:" in prompt:
            return "Score: 6"
        batch = shown(prompt)
        rated.extend(batch)
        return "\n".join(f"Idea {n + 1}: Novelty {n + 3}, Usefulness 5" for n in range(len(batch)))

    def rewrite(messages):
        idea = messages[-1]["content"].split("\n", 1)[1]
        if idea.startswith("plan 2 "):
            raise BackendError("refused")
        assert "third person" in messages[0]["content"]  # the harmonisation rules
        return f"PARA {idea}"

    grid = {"name": "p", "model": "scripted", "seed": 1, "concurrency": 1, "tasks": ["plastic_waste"],
            "conditions": [{"method": "direct", "replicates": 3}],
            "judge": {"model": "scripted", "paraphrase": "rewriter", "rubric": False, "samples": 1}}
    run_grid(grid, tmp_path, backend=team, judge_backend=ScriptedBackend(responder=judge),
             paraphrase_backend=ScriptedBackend(responder=rewrite, model="rewriter"),
             progress=False, cache=False)
    assert sorted(rated) == sorted(["PARA plan 1 with a deposit scheme", "plan 2 with a deposit scheme",
                                    "PARA plan 3 with a deposit scheme"])
    corpus = {c.final_idea: c.outcomes for c in Corpus.from_jsonl(tmp_path / "corpus.jsonl")}
    assert corpus["plan 1 with a deposit scheme"]["paraphrased_idea"] == "PARA plan 1 with a deposit scheme"
    assert corpus["plan 2 with a deposit scheme"]["paraphrased_idea"] is None
    summary = json.loads((tmp_path / "manifest.json").read_text())["judge_summary"]
    assert summary["paraphrase"] == {"model": "rewriter", "ideas": 3, "failed": 1}
    assert summary["order"] == "shared"


# -- paper B: judge-based selection for Direct and Self-Refine -----------------------------------------
def run(backend, method, **options):
    config = make_config(method, **options)
    return asyncio.run(run_session(backend, "plastic_waste", config, conversation_id="t", seed=5))


@pytest.mark.parametrize("method,rounds,calls", [("direct", 0, 3 + 1), ("self_refine", 1, 3 * 3 + 1)])
def test_direct_and_self_refine_with_candidates_let_the_judge_pick(method, rounds, calls):
    # K = 3 candidates; the judge answers "Response 2" -> the second candidate's final answer.
    def reply(messages):
        prompt = messages[-1]["content"]
        if "Answer only 'Response N'" in prompt:
            return "Response 2"
        if "feedback" in prompt.lower() and "Rewrite" not in prompt:
            return "be bolder"
        return f"answer {len(backend.history)}"

    backend = ScriptedBackend(responder=reply, concurrency=1)
    options = {"rounds": rounds} if method == "self_refine" else {}
    c = run(backend, method, candidates=3, **options)
    assert len(backend.history) == calls == expected_calls(make_config(method, candidates=3, **options))
    answers = [t.text for t in c.turns if t.phase == ("initial" if method == "direct" else "refine")]
    assert len(answers) == 3 and c.final_idea == answers[1]
    assert c.meta["consensus_choice"] == 1 and c.meta["consensus_resolution"] == "judge"
    assert c.meta["candidates"] == 3
    # the default stays one answer and no judge call
    assert expected_calls(make_config(method, **options)) == (1 if method == "direct" else 3)


def test_candidates_only_for_direct_and_self_refine():
    with pytest.raises(InputError, match="candidates"):
        make_config("homo_mad", candidates=3)
    assert "candidates" not in make_config("direct").hash_payload()
