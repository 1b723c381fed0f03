"""A sentence-transformers model run by ONNX Runtime: the same vectors, faster on CPU.

The model's transformer is exported once with ``torch.onnx.export`` (offline, from the local
weights) to ``onnx/cdl-fp32.onnx`` beside the model (or, where that folder is read-only,
under ``$CDL_CACHE_DIR/onnx/``); ``quantized=True`` adds ``cdl-int8.onnx``, weights
quantised to int8 per channel by ONNX Runtime's dynamic quantisation. Tokenisation is the
model's own tokenizer (its ``max_seq_length``), pooling the model's pooling (mean or CLS
token, from ``1_Pooling/config.json``), then L2 normalisation, as sentence-transformers does.

Fidelity: at export, both files embed ``FIDELITY_SENTENCES`` and their cosine to torch's
vectors is recorded in ``onnx/cdl-fidelity.json`` (``fidelity()``); the CLI prints it for a
quantised model. The embedding cache keys each backend apart (``engine.embedding.embedder.cache_model_name``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

FIDELITY_SENTENCES = (
    "A community refill network for household cleaning products.",
    "Schools collect plastic bottles and earn points for sports equipment.",
    "Sensors in bins tell the council when to send a truck.",
    "Deposit return on every container, paid back at the supermarket.",
    "Farmers share a cold store so that less fruit is thrown away.",
    "Replace single-use cutlery at festivals with a washing service.",
    "An app that maps free water fountains across the city.",
    "Tax the packaging, not the product, and publish the numbers.",
    "Students design a board game about the journey of a plastic bag.",
    "Rewards for delivery drivers who return reusable crates.",
    "The quick brown fox jumps over the lazy dog.",
    "Gradient descent on a convex loss converges to the global minimum.",
    "Ideas that are novel but useless score low on creativity.",
    "We disagree about the budget, but agree on the goal.",
    "Let us merge the two proposals into a pilot in one district.",
    "Why would anyone pay for that?",
)


def _artifact_folder(model_path: Path) -> Path:
    beside = model_path / "onnx"
    try:
        beside.mkdir(exist_ok=True)
        probe = beside / ".write-test"
        probe.write_text("")
        probe.unlink()
        return beside
    except OSError:  # the model's folder is read-only: the user's cache instead
        root = os.environ.get("CDL_CACHE_DIR") or Path.home() / ".cache" / "creativity-dynamics-lab"
        digest = hashlib.sha256(str(model_path.resolve()).encode()).hexdigest()[:16]
        folder = Path(root) / "onnx" / digest
        folder.mkdir(parents=True, exist_ok=True)
        return folder


def _pooling(model_path: Path) -> str:
    config = model_path / "1_Pooling" / "config.json"
    if not config.exists():
        return "mean"
    values = json.loads(config.read_text())
    if values.get("pooling_mode_cls_token"):
        return "cls"
    if values.get("pooling_mode_mean_tokens", True):
        return "mean"
    raise ValueError(f"{model_path}: only mean or CLS pooling is supported by the ONNX backend")


def _max_length(model_path: Path) -> int:
    config = model_path / "sentence_bert_config.json"
    return int(json.loads(config.read_text()).get("max_seq_length", 256)) if config.exists() else 256


def _pool(hidden: np.ndarray, mask: np.ndarray, how: str) -> np.ndarray:
    if how == "cls":
        pooled = hidden[:, 0]
    else:
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def export(model_path: str | Path, *, quantized: bool = False) -> Path:
    """The ONNX file of the model (exported, and quantised, on first use; see the module
    docstring); its fidelity to torch measured and recorded then."""
    model_path = Path(model_path)
    folder = _artifact_folder(model_path)
    fp32 = folder / "cdl-fp32.onnx"
    int8 = folder / "cdl-int8.onnx"
    if not fp32.exists():
        _export_fp32(model_path, fp32)
    if quantized and not int8.exists():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        partial = int8.with_suffix(".partial.onnx")
        quantize_dynamic(str(fp32), str(partial), per_channel=True, weight_type=QuantType.QInt8)
        partial.replace(int8)
    fidelity_file = folder / "cdl-fidelity.json"
    recorded = json.loads(fidelity_file.read_text()) if fidelity_file.exists() else {}
    wanted = ["fp32"] + (["int8"] if quantized else [])
    if any(name not in recorded for name in wanted):
        recorded.update(_measure_fidelity(model_path, {n: folder / f"cdl-{n}.onnx" for n in wanted}))
        partial = fidelity_file.with_suffix(".partial")
        partial.write_text(json.dumps(recorded, indent=1))
        partial.replace(fidelity_file)
    return int8 if quantized else fp32


def _export_fp32(model_path: Path, target: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    inner = AutoModel.from_pretrained(str(model_path)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(model_path))
    sample = tokenizer(["an example sentence", "and another"], padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class ByName(torch.nn.Module):  # the inputs passed by name: forward's order varies by version
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, *tensors):
            return self.inner(**dict(zip(names, tensors))).last_hidden_state

    model = ByName().eval()
    axes = {name: {0: "batch", 1: "tokens"} for name in names}
    axes["last_hidden_state"] = {0: "batch", 1: "tokens"}
    partial = target.with_suffix(".partial.onnx")
    with torch.no_grad():
        torch.onnx.export(model, tuple(sample[n] for n in names), str(partial), input_names=names,
                          output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17,
                          dynamo=False)
    partial.replace(target)


def _measure_fidelity(model_path: Path, files: dict[str, Path]) -> dict:
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(model_path), device="cpu").encode(
        list(FIDELITY_SENTENCES), normalize_embeddings=True, convert_to_numpy=True)
    out = {}
    for name, path in files.items():
        vectors = OnnxSentenceModel(model_path, onnx_file=path).encode(list(FIDELITY_SENTENCES))
        cosines = (vectors * reference).sum(axis=1)
        out[name] = {"min_cosine": float(cosines.min()), "mean_cosine": float(cosines.mean()),
                     "sentences": len(FIDELITY_SENTENCES), "against": "sentence-transformers (torch)"}
    return out


def fidelity(model_path: str | Path) -> dict:
    """What ``export`` measured: ``{"fp32"|"int8": {"min_cosine", "mean_cosine", ...}}``."""
    path = _artifact_folder(Path(model_path)) / "cdl-fidelity.json"
    return json.loads(path.read_text()) if path.exists() else {}


class OnnxSentenceModel:
    """``encode`` as sentence-transformers' (the arguments ``engine.embedding.embedder.encode_with`` passes)."""

    def __init__(self, model_path: str | Path, *, quantized: bool = False, onnx_file: str | Path | None = None,
                 threads: int | None = None):
        import onnxruntime as ort
        from transformers import AutoTokenizer

        self.model_path = Path(model_path)
        self.onnx_file = Path(onnx_file) if onnx_file else export(self.model_path, quantized=quantized)
        self.quantized = quantized
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.model_path))
        self.max_length = _max_length(self.model_path)
        self.pooling = _pooling(self.model_path)
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = int(threads)
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(self.onnx_file), options, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]

    def encode(self, texts: Sequence[str], batch_size: int = 64, normalize_embeddings: bool = True,
               convert_to_numpy: bool = True, show_progress_bar: bool = False) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")  # less padding per batch
        out: np.ndarray | None = None
        for first in range(0, len(texts), batch_size):
            rows = order[first:first + batch_size]
            tokens = self.tokenizer([texts[i] for i in rows], padding=True, truncation=True,
                                    max_length=self.max_length, return_tensors="np")
            feed = {name: tokens[name].astype(np.int64) for name in self.inputs if name in tokens}
            hidden = self.session.run(None, feed)[0]
            vectors = _pool(hidden, tokens["attention_mask"], self.pooling)
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        return out
