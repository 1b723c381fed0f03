"""The one data model: a Corpus of Conversations, each an ordered list of Turns.

Conversation metadata follows the design factors of paper A (Table 6: task, model,
discussion structure, persona, team size, order, pool, turn limit, minimum rounds) and
paper B (method, agents, rounds, replicate); outcomes hold the final idea and its ratings.
Files are JSONL (one conversation per line) or Parquet (one row per conversation with the
turns as a nested list), always written to a temporary file and renamed into place.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import pandas as pd

from engine.storage.durable import atomic_write_bytes, remove_stale_temp_files  # noqa: F401  (re-exported)
from engine.errors import InputError
from engine.storage.jsonl import INT64_MAX, INT64_MIN, iter_json_objects, to_json_line

SOURCES = ("llm", "human")
# Turns recorded by the protocols that are not utterances of the discussion: idea lists of
# the generation phase, ratings, hand-raising bids, the judge's consensus pick and the
# steered discussion's moderator interventions; "judge" marks the verdicts of an imported
# debate's judge (dashboard uploads give a "Judge" speaker that phase).
NON_TRAJECTORY_PHASES = frozenset({"generation", "rating", "hand_raise", "consensus", "moderator", "judge"})


def is_trajectory_turn(turn) -> bool:
    """Whether a turn is an utterance of the discussion (its phase is not one of
    ``NON_TRAJECTORY_PHASES``; a turn with no phase, from an imported transcript, is)."""
    return turn.phase not in NON_TRAJECTORY_PHASES
CONVERSATION_COLUMNS = (
    "conversation_id", "source", "task", "model", "protocol", "persona", "team_size",
    "order", "replicate", "status", "error",
)


@dataclass
class Turn:
    """One utterance: who spoke, what they said, and how it was produced."""

    speaker: str
    text: str
    round: int | None = None
    phase: str | None = None
    tokens: int | None = None
    latency_s: float | None = None
    prompt_hash: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Conversation:
    """One team discussion or debate session, its design factors and its outcome.

    ``protocol`` is the discussion structure of paper A (none, open, instructed,
    iterative, progressive) or the method of paper B (direct, self_refine, voting,
    homo_mad, hetero_mad, creative_mad). ``meta`` carries the remaining factors
    (pool, turn_limit, min_rounds, rounds, agents, ...); ``outcomes`` the final idea's
    ratings (novelty, usefulness, creativity, ...). ``status`` is ``ok`` or ``failed``.
    """

    conversation_id: str
    turns: list[Turn] = field(default_factory=list)
    source: str = "llm"
    task: str | None = None
    model: str | None = None
    protocol: str | None = None
    persona: str | None = None
    team_size: int | None = None
    order: str | None = None
    replicate: int | None = None
    final_idea: str | None = None
    outcomes: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"
    error: str | None = None

    @property
    def texts(self) -> list[str]:
        return [turn.text for turn in self.turns]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, record: dict[str, Any], *, path: str | None = None,
                  row: int | None = None) -> "Conversation":
        """Build and validate a conversation from a plain dict (one JSONL line)."""
        if not isinstance(record, dict):
            raise InputError(f"expected an object, got {type(record).__name__}", path=path, row=row)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(record) - known)
        if unknown:
            raise InputError(f"unknown field(s) {unknown}", path=path, row=row, field=unknown[0])
        if "conversation_id" not in record:
            raise InputError("missing", path=path, row=row, field="conversation_id")
        raw_turns = record.get("turns") or []
        if not isinstance(raw_turns, list):
            raise InputError("expected a list of turns", path=path, row=row, field="turns")
        turns = []
        turn_fields = {f.name for f in fields(Turn)}
        for position, raw in enumerate(raw_turns):
            if not isinstance(raw, dict):
                raise InputError(f"turn {position} is not an object", path=path, row=row, field="turns")
            extra = sorted(set(raw) - turn_fields)
            if extra:
                raise InputError(f"turn {position} has unknown field(s) {extra}", path=path,
                                 row=row, field=f"turns[{position}].{extra[0]}")
            for required in ("speaker", "text"):
                if required not in raw:
                    raise InputError(f"turn {position} is missing it", path=path, row=row,
                                     field=f"turns[{position}].{required}")
            turns.append(Turn(**{k: _clean(v) for k, v in raw.items()}))
        values = {k: _clean(v) for k, v in record.items() if k != "turns"}
        values.setdefault("outcomes", {})
        values.setdefault("meta", {})
        values["outcomes"] = values["outcomes"] or {}
        values["meta"] = values["meta"] or {}
        conversation = cls(turns=turns, **values)
        conversation.validate(path=path, row=row)
        return conversation

    def validate(self, *, path: str | None = None, row: int | None = None) -> None:
        """Raise InputError naming the field when this conversation is malformed."""
        if not isinstance(self.conversation_id, str) or not self.conversation_id.strip():
            raise InputError("must be a non-empty string", path=path, row=row, field="conversation_id")
        if self.source not in SOURCES:
            raise InputError(f"must be one of {SOURCES}, got {self.source!r}", path=path, row=row,
                             field="source")
        if self.status not in ("ok", "failed"):
            raise InputError(f"must be 'ok' or 'failed', got {self.status!r}", path=path, row=row,
                             field="status")
        for name in ("team_size", "replicate"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise InputError(f"must be an integer, got {value!r}", path=path, row=row, field=name)
            _within_64_bits(value, path, row, name)
        for name in ("outcomes", "meta"):
            if not isinstance(getattr(self, name), dict):
                raise InputError("must be an object", path=path, row=row, field=name)
        for position, turn in enumerate(self.turns):
            if not isinstance(turn.speaker, str) or not turn.speaker:
                raise InputError("must be a non-empty string", path=path, row=row,
                                 field=f"turns[{position}].speaker")
            if not isinstance(turn.text, str):
                raise InputError(f"must be text, got {type(turn.text).__name__}", path=path,
                                 row=row, field=f"turns[{position}].text")
            if turn.round is not None and (not isinstance(turn.round, int) or isinstance(turn.round, bool)):
                raise InputError(f"must be an integer, got {turn.round!r}", path=path, row=row,
                                 field=f"turns[{position}].round")
            _within_64_bits(turn.round, path, row, f"turns[{position}].round")


def _within_64_bits(value: Any, path: str | None, row: int | None, field: str) -> None:
    """An integer a Parquet file can hold as uint64 (up to 2**64 - 1) but no table of ours can
    store: refused as the JSON and CSV readers refuse it."""
    if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
        raise InputError(f"integer {value} is out of range (integers must fit in 64 bits, {INT64_MIN:,} to "
                         f"{INT64_MAX:,})", path=path, row=row, field=field)


def _clean(value: Any) -> Any:
    """Turn NaN (from pandas/Parquet) into None and numpy scalars into Python ones."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        try:
            return _clean(value.item())
        except (ValueError, AttributeError):
            return value
    return value


class Corpus:
    """An ordered collection of conversations with unique ids, plus corpus-level metadata."""

    def __init__(self, conversations: Iterable[Conversation] = (), *, name: str = "corpus",
                 meta: dict[str, Any] | None = None):
        self.name = name
        self.meta = dict(meta or {})
        self._conversations: list[Conversation] = []
        self._index: dict[str, int] = {}
        for conversation in conversations:
            self.add(conversation)

    # -- collection -------------------------------------------------------------------
    def add(self, conversation: Conversation) -> None:
        conversation.validate()
        if conversation.conversation_id in self._index:
            raise InputError(f"duplicate conversation id {conversation.conversation_id!r}",
                             field="conversation_id")
        self._index[conversation.conversation_id] = len(self._conversations)
        self._conversations.append(conversation)

    def __len__(self) -> int:
        return len(self._conversations)

    def __iter__(self) -> Iterator[Conversation]:
        return iter(self._conversations)

    def __getitem__(self, conversation_id: str) -> Conversation:
        return self._conversations[self._index[conversation_id]]

    def __contains__(self, conversation_id: object) -> bool:
        return conversation_id in self._index

    @property
    def conversations(self) -> list[Conversation]:
        return list(self._conversations)

    def filter(self, predicate: Callable[[Conversation], bool]) -> "Corpus":
        return Corpus((c for c in self if predicate(c)), name=self.name, meta=self.meta)

    def trajectory_view(self) -> "Corpus":
        """The same conversations with only the turns that form a semantic trajectory.

        Paper A computes its trajectories over the turns of the discussion; the engine also
        records idea lists, ratings, hand-raising bids and consensus picks as turns (phases
        in ``NON_TRAJECTORY_PHASES``), which this drops. Turns with no phase (imported
        transcripts) are kept.
        """
        def keep(conversation: Conversation) -> Conversation:
            turns = [t for t in conversation.turns if is_trajectory_turn(t)]
            return replace(conversation, turns=turns)

        return Corpus((keep(c) for c in self), name=self.name, meta=self.meta)

    # -- tables -----------------------------------------------------------------------
    def conversations_frame(self) -> pd.DataFrame:
        """One row per conversation: design factors, ``meta`` and ``outcomes`` flattened."""
        rows = []
        for c in self:
            row = {name: getattr(c, name) for name in CONVERSATION_COLUMNS}
            row["n_turns"] = len(c.turns)
            row["final_idea"] = c.final_idea
            for key, value in c.meta.items():
                row.setdefault(key, value)
            for key, value in c.outcomes.items():
                row.setdefault(key, value)
            rows.append(row)
        columns = list(CONVERSATION_COLUMNS) + ["n_turns", "final_idea"]
        return pd.DataFrame(rows, columns=None if rows else columns)

    def turns_frame(self) -> pd.DataFrame:
        """One row per turn, in order: conversation_id, turn (0-based), speaker, text, ..."""
        rows = []
        for c in self:
            for position, t in enumerate(c.turns):
                rows.append({"conversation_id": c.conversation_id, "turn": position,
                             "speaker": t.speaker, "text": t.text, "round": t.round,
                             "phase": t.phase, "tokens": t.tokens, "latency_s": t.latency_s,
                             "task": c.task, "model": c.model, "protocol": c.protocol,
                             "source": c.source})
        columns = ["conversation_id", "turn", "speaker", "text", "round", "phase", "tokens",
                   "latency_s", "task", "model", "protocol", "source"]
        return pd.DataFrame(rows, columns=columns)

    # -- files ------------------------------------------------------------------------
    def to_jsonl(self, path: str | Path) -> Path:
        """Write one JSON object per line; the file appears whole or not at all."""
        lines = [to_json_line({"__corpus__": {"name": self.name, "meta": self.meta}})]
        lines += [to_json_line(c.to_dict()) for c in self]
        return atomic_write_text(path, "\n".join(lines) + "\n")

    @classmethod
    def from_jsonl(cls, path: str | Path, records: Iterable[tuple[int, dict]] | None = None) -> "Corpus":
        """The corpus of a JSON-lines file; ``records`` (``(line, object)`` pairs) when the
        caller has read them already (``engine.storage.durable.read_records`` for a run's own file)."""
        path = Path(path)
        name, meta, conversations = path.stem, {}, []
        seen: set[str] = set()
        for row, record in (iter_json_objects(path) if records is None else records):
            if "__corpus__" in record:
                header = record["__corpus__"] or {}
                if not isinstance(header, dict) or not isinstance(header.get("meta", {}), dict):
                    raise InputError("expected an object with a 'meta' object", path=str(path), row=row,
                                     field="__corpus__")
                name, meta = header.get("name", name), header.get("meta", {})
                continue
            conversation = Conversation.from_dict(record, path=str(path), row=row)
            if conversation.conversation_id in seen:
                raise InputError(f"duplicate conversation id {conversation.conversation_id!r}",
                                 path=str(path), row=row, field="conversation_id")
            seen.add(conversation.conversation_id)
            conversations.append(conversation)
        return cls(conversations, name=name, meta=meta)

    def to_parquet(self, path: str | Path) -> Path:
        """One row per conversation; turns nested; meta/outcomes as JSON text columns."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        records = []
        for c in self:
            record = c.to_dict()
            record["meta"] = json.dumps(c.meta, ensure_ascii=False)
            record["outcomes"] = json.dumps(c.outcomes, ensure_ascii=False)
            record["turns"] = [dict(t, meta=json.dumps(t["meta"], ensure_ascii=False))
                               for t in record["turns"]]
            records.append(record)
        table = pa.Table.from_pylist(records, schema=_parquet_schema())
        table = table.replace_schema_metadata(
            {b"corpus": json.dumps({"name": self.name, "meta": self.meta}).encode()})
        buffer = pa.BufferOutputStream()
        pq.write_table(table, buffer, compression="zstd")
        return atomic_write_bytes(path, buffer.getvalue().to_pybytes())

    @classmethod
    def from_parquet(cls, path: str | Path) -> "Corpus":
        import pyarrow.parquet as pq

        from engine.storage.files import check_regular

        path = Path(path)
        check_regular(path)  # not a FIFO or a device: pyarrow would wait or read forever
        try:
            table = pq.read_table(path)
        except Exception as error:  # pyarrow raises several types for a bad file
            raise InputError(f"not a readable Parquet file ({error})", path=str(path)) from None
        header = _json_text((table.schema.metadata or {}).get(b"corpus", b"{}") or b"{}",
                            path=path, row=None, field="corpus (schema metadata)")
        if not isinstance(header, dict) or not isinstance(header.get("meta", {}), dict):
            raise InputError("expected a JSON object with a 'meta' object", path=str(path),
                             field="corpus (schema metadata)")
        conversations = []
        for row, record in enumerate(table.to_pylist(), start=1):
            for key in ("meta", "outcomes"):
                if isinstance(record.get(key), str):
                    record[key] = _json_text(record[key], path=path, row=row, field=key)
            for position, turn in enumerate(record.get("turns") or []):
                if isinstance(turn, dict) and isinstance(turn.get("meta"), str):
                    turn["meta"] = _json_text(turn["meta"], path=path, row=row,
                                              field=f"turns[{position}].meta")
            conversations.append(Conversation.from_dict(record, path=str(path), row=row))
        return cls(conversations, name=header.get("name", path.stem), meta=header.get("meta", {}))

    @classmethod
    def read(cls, path: str | Path) -> "Corpus":
        """Read a corpus file by its extension (.jsonl or .parquet)."""
        path = Path(path)
        if path.suffix == ".parquet":
            return cls.from_parquet(path)
        if path.suffix in (".jsonl", ".json"):
            return cls.from_jsonl(path)
        raise InputError("unknown corpus format: expected .jsonl or .parquet", path=str(path))

    def write(self, path: str | Path) -> Path:
        path = Path(path)
        return self.to_parquet(path) if path.suffix == ".parquet" else self.to_jsonl(path)


def _json_text(text: str | bytes, *, path: Path, row: int | None, field: str) -> Any:
    """A JSON value stored as text in a Parquet cell; not JSON -> InputError naming the cell."""
    from engine.storage.jsonl import loads

    try:
        return loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, ValueError) as error:
        reason = getattr(error, "msg", None) or (str(error) if isinstance(error, ValueError)
                                                 else type(error).__name__)
        raise InputError(f"not valid JSON text ({reason})", path=str(path), row=row,
                         field=field) from None


def _parquet_schema():
    import pyarrow as pa

    turn = pa.struct([("speaker", pa.string()), ("text", pa.string()), ("round", pa.int64()),
                      ("phase", pa.string()), ("tokens", pa.int64()), ("latency_s", pa.float64()),
                      ("prompt_hash", pa.string()), ("meta", pa.string())])
    return pa.schema([
        ("conversation_id", pa.string()), ("turns", pa.list_(turn)), ("source", pa.string()),
        ("task", pa.string()), ("model", pa.string()), ("protocol", pa.string()),
        ("persona", pa.string()), ("team_size", pa.int64()), ("order", pa.string()),
        ("replicate", pa.int64()), ("final_idea", pa.string()), ("outcomes", pa.string()),
        ("meta", pa.string()), ("status", pa.string()), ("error", pa.string()),
    ])


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write text to a temp file in the same folder, fsync, then rename over ``path``
    (``engine.storage.durable.atomic_write_bytes``: any failure leaves ``path`` as it was)."""
    return atomic_write_bytes(path, text.encode("utf-8"))
