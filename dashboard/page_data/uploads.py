"""Read an uploaded file into a Dataset, or raise an InputError a person can act on.

Accepted: CSV/TSV, JSONL/NDJSON and Parquet (pyarrow; no pickle-based format is ever
read). What the file holds is recognised from its columns:

* paper A's released metrics or ideas file, told apart by their columns
  (``engine.importers.kinds``) -> ``read_metrics`` or ``engine.importers.ratings.read_ideas``;
* a conversation table (``conversation_id`` + at least one Table 19 feature, no ``turn``)
  -> used as it is;
* transcripts (one row per turn, or a Corpus JSONL/Parquet with nested ``turns``) ->
  ``engine.importers.transcripts`` / ``engine.corpus``, then embedded and measured.

Size is checked before anything is parsed; the upload is written to a private temporary
folder under a fixed name (the user's file name is never used as a path), and every error
names the user's file, never that temporary copy.

``mapping`` renames the user's columns to ours first (the CLI's ``--map``); ``metadata``
(source, task, model, discussion) fills those fields wherever the file leaves them blank
(the CLI's ``--set``), and the manifest records both.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path
from typing import Callable

import pandas as pd

from engine.corpus import Corpus
from engine.datasets import Dataset
from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES

DEFAULT_MAX_MB = 50.0
METADATA_FIELDS = ("source", "task", "model", "discussion")
ALLOWED_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".parquet")


def check_upload(filename: str, payload: bytes, max_mb: float = DEFAULT_MAX_MB) -> str:
    """Reject empty, oversized and wrong-type uploads; returns the lower-case suffix."""
    suffix = Path(filename).suffix.lower()
    if suffix not in ALLOWED_SUFFIXES:
        raise InputError(f"unsupported file type {suffix or '(no extension)'!r}; upload one of "
                         f"{', '.join(ALLOWED_SUFFIXES)}", path=filename)
    if not payload or not payload.strip():
        raise InputError("is empty", path=filename)
    size_mb = len(payload) / 1_000_000
    if size_mb > max_mb:
        raise InputError(f"is {size_mb:.1f} MB, over the {max_mb:g} MB upload limit "
                         "(set CDL_MAX_UPLOAD_MB to change it)", path=filename)
    if suffix == ".parquet" and not payload.startswith(b"PAR1"):
        raise InputError("is not a Parquet file (no PAR1 header)", path=filename)
    return suffix


@contextlib.contextmanager
def named_as(filename: str, temporary: Path):
    """Errors raised inside name the user's ``filename``, never our ``temporary`` copy."""
    try:
        yield
    except InputError as error:
        reason = error.reason.replace(str(temporary), filename).replace(str(temporary.parent), "")
        raise InputError(reason, path=filename, row=error.row, field=error.field) from None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, OSError) as error:
        text = str(error).replace(str(temporary), filename)
        raise InputError(f"could not be read ({type(error).__name__}: {text})", path=filename) from None


def parse_mapping(text: str) -> dict[str, str]:
    """``theirs=ours`` pairs, comma-separated (the CLI's ``--map`` syntax)."""
    from engine.importers.column_map import column_mapping

    return column_mapping([text]) if text.strip() else {}


def read_upload(filename: str, payload: bytes, *, max_mb: float = DEFAULT_MAX_MB,
                embedder_factory: Callable[[], object] | None = None,
                mapping: dict[str, str] | None = None, metadata: dict[str, str] | None = None,
                debate_as: str | None = None) -> Dataset:
    """The Dataset an upload describes (see module docstring). ``embedder_factory`` is
    called only for transcripts, which need turn embeddings. ``debate_as`` (a paper-B method
    or ``"custom"``) says how debates of other protocol names are read
    (``import_summary.apply_debate_as``); what a transcript import did is in the manifest's
    ``import_summary``."""
    suffix = check_upload(filename, payload, max_mb)
    metadata = {k: str(v).strip() for k, v in (metadata or {}).items() if k in METADATA_FIELDS and str(v).strip()}
    with tempfile.TemporaryDirectory(prefix="cdl-upload-") as folder:
        path = Path(folder) / f"upload{suffix}"
        path.write_bytes(payload)
        with named_as(filename, path):
            dataset = _read(path, suffix, filename, embedder_factory, dict(mapping or {}), metadata, debate_as)
    if mapping:
        dataset.manifest["column_mapping"] = dict(mapping)
    if metadata:
        dataset.manifest["metadata_applied"] = metadata
        dataset.manifest["description"] += "; set on upload where the file is blank: " + ", ".join(
            f"{k} = {v}" for k, v in metadata.items())
    return dataset


def _apply_metadata_to_table(table: pd.DataFrame, mapping: dict[str, str], metadata: dict[str, str],
                             path: Path) -> pd.DataFrame:
    missing = [c for c in mapping if c not in table.columns]
    if missing:
        raise InputError(f"the column mapping renames {missing[0]!r} but the file has no such column "
                         f"(columns: {', '.join(map(str, table.columns))})", path=str(path), field=missing[0])
    table = table.rename(columns=mapping)
    for name, value in metadata.items():
        table[name] = table[name].where(table[name].notna() & (table[name].astype(str).str.strip() != ""), value) \
            if name in table.columns else value
    return table


def _apply_metadata_to_corpus(corpus: Corpus, metadata: dict[str, str]) -> Corpus:
    protocol_of = {"discussion": "protocol"}
    for conversation in corpus:
        for name, value in metadata.items():
            attribute = protocol_of.get(name, name)
            current = getattr(conversation, attribute, None)
            if current is None or str(current).strip() == "":
                setattr(conversation, attribute, value)
    return corpus


def _read(path: Path, suffix: str, filename: str, embedder_factory, mapping=None, metadata=None,
          debate_as: str | None = None) -> Dataset:
    mapping, metadata = mapping or {}, metadata or {}
    name = Path(filename).stem or "upload"
    manifest = {"description": f"uploaded file {Path(filename).name}", "source": "upload"}
    if suffix == ".parquet":
        table = _read_parquet(path)
        if "turns" in table.columns:
            corpus = _apply_metadata_to_corpus(Corpus.from_parquet(path), metadata)
            return _from_corpus(corpus, name, manifest, embedder_factory, debate_as,
                                rows=(len(table), "conversation rows"))
        renamed = {mapping.get(c, c) for c in map(str, table.columns)}
        if not renamed & set(PAPER_A_FEATURES):  # e.g. one row per turn: not a conversation table
            raise InputError("a Parquet upload is a corpus (a nested 'turns' column) or a conversation table "
                             "(conversation_id and Table 19 feature columns); this one has neither (save "
                             "one-row-per-turn transcripts as CSV or JSONL)", path=str(path), field="turns")
        return _from_table(_apply_metadata_to_table(table, mapping, metadata, path), name, manifest, path)
    if suffix in (".jsonl", ".ndjson"):
        first = _first_json_object(path)
        if "turns" in first or "__corpus__" in first:
            corpus = _apply_metadata_to_corpus(Corpus.from_jsonl(path), metadata)
            return _from_corpus(corpus, name, manifest, embedder_factory, debate_as,
                                rows=(len(corpus), "conversation lines"))
        columns = set(first)
    else:
        columns = set(_csv_header(path, "\t" if suffix == ".tsv" else ","))
    columns = {mapping.get(c, c) for c in columns}
    from engine.importers.kinds import table_kind

    kind = table_kind(columns)
    if kind in ("metrics", "ideas"):
        from engine.importers.paper_release import LICENCE_NOTE, read_metrics
        from engine.importers.ratings import read_ideas

        if suffix != ".csv":
            raise InputError(f"the paper release's {kind} file must be the released CSV file")
        manifest["licence_note"] = LICENCE_NOTE
        if kind == "ideas":
            ideas = read_ideas(path)
            manifest["ideas"] = ideas.attrs["ideas"]
            manifest["description"] += " (paper A's idea-level ratings file: one row per idea)"
            return Dataset(name=name, conversations=_apply_metadata_to_table(ideas, {}, metadata, path),
                           manifest=manifest)
        return Dataset(name=name, conversations=_apply_metadata_to_table(read_metrics(path), {}, metadata, path),
                       manifest=manifest)
    if "conversation_id" in columns and "turn" not in columns and columns & set(PAPER_A_FEATURES):
        from engine.measures.feature_table import read_feature_table
        from engine.storage.csv_cells import unescape_frame

        table = read_feature_table(path) if not mapping else \
            (unescape_frame(pd.read_csv(path, sep="\t" if suffix == ".tsv" else ","))
             if suffix in (".csv", ".tsv") else pd.read_json(path, lines=True))
        return _from_table(_apply_metadata_to_table(table, mapping, metadata, path), name, manifest, path)
    from engine.importers import transcripts

    defaults = {("protocol" if k == "discussion" else k): v for k, v in metadata.items()}
    # turns with empty text are set aside (and counted in the import summary), not refused
    corpus = transcripts.read_transcripts(path, mapping or None, drop_empty_text=True, **defaults)
    return _from_corpus(corpus, name, manifest, embedder_factory, debate_as,
                        rows=(corpus.meta.get("rows_read"), "rows"))


def _from_table(table: pd.DataFrame, name: str, manifest: dict, path: Path) -> Dataset:
    if table.empty:
        raise InputError("has a header but no rows", path=str(path))
    if "conversation_id" not in table.columns:
        raise InputError("a conversation table needs a 'conversation_id' column",
                         path=str(path), field="conversation_id")
    from engine.measures.feature_table import check_features

    if "source" not in table.columns:
        table = table.assign(source="llm")
        _note_default_source(manifest, len(table), len(table), "llm")
    table = check_features(table, path)
    return Dataset(name=name, conversations=table.reset_index(drop=True), manifest=manifest)


def _note_default_source(manifest: dict, n_defaulted: int, n_total: int, value: str) -> None:
    """Say in the dataset's description (shown on the Data page) how many conversations
    got their source from a default rather than from the file."""
    if n_defaulted:
        manifest["source_from_default"] = {"value": value, "conversations": n_defaulted}
        manifest["description"] += (f"; {n_defaulted} of {n_total} conversations have no 'source' "
                                    f"column value and are counted as {value}")


def _from_corpus(corpus: Corpus, name: str, manifest: dict, embedder_factory, debate_as: str | None = None,
                 rows: tuple[int | None, str] = (None, "rows")) -> Dataset:
    from dashboard.page_data import import_summary
    from engine.datasets import dataset_from_corpus

    if len(corpus) == 0:
        raise InputError("holds no conversation")
    default = corpus.meta.get("source_from_default") or {}
    _note_default_source(manifest, int(default.get("conversations") or 0), len(corpus),
                         str(default.get("value")))
    roles = import_summary.mark_roles(corpus)  # moderators and judges kept, with their phase
    debate = import_summary.apply_debate_as(corpus, debate_as)
    manifest["import_summary"] = import_summary.summarise(corpus, rows_read=rows[0], rows_are=rows[1],
                                                          roles=roles, debate=debate)
    embedder = embedder_factory() if embedder_factory is not None else None
    return dataset_from_corpus(corpus, embedder, name=name, manifest=manifest, keep_other_turns=True)


def _read_parquet(path: Path) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pandas()
    except Exception as error:  # pyarrow raises several types for a broken file
        raise InputError(f"not a readable Parquet file ({type(error).__name__})", path=str(path)) from None


def _first_json_object(path: Path) -> dict:
    from engine.storage.jsonl import NumberOutOfRange, loads, out_of_range_field, read_text, split_lines

    for row, line in enumerate(split_lines(read_text(path)), start=1):  # "\n" only, as written
        if line.strip():
            try:
                value = loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"not valid JSON ({error.msg})", path=str(path), row=row) from None
            except NumberOutOfRange as error:
                raise InputError(str(error), path=str(path), row=row, field=out_of_range_field(line)) from None
            if not isinstance(value, dict):
                raise InputError(f"expected a JSON object per line, got {type(value).__name__}",
                                 path=str(path), row=row)
            return value
    raise InputError("is empty", path=str(path))


def csv_header(path: Path, delimiter: str = ",") -> list[str]:
    """Column names of a CSV file's first line (for telling file kinds apart)."""
    return _csv_header(path, delimiter)


def _csv_header(path: Path, delimiter: str) -> list[str]:
    import csv

    from engine.storage.files import read_bytes, universal_newlines

    try:
        text = read_bytes(path).decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte at position {error.start})", path=str(path)) from None
    text = universal_newlines(text)  # an old-Mac file: "\r" alone ends its lines
    first = text.split("\n")[0] if text.strip() else ""
    return [c.strip() for c in next(csv.reader([first], delimiter=delimiter), [])]
