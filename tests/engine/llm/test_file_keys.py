"""A grid file someone else wrote cannot choose which secret leaves the machine, nor where it goes.

The rule (``engine.runs.grid.check_key_variables``): a file's ``api_key_env`` must be one of
``engine.llm.endpoints.PROVIDER_KEYS``, and the file's servers get the key only when they are
that provider's own host or this machine; ``--api-key-env NAME`` (the user naming the secret)
or ``--allow-file-endpoints`` lets more through. Held against a loopback server that records
every ``Authorization`` header it receives: a refused file sends it nothing.
"""

from __future__ import annotations

import pytest

from engine.llm import endpoints
from engine.llm.endpoints import key_stays_home
from tests.engine.llm.test_secrets_stored import EchoServer
from tests.support.cli_run import cli, refused

SECRET = "ghp_FAKEsecretTOKEN0123456789"  # fake


def _grid(tmp_path, url: str, *, key: str = "OPENAI_API_KEY", judge: str | None = None):
    path = tmp_path / "shared.yaml"
    text = (f"model: echo-model\nbase_url: {url}\napi_key_env: {key}\ntasks: [plastic_waste]\n"
            "conditions: [{method: direct}]\n")
    if judge:
        text += f"judge: {{model: echo-judge, base_url: {url}, api_key_env: {judge}}}\n"
    path.write_text(text)
    return path


def _no_output(out) -> bool:
    return not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("variable", ["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "HF_TOKEN"])
def test_a_file_cannot_name_a_secret_that_is_not_a_provider_key(tmp_path, monkeypatch, variable):
    monkeypatch.setenv(variable, SECRET)
    with EchoServer() as server:
        path = _grid(tmp_path, f"http://127.0.0.1:{server.port}/v1", key=variable)
        outcome = cli(["run", "--grid", path, "--out", tmp_path / "out", "--no-progress"])
        seen = list(server.seen)
    line = refused(outcome, "api_key_env", str(path), f"--api-key-env {variable}")
    assert "provider's key variable" in line
    assert seen == [] and _no_output(tmp_path / "out")


def test_the_judge_key_is_held_to_the_same_rule(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    with EchoServer() as server:
        path = _grid(tmp_path, f"http://127.0.0.1:{server.port}/v1", judge="GITHUB_TOKEN")
        outcome = cli(["run", "--grid", path, "--out", tmp_path / "out", "--no-progress"])
        seen = list(server.seen)
    refused(outcome, "judge.api_key_env", "--api-key-env GITHUB_TOKEN")
    assert seen == [] and _no_output(tmp_path / "out")


def test_the_user_naming_the_variable_sends_it(tmp_path, monkeypatch):
    """The command line's --api-key-env is the user's choice: the same file then runs, and the
    server receives exactly that secret as the bearer key (so the refusals above are real)."""
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    with EchoServer() as server:
        path = _grid(tmp_path, f"http://127.0.0.1:{server.port}/v1", key="GITHUB_TOKEN")
        outcome = cli(["run", "--grid", path, "--api-key-env", "GITHUB_TOKEN", "--out", tmp_path / "out",
                       "--no-progress"])
        seen = list(server.seen)
    assert outcome.code == 0, outcome.err[-2000:]
    assert seen and {s["auth"] for s in seen} == {f"Bearer {SECRET}"}


def test_a_server_the_file_chose_gets_no_key_without_the_user(tmp_path, monkeypatch):
    """The echo server stands for a remote host (its loopback address is not counted as this
    machine here): a file with a provider's key name and that server is refused, nothing is
    sent; --allow-file-endpoints or --api-key-env lets the key go."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setattr(endpoints, "is_loopback_host", lambda host: False)
    with EchoServer() as server:
        path = _grid(tmp_path, f"http://127.0.0.1:{server.port}/v1")
        outcome = cli(["run", "--grid", path, "--out", tmp_path / "out", "--no-progress"])
        assert server.seen == []
        line = refused(outcome, "base_url", str(path), "--allow-file-endpoints", "$OPENAI_API_KEY",
                       "127.0.0.1")
        assert SECRET not in line and _no_output(tmp_path / "out")
        allowed = cli(["run", "--grid", path, "--allow-file-endpoints", "--out", tmp_path / "a",
                       "--no-progress"])
        named = cli(["run", "--grid", path, "--api-key-env", "OPENAI_API_KEY", "--out", tmp_path / "b",
                     "--no-progress"])
        seen = list(server.seen)
    assert (allowed.code, named.code) == (0, 0), (allowed.err[-2000:], named.err[-2000:])
    assert len(seen) == 2 and {s["auth"] for s in seen} == {f"Bearer {SECRET}"}


def test_a_judge_or_embedding_server_the_file_chose_is_refused_too(tmp_path, monkeypatch):
    monkeypatch.setattr(endpoints, "is_loopback_host", lambda host: False)
    path = tmp_path / "g.yaml"
    path.write_text("model: gpt-4.1-mini\ntasks: [plastic_waste]\nconditions: [{method: direct}]\n"
                    "judge: {model: j, base_url: 'http://judge.example:8000/v1'}\n")
    refused(cli(["run", "--grid", path, "--out", tmp_path / "o", "--dry-run"]),
            "judge.base_url", "judge.example", "--allow-file-endpoints")
    path.write_text("model: gpt-4.1-mini\ntasks: [plastic_waste]\nconditions: [{method: direct}]\n"
                    "embed_base_url: 'http://embed.example/v1'\n")
    refused(cli(["run", "--grid", path, "--out", tmp_path / "o", "--dry-run"]),
            "embed_base_url", "embed.example")
    # a replica list: every replica is checked, the second one included
    path.write_text("model: m\nbase_url: ['https://api.openai.com/v1', 'http://gpu2.example/v1']\n"
                    "tasks: [plastic_waste]\nconditions: [{method: direct}]\n")
    refused(cli(["run", "--grid", path, "--out", tmp_path / "o", "--dry-run"]), "base_url", "gpu2.example")


def test_without_a_base_url_only_the_openai_key_goes_to_api_openai_com(tmp_path):
    """No base_url for an OpenAI model name means api.openai.com: another provider's key
    (OPENROUTER_API_KEY) would go there, so it is refused; OPENAI_API_KEY is its own."""
    path = tmp_path / "g.yaml"
    path.write_text("model: gpt-4.1-mini\napi_key_env: OPENROUTER_API_KEY\ntasks: [plastic_waste]\n"
                    "conditions: [{method: direct}]\n")
    refused(cli(["run", "--grid", path, "--out", tmp_path / "o", "--dry-run"]),
            "'base_url'", "$OPENROUTER_API_KEY", "api.openai.com", "--allow-file-endpoints")
    path.write_text("model: gpt-4.1-mini\ntasks: [plastic_waste]\nconditions: [{method: direct}]\n"
                    "judge: {model: gpt-4.1-mini, api_key_env: GROQ_API_KEY}\n")
    refused(cli(["run", "--grid", path, "--out", tmp_path / "o", "--dry-run"]),
            "'judge.base_url'", "$GROQ_API_KEY", "api.openai.com")
    path.write_text("model: gpt-4.1-mini\ntasks: [plastic_waste]\nconditions: [{method: direct}]\n"
                    "judge: {model: gpt-4.1-mini, base_url: 'https://api.openai.com/v1'}\n")
    assert cli(["run", "--grid", path, "--out", tmp_path / "o", "--dry-run"]).code == 0


def test_allow_file_endpoints_only_with_a_grid(tmp_path):
    refused(cli(["run", "--method", "direct", "--task", "plastic_waste", "--allow-file-endpoints",
                 "--out", tmp_path / "o", "--dry-run"]), "--allow-file-endpoints", "--grid")


@pytest.mark.parametrize("url, key, home", [
    ("https://api.openai.com/v1", "OPENAI_API_KEY", True),
    ("https://API.OpenAI.com:443/v1", "OPENAI_API_KEY", True),
    ("https://api.openai.com.evil.example/v1", "OPENAI_API_KEY", False),
    ("https://evil.example/v1?x=api.openai.com", "OPENAI_API_KEY", False),
    ("https://u:p@api.openai.com@evil.example/v1", "OPENAI_API_KEY", False),
    ("https://openrouter.ai/api/v1", "OPENAI_API_KEY", False),   # another provider's host
    ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", True),
    ("https://lab.openai.azure.com/", "AZURE_OPENAI_API_KEY", True),
    ("https://openai.azure.com.evil.example/", "AZURE_OPENAI_API_KEY", False),
    ("http://127.0.0.5:8000/v1", "OPENAI_API_KEY", True),
    ("http://[::1]:8000/v1", "OPENAI_API_KEY", True),
    ("http://localhost:11434/v1", "OPENAI_API_KEY", True),
    ("http://localhost.evil.example/v1", "OPENAI_API_KEY", False),
    ("http://10.0.0.7:8000/v1", "OPENAI_API_KEY", False),
])
def test_where_a_key_may_go_worked_out_by_hand(url, key, home):
    assert key_stays_home(url, key) is home
