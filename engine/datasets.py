"""A dataset on disk: what the dashboard, CLI and exports open.

A dataset is a folder with
* ``manifest.json``: name, description, how it was made (command, configuration, model,
  package versions, seeds), source and licence; never an API key;
* ``conversations.parquet``: one row per conversation: ``conversation_id, source, task,
  model, discussion (paper-A structure or paper-B method), persona, team_size, order,
  replicate, n_turns``, the nine Table 19 features, and outcome columns when present
  (``novelty, usefulness, creativity, final_idea, ...``);
* optionally ``corpus.parquet`` (the full Corpus with turns, see ``engine.corpus``) and
  ``turn_embeddings.npy`` with ``turn_index.parquet`` (``conversation_id, turn``) naming
  its rows, so projections need no model call.
Every file is written to a temporary name and renamed into place, the manifest last: it records
the SHA-256 of the table, corpus and embedding files (``files_sha256``) and ``Dataset.load``
refuses a folder whose files are not those (``check_whole``: a save cut short, files of two
builds mixed), naming the file; a manifest written before digests were recorded (none) is
read as before. Reading gives the table every registered feature it lacks, computed from the
stored turn embeddings and cached (``engine.measures.at_read``): the manifest read says where
each such column comes from (``features_at_read``) and ``Dataset.not_computed`` names those it
could not compute, with the reason. ``dataset_from_corpus``
builds one from a Corpus (pilot runs, uploads, the cached local runs): turns embedded through
the cache, the nine features computed on the discussion turns.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.corpus import Corpus, atomic_write_bytes, atomic_write_text, is_trajectory_turn
from engine.embedding.embedder import embed_corpus, read_embeddings, write_embeddings
from engine.errors import InputError
from engine.measures.at_read import features_at_read
from engine.measures.compute import features_for_corpus, needed_fields
from engine.measures.registry import feature_sources, features
from engine.protocols.implementation import implementation_of_table
from engine.llm.secrets import scrub

MANIFEST = "manifest.json"
CONVERSATIONS = "conversations.parquet"
CORPUS = "corpus.parquet"
EMBEDDINGS = "turn_embeddings.npy"
EMBEDDING_INDEX = "turn_index.parquet"


@dataclass
class Dataset:
    """Conversation table (+ optional corpus and turn embeddings) with its manifest."""

    name: str
    conversations: pd.DataFrame
    manifest: dict[str, Any] = field(default_factory=dict)
    corpus: Corpus | None = None
    turn_embeddings: np.ndarray | None = None
    turn_index: pd.DataFrame | None = None
    path: Path | None = None
    not_computed: dict[str, str] = field(default_factory=dict)  # registered features it lacks: why

    def not_computed_note(self) -> str | None:
        """What a page says of the registered features this dataset has no column for."""
        if not self.not_computed:
            return None
        reasons: dict[str, list[str]] = {}
        for name, reason in self.not_computed.items():
            reasons.setdefault(reason, []).append(name)
        return " ".join(f"Not computed for this dataset: {', '.join(names)}: {reason}."
                        for reason, names in reasons.items())

    def __post_init__(self) -> None:
        # how the features were measured and the conversations made travel with the table
        # (engine.diagnosis.diagnose reads them; engine.protocols.implementation)
        for key in ("embedding_model", "implementation", "generator", "prompts_revision"):
            if self.manifest.get(key) is not None and key not in self.conversations.attrs:
                self.conversations.attrs[key] = self.manifest[key]

    def embeddings_for(self, conversation_id: str) -> np.ndarray | None:
        """The (n_turns, dim) turn embeddings of one conversation, in turn order."""
        if self.turn_embeddings is None or self.turn_index is None:
            return None
        rows = self.turn_index.index[self.turn_index["conversation_id"] == conversation_id]
        order = self.turn_index.loc[rows, "turn"].to_numpy().argsort()
        return self.turn_embeddings[rows.to_numpy()[order]]

    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        write_parquet(self.conversations, folder / CONVERSATIONS)
        if self.corpus is not None:
            self.corpus.to_parquet(folder / CORPUS)
        if self.turn_embeddings is not None:
            if self.turn_index is None or len(self.turn_index) != len(self.turn_embeddings):
                raise ValueError("turn_index must name every row of turn_embeddings")
            write_embeddings(self.turn_embeddings, self.turn_index, folder / EMBEDDINGS,
                             folder / EMBEDDING_INDEX)
        written = [name for name in WHOLE if (folder / name).exists()
                   and (name != CORPUS or self.corpus is not None)
                   and (name not in (EMBEDDINGS, EMBEDDING_INDEX) or self.turn_embeddings is not None)]
        self.manifest = dict(self.manifest, name=self.name, files_sha256=file_digests(folder, written))
        write_manifest(folder, self.manifest)  # last: it names the files that belong with it
        self.path = folder
        return folder

    @classmethod
    def load(cls, folder: str | Path, *, with_corpus: bool = True, computed_at_read: bool = True) -> "Dataset":
        """The dataset at ``folder``, checked whole; with ``computed_at_read`` the registered
        features its table lacks are added (see the module); otherwise the table as stored."""
        folder = Path(folder)
        manifest_path = folder / MANIFEST
        if not manifest_path.exists():
            raise InputError("no manifest.json: not a dataset folder", path=str(folder))
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise InputError(f"manifest is not valid JSON ({error})", path=str(manifest_path)) from None
        if not (folder / CONVERSATIONS).exists():
            raise InputError(f"no {CONVERSATIONS}: not a complete dataset folder", path=str(folder))
        check_whole(folder, manifest, with_corpus=with_corpus)
        try:
            conversations = pd.read_parquet(folder / CONVERSATIONS)
        except Exception as error:  # pyarrow raises several types for a broken file
            raise InputError(f"not a readable Parquet file ({type(error).__name__})",
                             path=str(folder / CONVERSATIONS)) from None
        corpus = Corpus.from_parquet(folder / CORPUS) if with_corpus and (folder / CORPUS).exists() else None
        embeddings = index = None
        if (folder / EMBEDDINGS).exists():  # a pair whose recorded hash differs is refused
            embeddings, index, _verified = read_embeddings(folder / EMBEDDINGS,
                                                           folder / EMBEDDING_INDEX)
        not_computed = {}
        if computed_at_read:
            added = features_at_read(conversations, embeddings, index,
                                     lambda: corpus if corpus is not None else read_corpus(folder),
                                     build_of(folder, manifest))
            for name in added.values.columns:
                conversations[name] = added.values[name].to_numpy()
            if added.provenance:
                manifest["features_at_read"] = added.provenance
                plugins = {**manifest.get("feature_plugins", {}), **feature_sources(added.provenance)}
                if plugins:
                    manifest["feature_plugins"] = plugins
            not_computed = added.not_computed
        return cls(name=manifest.get("name", folder.name), conversations=conversations,
                   manifest=manifest, corpus=corpus, turn_embeddings=embeddings,
                   turn_index=index, path=folder, not_computed=not_computed)


def read_corpus(folder: Path) -> Corpus | None:
    """The dataset's corpus, or None when it stores none."""
    return Corpus.from_parquet(folder / CORPUS) if (folder / CORPUS).exists() else None


def build_of(folder: Path, manifest: dict) -> str:
    """What identifies a dataset's build: the SHA-256 of its files (the manifest's, checked by
    ``check_whole``, or computed when it records none)."""
    recorded = manifest.get(DIGESTS)
    if not isinstance(recorded, dict):
        recorded = file_digests(folder, [n for n in WHOLE if (folder / n).exists()])
    return json.dumps(recorded, sort_keys=True)


# -- one dataset, not a mix of two ----------------------------------------------------------
WHOLE = (CONVERSATIONS, CORPUS, EMBEDDINGS, EMBEDDING_INDEX)  # the files the manifest vouches for
DIGESTS = "files_sha256"


def file_digests(folder: Path, names) -> dict[str, str]:
    """``{file name: SHA-256}`` of the named files of ``folder``."""
    import hashlib

    digests = {}
    for name in names:
        digest = hashlib.sha256()
        with open(Path(folder) / name, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digests[name] = digest.hexdigest()
    return digests


def check_whole(folder: Path, manifest: dict, *, with_corpus: bool = True) -> None:
    """Refuse a folder whose files are not those its manifest was written with: each file the
    manifest's ``files_sha256`` names must be there with that digest, and no other of
    ``WHOLE`` may be present (a build killed midway, or files copied in from another
    dataset). A manifest written before digests were recorded has none: nothing to check."""
    recorded = manifest.get(DIGESTS)
    if recorded is None:
        return
    if not isinstance(recorded, dict):
        raise InputError(f"{DIGESTS} is not an object of file names", path=str(folder / MANIFEST),
                         field=DIGESTS)
    names = [n for n in WHOLE if with_corpus or n != CORPUS]
    for name in names:
        present = (folder / name).exists()
        if name not in recorded:
            if present:
                raise InputError(f"does not belong with {MANIFEST} (the manifest names no {name}: "
                                 f"a file of another build?)", path=str(folder / name))
            continue
        if not present:
            raise InputError(f"missing: {MANIFEST} names it (a build cut short?)", path=str(folder / name))
        if file_digests(folder, [name])[name] != recorded[name]:
            raise InputError(f"does not belong with {MANIFEST} (its SHA-256 differs from the one "
                             f"the manifest records: files of two builds mixed?)", path=str(folder / name))


# -- building a dataset from a corpus ---------------------------------------------------------
def conversation_table(corpus: Corpus, embeddings: dict[str, np.ndarray] | None) -> pd.DataFrame:
    """One row per conversation: design factors (``protocol`` named ``discussion`` as in the
    dataset format), ``n_turns``, outcomes, and, when embeddings are given, every registered
    feature (``engine.measures.registry``: paper A's nine first; the speakers of the turns are
    the corpus's)."""
    table = corpus.conversations_frame()
    if "protocol" in table.columns and "discussion" not in table.columns:
        table = table.rename(columns={"protocol": "discussion"})
    if embeddings is not None and len(table):
        arrays = [embeddings[cid] for cid in table["conversation_id"]]
        dim = next((a.shape[1] for a in arrays if a.ndim == 2 and a.shape[0]), 1)
        arrays = [a if a.ndim == 2 and a.shape[0] else np.zeros((0, dim)) for a in arrays]
        by_id = {c.conversation_id: c for c in corpus}
        turns = [by_id[cid].turns for cid in table["conversation_id"]]
        given = {}  # the turn fields features read; none when the embeddings are not of these turns
        if all(len(t) == len(a) for t, a in zip(turns, arrays)):
            given = {name: [[getattr(turn, name) for turn in t] for t in turns]
                     for name in needed_fields(features())}
        values = features_for_corpus(arrays, turns=given)
        for name in values.columns:
            table[name] = values[name].to_numpy()
    return table


def dataset_from_corpus(corpus: Corpus, embedder, *, name: str, manifest: dict | None = None,
                        keep_other_turns: bool = False) -> Dataset:
    """A Dataset with conversations table, corpus and turn embeddings (no API key inside).

    Only the turns of the discussion count (``Corpus.trajectory_view``): embeddings and
    features leave out ratings, idea lists, consensus picks, moderators and judges. With
    ``keep_other_turns`` those turns stay in the dataset's corpus (a reader shows them, with
    their phase), ``turn_index`` names each embedded turn by its position in the whole
    conversation, and the table counts them (``n_other_turns``); otherwise the corpus is the
    discussion turns alone.
    """
    full = corpus
    corpus = corpus.trajectory_view()
    embeddings = embed_corpus(corpus, embedder) if embedder is not None else None
    table = conversation_table(corpus, embeddings)
    if keep_other_turns:
        table["n_other_turns"] = [len(c.turns) - len(t.turns) for c, t in zip(full, corpus)]
    turn_embeddings = turn_index = None
    if embeddings:
        rows, blocks = [], []
        for whole, conversation in zip(full, corpus):
            vectors = embeddings[conversation.conversation_id]
            if len(vectors):
                blocks.append(np.asarray(vectors, dtype=np.float32))
                positions = ([i for i, t in enumerate(whole.turns) if is_trajectory_turn(t)]
                             if keep_other_turns else range(len(vectors)))
                rows += [(conversation.conversation_id, t) for t in positions]
        if blocks:
            turn_embeddings = np.vstack(blocks)
            turn_index = pd.DataFrame(rows, columns=["conversation_id", "turn"])
    info = dict(manifest or {})
    plugins = feature_sources(table.columns)  # a plugin's feature: its package and version
    if plugins:
        info["feature_plugins"] = plugins
    if embedder is not None:
        info.setdefault("embedding_model", getattr(embedder, "model_name", str(embedder)))
    made = implementation_of_table(table)
    if made is not None:  # one implementation: recorded whole; several: the rows' columns say
        if str(made.get("fidelity")).startswith("mixed"):
            info.setdefault("generator", made["generator"])
        else:
            info.setdefault("implementation", made)
    return Dataset(name=name, conversations=table, manifest=info, corpus=full if keep_other_turns else corpus,
                   turn_embeddings=turn_embeddings, turn_index=turn_index)


def list_datasets(root: str | Path) -> list[Path]:
    """Dataset folders directly under ``root`` (those with a manifest), sorted by name."""
    root = Path(root)
    if not root.exists():
        return []
    return sorted(p for p in root.iterdir() if (p / MANIFEST).exists())


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    """A dataset's ``manifest.json``, written whole and scrubbed as a whole, as a run's
    manifest is: no registered key or URL credential."""
    atomic_write_text(Path(folder) / MANIFEST, scrub(json.dumps(manifest, indent=2, default=str)) + "\n")


def write_parquet(frame: pd.DataFrame, path: Path) -> None:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False, compression="zstd")
    atomic_write_bytes(path, buffer.getvalue())
