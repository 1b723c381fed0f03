"""Import a ConvoKit corpus folder (``utterances.jsonl`` + ``conversations.json``) -> Corpus.

ConvoKit's data format (convokit.cornell.edu/documentation/data_format.html): each line of
``utterances.jsonl`` is an utterance ``{id, conversation_id, speaker, text, reply_to,
timestamp, meta}`` (older dumps say ``user`` for ``speaker``); ``conversations.json`` maps a
conversation id to its metadata (either the metadata object itself or
``{"meta": {...}, "vectors": [...]}`` as newer ConvoKit versions write). It is optional.

Turns are ordered by timestamp, ties and missing timestamps in file order (utterances
without a timestamp come after those with one). The utterance's ``id``, ``reply_to`` and
``timestamp`` are kept in ``Turn.meta`` with its own ``meta``. Conversation metadata whose
key is one of our design factors (task, model, protocol, persona, team_size, order,
replicate, source, final_idea) fills that field; the rest goes to ``Conversation.meta``.
ConvoKit corpora are mostly human conversations, so ``source`` defaults to ``"human"``
(override with ``source="llm"``). Errors name the file, the row (line of
``utterances.jsonl``) and the field.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from engine.corpus import SOURCES, Conversation, Corpus, Turn
from engine.errors import InputError
from engine.storage.records import (as_int, as_text, is_blank, number_from_text, read_jsonl_records,
                                     read_text, rows_explained)

UTTERANCES = "utterances.jsonl"
CONVERSATIONS = "conversations.json"
TEXT_FACTORS = ("task", "model", "protocol", "persona", "order", "final_idea")
INT_FACTORS = ("team_size", "replicate")


@rows_explained
def read_convokit(folder: str | Path, *, drop_empty_text: bool = False,
                  source: str = "human", **defaults: Any) -> Corpus:
    """Read a ConvoKit corpus folder; ``drop_empty_text`` skips empty (e.g. deleted) utterances.

    ``defaults`` fill conversation fields that ``conversations.json`` leaves out
    (``task="plastic_waste"``, ``team_size=3``); other keys go to ``Conversation.meta``.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("not a folder; a ConvoKit corpus is a folder with utterances.jsonl",
                         path=str(folder))
    utterances_path = folder / UTTERANCES
    if not utterances_path.exists():
        raise InputError(f"no {UTTERANCES} in this folder", path=str(folder))
    if source not in SOURCES:
        raise InputError(f"must be one of {SOURCES}, got {source!r}", field="source")
    metadata = _read_conversation_meta(folder / CONVERSATIONS)
    by_conversation: dict[str, list[tuple[float, int, Turn]]] = {}
    seen_ids: dict[str, int] = {}
    dropped = 0
    for record in read_jsonl_records(utterances_path):
        parsed = _utterance(record.values, record.row, utterances_path, seen_ids)
        if parsed is None:
            dropped += 1
            if drop_empty_text:
                continue
            raise InputError("empty text (pass drop_empty_text=True / --drop-empty to skip "
                             "empty utterances)", path=str(utterances_path), row=record.row,
                             field="text")
        conversation_id, timestamp, turn = parsed
        by_conversation.setdefault(conversation_id, []).append((timestamp, record.row, turn))
    for conversation_id in metadata:
        if conversation_id not in by_conversation and not drop_empty_text:
            raise InputError(f"conversation {conversation_id!r} has no utterances in {UTTERANCES}",
                             path=str(folder / CONVERSATIONS), field=conversation_id)
    conversations = []
    for conversation_id, items in by_conversation.items():
        items.sort(key=lambda item: (item[0], item[1]))
        turns = [turn for _, _, turn in items]
        known = metadata.get(conversation_id, {})
        merged = dict(known)
        for key, value in defaults.items():
            if is_blank(merged.get(key)):
                merged[key] = value
        conversations.append(_conversation(conversation_id, turns, merged,
                                           folder / CONVERSATIONS, source))
    if not conversations:
        raise InputError("no utterance with text: no conversation left", path=str(utterances_path),
                         field="text")
    return Corpus(conversations, name=folder.name,
                  meta={"imported_from": str(folder), "format": "convokit",
                        "dropped_empty_turns": dropped if drop_empty_text else 0,
                        "source_from_default": {
                            "value": source,
                            "conversations": sum(1 for c in conversations if is_blank(
                                metadata.get(c.conversation_id, {}).get("source")))}})


def _read_conversation_meta(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    from engine.storage.jsonl import NumberOutOfRange, loads, out_of_range_field

    text = read_text(path)
    try:
        value = loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON ({error.msg})", path=str(path), row=error.lineno) from None
    except NumberOutOfRange as error:
        raise InputError(str(error), path=str(path), field=out_of_range_field(text)) from None
    except RecursionError:
        raise InputError("JSON nested too deeply", path=str(path)) from None
    if not isinstance(value, dict):
        raise InputError(f"expected an object mapping conversation id -> metadata, got "
                         f"{type(value).__name__}", path=str(path))
    out = {}
    for conversation_id, entry in value.items():
        if entry is None:
            entry = {}
        if not isinstance(entry, dict):
            raise InputError(f"metadata must be an object, got {type(entry).__name__}",
                             path=str(path), field=conversation_id)
        if set(entry) <= {"meta", "vectors"} and isinstance(entry.get("meta"), dict):
            entry = entry["meta"]
        out[str(conversation_id)] = entry
    return out


def _utterance(values: dict[str, Any], row: int, path: Path,
               seen_ids: dict[str, int]) -> tuple[str, float, Turn] | None:
    """(conversation id, sort key, Turn) of one line; None when its text is empty."""
    if "speaker" not in values and "user" in values:
        values = dict(values, speaker=values["user"])
    for name in ("id", "conversation_id", "speaker", "text"):
        if name not in values:
            raise InputError("missing", path=str(path), row=row, field=name)
    utterance_id = _identifier(values["id"], path, row, "id")
    if utterance_id in seen_ids:
        raise InputError(f"utterance id {utterance_id!r} appears twice (also on row "
                         f"{seen_ids[utterance_id]})", path=str(path), row=row, field="id")
    seen_ids[utterance_id] = row
    conversation_id = _identifier(values["conversation_id"], path, row, "conversation_id")
    speaker = _identifier(values["speaker"], path, row, "speaker")
    text = "" if values["text"] is None else as_text(values["text"], path=path, row=row,
                                                      field="text")
    timestamp = _timestamp(values.get("timestamp"), path, row)
    meta = values.get("meta") or {}
    if not isinstance(meta, dict):
        raise InputError(f"must be an object, got {type(meta).__name__}", path=str(path), row=row,
                         field="meta")
    reply_to = values.get("reply_to")
    turn_meta = dict(meta, utterance_id=utterance_id,
                     reply_to=None if reply_to is None else str(reply_to),
                     timestamp=values.get("timestamp"))
    if not text.strip():
        return None
    return conversation_id, timestamp, Turn(speaker=speaker, text=text, meta=turn_meta)


def _identifier(value: Any, path: Path, row: int, field: str) -> str:
    if isinstance(value, dict) and field == "speaker" and "id" in value:  # very old dumps
        value = value["id"]
    if is_blank(value):
        raise InputError("empty", path=str(path), row=row, field=field)
    text = as_text(value, path=path, row=row, field=field).strip()
    if not text:
        raise InputError("empty", path=str(path), row=row, field=field)
    return text


def _timestamp(value: Any, path: Path, row: int) -> float:
    """A sortable number; missing timestamps sort after all present ones.

    Numbers (seconds) must be finite; an ISO date is read from year 1 on (ConvoKit writes
    ``0001-01-01T00:00:00`` for an unknown time) and one without a time zone is read as UTC,
    so the order never depends on the machine's zone.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return math.inf
    if isinstance(value, bool):
        raise InputError(f"expected a number, got {value!r}", path=str(path), row=row,
                         field="timestamp")
    original = value
    if isinstance(value, str):
        number = number_from_text(value)  # never "1_000", which Python's float() takes
        if number is not None:
            value = number
        else:
            seconds = _iso_seconds(value.strip())
            if seconds is not None:
                return seconds
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return math.inf
        number = float(value)
        if not math.isfinite(number):
            raise InputError(f"expected a finite number of seconds, got {original!r}", path=str(path),
                             row=row, field="timestamp")
        return number
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise InputError(f"expected a number or an ISO date, got {shown}", path=str(path), row=row,
                     field="timestamp")


def _iso_seconds(text: str) -> float | None:
    """Seconds since 1970-01-01 UTC of an ISO date (naive = UTC), or None when it is not one."""
    from datetime import datetime, timezone

    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return (when - datetime(1970, 1, 1, tzinfo=timezone.utc)).total_seconds()


def _conversation(conversation_id: str, turns: list[Turn], metadata: dict[str, Any],
                  path: Path, default_source: str) -> Conversation:
    fields: dict[str, Any] = {"source": default_source}
    meta = {}
    for key, value in metadata.items():
        if key in TEXT_FACTORS and isinstance(value, str):
            fields[key] = value
        elif key in INT_FACTORS and not is_blank(value):
            fields[key] = as_int(value, path=path, row=None, field=f"{conversation_id}.{key}")
        elif key == "source" and isinstance(value, str):
            if value.lower() not in SOURCES:
                raise InputError(f"must be one of {SOURCES}, got {value!r}", path=str(path),
                                 field=f"{conversation_id}.source")
            fields["source"] = value.lower()
        else:
            meta[key] = value
    return Conversation(conversation_id=conversation_id, turns=turns, meta=meta, **fields)
