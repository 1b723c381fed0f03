"""Where calls go: an empty server URL is never read as "no URL" (which means api.openai.com
with ``$OPENAI_API_KEY``), and a server's redirect is never followed (the prompts, and the key,
would go to a host nobody named); a 3xx is an error naming the server that sent it."""

from __future__ import annotations

import pytest

from benchmarks.loopback_server import LoopbackServer
from engine.errors import InputError
from engine.runs.grid import load_grid
from engine.llm import RetryPolicy, ScriptedBackend, make_backend
from engine.llm.errors import BackendError
from engine.llm.openai_backend import OpenAIBackend
from engine.runs.runner import run_grid
from tests.support.cli_run import cli, refused

KEY = "sk-where-FAKE-0123456789"  # fake
MESSAGES = [{"role": "user", "content": "Give one creative idea."}]


@pytest.mark.parametrize("empty", ["", " ", [], [""], [" "], ",", ["http://127.0.0.1:9/v1", ""]])
def test_an_empty_base_url_is_refused_not_sent_to_openai(monkeypatch, empty):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with pytest.raises(InputError, match="empty"):
        make_backend("gpt-4.1-mini", base_url=empty)
    with pytest.raises(InputError, match="empty") as caught:
        load_grid({"model": "gpt-4.1-mini", "base_url": empty, "tasks": ["plastic_waste"],
                   "conditions": [{"method": "direct"}]})
    assert caught.value.field == "base_url"


@pytest.mark.parametrize("key", ["base_url", "embed_base_url"])
def test_a_grid_file_with_an_empty_url_is_refused_on_a_dry_run(tmp_path, monkeypatch, key):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    path = tmp_path / "grid.yaml"
    path.write_text(f"model: gpt-4.1-mini\n{key}: ''\ntasks: [plastic_waste]\nconditions:\n  - {{method: direct}}\n")
    refused(cli(["run", "--grid", path, "--out", tmp_path / "out", "--dry-run"]), str(path), key)
    path.write_text("model: gpt-4.1-mini\njudge: {model: gpt-4.1-mini, base_url: ''}\ntasks: [plastic_waste]\n"
                    "conditions:\n  - {method: direct}\n")
    refused(cli(["run", "--grid", path, "--out", tmp_path / "out", "--dry-run"]), "judge.base_url")


def test_no_url_at_all_still_means_the_openai_api():
    backend = make_backend("gpt-4.1-mini", api_key=KEY)
    assert backend.base_url is None and backend.identity == "openai:api.openai.com:gpt-4.1-mini"


def test_urls_that_are_not_http_are_refused():
    for url in ("localhost:8000/v1", "ftp://host/v1", "http://", "http://host:port/v1"):
        with pytest.raises(InputError):
            make_backend("m", base_url=url, api_key=KEY)


def _backend(server, attempts=3):
    return OpenAIBackend("loop-model", base_url=server.base_url, api_key=KEY, timeout=5,
                         retry=RetryPolicy(max_attempts=attempts, base_delay=0.01, max_delay=0.02))


def test_a_redirect_is_not_followed_and_names_the_server():
    with LoopbackServer(lifetime=60) as elsewhere, \
            LoopbackServer(script=["redirect"] * 5, redirect_to=elsewhere.base_url, lifetime=60) as named:
        with pytest.raises(BackendError) as caught:
            _backend(named).chat(MESSAGES, seed=1)
        assert named.requests == 1  # final: not retried either
        assert elsewhere.requests == 0  # nothing reached the other host
    message = str(caught.value)
    assert "HTTP 307" in message and named.base_url in message and "not followed" in message
    assert KEY not in message


def test_a_redirecting_replica_is_failed_over_and_never_followed():
    """A replica answering 307 is left out (cooldown 30 s) and each call goes at once to the
    healthy replica beside it: every call is answered, the redirect target gets nothing."""
    with LoopbackServer(lifetime=60) as elsewhere, \
            LoopbackServer(script=["redirect"] * 50, redirect_to=elsewhere.base_url, lifetime=60) as bad, \
            LoopbackServer(lifetime=60) as good:
        backend = make_backend("loop-model", base_url=[bad.base_url, good.base_url], api_key=KEY, timeout=5)
        backend._turn = -1  # the first call goes to the redirecting replica
        texts = [backend.chat([{"role": "user", "content": f"idea {n}"}], seed=n).text for n in range(4)]
        assert all(texts) and elsewhere.requests == 0
        assert (bad.requests, good.requests) == (1, 4)  # one redirect, then cooling down
    assert [s["failures"] for s in backend.replica_stats()] == [1, 0]
    assert [s["calls"] for s in backend.replica_stats()] == [0, 4]


def test_every_replica_redirecting_is_one_final_error_naming_a_server():
    with LoopbackServer(lifetime=60) as elsewhere, \
            LoopbackServer(script=["redirect"] * 9, redirect_to=elsewhere.base_url, lifetime=60) as one, \
            LoopbackServer(script=["redirect"] * 9, redirect_to=elsewhere.base_url, lifetime=60) as two:
        backend = make_backend("loop-model", base_url=[one.base_url, two.base_url], api_key=KEY, timeout=5)
        with pytest.raises(BackendError) as caught:
            backend.chat(MESSAGES, seed=1)
        assert (one.requests + two.requests, elsewhere.requests) == (2, 0)
    message = str(caught.value)
    assert "HTTP 307" in message and "not followed" in message and KEY not in message
    assert one.base_url in message or two.base_url in message


def test_the_judge_stops_in_one_line_naming_the_redirecting_server(tmp_path):
    run = tmp_path / "run"
    grid = {"model": "scripted", "tasks": ["plastic_waste"], "conditions": [{"method": "direct", "replicates": 2}]}
    run_grid(grid, run, backend=ScriptedBackend(["an idea", "another idea"]), progress=False, cache=False)
    with LoopbackServer(lifetime=60) as elsewhere, \
            LoopbackServer(script=["redirect"] * 20, redirect_to=elsewhere.base_url, lifetime=60) as named:
        outcome = cli(["judge", "quality", run, "--judge-model", "loop-model", "--base-url", named.base_url])
        assert elsewhere.requests == 0
    refused(outcome, "307", named.base_url)
    records = run / "quality.jsonl"
    assert not records.exists() or records.read_text().strip() == ""
