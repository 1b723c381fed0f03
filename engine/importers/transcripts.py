"""Import generic transcripts: a CSV or JSONL file with one row per turn -> Corpus.

Required columns: ``conversation_id``, ``turn`` (an integer that orders the turns of a
conversation; gaps allowed), ``speaker``, ``text``. Optional columns are recognised by name:

* conversation level (the design factors of paper A, Table 6, and paper B, section 3):
  ``source`` (llm | human), ``task``, ``model``, ``protocol`` (or ``discussion``, paper A's
  name for it; or ``method``, paper B's), ``persona``, ``team_size``, ``order``,
  ``replicate``, ``final_idea``; ratings ``novelty``, ``usefulness``, ``creativity`` go to
  the conversation's outcomes. Their value must agree on every row of a conversation,
  except ``model``: a team whose turns name different models (paper B's hetero-MAD) gets
  ``model = "Mixed"`` and each turn keeps its own in ``Turn.meta["model"]``.
* turn level: ``round``, ``phase``, ``tokens``, ``latency_s``, ``prompt_hash``.
* any other column is kept, per turn, in ``Turn.meta`` (empty cells left out).

``mapping`` renames the user's columns to ours first, e.g.
``{"dialog_id": "conversation_id", "utterance": "text"}``. Keyword ``defaults`` fill a
column that the file lacks or leaves empty (``read_transcripts(p, source="human")``).

Every problem is an ``InputError`` naming the file, the row and the column. Rows are
counted as a person reads them: in a CSV, row 1 is the first data row under the header;
in a JSONL file, row N is line N. The helpers ``read_csv_records`` and
``read_jsonl_records`` live in ``engine.storage.records``, shared with the other importers; ``read_any`` opens whatever a
user hands the dashboard (corpus, transcripts, ConvoKit folder or .zip, paper release).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping

from engine.corpus import SOURCES, Conversation, Corpus, Turn
from engine.errors import InputError
from engine.storage.records import (CSV_SUFFIXES, JSONL_SUFFIXES, Record, as_float, as_int,  # noqa: F401
                                      as_text, is_blank, number_or_none, read_csv_records,
                                      read_jsonl_records, read_records, read_text, rows_explained)

REQUIRED_COLUMNS = ("conversation_id", "turn", "speaker", "text")
CONVERSATION_TEXT_COLUMNS = ("source", "task", "model", "protocol", "persona", "order",
                             "final_idea")
CONVERSATION_INT_COLUMNS = ("team_size", "replicate")
OUTCOME_COLUMNS = ("novelty", "usefulness", "creativity")
TURN_TEXT_COLUMNS = ("phase", "prompt_hash")
TURN_INT_COLUMNS = ("round", "tokens")
TURN_FLOAT_COLUMNS = ("latency_s",)
PROTOCOL_ALIASES = ("discussion", "method")
MIXED_MODEL = "Mixed"


def _take_typed(values: dict[str, Any], names, convert, path, row: int) -> dict[str, Any]:
    """Pop ``names`` from ``values`` and convert the non-blank ones with ``convert``
    (``as_text``/``as_int``/``as_float``, which name file, row and field on failure);
    a float NaN counts as missing."""
    out: dict[str, Any] = {}
    for name in names:
        value = values.pop(name, None)
        if is_blank(value):
            continue
        converted = convert(value, path=path, row=row, field=name)
        if isinstance(converted, float) and math.isnan(converted):
            continue
        out[name] = converted
    return out


# -- transcripts -----------------------------------------------------------------------
@rows_explained
def read_transcripts(path: str | Path, mapping: Mapping[str, str] | None = None, *,
                     drop_empty_text: bool = False, **defaults: Any) -> Corpus:
    """Read a one-row-per-turn CSV/TSV/JSONL transcript file into a Corpus.

    Conversations keep the order in which they first appear; turns are sorted by ``turn``.
    ``drop_empty_text=True`` skips turns whose text is empty instead of raising (the
    counts land in ``corpus.meta``).
    """
    path = Path(path)
    records = read_records(path)
    mapping = dict(mapping or {})
    _check_mapping(mapping, records, path, defaults)
    builders: dict[str, _ConversationBuilder] = {}
    for record in records:
        values = _rename(record.values, mapping, path, record.row)
        source_given = not is_blank(values.get("source"))
        for name, default in defaults.items():
            if is_blank(values.get(name)):
                values[name] = default
        _require_columns(values, path, record.row)
        conversation_id = as_text(values.pop("conversation_id"), path=path, row=record.row,
                                  field="conversation_id").strip()
        if not conversation_id:
            raise InputError("empty conversation id", path=str(path), row=record.row,
                             field="conversation_id")
        builder = builders.get(conversation_id)
        if builder is None:
            builder = builders[conversation_id] = _ConversationBuilder(conversation_id, path)
        builder.source_given = builder.source_given or source_given
        builder.add_row(values, record.row, drop_empty_text=drop_empty_text)
    conversations = [builder.build() for builder in builders.values()]
    kept = [c for c in conversations if c is not None]
    if not kept:
        raise InputError("every turn has empty text: no conversation left", path=str(path),
                         field="text")
    renumbered = [b.conversation_id for b in builders.values() if b.renumbered()]
    meta = {"imported_from": str(path),
            "rows_read": len(records),
            # turns are numbered 0, 1, ... in each conversation, in the order of the file's
            # `turn`; these conversations had other numbers in the file (from 1, or gaps)
            "renumbered_conversations": len(renumbered),
            "renumbered_examples": renumbered[:3],
            "dropped_empty_turns": sum(b.dropped for b in builders.values()),
            "dropped_empty_conversations": len(conversations) - len(kept),
            "source_from_default": {
                "value": str(defaults.get("source", Conversation.source)).lower(),
                "conversations": sum(1 for b, c in zip(builders.values(), conversations)
                                     if c is not None and not b.source_given)}}
    return Corpus(kept, name=path.stem, meta=meta)


def _check_mapping(mapping: dict[str, str], records: list[Record], path: Path,
                   defaults: dict[str, Any]) -> None:
    columns = set().union(*(r.values.keys() for r in records[:1000]))
    for source_name in mapping:
        if source_name not in columns:
            raise InputError(f"the column mapping renames {source_name!r} but the file has no "
                             f"such column (it has {sorted(columns)})", path=str(path),
                             field=source_name)
    renamed = {mapping.get(c, c) for c in columns}
    missing = [c for c in REQUIRED_COLUMNS if c not in renamed and c not in defaults]
    if missing:
        raise InputError(f"missing required column(s) {missing}; the file has {sorted(columns)} "
                         "(rename yours with a column mapping, e.g. "
                         "{'dialog_id': 'conversation_id'} or --map dialog_id=conversation_id)",
                         path=str(path), field=missing[0])


def _rename(values: dict[str, Any], mapping: dict[str, str], path: Path, row: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in values.items():
        target = mapping.get(name, name)
        if target in PROTOCOL_ALIASES:
            target = "protocol"
        if target in out and not (is_blank(value) or is_blank(out[target])):
            raise InputError(f"two columns give {target!r} (after renaming); keep one",
                             path=str(path), row=row, field=name)
        if target not in out or not is_blank(value):
            out[target] = value
    return out


def _require_columns(values: dict[str, Any], path: Path, row: int) -> None:
    for name in REQUIRED_COLUMNS:
        if name not in values:
            raise InputError("missing", path=str(path), row=row, field=name)
        if name != "text" and is_blank(values[name]):
            raise InputError("empty", path=str(path), row=row, field=name)


class _ConversationBuilder:
    """Collects the rows of one conversation, checking turn numbers and shared factors."""

    def __init__(self, conversation_id: str, path: Path):
        self.conversation_id = conversation_id
        self.path = path
        self.turns: dict[int, tuple[int, Turn]] = {}
        self.factors: dict[str, tuple[Any, int]] = {}
        self.models: set[str] = set()
        self.dropped = 0
        self.source_given = False  # did any row of the file name the source?

    def add_row(self, values: dict[str, Any], row: int, *, drop_empty_text: bool) -> None:
        path = self.path
        number = as_int(values.pop("turn"), path=path, row=row, field="turn")
        if number in self.turns:
            first_row = self.turns[number][0]
            raise InputError(f"turn {number} of conversation {self.conversation_id!r} appears "
                             f"twice (also on row {first_row})", path=str(path), row=row,
                             field="turn")
        speaker = as_text(values.pop("speaker"), path=path, row=row, field="speaker").strip()
        raw_text = values.pop("text")
        text = "" if is_blank(raw_text) else as_text(raw_text, path=path, row=row, field="text")
        factors = self._conversation_values(values, row)
        model = factors.pop("model", None)
        for name, value in factors.items():
            self._agree(name, value, row)
        turn = self._turn(values, speaker, text, row)
        if model is not None:
            self.models.add(model)
            turn.meta["model"] = model
        if not text.strip():
            if drop_empty_text:
                self.dropped += 1
                return
            raise InputError("empty text (pass drop_empty_text=True / --drop-empty to skip such "
                             "turns)", path=str(path), row=row, field="text")
        self.turns[number] = (row, turn)

    def _conversation_values(self, values: dict[str, Any], row: int) -> dict[str, Any]:
        path = self.path
        out = {name: text.strip() for name, text in
               _take_typed(values, CONVERSATION_TEXT_COLUMNS, as_text, path, row).items()}
        if "source" in out:
            out["source"] = out["source"].lower()
            if out["source"] not in SOURCES:
                raise InputError(f"must be one of {SOURCES}, got {out['source']!r}",
                                 path=str(path), row=row, field="source")
        out.update(_take_typed(values, CONVERSATION_INT_COLUMNS, as_int, path, row))
        out.update(_take_typed(values, OUTCOME_COLUMNS, as_float, path, row))  # "nan": missing rating
        return out

    def _agree(self, name: str, value: Any, row: int) -> None:
        if name in self.factors and self.factors[name][0] != value:
            first, first_row = self.factors[name]
            raise InputError(f"conversation {self.conversation_id!r} has {name} {first!r} on row "
                             f"{first_row} but {value!r} here; a conversation-level column must "
                             "agree on all its rows", path=str(self.path), row=row, field=name)
        self.factors.setdefault(name, (value, row))

    def _turn(self, values: dict[str, Any], speaker: str, text: str, row: int) -> Turn:
        path = self.path
        if not speaker:
            raise InputError("empty", path=str(path), row=row, field="speaker")
        fields: dict[str, Any] = {}
        for names, convert in ((TURN_TEXT_COLUMNS, as_text), (TURN_INT_COLUMNS, as_int),
                               (TURN_FLOAT_COLUMNS, as_float)):
            fields.update(_take_typed(values, names, convert, path, row))
        meta = {name: value for name, value in values.items() if not is_blank(value)}
        return Turn(speaker=speaker, text=text, meta=meta, **fields)

    def renumbered(self) -> bool:
        """Whether the file's turn numbers of this conversation were not 0, 1, ..., n-1."""
        return sorted(self.turns) != list(range(len(self.turns)))

    def build(self) -> Conversation | None:
        if not self.turns:
            return None
        factors = {name: value for name, (value, _) in self.factors.items()}
        outcomes = {name: factors.pop(name) for name in OUTCOME_COLUMNS if name in factors}
        turns = [turn for _, (_, turn) in sorted(self.turns.items())]
        if len(self.models) == 1:  # one model: a conversation factor, not per-turn meta
            factors["model"] = self.models.pop()
            for turn in turns:
                turn.meta.pop("model", None)
        elif self.models:
            factors["model"] = MIXED_MODEL
        return Conversation(conversation_id=self.conversation_id, turns=turns,
                            outcomes=outcomes, **factors)


# -- open anything ---------------------------------------------------------------------
def read_any(path: str | Path, mapping: Mapping[str, str] | None = None, **defaults: Any):
    """Open what a user hands over: a Corpus, or a metrics DataFrame for the paper release.

    A folder (or .zip) with ``utterances.jsonl`` is ConvoKit; ``.parquet`` with a ``turns``
    column and ``.jsonl`` whose first line has ``turns``/``__corpus__`` are corpus files; a
    ``.csv`` with ``file_id``, ``question_id`` and ``global_coherence`` is the paper
    release; any other ``.csv``/``.tsv``/``.jsonl`` is a transcript file.
    """
    from engine.importers.convokit import read_convokit

    path = Path(path)
    if not path.exists():
        raise InputError("no such file or folder", path=str(path))
    if path.is_dir():
        return read_convokit(path, **defaults)
    suffix = path.suffix.lower()
    if suffix == ".zip":
        return _read_zip(path, mapping, defaults)
    if suffix == ".parquet":
        return Corpus.from_parquet(path)
    if suffix in JSONL_SUFFIXES and _first_line_is_corpus(path):
        return Corpus.from_jsonl(path)
    if suffix == ".csv" and _looks_like_release(path):
        from engine.importers.paper_release import read_metrics

        return read_metrics(path)
    return read_transcripts(path, mapping, **defaults)


def _first_line_is_corpus(path: Path) -> bool:
    from engine.storage.files import first_line

    first = first_line(path)
    return '"__corpus__"' in first or '"turns"' in first


def _looks_like_release(path: Path) -> bool:
    from engine.storage.files import first_line

    first = first_line(path, limit=100_000)
    return {"file_id", "question_id", "global_coherence"} <= {c.strip() for c in first.split(",")}


def _read_zip(path: Path, mapping, defaults):
    """A .zip of one ConvoKit folder or one data file: extracted to a temp folder, then read."""
    import tempfile
    import zipfile

    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as error:
        raise InputError(f"not a readable .zip ({error})", path=str(path)) from None
    with archive, tempfile.TemporaryDirectory() as folder:
        names = [n for n in archive.namelist() if not n.endswith("/") and "__MACOSX" not in n]
        unsafe = [n for n in names if n.startswith("/") or ".." in Path(n).parts]
        if unsafe:
            raise InputError(f"unsafe path {unsafe[0]!r} inside the archive", path=str(path))
        try:
            archive.extractall(folder, members=names)
        except (zipfile.BadZipFile, OSError, RuntimeError, EOFError) as error:
            raise InputError(f"cannot extract ({error})", path=str(path)) from None
        conversations = [n for n in names if Path(n).name == "utterances.jsonl"]
        if len(conversations) == 1:
            return read_any(Path(folder) / Path(conversations[0]).parent, mapping, **defaults)
        data = [n for n in names if Path(n).suffix.lower() in
                (*CSV_SUFFIXES, *JSONL_SUFFIXES, ".parquet")]
        if len(data) != 1:
            raise InputError("a .zip must hold one ConvoKit folder or exactly one data file; "
                             f"found {len(data)} data files", path=str(path))
        return read_any(Path(folder) / data[0], mapping, **defaults)
