"""Grid runs with custom tasks: judged against their own prompt, an edited prompt never
answered from old sessions, and ``--dry-run`` counting what is already done."""

from __future__ import annotations

import hashlib
import json

import pytest

from engine.corpus import Corpus
from engine.errors import InputError
from engine.llm import ScriptedBackend
from engine.runs.runner import run_grid

SPORT = "Invent a new team sport for people who hate running."


def grid(prompt: str = SPORT, **extra) -> dict:
    return {"name": "custom", "model": "scripted", "seed": 2, "concurrency": 2,
            "task_texts": {"sport": prompt}, "conditions": [{"method": "direct", "replicates": 2}],
            **extra}


def judge_reply(messages):
    prompt = messages[-1]["content"]
    return "Score: 7" if "Score:" in prompt else "Novelty: 8\nUsefulness: 4"


def test_custom_task_is_judged_alone_with_its_own_prompt(tmp_path):
    judge = ScriptedBackend(responder=judge_reply)
    result = run_grid(grid(judge={"model": "scripted", "mode": "alone"}), tmp_path,
                      backend=ScriptedBackend(responder=lambda m: "a ball game on stilts"),
                      judge_backend=judge, progress=False, cache=False)
    assert (result.ok, result.failed) == (2, 0)
    # every judge request (novelty/usefulness and rubric) quotes the custom prompt
    assert len(judge.history) == 4
    assert all(SPORT in call["messages"][-1]["content"] for call in judge.history)
    for conversation in Corpus.from_jsonl(tmp_path / "corpus.jsonl"):
        assert conversation.outcomes["novelty_raw"] == 8.0 and conversation.outcomes["rubric_score"] == 7.0


def test_custom_task_is_judged_together_with_its_own_prompt(tmp_path):
    judge = ScriptedBackend(responder=lambda m: "Idea 1: Novelty 6, Usefulness 5\n"
                                                "Idea 2: Novelty 3, Usefulness 9")
    result = run_grid(grid(judge={"model": "scripted"}), tmp_path,
                      backend=ScriptedBackend(responder=lambda m: "a ball game on stilts"),
                      judge_backend=judge, progress=False, cache=False)
    assert (result.ok, result.failed) == (2, 0) and judge.history
    assert all(any(SPORT in m["content"] for m in call["messages"]) for call in judge.history)


def test_tasks_file_with_judge_from_the_command_line(tmp_path, capsys):
    from engine.cli.run import grid_from_args, register
    import argparse

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "bridge", "prompt": "Design a bridge made of paper."}) + "\n")
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["run", "--method", "direct", "--tasks-file", str(tasks), "--judge-model",
                              "scripted", "--judge-mode", "alone", "--out", str(tmp_path / "out")])
    judge = ScriptedBackend(responder=judge_reply)
    result = run_grid(grid_from_args(args), tmp_path / "out",
                      backend=ScriptedBackend(responder=lambda m: "fold it"), judge_backend=judge,
                      progress=False, cache=False)
    assert (result.ok, result.failed) == (1, 0)
    assert "Design a bridge made of paper." in judge.history[0]["messages"][-1]["content"]


def test_prompt_hash_is_in_the_session_id_and_the_prompt_recorded(tmp_path):
    run_grid(grid(), tmp_path, backend=ScriptedBackend(responder=lambda m: "idea"), progress=False,
             cache=False)
    digest = hashlib.sha256(SPORT.encode()).hexdigest()
    corpus = Corpus.from_jsonl(tmp_path / "corpus.jsonl")
    for conversation in corpus:
        assert conversation.conversation_id.endswith(f"-{digest[:8]}-r{conversation.replicate}")
        assert conversation.meta["task_prompt"] == SPORT
        assert conversation.meta["task_prompt_sha256"] == digest
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["tasks"] == {"sport": {"prompt": SPORT, "prompt_sha256": digest, "title": "sport",
                                           "benchmark": ""}}


def test_an_edited_prompt_is_refused_in_the_old_folder_and_runs_anew_elsewhere(tmp_path):
    first = ScriptedBackend(responder=lambda m: "idea")
    run_grid(grid(), tmp_path / "a", backend=first, progress=False, cache=False)
    edited = SPORT.replace("running", "jumping")
    again = ScriptedBackend(responder=lambda m: "new idea")
    with pytest.raises(InputError, match="'sport' has a different prompt now") as caught:
        run_grid(grid(edited), tmp_path / "a", backend=again, progress=False, cache=False)
    assert caught.value.path == str(tmp_path / "a") and again.history == []
    assert len(Corpus.from_jsonl(tmp_path / "a" / "corpus.jsonl")) == 2  # nothing touched
    result = run_grid(grid(edited), tmp_path / "b", backend=again, progress=False, cache=False)
    assert result.ok == 2 and all(any(edited in m["content"] for m in c["messages"]) for c in again.history)


def test_a_folder_without_prompt_records_is_refused(tmp_path):
    run_grid(grid(), tmp_path, backend=ScriptedBackend(responder=lambda m: "idea"), progress=False,
             cache=False)
    path = tmp_path / "corpus.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records[1:]:  # as an older version wrote them
        del record["meta"]["task_prompt_sha256"]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(InputError, match="without a record of their prompt"):
        run_grid(grid(), tmp_path, backend=ScriptedBackend(responder=lambda m: "x"), progress=False,
                 cache=False)


def test_dry_run_counts_finished_sessions_as_done(tmp_path, capsys):
    g = grid(conditions=[{"method": "homo_mad", "agents": 2, "rounds": 1, "replicates": 3}])
    before = run_grid(g, tmp_path, dry_run=True)
    assert (before["planned"], before["done"], before["sessions"]) == (3, 0, 3)
    assert before["calls"] == 3 * (2 * 2 + 1)
    # finish two of the three sessions, then plan again
    answers = ScriptedBackend(responder=lambda m: "Response 1" if "Response" in m[-1]["content"] else "idea")
    run_grid({**g, "conditions": [{**g["conditions"][0], "replicates": 2}]}, tmp_path,
             backend=answers, progress=False, cache=False)
    capsys.readouterr()
    after = run_grid(g, tmp_path, dry_run=True)
    assert (after["planned"], after["done"], after["sessions"]) == (3, 2, 1)
    assert after["calls"] == 2 * 2 + 1
    assert "to do: 1 of 3 planned sessions (2 already done" in capsys.readouterr().err


def test_dry_run_refuses_a_folder_of_another_prompt_as_the_run_would(tmp_path):
    run_grid(grid(), tmp_path, backend=ScriptedBackend(responder=lambda m: "idea"), progress=False,
             cache=False)
    with pytest.raises(InputError, match="different prompt now"):
        run_grid(grid(SPORT + " Indoors."), tmp_path, dry_run=True)


def test_task_text_that_is_not_utf8_is_a_clean_error(tmp_path, capsys):
    from engine.cli import main

    # Python hands a command-line byte that is not UTF-8 (0xff) over as the surrogate U+DCFF
    assert main(["run", "--method", "direct", "--task-text", "Invent \udcff a sport",
                 "--out", str(tmp_path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "task_text" in err and "not UTF-8" in err and len(err.strip().splitlines()) == 1
