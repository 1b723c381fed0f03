"""Corpus data model: JSONL/Parquet round trips, atomic writes, validation naming the field."""

from __future__ import annotations

import json
import os

import pytest

from engine.storage import durable
from engine.corpus import Conversation, Corpus, Turn
from engine.errors import InputError


def sample_corpus() -> Corpus:
    first = Conversation(
        conversation_id="team-1::plastic_waste",
        turns=[
            Turn(speaker="agent_1", text="Compostable packaging from seaweed ✓", round=1,
                 phase="discussion", tokens=12, latency_s=0.25, prompt_hash="abc",
                 meta={"persona": "engineer", "scores": [1, 2]}),
            Turn(speaker="agent_2", text="Deposit schemes, but for bottle caps.", round=1),
            Turn(speaker="agent_1", text="Combine both: caps made of seaweed.", round=2,
                 meta={"note": None}),
        ],
        source="llm", task="plastic_waste", model="gpt-4.1", protocol="open",
        persona="different", team_size=3, order="random", replicate=2,
        final_idea="Seaweed bottle caps with a deposit.",
        outcomes={"novelty": 0.75, "usefulness": 0.5, "creativity": 0.375},
        meta={"pool": 5, "turn_limit": 30, "min_rounds": None},
    )
    second = Conversation(conversation_id="i34213_475::supply_chain", source="human",
                          turns=[Turn(speaker="p1", text="Local warehouses.")],
                          task="supply_chain")
    failed = Conversation(conversation_id="run-3", status="failed", error="timeout after 60 s")
    return Corpus([first, second, failed], name="sample", meta={"made_by": "test"})


def assert_same(a: Corpus, b: Corpus) -> None:
    assert a.name == b.name
    assert a.meta == b.meta
    assert a.conversations == b.conversations  # dataclass equality: every field, every turn


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_round_trip_gives_equal_objects(tmp_path, suffix):
    original = sample_corpus()
    path = original.write(tmp_path / f"corpus{suffix}")
    back = Corpus.read(path)
    assert_same(original, back)
    assert back["team-1::plastic_waste"].turns[0].meta == {"persona": "engineer", "scores": [1, 2]}
    assert back["team-1::plastic_waste"].outcomes["creativity"] == 0.375
    assert back["run-3"].status == "failed" and back["run-3"].turns == []


def test_jsonl_and_parquet_agree(tmp_path):
    original = sample_corpus()
    from_jsonl = Corpus.read(original.write(tmp_path / "c.jsonl"))
    from_parquet = Corpus.read(original.write(tmp_path / "c.parquet"))
    assert from_jsonl.conversations == from_parquet.conversations


def _only_file(folder):
    return sorted(p.name for p in folder.iterdir())


def test_failing_jsonl_write_leaves_old_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "corpus.jsonl"
    sample_corpus().write(path)
    before = path.read_bytes()

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(durable, "_fsync", broken_fsync)
    bigger = Corpus([*sample_corpus(), Conversation(conversation_id="extra")], name="sample")
    with pytest.raises(OSError):
        bigger.write(path)
    assert path.read_bytes() == before
    assert _only_file(tmp_path) == ["corpus.jsonl"]  # no temp file left behind
    assert len(Corpus.read(path)) == 3


def test_failing_parquet_write_leaves_old_file_intact(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    path = tmp_path / "corpus.parquet"
    sample_corpus().write(path)
    before = path.read_bytes()

    def half_write(table, where, **kwargs):
        if hasattr(where, "write"):  # an output stream
            where.write(b"PAR1 half a file")
        else:
            with open(where, "wb") as handle:
                handle.write(b"PAR1 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", half_write)
    with pytest.raises(OSError):
        Corpus([Conversation(conversation_id="new")]).write(path)
    assert path.read_bytes() == before
    assert _only_file(tmp_path) == ["corpus.parquet"]


def test_write_replaces_the_file_in_one_rename(tmp_path, monkeypatch):
    """The final file only ever appears through os.replace of a sibling temp file."""
    path = tmp_path / "corpus.jsonl"
    calls = []
    real_replace = os.replace

    def spy(source, target):
        calls.append((os.path.dirname(source), os.path.basename(str(target))))
        return real_replace(source, target)

    monkeypatch.setattr(durable.os, "replace", spy)
    sample_corpus().write(path)
    assert calls == [(str(tmp_path), "corpus.jsonl")]


@pytest.mark.parametrize("record, field", [
    ({"conversation_id": "a", "team_size": "three"}, "team_size"),
    ({"conversation_id": "a", "source": "robot"}, "source"),
    ({"conversation_id": "a", "replicate": 1.5}, "replicate"),
    ({"conversation_id": ""}, "conversation_id"),
    ({"task": "x"}, "conversation_id"),
    ({"conversation_id": "a", "colour": "red"}, "colour"),
    ({"conversation_id": "a", "turns": [{"text": "hi"}]}, "turns[0].speaker"),
    ({"conversation_id": "a", "turns": [{"speaker": "s", "text": 5}]}, "turns[0].text"),
    ({"conversation_id": "a", "turns": [{"speaker": "s", "text": "t", "round": "2"}]},
     "turns[0].round"),
    ({"conversation_id": "a", "meta": [1, 2]}, "meta"),
])
def test_validation_error_names_the_field(record, field):
    with pytest.raises(InputError) as caught:
        Conversation.from_dict(record, path="corpus.jsonl", row=4)
    assert caught.value.field == field
    assert caught.value.row == 4
    assert "corpus.jsonl" in str(caught.value) and field in str(caught.value)


def test_jsonl_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    good = json.dumps(sample_corpus().conversations[1].to_dict())
    path.write_text(good + "\n" + '{"conversation_id": "b", "source": "alien"}\n')
    with pytest.raises(InputError) as caught:
        Corpus.read(path)
    assert (caught.value.path, caught.value.row, caught.value.field) == (str(path), 2, "source")

    path.write_text(good + "\n" + good + "\n")
    with pytest.raises(InputError) as caught:
        Corpus.read(path)
    assert (caught.value.row, caught.value.field) == (2, "conversation_id")
    assert "duplicate" in str(caught.value)


def test_duplicate_conversation_ids_are_refused():
    with pytest.raises(InputError) as caught:
        Corpus([Conversation(conversation_id="x"), Conversation(conversation_id="x")])
    assert caught.value.field == "conversation_id"


def test_tables_flatten_metadata():
    frame = sample_corpus().conversations_frame()
    row = frame.set_index("conversation_id").loc["team-1::plastic_waste"]
    assert row["n_turns"] == 3 and row["pool"] == 5 and row["novelty"] == 0.75
    turns = sample_corpus().turns_frame()
    assert turns["turn"].tolist() == [0, 1, 2, 0]
    assert turns["speaker"].tolist() == ["agent_1", "agent_2", "agent_1", "p1"]
