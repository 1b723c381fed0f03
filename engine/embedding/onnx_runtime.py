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

A damaged export (a file cut short, emptied or overwritten with text) is found when ONNX
Runtime cannot open it, and a damaged fidelity record when it is not the JSON ``export``
writes: either is made again (exported, quantised, measured), said in one line on stderr; where
that cannot be done, the command is refused naming the file to delete.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
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


def export(model_path: str | Path, *, quantized: bool = False, again: Sequence[str] = ()) -> Path:
    """The ONNX file of the model (exported, and quantised, on first use; see the module
    docstring); its fidelity to torch measured and recorded then. ``again``: the variants
    (``"fp32"``, ``"int8"``) found damaged, made again and measured again."""
    model_path = Path(model_path)
    folder = _artifact_folder(model_path)
    fp32 = folder / "cdl-fp32.onnx"
    int8 = folder / "cdl-int8.onnx"
    for name in again:
        (folder / f"cdl-{name}.onnx").unlink(missing_ok=True)
    if not fp32.exists():
        _export_fp32(model_path, fp32)
    if quantized and not int8.exists():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        partial = int8.with_suffix(".partial.onnx")
        try:
            quantize_dynamic(str(fp32), str(partial), per_channel=True, weight_type=QuantType.QInt8)
        except Exception as error:  # noqa: BLE001  (the fp32 file it reads is damaged)
            if "fp32" in again:
                raise _damaged(fp32, error) from None
            say_damaged(fp32, error)
            return export(model_path, quantized=quantized, again=("fp32", "int8"))
        partial.replace(int8)
    fidelity_file = folder / "cdl-fidelity.json"
    recorded, problem = _read_fidelity(fidelity_file)
    if problem:
        say_damaged(fidelity_file, problem)
    recorded = {name: value for name, value in recorded.items() if name not in again}
    wanted = ["fp32"] + (["int8"] if quantized else [])
    if any(name not in recorded for name in wanted):
        recorded.update(_measure_fidelity(model_path, {n: folder / f"cdl-{n}.onnx" for n in wanted}))
        partial = fidelity_file.with_suffix(".partial")
        partial.write_text(json.dumps(recorded, indent=1))
        partial.replace(fidelity_file)
    return int8 if quantized else fp32


def _read_fidelity(path: Path) -> tuple[dict, str]:
    """The fidelity record and, when it is damaged, what is wrong with it (then ``{}``): it
    must be a JSON object of ``{variant: {"min_cosine": number, "mean_cosine": number, ...}}``."""
    if not path.exists():
        return {}, ""
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return {}, f"not readable JSON: {' '.join(str(error).split())[:120]}"
    numbers = (int, float)
    if not isinstance(recorded, dict) or not all(
            isinstance(entry, dict) and all(isinstance(entry.get(key), numbers) and not isinstance(
                entry.get(key), bool) for key in ("min_cosine", "mean_cosine"))
            for entry in recorded.values()):
        return {}, "not the record export writes ({variant: {min_cosine, mean_cosine, ...}})"
    return recorded, ""


def say_damaged(path: Path, problem) -> None:
    print(f"note: {path} was damaged ({_what(problem)}): made again", file=sys.stderr)


def _what(problem) -> str:
    text = problem if isinstance(problem, str) else f"{type(problem).__name__}: {problem}"
    return " ".join(text.split())[:160]


def _damaged(path: Path, problem):
    from engine.errors import InputError

    return InputError(f"damaged ONNX export, and making it again failed ({_what(problem)}): delete it",
                      path=str(path))


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
    """What ``export`` measured: ``{"fp32"|"int8": {"min_cosine", "mean_cosine", ...}}``
    (``{}`` when nothing readable was recorded)."""
    return _read_fidelity(_artifact_folder(Path(model_path)) / "cdl-fidelity.json")[0]


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
        try:
            self.session = ort.InferenceSession(str(self.onnx_file), options,
                                                providers=["CPUExecutionProvider"])
        except Exception as error:  # noqa: BLE001  (ONNX Runtime's InvalidProtobuf, Fail, ...)
            if onnx_file:  # a file the caller chose: not ours to replace
                raise _damaged(self.onnx_file, error) from None
            say_damaged(self.onnx_file, error)
            self.onnx_file = export(self.model_path, quantized=quantized,
                                    again=("int8",) if quantized else ("fp32",))
            try:
                self.session = ort.InferenceSession(str(self.onnx_file), options,
                                                    providers=["CPUExecutionProvider"])
            except Exception as again:  # noqa: BLE001
                raise _damaged(self.onnx_file, again) from None
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
