"""Several replicas of one model (engine.llm.replicas): calls spread with per-replica limits,
failover when a replica errors, and the CLI / grid accepting several URLs. Loopback HTTP
servers (benchmarks.loopback_server) stand in for vLLM replicas; one of them fails."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from benchmarks.loopback_server import LoopbackServer
from engine.llm import BackendError, RetryPolicy, ScriptedBackend, make_backend
from engine.llm.replicas import ReplicaBackend, split_urls

MESSAGES = [{"role": "user", "content": "Propose an idea to reduce plastic waste."}]
NO_WAIT = dict(base_delay=0.0, max_delay=0.0)


def dead_url() -> str:
    """A loopback URL where nothing listens (connection refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class Counting(ScriptedBackend):
    """A scripted replica that records the most calls it had in flight at once."""

    def __init__(self, **options):
        super().__init__(responder=lambda messages: "an idea", delay=0.02, **options)
        self.now = self.peak = 0

    async def _complete(self, messages, **options):
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            return await super()._complete(messages, **options)
        finally:
            self.now -= 1


def test_calls_spread_within_each_replicas_limit():
    replicas = [Counting(model="m", concurrency=2), Counting(model="m", concurrency=3)]
    backend = ReplicaBackend(replicas)
    assert backend.concurrency == 5

    async def many():
        return await asyncio.gather(*(backend.achat(MESSAGES) for _ in range(30)))

    results = asyncio.run(many())
    assert len(results) == 30 and backend.usage.calls == 30
    assert [r.peak for r in replicas] == [2, 3]  # each replica's limit reached, never passed
    assert sum(len(r.history) for r in replicas) == 30 and all(r.history for r in replicas)


def test_a_failing_replica_is_skipped_and_the_call_fails_over():
    with LoopbackServer() as live:
        down = dead_url()
        backend = make_backend("m", base_url=[down, live.base_url], max_attempts=1)
        assert isinstance(backend, ReplicaBackend)
        for _ in range(6):
            assert backend.chat(MESSAGES).text
        stats = {s["base_url"]: s for s in backend.replica_stats()}
    # the dead replica failed once, then sat out its cooldown; the live one took every call
    assert stats[down] == {"base_url": down, "calls": 0, "failures": 1}
    assert stats[live.base_url]["calls"] == 6 and live.requests == 6
    assert backend.usage.retries == 1 and backend.usage.calls == 6


def test_a_replica_answering_500_fails_over_then_comes_back_after_cooldown():
    clock = [0.0]
    with LoopbackServer(script=["500"]) as flaky, LoopbackServer() as steady:
        servers = [make_backend("m", base_url=url, max_attempts=1) for url in (flaky.base_url, steady.base_url)]
        backend = ReplicaBackend(servers, cooldown=10.0, clock=lambda: clock[0],
                                 retry=RetryPolicy(max_attempts=1, **NO_WAIT))
        backend._turn = -1  # the first call goes to the flaky replica
        backend.chat(MESSAGES)
        assert (flaky.requests, steady.requests) == (1, 1)  # 500, then the same call on steady
        backend.chat(MESSAGES)
        assert flaky.requests == 1  # cooling down
        clock[0] = 11.0
        for _ in range(4):
            backend.chat(MESSAGES)
        assert flaky.requests > 1  # back in rotation, and answering now
    assert [s["failures"] for s in backend.replica_stats()] == [1, 0]


def test_every_replica_down_is_a_clear_error():
    backend = make_backend("m", base_url=f"{dead_url()},{dead_url()}", max_attempts=1)
    with pytest.raises(BackendError, match=r"gave up after 2 attempts: http://127\.0\.0\.1:\d+/v1: "):
        backend.chat(MESSAGES)


def test_split_urls_and_one_model_only():
    assert split_urls(" http://a/v1, http://b/v1 ") == ["http://a/v1", "http://b/v1"]
    assert split_urls(["http://a/v1", "http://b/v1,http://c/v1"]) == ["http://a/v1", "http://b/v1", "http://c/v1"]
    assert split_urls(None) == []
    with pytest.raises(ValueError, match="one model"):
        ReplicaBackend([ScriptedBackend(model="a"), ScriptedBackend(model="b")])


def test_cli_run_spreads_a_grid_over_two_servers(tmp_path, monkeypatch):
    from engine.cli import main

    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
    with LoopbackServer() as one, LoopbackServer() as two:
        code = main(["run", "--method", "direct", "--task", "plastic_waste", "--replicates", "6",
                     "--model", "m", "--base-url", one.base_url, two.base_url,
                     "--out", str(tmp_path / "run"), "--no-progress"])
        assert code == 0
        assert one.requests + two.requests == 6 and one.requests and two.requests
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["config"]["base_url"] == [one.base_url, two.base_url]
    assert manifest["backend"]["base_url"] == [one.base_url, two.base_url]
