"""Every protocol once on the real local model (SmolLM2-135M via llama.cpp), kept small.

Marked slow: run with ``pytest -m slow``. Asserts the structure a real run must have (calls
per session, recorded turn fields, a final idea), replay from the cache, and the judge.
"""

from __future__ import annotations

import asyncio

import pytest

from engine.llm import make_backend
from engine.names import PAPER_A, PAPER_B
from engine.protocols import METHODS, expected_calls, make_config, registry, run_session

pytestmark = pytest.mark.slow

# paper B's counts are exact (section 6), and paper A's none and open have no stopping rule;
# every other method's is at most (progressive skips its final vote when the refinement
# leaves a single idea)
EXACT = {*PAPER_B, "none", "open"}


@pytest.fixture(scope="module")
def cache_path(tmp_path_factory):
    return tmp_path_factory.mktemp("llm") / "cache.sqlite"


RUNS = [(method, None) for method in METHODS] + [(method, "release") for method in PAPER_A]


@pytest.mark.parametrize("method,fidelity", RUNS)
def test_each_protocol_runs_on_the_local_model(method, fidelity, cache_path):
    backend = make_backend("local", cache=cache_path)
    options = {"fidelity": fidelity} if fidelity else {}
    small = registry.method(method).small_options  # a quick session of the method (its description)
    config = make_config(method, max_tokens=32, idea_words="20-30", **small, **options)
    c = asyncio.run(run_session(backend, "sorry_pandemic", config, conversation_id=method, seed=7))
    assert c.status == "ok", c.error
    assert c.final_idea and c.final_idea.strip()
    assert c.model == "SmolLM2-135M-Instruct.Q4_1" and c.protocol == method
    if method in EXACT:
        # a consensus judge asked again after an unreadable pick adds its extra attempts
        retries = max(c.meta.get("consensus_attempts", 1) - 1, 0)
        assert c.meta["calls"] == expected_calls(config) + retries
        assert c.meta["calls"] <= expected_calls(config, with_retries=True)
    else:
        assert c.meta["calls"] <= expected_calls(config, with_retries=True)
    for turn in c.turns:
        assert turn.text and 0 < turn.tokens <= 64  # 32 per reply, ratings get 8 per idea + 16
        assert len(turn.prompt_hash) == 16 and turn.latency_s > 0 and turn.phase
    # llama.cpp reports usage for every call; every call is a turn unless hand-raising drafts
    assert c.meta["calls_without_usage"] == 0 and c.meta["prompt_tokens"] > 0
    # ... and the replies asked again after an unreadable one, which are not turns
    if c.meta.get("replies", {}).get("reasked"):
        assert c.meta["completion_tokens"] > sum(t.tokens for t in c.turns)
    else:
        assert c.meta["completion_tokens"] == sum(t.tokens for t in c.turns)
    assert c.meta["total_tokens"] == c.meta["prompt_tokens"] + c.meta["completion_tokens"]

    replay = make_backend("local", cache=cache_path, replay=True)
    again = asyncio.run(run_session(replay, "sorry_pandemic", config, conversation_id=method, seed=7))
    assert again.final_idea == c.final_idea and replay.usage.calls == 0
    assert again.meta["total_tokens"] == c.meta["total_tokens"]  # the cache keeps the usage
    assert replay.usage.cache_hits == c.meta["calls"]


def test_judge_on_the_local_model():
    from engine.judging.judge import rate_ideas

    backend = make_backend("local")
    frame = rate_ideas(["Give everyone a free kazoo so they hum instead of saying sorry.",
                        "Teach people to say 'my apologies' instead of the dangerous word."],
                       "sorry_pandemic", backend, max_tokens=16)
    assert list(frame.columns[-6:]) == ["novelty_raw", "usefulness_raw", "irrelevant", "novelty",
                                        "usefulness", "creativity"]
    assert frame["novelty_raw"].dropna().between(0, 10).all()
