"""Importers: transcripts (CSV/JSONL), ConvoKit, the authors' ratings, the paper release.

Every bad-input case asserts the InputError names the file, the (1-based data) row and
the column at fault.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.errors import InputError
from engine.importers.convokit import read_convokit
from engine.importers.paper_release import read_metrics
from engine.importers.ratings import join_ratings, read_ratings
from engine.importers.transcripts import read_transcripts

RELEASE = Path("/work/shared/data/paper_release/comprehensive_trajectory_metrics.csv")
if not RELEASE.exists():  # a clone beside the shared folder
    RELEASE = Path(__file__).resolve().parents[4] / "shared/data/paper_release/comprehensive_trajectory_metrics.csv"

HEADER = "conversation_id,turn,speaker,text"


def write(tmp_path, name, text, encoding="utf-8"):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding=encoding)
    return path


def expect_error(call, path, row, field):
    with pytest.raises(InputError) as caught:
        call()
    error = caught.value
    assert error.path == str(path), str(error)
    assert error.row == row, str(error)
    assert error.field == field, str(error)
    message = str(error)
    assert str(path) in message
    if row is not None:
        assert f"row {row}" in message
        csv_like = Path(str(path)).suffix in (".csv", ".tsv")
        assert ("data row under the header" if csv_like else "line N of the file") in message
    if field is not None:
        assert field in message
    return error


# -- transcripts: happy paths -----------------------------------------------------------
def test_csv_transcript_values(tmp_path):
    path = write(tmp_path, "t.csv",
                 "conversation_id,turn,speaker,text,task,discussion,team_size,round,novelty,mood\n"
                 "c1,2,B,\"Second, with a comma\",plastic_waste,open,3,1,0.5,calm\n"
                 "c1,1,A,First idea,plastic_waste,open,3,1,0.5,\n"
                 "c2,10,A,\"Line one\nline two\",singing_shower,,,2,,happy\n"
                 "c1,3,A,Third,plastic_waste,open,3,2,,\n")
    corpus = read_transcripts(path, source="human")
    assert [c.conversation_id for c in corpus] == ["c1", "c2"]
    c1 = corpus["c1"]
    assert [t.text for t in c1.turns] == ["First idea", "Second, with a comma", "Third"]
    assert [t.speaker for t in c1.turns] == ["A", "B", "A"]
    assert [t.round for t in c1.turns] == [1, 1, 2]
    assert (c1.task, c1.protocol, c1.team_size, c1.source) == ("plastic_waste", "open", 3, "human")
    assert c1.outcomes == {"novelty": 0.5}
    assert c1.turns[1].meta == {"mood": "calm"} and c1.turns[0].meta == {}
    c2 = corpus["c2"]
    assert c2.turns[0].text == "Line one\nline two" and c2.task == "singing_shower"
    assert c2.protocol is None and c2.team_size is None


def test_jsonl_transcript_with_mapping_and_numbers(tmp_path):
    rows = [
        {"dialog_id": 7, "idx": 1.0, "who": "Ann", "utterance": "b", "model": "gpt-4.1"},
        {"dialog_id": 7, "idx": 0, "who": "Bob", "utterance": "a", "model": "gpt-4.1",
         "extra": {"nested": [1, 2]}},
        {"dialog_id": "8", "idx": "3", "who": "Ann", "utterance": "c", "replicate": "2"},
    ]
    path = write(tmp_path, "t.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n\n")
    corpus = read_transcripts(path, {"dialog_id": "conversation_id", "idx": "turn",
                                     "who": "speaker", "utterance": "text"})
    assert [c.conversation_id for c in corpus] == ["7", "8"]
    assert [t.text for t in corpus["7"].turns] == ["a", "b"]
    assert corpus["7"].turns[0].meta == {"extra": {"nested": [1, 2]}}
    assert corpus["7"].model == "gpt-4.1" and corpus["8"].replicate == 2
    assert corpus["7"].source == "llm"  # the data model's default


def test_tsv_and_unnamed_index_column(tmp_path):
    path = write(tmp_path, "t.tsv", "\tconversation_id\tturn\tspeaker\ttext\n0\tx\t0\ts\thello\n")
    corpus = read_transcripts(path)
    assert corpus["x"].turns[0].text == "hello"
    assert corpus["x"].turns[0].meta == {"unnamed_1": "0"}


def test_drop_empty_text_counts_what_it_dropped(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER}\na,0,s,hi\na,1,s,  \nb,0,s,\n")
    corpus = read_transcripts(path, drop_empty_text=True)
    assert [c.conversation_id for c in corpus] == ["a"]
    assert corpus.meta["dropped_empty_turns"] == 2
    assert corpus.meta["dropped_empty_conversations"] == 1


def test_corpus_from_transcripts_round_trips(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER},phase\na,0,s,hi,draft\na,1,t,yo,final\n")
    corpus = read_transcripts(path)
    from engine.corpus import Corpus

    assert Corpus.read(corpus.write(tmp_path / "c.parquet")).conversations == corpus.conversations


# -- transcripts: bad input -------------------------------------------------------------
def test_missing_column(tmp_path):
    path = write(tmp_path, "t.csv", "conversation_id,turn,speaker\na,0,s\n")
    expect_error(lambda: read_transcripts(path), path, None, "text")


def test_missing_column_in_one_jsonl_line(tmp_path):
    path = write(tmp_path, "t.jsonl",
                 '{"conversation_id": "a", "turn": 0, "speaker": "s", "text": "x"}\n'
                 '{"conversation_id": "a", "turn": 1, "text": "y"}\n')
    expect_error(lambda: read_transcripts(path), path, 2, "speaker")


def test_mapping_names_a_column_the_file_lacks(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER}\na,0,s,x\n")
    expect_error(lambda: read_transcripts(path, {"utterance": "text"}), path, None, "utterance")


@pytest.mark.parametrize("value", ["two", "1.5", "", "True"])
def test_turn_not_an_integer(tmp_path, value):
    path = write(tmp_path, "t.csv", f"{HEADER}\na,0,s,x\na,{value},s,y\n")
    error = expect_error(lambda: read_transcripts(path), path, 2, "turn")
    assert ("integer" in str(error)) or ("empty" in str(error))


def test_turn_wrong_type_in_jsonl(tmp_path):
    path = write(tmp_path, "t.jsonl",
                 '{"conversation_id": "a", "turn": true, "speaker": "s", "text": "x"}\n')
    expect_error(lambda: read_transcripts(path), path, 1, "turn")


def test_team_size_wrong_type(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER},team_size\na,0,s,x,3\na,1,s,y,three\n")
    expect_error(lambda: read_transcripts(path), path, 2, "team_size")


def test_text_wrong_type_in_jsonl(tmp_path):
    path = write(tmp_path, "t.jsonl",
                 '{"conversation_id": "a", "turn": 0, "speaker": "s", "text": ["x"]}\n')
    expect_error(lambda: read_transcripts(path), path, 1, "text")


def test_empty_text(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER}\na,0,s,x\na,1,s,\n")
    expect_error(lambda: read_transcripts(path), path, 2, "text")


def test_empty_conversation_id(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER}\na,0,s,x\n,1,s,y\n")
    expect_error(lambda: read_transcripts(path), path, 2, "conversation_id")


def test_every_turn_empty_is_an_empty_corpus_error(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER}\na,0,s,\n")
    expect_error(lambda: read_transcripts(path, drop_empty_text=True), path, None, "text")


def test_duplicate_turn_numbers(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER}\na,0,s,x\nb,0,s,y\na,1,s,z\na,0,t,w\n")
    error = expect_error(lambda: read_transcripts(path), path, 4, "turn")
    assert "also on row 1" in str(error)


def test_conflicting_conversation_metadata(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER},task\na,0,s,x,plastic_waste\na,1,s,y,supply_chain\n")
    error = expect_error(lambda: read_transcripts(path), path, 2, "task")
    assert "row 1" in str(error)


def test_bad_source_value(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER},source\na,0,s,x,robot\n")
    expect_error(lambda: read_transcripts(path), path, 1, "source")


def test_non_utf8_bytes_name_the_data_row(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER}\na,0,s,ok\na,1,s,caf".encode() + b"\xe9\n")
    error = expect_error(lambda: read_transcripts(path), path, 2, None)
    assert "UTF-8" in str(error) and "0xe9" in str(error)


def test_non_utf8_bytes_in_jsonl(tmp_path):
    path = write(tmp_path, "t.jsonl", b'{"conversation_id": "a"}\n{"text": "\xff"}\n')
    expect_error(lambda: read_transcripts(path), path, 2, None)


def test_latin1_file_is_refused_not_misread(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER}\na,0,s,café\n", encoding="latin-1")
    expect_error(lambda: read_transcripts(path), path, 1, None)


@pytest.mark.parametrize("content", ["", "   \n\n"])
def test_empty_file(tmp_path, content):
    path = write(tmp_path, "t.csv", content)
    error = expect_error(lambda: read_transcripts(path), path, None, None)
    assert "empty" in str(error)


def test_header_only_file(tmp_path):
    path = write(tmp_path, "t.csv", HEADER + "\n")
    error = expect_error(lambda: read_transcripts(path), path, None, None)
    assert "no data rows" in str(error)


def test_unknown_extension(tmp_path):
    path = write(tmp_path, "t.xlsx", "whatever")
    error = expect_error(lambda: read_transcripts(path), path, None, None)
    assert ".csv" in str(error) and ".jsonl" in str(error)


def test_malformed_json_line(tmp_path):
    path = write(tmp_path, "t.jsonl",
                 '{"conversation_id": "a", "turn": 0, "speaker": "s", "text": "x"}\n'
                 '{"conversation_id": "a", "turn": 1,\n')
    error = expect_error(lambda: read_transcripts(path), path, 2, None)
    assert "JSON" in str(error)


def test_json_line_that_is_not_an_object(tmp_path):
    path = write(tmp_path, "t.jsonl", '[1, 2, 3]\n')
    expect_error(lambda: read_transcripts(path), path, 1, None)


def test_row_with_too_many_cells(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER}\na,0,s,x\na,1,s,y,surplus\n")
    error = expect_error(lambda: read_transcripts(path), path, 2, "text")
    assert "5 cells" in str(error)


def test_truncated_csv_with_open_quote(tmp_path):
    path = write(tmp_path, "t.csv", f'{HEADER}\na,0,s,x\na,1,s,"unfinished')
    expect_error(lambda: read_transcripts(path), path, 2, None)


def test_repeated_header_name(tmp_path):
    path = write(tmp_path, "t.csv", "conversation_id,turn,speaker,text,text\na,0,s,x,y\n")
    expect_error(lambda: read_transcripts(path), path, None, "text")


def test_missing_file(tmp_path):
    path = tmp_path / "nope.csv"
    expect_error(lambda: read_transcripts(path), path, None, None)


# -- ConvoKit ----------------------------------------------------------------------------
def convokit_folder(tmp_path, utterances, conversations=None):
    folder = tmp_path / "ck"
    folder.mkdir()
    (folder / "utterances.jsonl").write_text("\n".join(
        u if isinstance(u, str) else json.dumps(u) for u in utterances) + "\n")
    if conversations is not None:
        (folder / "conversations.json").write_text(
            conversations if isinstance(conversations, str) else json.dumps(conversations))
    return folder


def test_convokit_orders_by_timestamp_then_file_order(tmp_path):
    folder = convokit_folder(tmp_path, [
        {"id": "u3", "conversation_id": "c1", "speaker": "bob", "text": "third", "reply_to": "u2",
         "timestamp": 30, "meta": {"score": 1}},
        {"id": "u1", "conversation_id": "c1", "speaker": "ann", "text": "first", "reply_to": None,
         "timestamp": 10, "meta": {}},
        {"id": "u2a", "conversation_id": "c1", "speaker": "cy", "text": "second-a", "reply_to": "u1",
         "timestamp": 20},
        {"id": "u2b", "conversation_id": "c1", "speaker": "ann", "text": "second-b", "reply_to": "u1",
         "timestamp": 20},
        {"id": "v1", "conversation_id": "c2", "user": "dee", "text": "alone", "reply_to": None,
         "timestamp": None},
    ], {"c1": {"task": "plastic_waste", "team_size": 3, "title": "Waste"},
        "c2": {"meta": {"source": "llm", "model": "o3-low"}, "vectors": []}})
    corpus = read_convokit(folder)
    c1 = corpus["c1"]
    assert [t.text for t in c1.turns] == ["first", "second-a", "second-b", "third"]
    assert [t.speaker for t in c1.turns] == ["ann", "cy", "ann", "bob"]
    assert c1.turns[3].meta == {"score": 1, "utterance_id": "u3", "reply_to": "u2", "timestamp": 30}
    assert (c1.task, c1.team_size, c1.source, c1.meta) == ("plastic_waste", 3, "human",
                                                           {"title": "Waste"})
    c2 = corpus["c2"]
    assert (c2.source, c2.model, c2.turns[0].speaker) == ("llm", "o3-low", "dee")


def test_convokit_missing_timestamps_follow_the_dated_ones(tmp_path):
    folder = convokit_folder(tmp_path, [
        {"id": "a", "conversation_id": "c", "speaker": "s", "text": "undated", "timestamp": None},
        {"id": "b", "conversation_id": "c", "speaker": "s", "text": "late", "timestamp": "2024-01-02T00:00:00"},
        {"id": "c", "conversation_id": "c", "speaker": "s", "text": "early", "timestamp": "2024-01-01T00:00:00"},
    ])
    assert read_convokit(folder)["c"].texts == ["early", "late", "undated"]


def test_convokit_bad_inputs(tmp_path):
    utterance = {"id": "u1", "conversation_id": "c", "speaker": "s", "text": "x", "timestamp": 1}
    folder = convokit_folder(tmp_path, [utterance, dict(utterance, id="u2", timestamp="noon")])
    path = folder / "utterances.jsonl"
    expect_error(lambda: read_convokit(folder), path, 2, "timestamp")

    path.write_text(json.dumps(utterance) + "\n" + json.dumps(dict(utterance, timestamp=2)) + "\n")
    error = expect_error(lambda: read_convokit(folder), path, 2, "id")
    assert "twice" in str(error)

    path.write_text(json.dumps(utterance) + "\n" + json.dumps({"id": "u2", "speaker": "s", "text": "y"}) + "\n")
    expect_error(lambda: read_convokit(folder), path, 2, "conversation_id")

    path.write_text(json.dumps(dict(utterance, text="")) + "\n")
    expect_error(lambda: read_convokit(folder), path, 1, "text")

    path.write_text(json.dumps(utterance) + "\n{not json\n")
    expect_error(lambda: read_convokit(folder), path, 2, None)

    path.write_bytes(json.dumps(utterance).encode() + b"\n\xc3\x28\n")
    expect_error(lambda: read_convokit(folder), path, 2, None)

    path.write_text(json.dumps(utterance) + "\n")
    conversations = folder / "conversations.json"
    conversations.write_text(json.dumps({"c": {}, "ghost": {}}))
    error = expect_error(lambda: read_convokit(folder), conversations, None, "ghost")
    assert "no utterances" in str(error)

    conversations.write_text(json.dumps({"c": {"team_size": "three"}}))
    expect_error(lambda: read_convokit(folder), conversations, None, "c.team_size")

    conversations.write_text("{broken")
    expect_error(lambda: read_convokit(folder), conversations, 1, None)

    conversations.unlink()
    path.write_text("")
    expect_error(lambda: read_convokit(folder), path, None, None)


def test_convokit_needs_a_folder_with_utterances(tmp_path):
    expect_error(lambda: read_convokit(tmp_path), tmp_path, None, None)
    expect_error(lambda: read_convokit(tmp_path / "x"), tmp_path / "x", None, None)


# -- ratings ------------------------------------------------------------------------------
METRICS_HEADER = ("mean_distance,local_coherence,convergence_ratio,path_length,effective_dims,"
                  "cluster_dispersion,max_distance,semantic_velocity,trajectory_curvature,"
                  "topic_switching_rate,global_coherence,revisit_score,semantic_spread,file_id,"
                  "question_id,n_turns")
LLM_ID = "gpt-4.1_1_3_none_direct_discussion_Direct_open_fixed_pool_0_30_None"


def small_metrics(tmp_path) -> pd.DataFrame:
    numbers = ",".join(["0.5"] * 13)
    path = write(tmp_path, "metrics.csv", f"{METRICS_HEADER}\n"
                 f"{numbers},{LLM_ID},plastic_waste,30\n"
                 f"{numbers},{LLM_ID},supply_chain,30\n"
                 f"{numbers},i7_12,plastic_waste,40\n")
    return read_metrics(path)


def test_join_ratings_values_by_hand(tmp_path):
    metrics = small_metrics(tmp_path)
    ratings = write(tmp_path, "ideas_with_ratings_clean.csv",
                    "file_id,question_id,row_ID,avg_novelty_rating,avg_usefulness_rating,"
                    "avg_creativity_rating,N2,N4,U2,U4,final_idea\n"
                    f"i7_12,plastic_waste,1,0.25,1.0,0.25,2,3,5,4,Refill stations\n"
                    f"{LLM_ID},plastic_waste,2,0.8,0.5,0.4,6,,3,4,\"Seaweed, caps\"\n"
                    f"not_in_metrics,supply_chain,3,0.1,0.1,0.01,1,1,1,1,x\n")
    joined = join_ratings(metrics, ratings)
    assert len(joined) == 3
    assert joined["conversation_id"].tolist() == metrics["conversation_id"].tolist()
    by_id = joined.set_index("conversation_id")
    llm = by_id.loc[f"{LLM_ID}::plastic_waste"]
    assert (llm["novelty"], llm["usefulness"], llm["creativity"]) == (0.8, 0.5, 0.4)
    assert llm["N2"] == 6 and math.isnan(llm["N4"]) and llm["U4"] == 4
    assert llm["final_idea"] == "Seaweed, caps"
    human = by_id.loc["i7_12::plastic_waste"]
    assert (human["novelty"], human["creativity"], human["N4"]) == (0.25, 0.25, 3)
    unrated = by_id.loc[f"{LLM_ID}::supply_chain"]
    assert math.isnan(unrated["creativity"])
    assert joined.attrs["ratings_join"]["matched"] == 2
    assert joined.attrs["ratings_join"]["metrics_without_rating"] == 1
    assert joined.attrs["ratings_join"]["ratings_without_metrics"] == 1
    assert "row_ID" not in joined.columns
    # the per-rater columns come after the averages, novelty raters before usefulness
    assert list(joined.columns[-8:]) == ["novelty", "usefulness", "creativity", "N2", "N4", "U2",
                                         "U4", "final_idea"]


def test_ratings_bad_inputs(tmp_path):
    head = "file_id,question_id,avg_novelty_rating,avg_usefulness_rating,avg_creativity_rating,N2"
    path = write(tmp_path, "r.csv", f"{head}\na,b,0.1,0.2,0.02,3\na,c,0.1,high,0.02,3\n")
    expect_error(lambda: read_ratings(path), path, 2, "avg_usefulness_rating")
    path = write(tmp_path, "r.csv", f"{head}\na,b,0.1,0.2,0.02,three\n")
    expect_error(lambda: read_ratings(path), path, 1, "N2")
    path = write(tmp_path, "r.csv", f"{head}\na,b,0.1,0.2,0.02,3\na,b,0.1,0.2,0.02,3\n")
    expect_error(lambda: read_ratings(path), path, 2, "file_id")
    path = write(tmp_path, "r.csv", f"{head}\n,b,0.1,0.2,0.02,3\n")
    expect_error(lambda: read_ratings(path), path, 1, "file_id")
    path = write(tmp_path, "r.csv", "file_id,question_id,avg_novelty_rating\na,b,1\n")
    expect_error(lambda: read_ratings(path), path, None, "avg_usefulness_rating")
    path = write(tmp_path, "r.csv", f"{head}\n")
    expect_error(lambda: read_ratings(path), path, None, None)
    path = write(tmp_path, "r.csv", b"file_id,question_id\n\x80\n")
    expect_error(lambda: read_ratings(path), path, 1, None)


# -- the paper release ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def release() -> pd.DataFrame:
    if not RELEASE.exists():
        pytest.skip("paper release data not found")
    return read_metrics(RELEASE)


def test_release_parses_every_row(release):
    assert len(release) == 4010
    assert (release["source"] == "llm").sum() == 3702
    assert (release["source"] == "human").sum() == 308
    assert release["conversation_id"].is_unique


@pytest.mark.parametrize("index, expected", [
    # deepseek-R1_gemini-2.5-pro_o3_1_3_different_direct_discussion_Direct_all_at_once_fixed_pool_0_30_None
    (0, dict(source="llm", model="Mixed", replicate=1, team_size=3, persona="different",
             discussion="instructed", order="fixed", pool=0, turn_limit=30, min_rounds=None,
             generation="direct", initial_generation=False, version=None,
             task="education_inequality", n_turns=30)),
    # deepseek-R1_gemini-2.5-pro_o3_1_3_different_three_stage_dependent_all_at_once_fixed_pool_5_30_None
    (412, dict(model="Mixed", pool=5, generation="interactive", initial_generation=True,
               discussion="instructed")),
    # gpt-4.1_1_3_different_direct_discussion_Direct_all_at_once_fixed_pool_0_60_30 (file line 709, data index 707)
    (707, dict(model="gpt-4.1", turn_limit=60, min_rounds=30, version=None,
               task="education_inequality", n_turns=33)),
    # gpt-4.1_1_3_different_direct_discussion_Direct_open_random_pool_0_30_None_v3, singing_shower, 31 turns
    (998, dict(model="gpt-4.1", discussion="open", order="random", version="3",
               task="singing_shower", n_turns=31)),
    # gpt-4.1_1_6_different_three_stage_dependent_all_at_once_fixed_pool_0_30_None
    (1905, dict(team_size=6, initial_generation=True, task="education_inequality")),
    # i34213_475, plastic_waste, 60 turns
    (2325, dict(source="human", model="human", team="i34213", replicate=475, task="plastic_waste",
                n_turns=60, discussion=None, team_size=None)),
    # o3-low_1_3_different_three_stage_dependent_all_at_once_hand_raising_pool_0_30_None_v4, 28 turns
    (3798, dict(model="o3-low", order="raise", version="4", task="plastic_waste", n_turns=28)),
])
def test_release_rows_checked_by_hand(release, index, expected):
    row = release.iloc[index]
    for column, value in expected.items():
        actual = row[column]
        if value is None:
            assert actual is None or pd.isna(actual), (column, actual)
        else:
            assert actual == value, (column, actual, value)


def test_release_first_row_features_are_the_files_numbers(release):
    # first data line: local_coherence 0.6529..., file's first column mean_distance 0.4453...
    row = release.iloc[0]
    assert row["mean_distance"] == pytest.approx(0.44535517671798847, abs=0)
    assert np.isfinite(release.loc[release["source"] == "llm", "global_coherence"]).mean() > 0.9


def test_per_turn_models_make_a_mixed_team(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER},model\n"
                 "hetero,0,a1,x,gpt-4.1\nhetero,1,a2,y,o3-low\nhomo,0,a1,z,gpt-4.1\nhomo,1,a2,w,gpt-4.1\n")
    corpus = read_transcripts(path)
    assert corpus["hetero"].model == "Mixed"
    assert [t.meta["model"] for t in corpus["hetero"].turns] == ["gpt-4.1", "o3-low"]
    assert corpus["homo"].model == "gpt-4.1" and corpus["homo"].turns[0].meta == {}


def test_read_any_dispatches_on_content(tmp_path):
    from engine.importers.transcripts import read_any

    transcript = write(tmp_path, "t.csv", f"{HEADER}\na,0,s,hello\n")
    corpus = read_any(transcript, source="human")
    assert corpus["a"].texts == ["hello"] and corpus["a"].source == "human"
    saved = corpus.write(tmp_path / "c.jsonl")
    assert read_any(saved).conversations == corpus.conversations
    assert read_any(corpus.write(tmp_path / "c.parquet")).conversations == corpus.conversations

    import zipfile

    folder = convokit_folder(tmp_path, [{"id": "u", "conversation_id": "c", "speaker": "s",
                                         "text": "hi", "timestamp": 1}])
    with zipfile.ZipFile(tmp_path / "ck.zip", "w") as archive:
        archive.write(folder / "utterances.jsonl", "corpus/utterances.jsonl")
    assert read_any(tmp_path / "ck.zip")["c"].texts == ["hi"]
    assert read_any(folder)["c"].source == "human"
    bad_zip = write(tmp_path, "bad.zip", b"PK not really")
    expect_error(lambda: read_any(bad_zip), bad_zip, None, None)


def test_nan_ratings_are_missing_not_numbers(tmp_path):
    path = write(tmp_path, "t.csv", f"{HEADER},novelty,creativity,latency_s\na,0,s,x,nan,0.25,NaN\n")
    conversation = read_transcripts(path)["a"]
    assert conversation.outcomes == {"creativity": 0.25}
    assert conversation.turns[0].latency_s is None
    bad = write(tmp_path, "u.csv", f"{HEADER},creativity\na,0,s,x,inf\n")
    expect_error(lambda: read_transcripts(bad), bad, 1, "creativity")
