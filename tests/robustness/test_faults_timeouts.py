"""A request's timeout is a total deadline; Retry-After in seconds, milliseconds or as an
HTTP-date is honoured; ``engine run --timeout`` sets it."""

from __future__ import annotations

import asyncio
import calendar
import time

import pytest

from benchmarks.loopback_server import LoopbackServer
from engine.llm import BackendError, RetryPolicy
from engine.llm.openai_backend import OpenAIBackend
from engine.llm.retry import retry_after_seconds

KEY = "sk-timeout-test-0"  # fake
MESSAGES = [{"role": "user", "content": "Give one idea."}]


def test_retry_after_values_worked_out_by_hand():
    # 21 Oct 2015 07:28:00 GMT is 1445412480 s after the epoch
    moment = calendar.timegm((2015, 10, 21, 7, 28, 0))
    assert moment == 1445412480
    date = "Wed, 21 Oct 2015 07:28:00 GMT"
    assert retry_after_seconds({"Retry-After": date}, now=moment - 3.5) == 3.5
    assert retry_after_seconds({"Retry-After": date}, now=moment + 10) == 0.0  # already past
    assert retry_after_seconds({"Retry-After": "7"}) == 7.0
    assert retry_after_seconds({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({"Retry-After": "-4"}) is None
    assert retry_after_seconds({}) is None


def _backend(server, *, timeout=30.0, attempts=2, sleeps=None):
    async def record(seconds):
        sleeps.append(seconds)

    policy = RetryPolicy(max_attempts=attempts, base_delay=0.0, max_delay=0.0,
                         **({"sleep": record} if sleeps is not None else {}))
    return OpenAIBackend("loop-model", base_url=server.base_url, api_key=KEY, timeout=timeout,
                         retry=policy)


@pytest.mark.parametrize("fault, expected_low, expected_high", [
    ("429", 0.05, 0.05),        # Retry-After: 0.05 (seconds)
    ("429ms", 0.25, 0.25),      # retry-after-ms: 250
    ("429date", 1.0, 2.0),      # an HTTP-date 2 s ahead, at one-second resolution
])
def test_retry_after_from_the_server_is_the_wait(fault, expected_low, expected_high):
    sleeps: list[float] = []
    with LoopbackServer(script=[fault, "ok"], retry_after=0.25 if fault == "429ms" else 0.05,
                        retry_after_date=2.0) as server:
        result = _backend(server, sleeps=sleeps).chat(MESSAGES)
    assert result.text and len(sleeps) == 1
    assert expected_low <= sleeps[0] <= expected_high


def test_a_dripping_server_cannot_hold_a_call_past_its_deadline():
    # one byte every 0.2 s: each read arrives well within a 1 s read timeout, the whole
    # reply would take about a minute
    with LoopbackServer(script=["drip"], drip_interval=0.2) as server:
        backend = _backend(server, timeout=1.0, attempts=1)

        async def call():
            try:
                return await asyncio.wait_for(backend.achat(MESSAGES), 15)
            finally:
                await backend.aclose()

        started = time.perf_counter()
        with pytest.raises(BackendError, match="no complete reply within 1 s"):
            asyncio.run(call())
        elapsed = time.perf_counter() - started
    assert elapsed < 3.0


def test_a_hanging_server_is_abandoned_at_the_deadline_and_retried():
    with LoopbackServer(script=["hang", "ok"], timeout_sleep=5.0) as server:
        backend = _backend(server, timeout=0.5, attempts=2)
        started = time.perf_counter()
        result = backend.chat(MESSAGES)
        elapsed = time.perf_counter() - started
    assert result.text and backend.usage.retries == 1 and elapsed < 2.5


def test_cli_timeout_reaches_the_grid_and_is_checked(tmp_path, monkeypatch, capsys):
    from engine.cli import main
    import engine.runs.runner

    seen = {}

    def fake_run_grid(grid, out, **options):
        seen["timeout"] = grid.endpoint.timeout
        return {}

    monkeypatch.setattr(engine.runs.runner, "run_grid", fake_run_grid)
    assert main(["run", "--method", "direct", "--task", "plastic_waste", "--timeout", "2.5",
                 "--out", str(tmp_path), "--dry-run"]) == 0
    assert seen["timeout"] == 2.5
    grid = tmp_path / "g.yaml"
    grid.write_text("request_timeout: 30\nconditions: [{method: direct}]\n")
    assert main(["run", "--grid", str(grid), "--out", str(tmp_path), "--dry-run"]) == 0
    assert seen["timeout"] == 30
    assert main(["run", "--grid", str(grid), "--timeout", "4", "--out", str(tmp_path), "--dry-run"]) == 0
    assert seen["timeout"] == 4
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:
        main(["run", "--method", "direct", "--task", "plastic_waste", "--timeout", "0",
              "--out", str(tmp_path), "--dry-run"])
    assert refused.value.code == 2
    assert "--timeout" in capsys.readouterr().err
