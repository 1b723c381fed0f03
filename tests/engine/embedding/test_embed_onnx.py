"""The ONNX Runtime backend of the bundled MiniLM: exported offline on first use beside the
model, the same vectors as sentence-transformers (torch), an int8 variant whose recorded
fidelity is what it measures, and a cache that never mixes the backends' vectors.

The model is copied to a temporary folder so the export really happens here."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

from engine.embedding.embedder import Embedder, EmbeddingCache, resolve_model_path

pytestmark = pytest.mark.slow
SENTENCES = ["The cat sat on the mat.", "A kitten is sitting on a rug.",
             "The stock market fell sharply today.", "Investors sold shares as prices dropped.",
             "short", "A much longer sentence about schools that collect bottles for points, " * 3]


@pytest.fixture(scope="module")
def torch_vectors(model_copy):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_copy), device="cpu")
    return model, model.encode(SENTENCES, normalize_embeddings=True, convert_to_numpy=True)


def test_onnx_export_gives_torchs_vectors(model_copy, torch_vectors):
    from engine.embedding.onnx_runtime import OnnxSentenceModel

    onnx = OnnxSentenceModel(model_copy)
    assert onnx.onnx_file == model_copy / "onnx" / "cdl-fp32.onnx" and onnx.onnx_file.exists()
    vectors = onnx.encode(SENTENCES, batch_size=4)
    expected = torch_vectors[1]
    assert vectors.shape == expected.shape == (len(SENTENCES), 384)
    assert float(np.abs(vectors - expected).max()) <= 1e-5
    assert float((vectors * expected).sum(axis=1).min()) >= 0.99999


def test_int8_fidelity_recorded_is_the_cosine_measured_against_torch(model_copy, torch_vectors):
    from engine.embedding.onnx_runtime import FIDELITY_SENTENCES, OnnxSentenceModel, fidelity

    int8 = OnnxSentenceModel(model_copy, quantized=True)
    assert int8.onnx_file.name == "cdl-int8.onnx"
    reference = torch_vectors[0].encode(list(FIDELITY_SENTENCES), normalize_embeddings=True,
                                        convert_to_numpy=True)
    cosines = (int8.encode(list(FIDELITY_SENTENCES)) * reference).sum(axis=1)
    recorded = fidelity(model_copy)["int8"]
    assert recorded["min_cosine"] == pytest.approx(float(cosines.min()), abs=1e-6)
    assert recorded["mean_cosine"] == pytest.approx(float(cosines.mean()), abs=1e-6)
    assert 0.95 <= recorded["min_cosine"] < 0.99999  # close, and not the same vectors
    assert fidelity(model_copy)["fp32"]["min_cosine"] >= 0.99999


def test_the_cache_keeps_each_backends_vectors_apart(model_copy, tmp_path):
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    onnx = Embedder(str(model_copy), cache=cache, backend="onnx", progress=False)
    first = onnx.encode(SENTENCES[:2])
    assert onnx.model_calls == 1 and onnx.model_name == f"{model_copy}|onnx"
    torch = Embedder(str(model_copy), cache=cache, progress=False)
    again = torch.encode(SENTENCES[:2])
    assert torch.model_calls == 1  # the onnx vectors were not served as torch's
    assert float(np.abs(first - again).max()) <= 1e-5
    models = {m for (m,) in cache._db.execute("SELECT DISTINCT model FROM vectors")}
    assert models == {str(model_copy), f"{model_copy}|onnx"}
    int8 = Embedder(str(model_copy), cache=cache, backend="onnx-int8", progress=False)
    int8.encode(SENTENCES[:2])
    assert int8.model_calls == 1


def test_embed_with_the_int8_backend_prints_its_fidelity(model_copy, tmp_path):
    from engine.cli import main
    from engine.corpus import Conversation, Corpus, Turn

    corpus = tmp_path / "c.jsonl"
    Corpus([Conversation("c1", turns=[Turn("a", s) for s in SENTENCES])]).to_jsonl(corpus)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["embed", str(corpus), str(tmp_path / "e.npy"), "--model", str(model_copy),
                     "--embed-backend", "onnx-int8", "--cache", str(tmp_path / "cache.sqlite"),
                     "--no-progress"])
    assert code == 0, err.getvalue()
    assert "onnx-int8: cosine to torch's vectors min 0.9" in err.getvalue()
    assert np.load(tmp_path / "e.npy").shape == (len(SENTENCES), 384)
