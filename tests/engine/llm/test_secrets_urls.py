"""Credentials inside a server URL never reach a file, and a grid file cannot send an
arbitrary environment variable to its server."""

from __future__ import annotations

import pytest

from benchmarks.loopback_server import LoopbackServer
from engine.errors import InputError
from engine.runs.grid import load_grid
from engine.llm.secrets import redact_url, scrub
from engine.runs.runner import run_grid

URL_KEY = "QueryKey0x5Ecret"      # fake
PASSWORD = "Pa55w0rdInUrl"        # fake
ENV_KEY = "sk-envkey-FAKE-77"     # fake


def test_redacted_urls_worked_out_by_hand():
    assert redact_url("https://u:p@host:8443/v1?api-key=abc&api-version=2024-06-01#frag") == \
        "https://[redacted]@host:8443/v1?api-key=[redacted]&api-version=2024-06-01#[redacted]"
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert redact_url(None) is None
    assert scrub(f"POST http://me:{PASSWORD}@h/v1?token={URL_KEY}&x=1 failed") == \
        "POST http://[redacted]@h/v1?token=[redacted]&x=1 failed"


def test_grid_file_may_only_name_key_like_variables(tmp_path, capsys):
    path = tmp_path / "g.yaml"
    path.write_text("base_url: http://example.invalid/v1\napi_key_env: HOME\nconditions: [{method: direct}]\n")
    with pytest.raises(InputError) as caught:
        load_grid(path)
    assert caught.value.path == str(path) and caught.value.field == "api_key_env"
    judged = tmp_path / "j.yaml"
    judged.write_text("judge: {model: m, api_key_env: DATABASE_URL}\nconditions: [{method: direct}]\n")
    with pytest.raises(InputError) as caught:
        load_grid(judged)
    assert caught.value.field == "judge.api_key_env"
    # named on the command line, any variable is the user's own choice (model and judge)
    grid = load_grid(judged, api_key_env="HOME")
    assert grid.endpoint.api_key_env == "HOME" and grid.judge.endpoint.api_key_env == "HOME"
    from engine.cli import main

    assert main(["run", "--grid", str(path), "--out", str(tmp_path / "o"), "--dry-run"]) == 2
    assert "pass --api-key-env HOME" in capsys.readouterr().err
    assert main(["run", "--grid", str(path), "--api-key-env", "HOME", "--out", str(tmp_path / "o"),
                 "--dry-run"]) == 0


def test_url_credentials_are_used_but_never_stored(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LOOP_API_KEY", ENV_KEY)
    with LoopbackServer() as server:
        host = server.base_url.split("://", 1)[1]
        url = f"http://me:{PASSWORD}@{host}?api-key={URL_KEY}&api-version=2024-06-01"
        grid = {"name": "s", "model": "loop-model", "base_url": url, "api_key_env": "LOOP_API_KEY",
                "tasks": ["plastic_waste"], "conditions": [{"method": "direct", "replicates": 2}]}
        result = run_grid(grid, tmp_path, progress=False, command=f"engine run --base-url {url}")
        paths = list(server.paths)
        # a second run into the same folder is recognised as the same server
        again = run_grid(grid, tmp_path, progress=False)
    assert (result.ok, again.skipped) == (2, 2)
    assert paths and all(f"api-key={URL_KEY}" in p and p.startswith("/v1/chat/completions")
                         for p in paths)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for secret in (URL_KEY, PASSWORD, ENV_KEY):
                assert secret.encode() not in data, (path, secret)
    manifest = (tmp_path / "manifest.json").read_text()
    assert f"http://[redacted]@{host}?api-key=[redacted]&api-version=2024-06-01" in manifest
    captured = capsys.readouterr()
    for secret in (URL_KEY, PASSWORD, ENV_KEY):
        assert secret not in captured.out + captured.err


def test_errors_naming_the_server_hide_url_credentials():
    from engine.llm import BackendError, RetryPolicy
    from engine.llm.openai_backend import OpenAIBackend

    with LoopbackServer(script=["500", "500"]) as server:
        host = server.base_url.split("://", 1)[1]
        backend = OpenAIBackend("m", base_url=f"http://u:{PASSWORD}@{host}?key={URL_KEY}",
                                api_key="sk-x-FAKE-123456", retry=RetryPolicy(max_attempts=2, base_delay=0))
        with pytest.raises(BackendError) as caught:
            backend.chat([{"role": "user", "content": "hi"}])
    text = str(caught.value) + repr(backend) + str(backend.describe()) + backend.identity
    assert PASSWORD not in text and URL_KEY not in text and "[redacted]" in repr(backend)


def test_manifest_is_scrubbed_as_a_whole(tmp_path):
    from engine.llm.secrets import remember_secret
    from engine.runs.run_folder import RunStore

    remember_secret("tok-registered-4242")
    with RunStore(tmp_path) as store:
        store.write_manifest({"command": "x --base-url http://a:b@h/v1", "note": "tok-registered-4242",
                              "prompt": 'say "hi" to ftp://h/x and me@example.org'})
    text = (tmp_path / "manifest.json").read_text()
    assert "tok-registered-4242" not in text and "a:b@" not in text
    assert 'say \\"hi\\" to ftp://h/x and me@example.org' in text  # no URL credential: untouched
    assert RunStore(tmp_path).read_manifest()["command"] == "x --base-url http://[redacted]@h/v1"
