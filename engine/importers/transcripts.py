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
``read_jsonl_records`` are shared with the other importers; ``read_any`` opens whatever a
user hands the dashboard (corpus, transcripts, ConvoKit folder or .zip, paper release).
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from engine.corpus import SOURCES, Conversation, Corpus, Turn
from engine.errors import InputError
from engine.jsonl import iter_json_objects, refuse_lone_surrogates
from engine.jsonl import read_text as read_file_text

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
CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}
JSONL_SUFFIXES = (".jsonl", ".ndjson")


@dataclass
class Record:
    """One data row of a tabular file: its values and where it came from."""

    values: dict[str, Any]
    row: int


# -- how rows are counted ----------------------------------------------------------------
CSV_ROW_NOTE = "row N = the N-th data row under the header"
JSON_ROW_NOTE = "row N = line N of the file"


def explain_row(error: InputError) -> InputError:
    """The same error, saying how its row is counted (CSV data row or JSON line)."""
    if error.row is None or not error.path or "row N =" in error.reason:
        return error
    suffix = Path(error.path).suffix.lower()
    note = (CSV_ROW_NOTE if suffix in CSV_SUFFIXES
            else JSON_ROW_NOTE if suffix in (*JSONL_SUFFIXES, ".json") else None)
    if note is None:
        return error
    return InputError(f"{error.reason} ({note})", path=error.path, row=error.row, field=error.field)


def rows_explained(function):
    """Decorate an importer so every InputError it raises says how rows are counted."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except InputError as error:
            raise explain_row(error) from None
    return wrapper


# -- reading files ---------------------------------------------------------------------
def read_text(path: str | Path) -> str:
    """The file's text (UTF-8, BOM allowed); empty, unreadable or non-UTF-8 -> InputError.

    A bad byte is reported with the physical line it is on, as ``row`` (for a CSV the
    caller converts this to a data row).
    """
    text = read_file_text(path)
    if not text.strip():
        raise InputError("is empty", path=str(path))
    return text


def read_csv_records(path: str | Path, *, delimiter: str = ",") -> tuple[list[str], list[Record]]:
    """Header and data rows of a CSV; row numbers are 1-based data rows (header excluded).

    Blank lines are skipped. A row with more or fewer cells than the header, an
    unterminated quote or a repeated header name are InputErrors; an unnamed header cell
    (pandas writes one for its index) becomes ``unnamed_<position>``.
    """
    path = Path(path)
    try:
        text = read_text(path)
    except InputError as error:
        if error.row is not None:  # a bad byte: line L of the file is data row L - 1
            data_row = error.row - 1
            raise InputError(error.reason + (" (in the header)" if data_row < 1 else ""),
                             path=error.path, row=data_row if data_row >= 1 else None) from None
        raise
    previous_limit = csv.field_size_limit()
    csv.field_size_limit(max(previous_limit, 1 << 30))
    try:
        return _parse_csv(text, path, delimiter)
    finally:
        csv.field_size_limit(previous_limit)


def _parse_csv(text: str, path: Path, delimiter: str) -> tuple[list[str], list[Record]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    records: list[Record] = []
    data_row = 0
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            where = data_row + 1 if header is not None else None
            raise InputError(f"not a readable CSV row ({error}; line {reader.line_num} of the "
                             "file)", path=str(path), row=where) from None
        if not cells or (len(cells) == 1 and not cells[0].strip()):
            continue
        if header is None:
            header = [c.strip() for c in cells]
            _check_header(header, path)
            continue
        data_row += 1
        if len(cells) != len(header):
            raise InputError(f"has {len(cells)} cells but the header has {len(header)} "
                             f"(line {reader.line_num} of the file)", path=str(path), row=data_row,
                             field=header[min(len(cells), len(header)) - 1])
        records.append(Record(dict(zip(header, cells)), data_row))
    if header is None:
        raise InputError("is empty", path=str(path))
    if not records:
        raise InputError("has a header but no data rows", path=str(path))
    return header, records


def _check_header(header: list[str], path: Path) -> None:
    for position, name in enumerate(header, start=1):
        if not name:
            header[position - 1] = f"unnamed_{position}"
    seen = set()
    for name in header:
        if name in seen:
            raise InputError("column name appears twice in the header", path=str(path), field=name)
        seen.add(name)


def read_jsonl_records(path: str | Path) -> list[Record]:
    """One JSON object per line; row N is line N; blank lines skipped."""
    records = []
    for line_number, value in iter_json_objects(path, read_text(path)):
        refuse_lone_surrogates(value, path=path, row=line_number)
        records.append(Record(value, line_number))
    if not records:
        raise InputError("has no JSON lines", path=str(path))
    return records


def read_records(path: str | Path) -> list[Record]:
    """Rows of a .csv/.tsv or .jsonl/.ndjson file; any other extension is an InputError."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in CSV_SUFFIXES:
        return read_csv_records(path, delimiter=CSV_SUFFIXES[suffix])[1]
    if suffix in JSONL_SUFFIXES:
        return read_jsonl_records(path)
    raise InputError(f"unknown extension {path.suffix or '(none)'!r}; expected one of "
                     f"{sorted([*CSV_SUFFIXES, *JSONL_SUFFIXES])}", path=str(path))


# -- values ----------------------------------------------------------------------------
def is_blank(value: Any) -> bool:
    """None, NaN or an all-whitespace string: a cell with nothing in it."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


_INTEGER_TEXT = re.compile(r"^[+-]?\d+(\.0*)?$")


def as_int(value: Any, *, path: Path, row: int | None, field: str) -> int:
    """An integer from a CSV cell or JSON value; 3, "3", "3.0" and 3.0 are fine, 3.5 is not."""
    if isinstance(value, bool):
        raise InputError(f"expected an integer, got {value!r}", path=str(path), row=row, field=field)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER_TEXT.match(value.strip()):
        return int(value.strip().split(".")[0])
    raise InputError(f"expected an integer, got {value!r}", path=str(path), row=row, field=field)


def number_or_none(value: Any) -> float | None:
    """A CSV cell or JSON/Parquet value read as a float (NaN and infinities included), or
    None when it is not a number (text, booleans, containers)."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def as_float(value: Any, *, path: Path, row: int | None, field: str) -> float:
    """A number from a CSV cell or JSON value (NaN allowed, infinities not)."""
    number = number_or_none(value)
    if number is None or math.isinf(number):
        raise InputError(f"expected a number, got {value!r}", path=str(path), row=row, field=field)
    return number


def as_text(value: Any, *, path: Path, row: int | None, field: str) -> str:
    """Text from a CSV cell or JSON value; numbers are accepted as ids and written as text."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise InputError(f"expected text, got {type(value).__name__} {value!r}", path=str(path),
                     row=row, field=field)


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
    meta = {"imported_from": str(path),
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
    with open(path, "rb") as handle:
        first = handle.readline(1_000_000).decode("utf-8-sig", errors="replace")
    return '"__corpus__"' in first or '"turns"' in first


def _looks_like_release(path: Path) -> bool:
    with open(path, "rb") as handle:
        first = handle.readline(100_000).decode("utf-8-sig", errors="replace")
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
