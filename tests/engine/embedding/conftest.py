"""Fixtures of the embedding tests."""

import shutil
from pathlib import Path

import pytest

from engine.embedding.embedder import resolve_model_path


@pytest.fixture(scope="module")
def model_copy(tmp_path_factory) -> Path:
    """The bundled all-MiniLM-L6-v2 copied without its ONNX export, one copy per test module
    (the ONNX tests write and damage exports beside it)."""
    target = tmp_path_factory.mktemp("model") / "minilm"
    shutil.copytree(resolve_model_path("default"), target, ignore=shutil.ignore_patterns("onnx"))
    return target
