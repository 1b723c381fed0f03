"""The engine against a real OpenAI-compatible server: llama-cpp-python's server
(``tests/support/llama_server.py``) serving SmolLM2-135M, reached through the openai backend
exactly as a vLLM, Ollama or llama.cpp user would (``--base-url``). Slow: real model."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tests.support.llama_server import llama_server  # noqa: F401  (the session fixture)

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]


def test_homo_mad_session_runs_and_resumes(llama_server, tmp_path, monkeypatch):  # noqa: F811
    from engine.cli import main

    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    argv = ["run", "--method", "homo_mad", "--task", "plastic_waste", "--agents", "2", "--rounds", "1",
            "--model", llama_server.model, "--base-url", llama_server.base_url, "--max-tokens", "32",
            "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    records = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    sessions = [r for r in records if r.get("conversation_id")]
    assert len(sessions) == 1 and sessions[0]["status"] == "ok"
    manifest = json.loads((out / "manifest.json").read_text())
    # paper B, Homo-MAD: N first answers, N answers per debate round, one aggregation
    usage = manifest["usage_total"]
    # (plus the consensus judge's extra attempts when its pick was unreadable)
    attempts = sessions[0]["meta"]["consensus_attempts"]
    assert 1 <= attempts <= 3 and usage["calls"] == 2 * (1 + 1) + attempts
    assert 0 < usage["completion_tokens"] <= 5 * 32  # the server's own counts, capped per call
    assert manifest["backend"]["base_url"] == llama_server.base_url
    assert main(argv) == 0  # resumes: the finished session is not run again
    again = json.loads((out / "manifest.json").read_text())
    assert again["usage_total"]["calls"] == usage["calls"]


def test_judge_rates_ideas_through_the_server(llama_server):  # noqa: F811
    from engine.judging.judge import rate_ideas
    from engine.llm import make_backend

    backend = make_backend(llama_server.model, base_url=llama_server.base_url, max_attempts=2)
    frame = rate_ideas(["Give everyone a free kazoo so they hum instead of saying sorry.",
                        "Teach people to say 'my apologies' instead of the dangerous word."],
                       "sorry_pandemic", backend, max_tokens=16)
    assert list(frame.columns[-6:]) == ["novelty_raw", "usefulness_raw", "irrelevant", "novelty",
                                        "usefulness", "creativity"]
    assert len(frame) == 2 and frame["novelty_raw"].dropna().between(0, 10).all()
    assert backend.usage.calls >= 2 and backend.usage.prompt_tokens > 0


def test_embeddings_api_pools_and_caches(llama_server, tmp_path):  # noqa: F811
    from engine.embedding.embedder import EmbeddingCache
    from engine.embedding.openai_endpoint import OpenAIEmbedder

    texts = ["a refill network for shampoo", "deposit tokens for bottles", "a refill network for shampoo"]
    embedder = OpenAIEmbedder(llama_server.model, base_url=llama_server.base_url, batch_size=1,
                              concurrency=2, cache=EmbeddingCache(tmp_path / "cache.sqlite"))
    vectors = embedder.encode(texts)
    # independently: the server's raw answer for the first text, one vector per token here
    raw = np.array(llama_server.post("/embeddings", {"model": llama_server.model,
                                                     "input": [texts[0]]})["data"][0]["embedding"])
    pooled = raw.mean(axis=0) if raw.ndim == 2 else raw
    np.testing.assert_allclose(vectors[0], pooled / np.linalg.norm(pooled), atol=1e-5)
    assert vectors.shape == (3, len(pooled)) and np.array_equal(vectors[0], vectors[2])
    assert embedder.model_calls == 2  # two distinct texts, one per request
    assert embedder.token_level == (2 if raw.ndim == 2 else 0)
    embedder.encode(texts)
    assert embedder.model_calls == 2  # all cached


@pytest.mark.skipif(not (REPO / "cached_runs" / "paper_release" / "manifest.json").exists(),
                    reason="paper release not built")
def test_pilot_page_runs_against_the_server(llama_server, runs_root):  # noqa: F811
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "dashboard" / "app.py"), default_timeout=600)
    at.run()
    at.switch_page("views/pilot.py").run()
    at.radio(key="pilot_backend").set_value("openai").run()
    at.text_input(key="pilot_base_url").input(llama_server.base_url)
    at.text_input(key="pilot_model").input(llama_server.model)
    at.selectbox(key="pilot_method").set_value("homo_mad").run()
    at.number_input(key="pilot_agents").set_value(2)
    at.number_input(key="pilot_rounds").set_value(0)  # 2 first answers + the aggregation
    at.number_input(key="pilot_replicates").set_value(1)
    at.run()
    at.button(key="pilot_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "global_coherence" in d.value.columns)
    assert len(table) == 1 and table["status"].eq("ok").all()
    assert table["n_turns"].iloc[0] > 0 and not math.isnan(table["global_coherence"].iloc[0])
