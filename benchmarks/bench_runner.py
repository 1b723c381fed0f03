"""Runner concurrency and resume, against a loopback OpenAI-compatible server.

Every call waits a fixed server-side DELAY. Measured in this run:
1. one 5-agent, 2-round homo_mad session: 16 calls, critical path 4 calls (3 rounds of
   concurrent calls + the judge), so it should take ~4 x DELAY, not 16 x DELAY;
2. 32 such sessions with concurrency 64: should finish within 2x one session's time;
3. calls made one after another (the sequential reference; SEQUENTIAL_SAMPLE calls timed,
   per-call time x 512): the grid should be >= 10x faster;
4. re-running the finished grid: the number of calls it makes (should be 0).
The server runs in a child process so it does not compete with the client for the GIL.
Run: python -m benchmarks.bench_runner
"""

from __future__ import annotations

import asyncio
import tempfile
import time

from benchmarks.loopback_server import LoopbackProcess
from engine.llm import RetryPolicy
from engine.llm.openai_backend import OpenAIBackend
from engine.protocols import make_config, run_session
from engine.runs.runner import run_grid

DELAY = 0.5  # seconds per call: a fast hosted-model reply; client overhead is ~2 ms per call
SESSIONS = 32
SEQUENTIAL_SAMPLE = 32


def backend_for(server, concurrency=512):
    return OpenAIBackend("loop-model", base_url=server.base_url, api_key="unused",
                         concurrency=concurrency, retry=RetryPolicy(base_delay=0.01, max_delay=0.05))


def grid(n):
    return {"name": "bench", "model": "loop-model", "concurrency": 64, "tasks": ["plastic_waste"],
            "conditions": [{"method": "homo_mad", "agents": 5, "rounds": 2, "replicates": n,
                            "max_tokens": 64}]}


def main() -> None:
    config = make_config("homo_mad", agents=5, rounds=2, max_tokens=64)
    with LoopbackProcess(delay=DELAY) as server:
        backend = backend_for(server)
        asyncio.run(run_session(backend, "plastic_waste", config, conversation_id="warmup"))
        started = time.perf_counter()
        conversation = asyncio.run(run_session(backend, "plastic_waste", config,
                                               conversation_id="one", seed=1))
        one = time.perf_counter() - started
        assert conversation.status == "ok", conversation.error

        with tempfile.TemporaryDirectory() as out:
            before = server.requests
            started = time.perf_counter()
            result = run_grid(grid(SESSIONS), out, backend=backend_for(server), progress=False, cache=False)
            many = time.perf_counter() - started
            grid_calls = server.requests - before
            assert result.ok == SESSIONS, result

            before = server.requests
            rerun = run_grid(grid(SESSIONS), out, backend=backend_for(server), progress=False, cache=False)
            rerun_calls = server.requests - before

        sequential_backend = backend_for(server, concurrency=1)
        messages = [{"role": "user", "content": "Give your answer to the task: one creative idea."}]

        async def one_after_another(n):
            for i in range(n):
                await sequential_backend.achat(messages, max_tokens=64, seed=i)

        started = time.perf_counter()
        asyncio.run(one_after_another(SEQUENTIAL_SAMPLE))
        per_call = (time.perf_counter() - started) / SEQUENTIAL_SAMPLE
        sequential = per_call * grid_calls

    print(f"server delay per call: {DELAY * 1000:.0f} ms")
    print(f"one homo_mad session (N=5, R=2, 16 calls): {one:.3f} s = {one / DELAY:.1f} call latencies "
          f"(critical path 4, sequential 16); {16 * DELAY / one:.1f}x faster than its calls in series")
    print(f"{SESSIONS} sessions, concurrency 64 ({grid_calls} calls): {many:.3f} s = "
          f"{many / one:.2f}x one measured session, {many / (4 * DELAY):.2f}x the 4-call critical "
          f"path (target <= 2x)")
    print(f"calls one after another: {per_call * 1000:.0f} ms each ({SEQUENTIAL_SAMPLE} timed), so "
          f"{grid_calls} calls take {sequential:.1f} s; the grid is {sequential / many:.1f}x faster "
          f"(target >= 10x)")
    print(f"re-run of the finished grid: {rerun_calls} calls, {rerun.skipped} sessions skipped "
          f"(target 0 calls)")


if __name__ == "__main__":
    main()
