"""JSON lines survive every character a model or a file can hold (U+2028, U+2029, U+0085,
lone surrogates): written as one physical line each, split on "\\n" only, read back identically."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.corpus import Conversation, Corpus, Turn
from engine.storage.jsonl import iter_json_objects, to_json_line
from engine.llm import ScriptedBackend
from engine.runs.run_folder import RunStore
from engine.runs.runner import run_grid

NASTY = "line\u2028sep para\u2029sep next\u0085line end"
GRID = {"name": "t", "model": "scripted", "seed": 1, "concurrency": 2, "tasks": ["plastic_waste"],
        "conditions": [{"method": "direct", "replicates": 3}]}


def test_line_separators_stay_inside_one_line_and_read_back_identically(tmp_path):
    line = to_json_line({"text": NASTY, "lone": "a\ud800b"})
    # str.splitlines() would split this at U+2028/U+2029/U+0085: the writer escapes them
    assert len(line.splitlines()) == 1 and "\\u2028" in line and "\\ud800" in line
    path = tmp_path / "x.jsonl"
    path.write_text(line + "\n" + json.dumps({"b": 1}) + "\n", encoding="utf-8")
    assert list(iter_json_objects(path)) == [(1, {"text": NASTY, "lone": "a\ud800b"}), (2, {"b": 1})]


def test_reader_splits_on_newline_only_for_files_written_before_the_fix(tmp_path):
    # an older corpus written with ensure_ascii=False holds the raw characters
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps({"text": NASTY}, ensure_ascii=False) + "\r\n" + '{"x": 2}\n',
                    encoding="utf-8")
    assert [value for _, value in iter_json_objects(path)] == [{"text": NASTY}, {"x": 2}]


def test_corpus_round_trip_with_separators_and_lone_surrogates(tmp_path):
    corpus = Corpus([Conversation("c1", [Turn("A", NASTY), Turn("B", "half \udc80 pair")],
                                  final_idea=NASTY)])
    path = corpus.to_jsonl(tmp_path / "c.jsonl")
    back = Corpus.from_jsonl(path)
    assert back["c1"].texts == [NASTY, "half \udc80 pair"] and back["c1"].final_idea == NASTY


def test_a_run_whose_replies_hold_separators_finishes_reads_back_and_resumes(tmp_path):
    backend = ScriptedBackend(responder=lambda m: f"Idea: {NASTY}")
    result = run_grid(GRID, tmp_path, backend=backend, progress=False, cache=False)
    assert (result.ok, result.failed) == (3, 0)
    corpus = Corpus.from_jsonl(tmp_path / "corpus.jsonl")
    assert [c.final_idea for c in corpus] == [f"Idea: {NASTY}"] * 3
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    again = ScriptedBackend(responder=lambda m: "never")
    second = run_grid(GRID, tmp_path, backend=again, progress=False, cache=False)
    assert second.skipped == 3 and again.history == []


def test_a_failed_session_holding_separators_is_retried_not_a_traceback(tmp_path):
    from engine.llm import BackendError

    def fail(messages):
        raise BackendError(f"HTTP 400: server said {NASTY}")

    first = run_grid(GRID, tmp_path, backend=ScriptedBackend(responder=fail), progress=False, cache=False)
    assert first.failed == 3
    with RunStore(tmp_path) as store:
        assert all(NASTY in record["error"] for record in store.failed.values())
    second = run_grid(GRID, tmp_path, backend=ScriptedBackend(responder=lambda m: "fine idea"),
                      progress=False, cache=False)
    assert (second.ok, second.failed) == (3, 0)


def test_lone_surrogates_in_model_replies_are_replaced_and_counted(tmp_path):
    backend = ScriptedBackend(responder=lambda m: "bad \ud800 half and \udfff other")
    result = run_grid(GRID, tmp_path, backend=backend, progress=False, cache=False)
    assert result.ok == 3
    corpus = Corpus.from_jsonl(tmp_path / "corpus.jsonl")
    for conversation in corpus:
        turn = conversation.turns[0]
        assert turn.text == "bad \ufffd half and \ufffd other"
        assert turn.meta["lone_surrogates_replaced"] == 2
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["usage_total"]["lone_surrogates_replaced"] == 6


def test_imported_csv_with_separators_writes_a_readable_jsonl(tmp_path):
    from engine.cli import main

    source = tmp_path / "t.csv"
    source.write_text(f'conversation_id,turn,speaker,text\nc1,0,A,"{NASTY}"\nc1,1,B,plain\n',
                      encoding="utf-8")
    assert main(["import", str(source), str(tmp_path / "out.jsonl")]) == 0
    assert Corpus.from_jsonl(tmp_path / "out.jsonl")["c1"].texts == [NASTY, "plain"]


def test_dashboard_upload_of_a_corpus_whose_first_line_holds_separators():
    from dashboard.page_data import uploads
    from tests.support.hash_embedder import HashEmbedder

    corpus_line = json.dumps({"conversation_id": "c1", "turns": [{"speaker": "A", "text": NASTY},
                                                                 {"speaker": "B", "text": "ok"}]},
                             ensure_ascii=False)  # raw, as an older writer left it
    dataset = uploads.read_upload("old.jsonl", (corpus_line + "\n").encode("utf-8"),
                                  embedder_factory=HashEmbedder)
    assert dataset.corpus["c1"].texts == [NASTY, "ok"]


def test_quality_file_holds_separators_and_reads_back(tmp_path):
    from engine.judging.quality import QualityStore

    store = QualityStore(tmp_path)
    record = {"key": "k1", "judge": "j", "kind": "rubric", "reply": NASTY + " \udc80"}
    store.append(record)
    assert QualityStore(tmp_path).records[("k1", "j")] == record


def test_hashes_of_text_holding_a_lone_surrogate_do_not_crash():
    # identical to plain UTF-8 for ordinary text (cache keys unchanged), defined for the rest
    import hashlib

    from engine.embedding.embedder import text_key
    from engine.llm import prompt_hash
    from engine.llm.cache import cache_key
    from engine.tasks import Task

    assert Task("t", "plain é").prompt_sha256 == hashlib.sha256("plain é".encode()).hexdigest()
    assert Task("t", "half \ud800").prompt_sha256 == hashlib.sha256(b"half \xed\xa0\x80").hexdigest()
    messages = [{"role": "user", "content": "half \ud800"}]
    assert len(prompt_hash(messages)) == 16 and len(cache_key("x", messages, 1.0, 5, 0, 0)) == 64
    assert text_key("half \ud800") == hashlib.sha256(b"half \xed\xa0\x80").digest()


ANY_TEXT = st.text(st.characters(codec=None, categories=None), max_size=40)  # surrogates included
INT64 = st.integers(-(2 ** 63), 2 ** 63 - 1)  # files here hold 64-bit integers (engine.storage.jsonl.loads)
JSON_VALUES = st.recursive(st.none() | st.booleans() | INT64 | ANY_TEXT,
                           lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(ANY_TEXT, inner, max_size=4), max_leaves=12)


@settings(max_examples=120, deadline=None)
@given(st.lists(st.dictionaries(ANY_TEXT, JSON_VALUES, max_size=5), min_size=1, max_size=4))
def test_any_records_round_trip_through_one_line_each(records):
    lines = [to_json_line(record) for record in records]
    assert all("\n" not in line and len(line.splitlines()) <= 1 for line in lines)
    text = "".join(line + "\n" for line in lines)
    data = text.encode("utf-8")  # never raises: lone surrogates are escaped
    assert [value for _, value in iter_json_objects("x.jsonl", data.decode("utf-8"))] == \
        records
