"""Property tests: generated bad files make the importers raise InputError and nothing else.

Each test draws hundreds of files (random bytes, truncated CSV/JSONL, wrong types, missing
columns, duplicate turns, bad UTF-8, broken ConvoKit folders and ratings files). Files
that are bad by construction must raise InputError; files whose damage may happen to
leave them valid (random truncation) may also load, but no other exception may escape.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import InputError
from engine.importers.convokit import read_convokit
from engine.importers.ratings import join_ratings
from engine.importers.transcripts import read_transcripts

SETTINGS = settings(max_examples=200, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
COLUMNS = ["conversation_id", "turn", "speaker", "text", "task", "team_size", "round"]

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)
valid_rows = st.lists(
    st.fixed_dictionaries({
        "conversation_id": st.sampled_from(["a", "b", "c"]),
        "speaker": st.sampled_from(["ann", "bob"]),
        "text": texts.filter(lambda t: t.strip()),
        "task": st.sampled_from(["plastic_waste"]),
        "team_size": st.sampled_from([3]),
        "round": st.integers(0, 5),
    }), min_size=1, max_size=8)


def number_turns(rows: list[dict]) -> list[dict]:
    counters: dict[str, int] = {}
    out = []
    for row in rows:
        counters[row["conversation_id"]] = counters.get(row["conversation_id"], -1) + 1
        out.append(dict(row, turn=counters[row["conversation_id"]]))
    return out


def to_csv(rows: list[dict], columns=COLUMNS) -> bytes:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def to_jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")


def load(data: bytes, suffix: str, **kwargs):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"file{suffix}"
        path.write_bytes(data)
        return read_transcripts(path, **kwargs)


def only_input_errors(call) -> InputError | None:
    try:
        call()
    except InputError as error:
        assert str(error)  # a message for people, never empty
        return error
    return None


# -- bad by construction: must raise InputError --------------------------------------------
@st.composite
def broken_transcripts(draw):
    rows = number_turns(draw(valid_rows))
    suffix = draw(st.sampled_from([".csv", ".jsonl"]))
    defect = draw(st.sampled_from(["missing_column", "bad_turn", "duplicate_turn", "bad_utf8",
                                   "empty_text", "empty_file", "header_only", "bad_int",
                                   "bad_json_line", "not_object"]))
    victim = draw(st.integers(0, len(rows) - 1))
    columns = list(COLUMNS)
    if defect == "missing_column":
        gone = draw(st.sampled_from(["conversation_id", "turn", "speaker", "text"]))
        columns.remove(gone)
        rows = [{k: v for k, v in r.items() if k != gone} for r in rows]
    elif defect == "bad_turn":
        rows[victim]["turn"] = draw(st.sampled_from(["two", "1.5", "", "x1", True, 2.5, [1], None]))
    elif defect == "duplicate_turn":
        rows.append(dict(rows[victim], text="again"))
    elif defect == "empty_text":
        rows[victim]["text"] = draw(st.sampled_from(["", "   ", "\t"]))
    elif defect == "bad_int":
        rows[victim]["team_size"] = draw(st.sampled_from(["three", "3.5", True, "", "NaN"]))
        if rows[victim]["team_size"] == "":  # blank is allowed: make it wrong instead
            rows[victim]["team_size"] = "3 people"
    if suffix == ".csv":
        if any(isinstance(r.get("turn"), (list, bool)) or r.get("turn") is None for r in rows):
            for r in rows:  # CSV has no types: write the value's text
                if isinstance(r.get("turn"), (list, bool)) or r.get("turn") is None:
                    r["turn"] = "not a number"
        data = to_csv(rows, columns)
    else:
        data = to_jsonl(rows)
    if defect == "bad_utf8":
        position = draw(st.integers(0, len(data)))
        data = data[:position] + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xe9", b"\x80"])) + data[position:]
    elif defect == "empty_file":
        data = draw(st.sampled_from([b"", b"\n", b"   \n\n"]))
    elif defect == "header_only":
        data = (",".join(columns) + "\n").encode() if suffix == ".csv" else b"\n\n"
    elif defect == "bad_json_line":
        suffix = ".jsonl"
        data = to_jsonl(rows) + draw(st.sampled_from([b"{", b'{"a": }', b"nul", b"{'a': 1}"])) + b"\n"
    elif defect == "not_object":
        suffix = ".jsonl"
        data = to_jsonl(rows) + draw(st.sampled_from([b"[1, 2]", b"3", b'"text"', b"null"])) + b"\n"
    return defect, suffix, data


@SETTINGS
@given(broken_transcripts())
def test_bad_transcripts_raise_input_error(case):
    defect, suffix, data = case
    error = only_input_errors(lambda: load(data, suffix))
    assert error is not None, f"{defect} file loaded without an error"
    assert error.path and error.path.endswith(suffix)
    if defect in ("missing_column", "bad_turn", "duplicate_turn", "empty_text", "bad_int"):
        assert error.field, str(error)
    if defect in ("bad_turn", "duplicate_turn", "empty_text", "bad_int", "bad_json_line",
                  "not_object"):
        assert error.row is not None and error.row >= 1, str(error)


# -- damage that may or may not leave a valid file: only InputError may escape -------------
@st.composite
def damaged_files(draw):
    rows = number_turns(draw(valid_rows))
    suffix = draw(st.sampled_from([".csv", ".tsv", ".jsonl", ".ndjson", ".txt", ""]))
    kind = draw(st.sampled_from(["random_bytes", "truncated", "flipped_byte", "random_text"]))
    base = to_jsonl(rows) if "json" in suffix else to_csv(rows)
    if suffix == ".tsv":
        base = base.replace(b",", b"\t")
    if kind == "random_bytes":
        data = draw(st.binary(max_size=300))
    elif kind == "truncated":
        data = base[:draw(st.integers(0, len(base)))]
    elif kind == "flipped_byte":
        position = draw(st.integers(0, max(len(base) - 1, 0)))
        data = base[:position] + bytes([draw(st.integers(0, 255))]) + base[position + 1:]
    else:
        data = draw(st.text(max_size=200)).encode("utf-8", errors="surrogatepass")
    return suffix, data


@SETTINGS
@given(damaged_files())
def test_damaged_transcripts_only_raise_input_error(case):
    suffix, data = case
    only_input_errors(lambda: load(data, suffix, drop_empty_text=True))


@st.composite
def damaged_convokit(draw):
    utterances = [{"id": f"u{i}", "conversation_id": draw(st.sampled_from(["c1", "c2"])),
                   "speaker": draw(st.sampled_from(["ann", "bob", None, 3, "", {"id": "x"}])),
                   "text": draw(st.one_of(texts, st.none(), st.integers())),
                   "reply_to": None,
                   "timestamp": draw(st.one_of(st.integers(), st.floats(), st.none(),
                                               st.sampled_from(["2024-01-01", "noon", True]))),
                   "meta": draw(st.sampled_from([{}, {"k": 1}, None, [1], "x"]))}
                  for i in range(draw(st.integers(0, 5)))]
    lines = to_jsonl(utterances)
    kind = draw(st.sampled_from(["as_is", "truncated", "random_bytes", "drop_field"]))
    if kind == "truncated":
        lines = lines[:draw(st.integers(0, len(lines)))]
    elif kind == "random_bytes":
        lines = draw(st.binary(max_size=200))
    elif kind == "drop_field" and utterances:
        gone = draw(st.sampled_from(["id", "conversation_id", "speaker", "text"]))
        lines = to_jsonl([{k: v for k, v in u.items() if k != gone} for u in utterances])
    conversations = draw(st.one_of(
        st.none(), st.binary(max_size=50),
        st.dictionaries(st.sampled_from(["c1", "c2", "c3"]),
                        st.one_of(st.none(), st.integers(),
                                  st.fixed_dictionaries({"team_size": st.sampled_from([3, "3", "x", None])}),
                                  st.fixed_dictionaries({"meta": st.just({"task": "t"})})))
        .map(lambda d: json.dumps(d).encode())))
    return lines, conversations


@SETTINGS
@given(damaged_convokit(), st.booleans())
def test_damaged_convokit_only_raises_input_error(case, drop_empty):
    lines, conversations = case
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        (folder / "utterances.jsonl").write_bytes(lines)
        if conversations is not None:
            (folder / "conversations.json").write_bytes(conversations)
        only_input_errors(lambda: read_convokit(folder, drop_empty_text=drop_empty))


RATINGS_HEADER = ["file_id", "question_id", "avg_novelty_rating", "avg_usefulness_rating",
                  "avg_creativity_rating", "N2", "U2"]


@st.composite
def damaged_ratings(draw):
    cells = st.one_of(st.sampled_from(["0.5", "", "nan", "high", "inf", "1e3", "-0"]), texts)
    rows = draw(st.lists(st.lists(cells, min_size=len(RATINGS_HEADER),
                                  max_size=len(RATINGS_HEADER)), max_size=5))
    header = list(RATINGS_HEADER)
    if draw(st.booleans()):
        header.remove(draw(st.sampled_from(RATINGS_HEADER)))
        rows = [r[:len(header)] for r in rows]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    data = buffer.getvalue().encode()
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    if draw(st.booleans()):
        data += draw(st.binary(max_size=20))
    return data


METRICS = pd.DataFrame({"file_id": ["i1_2", "i1_3"], "question_id": ["plastic_waste"] * 2,
                        "conversation_id": ["i1_2::plastic_waste", "i1_3::plastic_waste"]})


@SETTINGS
@given(damaged_ratings())
def test_damaged_ratings_only_raise_input_error(data):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ideas_with_ratings_clean.csv"
        path.write_bytes(data)
        only_input_errors(lambda: join_ratings(METRICS, path))
