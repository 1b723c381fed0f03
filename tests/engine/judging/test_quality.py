"""Paper B's quality side on a run folder, with a scripted judge; values worked out by hand."""

from __future__ import annotations

import asyncio
import json
import re

import pandas as pd
import pytest

from engine.judging import quality
from engine.corpus import Corpus
from engine.llm import ScriptedBackend
from engine.runs.runner import run_grid
from engine.tasks import get_task

TASK = "plastic_waste"
PICK = "Answer only 'Response N'"


def debater(messages):
    """Homo-MAD debaters write 'plain ...', lens debaters 'bold ...'; the judge picks Response 1."""
    prompt = messages[-1]["content"]
    if PICK in prompt:
        return "Response 1"
    style = "bold" if "lens" in messages[0]["content"] else "plain"
    rnd = "r1" if "Your previous answer" in prompt else "r0"
    return f"{style} idea {rnd}"


@pytest.fixture
def run_dir(tmp_path):
    grid = {"name": "q", "model": "scripted", "tasks": [TASK],
            "conditions": [{"method": "homo_mad", "agents": 2, "rounds": 1, "replicates": 3},
                           {"method": "homo_mad", "agents": 2, "rounds": 1, "lenses": True, "replicates": 3}]}
    run_grid(grid, tmp_path / "run", backend=ScriptedBackend(responder=debater), progress=False, cache=False)
    return tmp_path / "run"


def judge_reply(messages):
    prompt = messages[-1]["content"]
    if "Score the response" in prompt:
        text = re.search(r"Response: (.*)\n\nScore", prompt, re.S).group(1)
        return "Score: 8" if text.startswith("bold") else ("Score: 5" if "r1" in text else "hmm")
    first = re.search(r"Response A: (.*)\n\nResponse B", prompt, re.S).group(1)
    second = re.search(r"Response B: (.*)\n\nWhich", prompt, re.S).group(1)
    if first.startswith("bold") and second.startswith("plain"):
        return "A"
    if second.startswith("bold") and first.startswith("plain"):
        return "tie"  # a position-biased judge: split verdicts count 1/2
    return "tie"


def test_rubric_per_round_and_resume(run_dir):
    corpus = Corpus.from_jsonl(run_dir / "corpus.jsonl")
    items = quality.rubric_items(corpus, per_round=True)
    # 6 sessions: 1 final + 2 agents x 2 rounds each
    assert len(items) == 6 * (1 + 4)
    store = quality.QualityStore(run_dir)
    judge = ScriptedBackend(responder=judge_reply, model="judge")
    done = asyncio.run(quality.arubric(items, {TASK: get_task(TASK)}, judge, store, retries=1, samples=1))
    assert done == 30
    # plain round-0 answers are never readable: asked twice (retries=1), recorded as missing
    assert len(judge.history) == 30 + 6
    again = quality.QualityStore(run_dir)  # re-read from disk: resumes with zero calls
    judge2 = ScriptedBackend(responder=judge_reply, model="judge")
    assert asyncio.run(quality.arubric(items, {TASK: get_task(TASK)}, judge2, again, samples=1)) == 0
    assert judge2.history == []
    rubric = again.frame("rubric")
    conversations = corpus.conversations_frame()
    table = quality.rubric_table(rubric, conversations)
    means = table.groupby("ablation")["rubric_score"].mean()
    assert means["CLA only"] == 8 and means["neither (Homo MAD)"] == 5
    rounds = quality.per_round_table(rubric, conversations)
    homo = rounds[rounds["method"] == "homo_mad"].set_index(["condition", "round"])
    plain = [c for c in rounds["condition"].unique() if "no CLA" in c][0]
    assert homo.loc[(plain, 1), "score"] == 5 and homo.loc[(plain, 0), "missing"] == 6
    assert pd.isna(homo.loc[(plain, 0), "score"])
    assert quality.summary(again)["rubric_rounds"] == {"items": 24, "unreadable": 6, "ratings": 18}


def test_per_round_limit_keeps_the_first_sessions_of_each_condition(run_dir):
    corpus = Corpus.from_jsonl(run_dir / "corpus.jsonl")
    items = quality.rubric_items(corpus, per_round=True, per_round_limit=1)
    rounds = [i for i in items if i.round is not None]
    # 2 conditions x 1 session x (2 agents x 2 rounds); finals of all 6 sessions
    assert len(rounds) == 8 and len(items) == 6 + 8
    assert {i.conversation_id for i in rounds} == {c.conversation_id for c in corpus if c.replicate == 0}


def test_pairwise_both_orders_ties_half_and_average_win_rate(run_dir):
    corpus = list(Corpus.from_jsonl(run_dir / "corpus.jsonl"))
    plan = quality.pairwise_plan(corpus, pairs="matched")
    assert len(plan) == 3  # one condition pair, replicates matched
    store = quality.QualityStore(run_dir)
    judge = ScriptedBackend(responder=judge_reply, model="judge")
    asyncio.run(quality.apairwise(plan, {TASK: get_task(TASK)}, judge, store))
    assert len(judge.history) == 6  # both orders of each comparison
    rates = quality.win_rates(store.frame("pairwise")).set_index("condition")
    # bold shown first wins ('A'); bold shown second gets 'tie' -> split -> 1/2 each comparison
    lens = [c for c in rates.index if "[CLA" in c][0]
    plain = [c for c in rates.index if "no CLA" in c][0]
    assert rates.loc[lens, "win_rate"] == 0.5 and rates.loc[plain, "win_rate"] == 0.5
    # all pairs: 3 x 3 comparisons
    assert len(quality.pairwise_plan(corpus, pairs="all")) == 9


def test_win_rates_by_hand():
    frame = pd.DataFrame({"task": ["t"] * 4, "condition_x": ["A", "A", "A", "B"],
                          "condition_y": ["B", "B", "C", "C"], "score_x": [1.0, 0.5, 0.0, None]})
    rates = quality.win_rates(frame).set_index("condition")
    # A: vs B mean(1, .5) = .75, vs C 0 -> .375; B: vs A .25, vs C missing -> .25; C: vs A 1 -> 1
    assert rates.loc["A", "win_rate"] == pytest.approx(0.375)
    assert rates.loc["B", "win_rate"] == pytest.approx(0.25) and rates.loc["B", "missing"] == 1
    assert rates.loc["C", "win_rate"] == pytest.approx(1.0)


def test_judge_cli_dry_run_counts_calls(run_dir, capsys):
    from engine.cli import main

    assert main(["judge", "quality", str(run_dir), "--per-round", "--dry-run"]) == 0
    # paper A's panel by default: 30 items x 5 samples of the judge
    assert "150 rubric calls (30 items x 5 raters; 0 already judged)" in capsys.readouterr().err
    assert main(["judge", "quality", str(run_dir), "--per-round", "--dry-run", "--samples", "2",
                 "--judge-model", "a", "--judge-models", "b,c", "--base-url", "http://127.0.0.1:9"]) == 0
    assert "180 rubric calls (30 items x 6 raters; 0 already judged)" in capsys.readouterr().err
    assert main(["judge", "pairwise", str(run_dir), "--pairs", "all", "--dry-run"]) == 0
    assert "18 pairwise calls (9 comparisons x 2 orders" in capsys.readouterr().err
    assert main(["judge", "quality", str(run_dir / "nope")]) == 2
    # records made by a judge count as done for that judge only
    store = quality.QualityStore(run_dir)
    first = quality.rubric_items(Corpus.from_jsonl(run_dir / "corpus.jsonl"))[0]
    store.append({"kind": "rubric", "key": first.key, "judge": "some-model", "conversation_id":
                  first.conversation_id, "task": first.task, "round": None, "speaker": None, "score": 5.0})
    assert main(["judge", "quality", str(run_dir), "--judge-model", "some-model", "--base-url",
                 "http://127.0.0.1:9", "--dry-run", "--samples", "1"]) == 0
    assert "5 rubric calls (6 items x 1 raters; 1 already judged)" in capsys.readouterr().err
    # a panel of samples is named model#1..#5: the one-rating record is not one of them
    assert main(["judge", "quality", str(run_dir), "--judge-model", "some-model", "--base-url",
                 "http://127.0.0.1:9", "--dry-run"]) == 0
    assert "30 rubric calls (6 items x 5 raters; 0 already judged)" in capsys.readouterr().err


def test_a_line_cut_by_a_kill_is_dropped_on_reopen(run_dir):
    store = quality.QualityStore(run_dir)
    store.append({"kind": "rubric", "key": "k1", "judge": "j", "score": 3})
    with open(run_dir / "quality.jsonl", "a") as handle:
        handle.write('{"kind": "rubric", "key": "k2"')
    reader = quality.QualityStore(run_dir)  # a reader leaves the file as it is
    assert reader.has("k1", "j") and not reader.has("k2", "j")
    again = quality.QualityStore(run_dir, writer=True)  # the judge sets the fragment aside
    assert again.has("k1", "j") and not again.has("k2", "j")
    assert (run_dir / "quality.jsonl").read_text().endswith("}\n")
    assert json.loads((run_dir / "quality.jsonl").read_text().splitlines()[-1])["key"] == "k1"
    assert (run_dir / "quality.jsonl.torn").read_text() == '{"kind": "rubric", "key": "k2"\n'


@pytest.mark.parametrize("reply, verdict", [
    ("A", "A"), ("Response B", "B"), ("Tie", "tie"),
    ("A\n\nThe first response is clearer.", "A"),
    ("The best response is indeed A: it is original.", "A"),
    ('The best response is indeed "B"', "B"),
    ("The correct answer is A.", "A"),
    ("Response B is indeed better overall. While", "B"),
    ("The first answer is indeed better. The", "A"),
    ("The second option is better.", "B"),
    ("A creative idea: 20 creative bins", None),          # the article 'A', not a verdict
    ("The best response is A, but response B is better", None),  # names both: ambiguous
    ("Your choice, \"A\" or \"", None),
    ("I'll take a closer look at the", None),
])
def test_parse_verdict(reply, verdict):
    assert quality.parse_verdict(reply) == verdict


# -- a panel of rubric raters ----------------------------------------------------------------------
from engine.stats.agreement import ONE_RATING  # noqa: E402


def test_rubric_panel_five_samples_by_default(run_dir):
    corpus = Corpus.from_jsonl(run_dir / "corpus.jsonl")
    items = quality.rubric_items(corpus)  # 6 final outputs
    store = quality.QualityStore(run_dir)
    judge = ScriptedBackend(responder=lambda m: "Score: 7", model="judge")
    assert asyncio.run(quality.arubric(items, {TASK: get_task(TASK)}, judge, store)) == 6 * 5
    rubric = store.frame("rubric")
    assert sorted(rubric["judge"].unique()) == [f"judge#{s}" for s in range(1, 6)]
    assert set(rubric["temperature"]) == {0.7} and set(rubric["panel"]) == {"judge x5"}
    assert len({h["seed"] for h in judge.history}) == 5  # one seed per rater
    # every rater gives 7 to every item: no variance between items, no ICC; alpha undefined too
    agreement = quality.summary(store)["agreement"]
    assert agreement["raters"] == 5 and agreement["ratings_per_item"] == {"min": 5, "max": 5}
    assert agreement["icc3k"] is None and "same mean" in agreement["note"]


def records(scores: dict[str, list]) -> pd.DataFrame:
    """Final-output records: item -> one score per rater r1, r2, ..."""
    rows = [{"kind": "rubric", "key": f"rubric|{item}|final|", "judge": f"j#{r + 1}", "conversation_id": item,
             "task": TASK, "round": None, "speaker": None, "score": score, "panel": "j x2"}
            for item, values in scores.items() for r, score in enumerate(values)]
    return pd.DataFrame(rows)


def test_rubric_scores_are_the_mean_of_readable_ratings_with_agreement():
    rubric = records({"c1": [1, 2], "c2": [3, 3], "c3": [5, 7], "c4": [None, 4]})
    # the hand-worked ICC of tests/engine/stats/test_agreement.py: (1,2), (3,3), (5,7) -> ICC(3,2) =
    # 20/21, ICC(2,1) = 6/7; c4 has one rating: dropped from the ICC, counted
    agreement = quality.rubric_agreement(rubric)
    assert agreement["judge"] == "j x2" and agreement["items"] == 4 and agreement["dropped_items"] == 1
    assert agreement["icc3k"] == pytest.approx(20 / 21) and agreement["icc21"] == pytest.approx(6 / 7)
    assert agreement["text"].startswith("judge j x2: 1 to 2 ratings per item from 2 raters, N = 4 items: ICC(3,2) = 0.95")
    conversations = pd.DataFrame({"conversation_id": ["c1", "c2", "c3", "c4"], "method": "homo_mad",
                                  "task": TASK, "agents": 2, "rounds": 1})
    table = quality.rubric_table(rubric, conversations).set_index("conversation_id")
    assert table["rubric_score"].tolist() == [1.5, 3.0, 6.0, 4.0]
    assert table["rubric_ratings"].tolist() == [2, 2, 2, 1]


def test_one_rubric_rating_per_item_gives_no_agreement():
    rubric = records({"c1": [4], "c2": [6], "c3": [8]})
    agreement = quality.rubric_agreement(rubric)
    assert agreement["note"] == ONE_RATING and agreement["icc3k"] is None
    assert "one rating per item: agreement cannot be computed" in agreement["text"]
