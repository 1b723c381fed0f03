"""The Pilot page's logic (``dashboard.pilot.run``): the options its notebook is written with (no
key, no URL), the settings the form makes, what the page says about a finished job."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from dashboard.pilot import run
from engine.errors import InputError


def test_the_notebook_options_keep_plain_settings_and_never_a_key_or_a_url():
    settings = {"backend": "openai", "model": "m", "base_url": "https://user:pw@host/v1", "api_key_env": "X",
                "replicates": 2, "temperature": 1.0, "judge": None, "token_limit": 5, "secret_word": "s",
                "team": [1, 2]}  # a list is not a plain value
    assert run.notebook_options(settings, "/kept/pilot", "/runs/paper_release") == {
        "settings": {"backend": "openai", "model": "m", "replicates": 2, "temperature": 1.0, "judge": None},
        "pilot": "/kept/pilot", "reference": "/runs/paper_release"}
    assert run.notebook_options(None, "", None) == {"settings": None, "pilot": None, "reference": None}
    assert run.reference_folder(Path("/runs"), "paper_release") == "/runs/paper_release"
    assert run.reference_folder(Path("/runs"), None) is None


def test_the_form_s_settings_take_the_backend_s_fields_and_drop_an_empty_url():
    assert run.form_settings("local", {"model": "local"}, method="open") == {
        "backend": "local", "model": "local", "base_url": None, "method": "open"}
    assert run.form_settings("openai", {"model": " gpt ", "base_url": " http://h/v1 "}, method="open") == {
        "backend": "openai", "model": "gpt", "base_url": "http://h/v1", "method": "open"}


def test_a_started_job_keeps_numbers_as_numbers():
    started = run.started_settings({"method": "open", "agents": 3, "replicates": 2.0, "max_tokens": 256.0,
                                    "temperature": 1, "turn_limit": 12, "rounds": None})
    assert (started["agents"], started["replicates"], started["max_tokens"], started["temperature"]) == (3, 2, 256, 1.0)
    assert [type(started[k]) for k in ("replicates", "max_tokens", "temperature")] == [int, int, float]


def test_the_backend_needs_a_url_and_a_model_before_any_call():
    with pytest.raises(InputError) as caught:
        run.backend("openai", {"model": "m", "base_url": " "}, "", local=lambda model: None)
    assert caught.value.field == "base_url"
    with pytest.raises(InputError) as caught:
        run.backend("openai", {"model": " ", "base_url": "http://h/v1"}, "", local=lambda model: None)
    assert caught.value.field == "model"
    assert run.backend("local", {"model": "local"}, "", local=lambda model: f"the {model} model") == \
        "the local model"


def job(*, cancelled=False, error=None, statuses=("ok", "ok"), replicates=2):
    corpus = [SimpleNamespace(status=s, conversation_id=f"c{i}", turns=[1] * i, error="boom" if s == "failed" else None)
              for i, s in enumerate(statuses)]
    return SimpleNamespace(cancelled=cancelled, error=error, corpus=corpus, settings={"replicates": replicates})


@pytest.mark.parametrize("finished, label, state", [
    (job(), "Pilot finished", "complete"),
    (job(statuses=("ok", "failed")), "Pilot finished, 1 of 2 session(s) failed", "error"),
    (job(error="stopped"), "Pilot stopped by an error", "error"),
    (job(cancelled=True, error="cancelled"), "Pilot cancelled after 7 turns", "error"),  # cancelled said first
])
def test_the_status_of_a_finished_job(finished, label, state):
    assert run.status(finished, 7) == (label, state)


def test_failed_sessions_are_listed_with_their_turns_and_error():
    table = run.failures_table(run.failed_sessions(job(statuses=("ok", "failed", "failed"))))
    assert table.to_dict("records") == [{"session": "c1", "turns received": 1, "error": "boom"},
                                        {"session": "c2", "turns received": 2, "error": "boom"}]


def test_the_live_table_shows_the_last_30_turns_cut_at_300_characters():
    turns = [(f"pilot-{i}", SimpleNamespace(speaker="a", round=i, phase="p", text="x" * 400)) for i in range(35)]
    table = run.turns_table(turns)
    assert len(table) == 30 and table["round"].tolist() == list(range(5, 35))
    assert set(table["text"].str.len()) == {300} and table["conversation"].iloc[0] == "5"


def test_the_judge_summary_says_what_the_judge_did():
    assert run.judge_summary({"ideas": 4, "batch_size": 10, "raters": ["a", "b"], "irrelevant": 1,
                              "unreadable_verdicts": 0, "retries": 2}) == (
        "Judge: 4 final ideas rated together in batches of at most 10 by 2 rater(s); irrelevant (rated 0, left out "
        "of the scaling): 1; unreadable verdicts (left missing): 0; replies asked again: 2.")
    assert run.run_name({"method": "open", "task": "plastic_waste"}, "20260101-120000") == \
        "20260101-120000_open_plastic_waste"
