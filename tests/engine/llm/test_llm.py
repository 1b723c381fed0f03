"""engine.llm: scripted fake, retries/backoff, concurrency bound, cache keys, replay, secrets."""

from __future__ import annotations

import asyncio
import random

import pytest

from engine.errors import InputError
from engine.llm import (Backend, BackendError, CacheMiss, CachedBackend, ChatResult, RetryPolicy,
                        RetryableError, ScriptedBackend, make_backend, prompt_hash)
from engine.llm.secrets import remember_secret, scrub

MSG = [{"role": "user", "content": "hello"}]


def recording_policy(max_attempts=4, **kw):
    waits = []

    async def sleep(seconds):
        waits.append(seconds)

    return RetryPolicy(max_attempts=max_attempts, sleep=sleep, rng=random.Random(0), **kw), waits


def test_scripted_backend_answers_in_order_and_records_history():
    backend = ScriptedBackend(["first", "second words here"])
    assert backend.chat(MSG, seed=3).text == "first"
    result = backend.chat(MSG, temperature=0.5, max_tokens=7)
    assert result.text == "second words here"
    assert result.completion_tokens == 3  # word count, computed by hand
    assert [h["seed"] for h in backend.history] == [3, None]
    assert backend.history[1]["temperature"] == 0.5 and backend.history[1]["max_tokens"] == 7
    with pytest.raises(BackendError, match="no reply left"):
        backend.chat(MSG)


def test_retry_then_success_waits_backoff_and_honours_retry_after():
    policy, waits = recording_policy(base_delay=1.0, max_delay=100)
    backend = ScriptedBackend([RetryableError("HTTP 500"), RetryableError("HTTP 429", retry_after=7.0),
                               RetryableError("timeout"), "ok"], retry=policy)
    assert backend.chat(MSG).text == "ok"
    assert len(backend.history) == 4
    # attempt 1: ceiling 1.0 -> wait in [0.5, 1.0]; attempt 2: Retry-After 7 exactly;
    # attempt 3: ceiling 4.0 -> wait in [2.0, 4.0]
    assert 0.5 <= waits[0] <= 1.0
    assert waits[1] == 7.0
    assert 2.0 <= waits[2] <= 4.0
    assert backend.usage.retries == 3 and backend.usage.calls == 1


def test_backoff_is_capped_and_gives_up_after_max_attempts():
    policy, waits = recording_policy(max_attempts=3, base_delay=10.0, max_delay=12.0)
    backend = ScriptedBackend([RetryableError("HTTP 503")] * 3, retry=policy)
    with pytest.raises(BackendError, match="gave up after 3 attempts: HTTP 503"):
        backend.chat(MSG)
    assert len(waits) == 2 and all(6.0 <= w <= 12.0 for w in waits)
    assert backend.usage.failures == 1


def test_non_retryable_error_fails_at_once():
    policy, waits = recording_policy()
    backend = ScriptedBackend([BackendError("HTTP 401: bad key"), "never"], retry=policy)
    with pytest.raises(BackendError, match="401"):
        backend.chat(MSG)
    assert waits == [] and len(backend.history) == 1


def test_concurrency_is_bounded():
    class Slow(Backend):
        kind = "slow"

        def __init__(self):
            super().__init__(model="slow", concurrency=2)
            self.active = self.peak = 0

        async def _complete(self, messages, *, temperature, max_tokens, seed):
            self.active += 1
            self.peak = max(self.peak, self.active)
            await asyncio.sleep(0.01)
            self.active -= 1
            return ChatResult(text="x")

    backend = Slow()

    async def main():
        await asyncio.gather(*(backend.achat(MSG) for _ in range(7)))

    asyncio.run(main())
    assert backend.peak == 2 and backend.usage.calls == 7


def test_bad_messages_are_rejected():
    backend = ScriptedBackend(["x"])
    with pytest.raises(ValueError, match="unknown role"):
        backend.chat([{"role": "robot", "content": "hi"}])
    with pytest.raises(ValueError, match="non-empty"):
        backend.chat([])


def test_cache_keys_on_seed_and_replicate_and_replays(tmp_path):
    inner = ScriptedBackend(["a", "b", "c", "d"])
    cached = CachedBackend(inner, tmp_path / "c.sqlite")
    assert cached.chat(MSG, seed=1, replicate=0).text == "a"
    assert cached.chat(MSG, seed=1, replicate=0).text == "a"      # hit: no new call
    assert cached.chat(MSG, seed=1, replicate=1).text == "b"      # another replicate: new call
    assert cached.chat(MSG, seed=2, replicate=0).text == "c"      # another seed: new call
    assert cached.chat(MSG, seed=1, replicate=0, temperature=0.2).text == "d"
    assert len(inner.history) == 4 and inner.usage.cache_hits == 1
    replay = CachedBackend(ScriptedBackend([]), tmp_path / "c.sqlite", replay=True)
    assert replay.chat(MSG, seed=2, replicate=0).text == "c"
    with pytest.raises(CacheMiss, match="replay mode"):
        replay.chat(MSG, seed=99, replicate=0)


def test_cache_is_safe_under_concurrent_writers(tmp_path):
    inner = ScriptedBackend(responder=lambda m: m[-1]["content"].upper(), delay=0.001)
    cached = CachedBackend(inner, tmp_path / "c.sqlite")

    async def main():
        return await asyncio.gather(*(cached.achat([{"role": "user", "content": f"q{i}"}], seed=i)
                                      for i in range(40)))

    results = asyncio.run(main())
    assert [r.text for r in results] == [f"Q{i}" for i in range(40)]
    assert len(cached.cache) == 40


def test_prompt_hash_is_stable_and_order_sensitive():
    a = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert prompt_hash(a) == prompt_hash([dict(m) for m in a])
    assert prompt_hash(a) != prompt_hash(a[::-1])
    assert len(prompt_hash(a)) == 16


def test_scrub_removes_registered_and_key_shaped_secrets():
    remember_secret("my-very-private-token-123")
    text = scrub("failed with my-very-private-token-123 and sk-abcdefghijklmnop and Bearer xyz12345678")
    assert "private-token" not in text and "sk-abc" not in text and "xyz12345678" not in text
    assert text.count("[redacted]") == 3


def test_make_backend_errors_name_the_problem(monkeypatch):
    monkeypatch.delenv("MY_KEY_VAR", raising=False)
    with pytest.raises(InputError, match="MY_KEY_VAR"):
        make_backend("gpt-4.1", api_key_env="MY_KEY_VAR")
    with pytest.raises(InputError, match="replay"):
        make_backend("gpt-4.1", api_key="k" * 10, replay=True)
    with pytest.raises(InputError, match="not found"):
        make_backend("/nonexistent/model.gguf")
