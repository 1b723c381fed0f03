"""A damaged ONNX export or fidelity record (cut short, emptied, overwritten with text) is
made again, said in one line, and the vectors are torch's again; before, only the files'
existence was checked and every later run ended in ONNX Runtime's traceback until the file
was deleted by hand. The bundled MiniLM is copied to a temporary folder so the export (and
the damage) happens there."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest


pytestmark = pytest.mark.slow
SENTENCES = ["The cat sat on the mat.", "The stock market fell sharply today.", "short"]


@pytest.fixture(scope="module")
def torch_vectors(model_copy):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model_copy), device="cpu").encode(
        SENTENCES, normalize_embeddings=True, convert_to_numpy=True)


def damage(path: Path, how: str) -> None:
    if how == "cut":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
    elif how == "empty":
        path.write_bytes(b"")
    else:
        path.write_text("this is not a model\n")


def load(model_copy: Path, **options):
    from engine.embedding.onnx_runtime import OnnxSentenceModel

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        model = OnnxSentenceModel(model_copy, **options)
    return model, err.getvalue()


@pytest.mark.parametrize("how", ["cut", "empty", "text"])
def test_a_damaged_fp32_export_is_exported_again_and_said(model_copy, torch_vectors, how):
    first, _ = load(model_copy)  # exported on first use
    damage(first.onnx_file, how)
    model, err = load(model_copy)
    notes = [line for line in err.splitlines() if line.startswith(("note:", "error:"))]
    assert "Traceback" not in err and len(notes) == 1 and notes[0].startswith("note: ") and str(first.onnx_file) in notes[0], err
    assert "damaged" in notes[0] and "made again" in notes[0]
    assert float(np.abs(model.encode(SENTENCES) - torch_vectors).max()) <= 1e-5
    _, err = load(model_copy)  # and the next run says nothing: the file is whole again
    assert "note:" not in err


@pytest.mark.parametrize("content", ["", "{\"fp32\": {\"min_cos", "[1, 2]", "{\"fp32\": {\"min_cosine\": \"x\"}}"])
def test_a_damaged_fidelity_record_is_measured_again(model_copy, content):
    from engine.embedding.onnx_runtime import fidelity

    load(model_copy)
    record = model_copy / "onnx" / "cdl-fidelity.json"
    good = json.loads(record.read_text())
    record.write_text(content)
    assert fidelity(model_copy) == {}  # read as nothing recorded, not a traceback
    _, err = load(model_copy)
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and str(record) in notes[0] and "made again" in notes[0], err
    again = fidelity(model_copy)
    assert again["fp32"]["sentences"] == good["fp32"]["sentences"] == 16
    assert again["fp32"]["min_cosine"] == pytest.approx(good["fp32"]["min_cosine"], abs=1e-6)


def test_a_damaged_int8_file_is_quantised_again_and_a_damaged_fp32_beneath_it_too(model_copy, torch_vectors):
    int8, _ = load(model_copy, quantized=True)
    fp32 = model_copy / "onnx" / "cdl-fp32.onnx"
    damage(int8.onnx_file, "text")
    damage(fp32, "cut")  # quantising again reads the fp32 file: it is made again first
    model, err = load(model_copy, quantized=True)
    assert str(int8.onnx_file) in err and str(fp32) in err, err
    cosines = (model.encode(SENTENCES) * torch_vectors).sum(axis=1)
    assert 0.95 <= float(cosines.min()) < 0.99999  # int8: close to torch, not the same


def test_a_damaged_file_the_caller_named_is_refused_naming_it(model_copy, tmp_path):
    from engine.embedding.onnx_runtime import OnnxSentenceModel
    from engine.errors import InputError

    named = tmp_path / "mine.onnx"
    named.write_text("not a model")
    with pytest.raises(InputError) as refused:
        OnnxSentenceModel(model_copy, onnx_file=named)
    assert str(named) in str(refused.value) and "delete it" in str(refused.value)
    assert named.read_text() == "not a model"  # not ours: left as it was
