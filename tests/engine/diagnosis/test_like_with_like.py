"""A pilot measured through an OpenAI-compatible embeddings server serving the reference's
model (route a of engine.diagnosis.diagnose) is compared like with like with the paper release:
the loopback server (real HTTP; ``benchmarks.loopback_server``) answers for the model the
release used, and the pilot's sessions are paper A's open discussion in release mode."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

from benchmarks.loopback_server import LoopbackServer
from engine.diagnosis.diagnose import diagnose, load_pilot
from engine.embedding.embedder import EmbeddingCache
from engine.embedding.openai_endpoint import OpenAIEmbedder
from engine.llm import ScriptedBackend
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.runs.runner import run_pilot
from engine.stats.reference import load_reference

RELEASE = Path(__file__).resolve().parents[4] / "shared/data/paper_release/comprehensive_trajectory_metrics.csv"
WORDS = ("refill", "deposit", "tokens", "bacteria", "enzyme", "festival", "school", "market",
         "drone", "river", "seaweed", "packaging", "app", "game", "tax", "robot", "garden")


def varied(counter):
    def reply(messages):
        i = next(counter)
        return "Idea: " + " ".join(WORDS[(i * 5 + k * 3) % len(WORDS)] for k in range(7)) + f" plan {i}."
    return reply


@pytest.fixture(scope="module")
def reference():
    if not RELEASE.exists():
        pytest.skip(f"paper release not at {RELEASE}")
    return load_reference(RELEASE)


@pytest.fixture(scope="module")
def pilot_file(tmp_path_factory):
    """Five open discussions in release mode (a scripted model), saved as a corpus file."""
    backend = ScriptedBackend(responder=varied(itertools.count()), model="scripted-model")
    corpus = run_pilot("open", "plastic_waste", 3, None, 5, backend, seed=7, turn_limit=6,
                       fidelity="release", max_tokens=64)
    path = tmp_path_factory.mktemp("pilot") / "pilot.jsonl"
    corpus.to_jsonl(path)
    return path


def test_a_pilot_embedded_through_a_server_with_the_reference_model_is_diagnosed(pilot_file, reference,
                                                                                 tmp_path):
    with LoopbackServer() as server:
        def embedder():
            return OpenAIEmbedder("Qwen/Qwen3-Embedding-0.6B", base_url=server.base_url,
                                  cache=EmbeddingCache(tmp_path / "cache.sqlite"))

        pilot = load_pilot(pilot_file, embedder)
        assert server.requests >= 1 and all(b["model"] == "Qwen/Qwen3-Embedding-0.6B" for b in server.bodies)
    assert pilot.embedding_model.endswith(":Qwen/Qwen3-Embedding-0.6B")
    result = diagnose(pilot.table, reference, pilot_embedding=pilot.embedding_model)
    assert result.same_embedding is True and result.comparable and result.diagnosed
    assert result.n_pilot == 5 and result.not_comparable == [] and result.routes == []
    assert "fidelity release" in result.implementation_note
    # the evidence by hand: mid-rank percentiles of the pilot's values among the release's open rows
    compared = reference[reference["discussion"] == "open"].dropna(subset=list(PAPER_A_FEATURES))
    row = result.evidence.set_index("feature").loc["global_coherence"]
    ranks = [scipy_stats.percentileofscore(compared.global_coherence, v, kind="mean")
             for v in pilot.table.global_coherence]
    assert row["percentile"] == pytest.approx(np.mean(ranks))
    half = scipy_stats.t.ppf(0.975, 4) * np.std(ranks, ddof=1) / np.sqrt(5)
    assert row["percentile_high"] == pytest.approx(min(100.0, np.mean(ranks) + half))

    # the same pilot measured in process with MiniLM: values side by side, nothing ranked
    minilm = diagnose(pilot.table, reference, pilot_embedding="sentence-transformers/all-MiniLM-L6-v2")
    assert not minilm.comparable and minilm.flags == [] and minilm.evidence["percentile"].isna().all()
