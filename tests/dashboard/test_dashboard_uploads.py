"""Uploads (dashboard/page_data/uploads.py): bad files become InputErrors naming the file, good files
become datasets whose numbers match a direct computation."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pandas as pd
import pytest

from dashboard.page_data import uploads
from dashboard.page_data.datasets import apply_filters, availability, filter_options
from engine.datasets import Dataset
from engine.errors import InputError
from tests.support.hash_embedder import HashEmbedder

RELEASE_CSV = "/work/shared/data/paper_release/comprehensive_trajectory_metrics.csv"


@pytest.mark.parametrize("name, payload, fragment", [
    ("notes.txt", b"hello", "unsupported file type '.txt'"),
    ("model.pkl", pickle.dumps({"a": 1}), "unsupported file type '.pkl'"),
    ("empty.csv", b"", "is empty"),
    ("blank.jsonl", b"  \n \n", "is empty"),
    ("fake.parquet", b"not parquet at all", "not a Parquet file"),
    ("broken.parquet", b"PAR1garbagegarbage", "not a readable Parquet file"),
    ("bad.jsonl", b'{"conversation_id": "a", "turn": 1\n', "not valid JSON"),
    ("list.jsonl", b"[1, 2]\n", "expected a JSON object per line"),
    ("latin1.csv", "conversation_id,turn,speaker,text\nc1,1,Zoë,caf\xe9\n".encode("latin-1"), "UTF-8"),
    ("missing.csv", b"conversation_id,speaker\nc1,A\n", "missing required column"),
])
def test_bad_uploads_are_input_errors_naming_the_file(name, payload, fragment):
    with pytest.raises(InputError) as caught:
        uploads.read_upload(name, payload, embedder_factory=HashEmbedder)
    assert fragment in str(caught.value)
    assert caught.value.path == name


def test_size_limit_is_checked_before_parsing():
    payload = b"conversation_id,global_coherence\n" + b"c,0.5\n" * 200_000  # ~1.2 MB
    with pytest.raises(InputError, match=r"over the 1 MB upload limit"):
        uploads.read_upload("big.csv", payload, max_mb=1)


def test_feature_table_with_a_non_number_names_row_and_field():
    payload = b"conversation_id,source,global_coherence\nc1,llm,0.5\nc2,human,high\n"
    with pytest.raises(InputError) as caught:
        uploads.read_upload("table.csv", payload)
    assert (caught.value.row, caught.value.field) == (2, "global_coherence")


def test_released_metrics_csv_is_recognised():
    with open(RELEASE_CSV, "rb") as handle:
        payload = handle.read()
    dataset = uploads.read_upload("comprehensive_trajectory_metrics.csv", payload)
    raw = pd.read_csv(io.BytesIO(payload))
    assert len(dataset.conversations) == len(raw) == 4010
    human = raw["file_id"].str.match(r"^i\d+_\d+$")
    assert (dataset.conversations["source"] == "human").sum() == human.sum() == 308
    assert "CC BY-NC-SA 4.0" in dataset.manifest["licence_note"]


def test_parquet_conversation_table_round_trips(tmp_path):
    table = pd.DataFrame({"conversation_id": ["a", "b"], "source": ["llm", "human"],
                          "global_coherence": [0.25, 0.75]})
    buffer = io.BytesIO()
    table.to_parquet(buffer, index=False)
    dataset = uploads.read_upload("mine.parquet", buffer.getvalue())
    pd.testing.assert_frame_equal(dataset.conversations, table)


def test_transcripts_are_embedded_and_measured():
    rows = []
    for cid in ("c1", "c2"):
        for turn in range(6):
            rows.append({"conversation_id": cid, "turn": turn, "speaker": f"agent{turn % 3}",
                         "text": f"{cid} idea number {turn} about {'rivers' if turn % 2 else 'bees'}",
                         "source": "human", "task": "plastic_waste"})
    payload = pd.DataFrame(rows).to_csv(index=False).encode()
    dataset = uploads.read_upload("talk.csv", payload, embedder_factory=HashEmbedder)
    table = dataset.conversations.set_index("conversation_id")
    assert table.loc["c1", "n_turns"] == 6
    # global coherence by hand: mean cosine of each turn to the centroid
    texts = [r["text"] for r in rows if r["conversation_id"] == "c1"]
    e = HashEmbedder().encode(texts)
    centroid = e.mean(axis=0)
    expected = np.mean(e @ centroid / (np.linalg.norm(e, axis=1) * np.linalg.norm(centroid)))
    assert table.loc["c1", "global_coherence"] == pytest.approx(expected)
    assert dataset.turn_embeddings.shape == (12, 16)
    assert availability(dataset).turn_embeddings and availability(dataset).turns


def test_filters_treat_missing_as_none_label():
    frame = pd.DataFrame({"source": ["llm", "llm", "human"], "discussion": ["open", "iterative", None],
                          "team_size": [3, 6, None]})
    options = filter_options(frame)
    assert options["discussion"] == ["iterative", "open", "(none)"]
    assert options["team_size"] == ["3", "6", "(none)"]
    assert list(apply_filters(frame, {"discussion": ["(none)"]}).index) == [2]
    assert list(apply_filters(frame, {"team_size": ["6"], "source": []}).index) == [1]
    assert len(apply_filters(frame, {})) == 3


def test_availability_of_the_release(tmp_path):
    from pathlib import Path

    release = Path(__file__).resolve().parents[2] / "cached_runs" / "paper_release"
    have = availability(Dataset.load(release))
    assert not have.turns and not have.turn_embeddings and not have.ratings
    assert have.sources == ("human", "llm") and len(have.features) == 9 and have.features_4b


def test_upload_without_source_says_how_many_conversations_default_to_llm():
    table = pd.DataFrame({"conversation_id": ["a", "b", "c"], "global_coherence": [0.2, 0.4, 0.9]})
    dataset = uploads.read_upload("mine.csv", table.to_csv(index=False).encode())
    assert dataset.manifest["source_from_default"] == {"value": "llm", "conversations": 3}
    assert "3 of 3 conversations have no 'source'" in dataset.manifest["description"]
    assert dataset.conversations["source"].tolist() == ["llm"] * 3


@pytest.mark.parametrize("cell", ["inf", "1e308", "-1e308", "abc"])
def test_feature_table_upload_refuses_implausible_numbers(cell):
    payload = f"conversation_id,global_coherence\na,0.5\nb,{cell}\n".encode()
    with pytest.raises(InputError) as caught:
        uploads.read_upload("mine.csv", payload)
    assert (caught.value.path, caught.value.row, caught.value.field) == ("mine.csv", 2, "global_coherence")


def test_column_mapping_and_metadata_apply_to_uploaded_transcripts():
    """Human transcripts with their own column names: without a mapping they are refused,
    with it (and source/task/model/discussion set) they are human, not "LLM, (none)"."""
    rows = [{"dialog": cid, "n": turn, "who": f"p{turn % 2}", "said": f"{cid} says thing {turn}"}
            for cid in ("d1", "d2") for turn in range(4)]
    payload = pd.DataFrame(rows).to_csv(index=False).encode()
    with pytest.raises(InputError) as refused:
        uploads.read_upload("workshop.csv", payload, embedder_factory=HashEmbedder)
    assert "workshop.csv" in str(refused.value)
    mapping = uploads.parse_mapping("dialog=conversation_id, n=turn, who=speaker, said=text")
    assert mapping == {"dialog": "conversation_id", "n": "turn", "who": "speaker", "said": "text"}
    dataset = uploads.read_upload("workshop.csv", payload, embedder_factory=HashEmbedder, mapping=mapping,
                                  metadata={"source": "human", "task": "plastic_waste", "model": "",
                                            "discussion": "open"})
    table = dataset.conversations.set_index("conversation_id")
    assert sorted(table.index) == ["d1", "d2"] and table["n_turns"].tolist() == [4, 4]
    assert set(table["source"]) == {"human"} and set(table["task"]) == {"plastic_waste"}
    assert set(table["discussion"]) == {"open"}
    assert dataset.manifest["metadata_applied"] == {"source": "human", "task": "plastic_waste", "discussion": "open"}
    assert dataset.manifest["column_mapping"] == mapping


def test_metadata_fills_blanks_of_a_conversation_table_only():
    table = pd.DataFrame({"conversation_id": ["a", "b"], "global_coherence": [0.3, 0.5],
                          "task": ["supply_chain", None]})
    dataset = uploads.read_upload("t.csv", table.to_csv(index=False).encode(),
                                  metadata={"task": "plastic_waste", "source": "human"})
    assert dataset.conversations["task"].tolist() == ["supply_chain", "plastic_waste"]
    assert dataset.conversations["source"].tolist() == ["human", "human"]


def test_a_mapping_of_a_missing_column_names_the_column_and_the_file():
    table = pd.DataFrame({"conversation_id": ["a"], "global_coherence": [0.3]})
    with pytest.raises(InputError) as error:
        uploads.read_upload("t.csv", table.to_csv(index=False).encode(), mapping={"gc": "global_coherence"})
    assert "t.csv" in str(error.value) and "'gc'" in str(error.value) and "cdl-upload" not in str(error.value)
