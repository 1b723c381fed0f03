"""Secrets never reach a stored file, whichever way they come back.

* A server that echoes what it received (the ``Authorization`` header, the request URL with
  ``?api-key=``, and base64 encodings of them) into its replies: the key, the URL's
  ``user:pass`` and query key, raw or base64, are in no file of the run folder (corpus,
  response cache, manifest), and the replies say ``[redacted]`` where they stood.
* The dashboard's Pilot page keeps its pilots under the cache folder: the kept manifest
  holds the base URL redacted as the CLI stores it, never ``user:pass@`` or ``?api-key=``.
"""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from engine.runs.runner import run_grid

KEY = "sk-echo-SECRET-0123456789abcdef"  # fake
USER, PASSWORD = "alice", "pa55word-Zq81x"  # fake
QUERY_KEY = "QK-query-key-77aa55bb"  # fake


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class EchoServer:
    """An OpenAI-compatible server whose every reply repeats the request's credentials."""

    def __init__(self):
        self.seen: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                auth = self.headers.get("Authorization", "")
                owner.seen.append({"auth": auth, "path": self.path})
                text = (f"Idea: a deposit scheme. Debug: Authorization: {auth} | as base64 {b64(auth)} "
                        f"| url {self.path} | api-key in base64 {b64(self.path)}")
                payload = json.dumps({"id": "x", "object": "chat.completion", "created": 0,
                                      "model": body.get("model", "echo"),
                                      "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant", "content": text}}],
                                      "usage": {"prompt_tokens": 5, "completion_tokens": 20,
                                                "total_tokens": 25}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    @property
    def port(self) -> int:
        return self.server.server_address[1]


def forbidden() -> list[str]:
    """Every form a secret could be stored in: raw, and base64 of each way it was sent."""
    raw = [KEY, PASSWORD, QUERY_KEY, f"{USER}:{PASSWORD}"]
    encoded = [b64(f"{USER}:{PASSWORD}"), b64(KEY), b64(f"Bearer {KEY}"),
               b64(f"Basic {b64(USER + ':' + PASSWORD)}")]
    return raw + [e.rstrip("=")[4:-4] for e in encoded]  # the middle of each base64 text


@pytest.mark.parametrize("credentials", ["url", "bearer"])
def test_an_echoing_server_gets_no_secret_into_corpus_cache_or_manifest(tmp_path, monkeypatch, credentials):
    """``url``: user:pass@ in the URL (sent as Basic base64(user:pass)) and ?api-key=;
    ``bearer``: the key from $OPENAI_API_KEY, sent as ``Bearer KEY``."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with EchoServer() as server:
        url = (f"http://{USER}:{PASSWORD}@127.0.0.1:{server.port}/v1?api-key={QUERY_KEY}"
               if credentials == "url" else f"http://127.0.0.1:{server.port}/v1")
        grid = {"name": "echo", "model": "echo-model", "base_url": url, "seed": 0, "concurrency": 2,
                "tasks": ["plastic_waste"], "conditions": [{"method": "direct", "replicates": 3}]}
        result = run_grid(grid, tmp_path / "run", progress=False)
    assert (result.ok, result.failed) == (3, 0)
    # the server did receive the credentials, and echoed them
    sent = " ".join(s["auth"] + s["path"] for s in server.seen)
    wanted = ([b64(f"{USER}:{PASSWORD}"), QUERY_KEY] if credentials == "url" else [f"Bearer {KEY}"])
    assert all(w in sent for w in wanted), sent
    stored = {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir() if p.is_file()}
    assert {"corpus.jsonl", "llm_cache.sqlite", "manifest.json"} <= set(stored)
    for name, data in stored.items():
        for secret in forbidden():
            assert secret.encode() not in data, f"{secret!r} stored in {name}"
    ideas = [json.loads(line)["final_idea"] for line in stored["corpus.jsonl"].splitlines()[1:]]
    assert len(ideas) == 3
    assert all(idea.startswith("Idea: a deposit scheme.") and "[redacted]" in idea for idea in ideas)


def test_base64_forms_are_found_at_every_alignment():
    """base64(prefix + secret + suffix) holds one of the registered forms whatever the
    prefix and suffix (worked through for prefixes of 0..5 bytes)."""
    from engine.llm.secrets import base64_forms, remember_secret, scrub

    secret = f"{USER}:{PASSWORD}"
    remember_secret(secret)
    forms = base64_forms(secret)
    for prefix in ("", "a", "ab", "abc", "Basic", "x:y:z"):
        for suffix in ("", "1", "12"):
            encoded = base64.b64encode(f"{prefix}{secret}{suffix}".encode()).decode()
            assert any(form in encoded for form in forms), (prefix, suffix)
            assert secret not in scrub(f"header {encoded} end") and "[redacted]" in scrub(encoded)
    assert base64_forms("abc") == set()  # too short to tell from ordinary text


# -- the dashboard's Pilot page --------------------------------------------------------------------
def test_the_pilot_page_keeps_the_base_url_redacted_under_the_cache_folder(runs_root, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from engine.llm import BackendError, ScriptedBackend
    from tests.dashboard.test_dashboard_pilot import APP, patch_backend

    def down(messages):
        raise BackendError("connection refused")

    patch_backend(monkeypatch, ScriptedBackend(responder=down, model="test-model"))
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/pilot.py").run()
    at.radio(key="pilot_backend").set_value("openai").run()
    at.text_input(key="pilot_base_url").input(f"http://{USER}:{PASSWORD}@127.0.0.1:9/v1?api-key={QUERY_KEY}")
    at.text_input(key="pilot_model").input("test-model")
    at.text_input(key="pilot_api_key").input(KEY)
    at.number_input(key="pilot_replicates").set_value(1)
    at.number_input(key="pilot_turn_limit").set_value(2)
    at.run()
    at.button(key="pilot_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    from dashboard.pilot import history

    kept = history.listing()
    assert len(kept) == 1
    folder = Path(kept.loc[0, "path"])
    assert str(folder).startswith(str(history.history_root()))
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["settings"]["base_url"] == "http://[redacted]@127.0.0.1:9/v1?api-key=[redacted]"
    for path in folder.iterdir():
        data = path.read_bytes()
        for secret in forbidden():
            assert secret.encode() not in data, f"{secret!r} stored in {path.name}"


@pytest.fixture
def runs_root(cached_runs_of):
    return cached_runs_of("paper_release")
