"""The OpenAI-compatible backend against a loopback HTTP server: parameters, faults, key hygiene."""

from __future__ import annotations

import json

import pytest

from benchmarks.loopback_server import LoopbackServer
from engine.llm import BackendError, RetryPolicy, make_backend
from engine.llm.openai_backend import OpenAIBackend, is_reasoning_model

MSG = [{"role": "user", "content": "Propose one idea."}]
KEY = "sk-test-DO-NOT-LEAK"  # fake


def fast_backend(server, model="gpt-4.1", **kw):
    return OpenAIBackend(model, base_url=server.base_url, api_key=KEY, timeout=kw.pop("timeout", 5.0),
                         retry=RetryPolicy(max_attempts=kw.pop("attempts", 5), base_delay=0.01,
                                           max_delay=0.02), **kw)


def test_reasoning_models_are_recognised():
    assert is_reasoning_model("o3") and is_reasoning_model("o4-mini") and is_reasoning_model("gpt-5")
    assert not is_reasoning_model("gpt-4.1") and not is_reasoning_model("llama3")


def test_parameters_sent_for_chat_and_reasoning_models():
    with LoopbackServer() as server:
        fast_backend(server).chat(MSG, temperature=0.7, max_tokens=33, seed=5)
        fast_backend(server, model="o3", reasoning_effort="high").chat(MSG, temperature=0.7,
                                                                       max_tokens=44, seed=6)
    chat, reasoning = server.bodies
    assert chat["temperature"] == 0.7 and chat["max_tokens"] == 33 and chat["seed"] == 5
    assert "temperature" not in reasoning and reasoning["max_completion_tokens"] == 44
    assert reasoning["reasoning_effort"] == "high" and "max_tokens" not in reasoning


def test_faults_are_retried_until_an_answer():
    script = ["429", "500", "empty", "malformed", "ok"]
    with LoopbackServer(script=script) as server:
        backend = fast_backend(server)
        result = backend.chat(MSG)
    assert result.text and server.requests == 5
    assert server.by_outcome == {"429": 1, "500": 1, "empty": 1, "malformed": 1, "ok": 1}
    assert backend.usage.retries == 4 and backend.usage.calls == 1


def test_timeouts_are_retried():
    with LoopbackServer(script=["timeout", "ok"], timeout_sleep=1.0) as server:
        backend = fast_backend(server, timeout=0.3)
        assert backend.chat(MSG).text
    assert server.requests == 2


def test_exhausted_retries_raise_without_the_key(tmp_path):
    with LoopbackServer(script=["500"] * 3) as server:
        backend = fast_backend(server, attempts=3)
        with pytest.raises(BackendError) as caught:
            backend.chat(MSG)
    assert "gave up after 3 attempts" in str(caught.value) and KEY not in str(caught.value)


def test_key_never_reaches_cache_repr_or_description(tmp_path):
    cache = tmp_path / "cache.sqlite"
    with LoopbackServer() as server:
        backend = make_backend("gpt-4.1", base_url=server.base_url, api_key=KEY, cache=cache)
        backend.chat(MSG, seed=1)
    for path in tmp_path.iterdir():
        assert KEY.encode() not in path.read_bytes()
    assert KEY not in repr(backend.inner) and KEY not in json.dumps(backend.describe())


def test_key_from_environment_variable(monkeypatch):
    monkeypatch.setenv("LAB_TEST_KEY", KEY)
    with LoopbackServer() as server:
        backend = make_backend("gpt-4.1", base_url=server.base_url, api_key_env="LAB_TEST_KEY")
        assert backend.chat(MSG).text


def test_azure_uses_deployment_path_and_api_version():
    seen = {}
    with LoopbackServer() as server:
        handler = server.server.RequestHandlerClass
        original = handler.do_POST

        def spy(self):
            seen["path"], seen["key"] = self.path, self.headers.get("api-key")
            return original(self)

        handler.do_POST = spy
        backend = make_backend("my-deployment", base_url=server.base_url.removesuffix("/v1"),
                               api_key=KEY, azure_api_version="2024-10-21")
        assert backend.chat(MSG).text
    assert seen["path"].startswith("/openai/deployments/my-deployment/chat/completions")
    assert "api-version=2024-10-21" in seen["path"] and seen["key"] == KEY
    assert backend.describe()["backend"] == "azure"


def test_usage_fields_reach_the_conversation_token_count():
    """The server's usage (prompt / completion tokens) is read and summed per conversation."""
    import asyncio

    from engine.protocols import make_config, run_session

    with LoopbackServer() as server:
        result = fast_backend(server).chat(MSG)
        assert result.prompt_tokens == 3  # the loopback counts words: "Propose one idea."
        assert result.completion_tokens == len(result.text.split())
        c = asyncio.run(run_session(fast_backend(server), "plastic_waste", make_config("voting", agents=2),
                                    conversation_id="v", seed=1))
    bodies = server.bodies[1:]  # the session's 3 calls: 2 answers + the consensus
    prompt = sum(len(m["content"].split()) for body in bodies for m in body["messages"])
    assert len(bodies) == 3 and c.meta["prompt_tokens"] == prompt
    assert c.meta["completion_tokens"] == sum(t.tokens for t in c.turns)
    assert c.meta["total_tokens"] == prompt + c.meta["completion_tokens"]


def test_the_openai_backend_takes_every_server_field_and_records_them():
    """The ``openai`` provider's own facts (its factory): its label, the fields it takes, and
    a record holding each of them (URL credentials redacted, the key's variable NAME)."""
    from engine.llm import Endpoint
    from engine.llm.openai_backend import OPENAI
    from engine.llm.providers import backend_fields, endpoint_record

    assert OPENAI.label == "OpenAI-compatible server"
    assert [f.name for f in backend_fields("openai")] == [
        "model", "base_url", "api_key_env", "azure_api_version", "reasoning_effort", "timeout",
        "max_attempts", "price"]
    endpoint = Endpoint(model="gpt-4.1", base_url="http://u:pw-Zq81@127.0.0.1:9/v1", api_key_env="LAB_KEY",
                        timeout=30, max_attempts=2, price=(0.5, 1.5))
    assert endpoint_record(endpoint) == {
        "provider": "openai", "model": "gpt-4.1", "base_url": "http://[redacted]@127.0.0.1:9/v1",
        "api_key_env": "LAB_KEY", "azure_api_version": None, "reasoning_effort": None, "timeout": 30.0,
        "max_attempts": 2, "price": [0.5, 1.5],
        "source": {"plugin": None, "version": None, "entry_point": None}}
