"""``python -m engine import|embed|features|diversity`` run through ``engine.cli.main``.

Embedding-dependent commands run on a cache pre-filled with hand-made vectors, so the
expected numbers are worked out by hand (and the commands must make no model call);
one test embeds for real with the bundled MiniLM.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.cli import main
from engine.corpus import Conversation, Corpus, Turn
from engine.embedding.embedder import DEFAULT_MODEL, EmbeddingCache, text_key

RELEASE = Path("/work/shared/data/paper_release/comprehensive_trajectory_metrics.csv")
if not RELEASE.exists():
    RELEASE = Path(__file__).resolve().parents[4] / "shared/data/paper_release/comprehensive_trajectory_metrics.csv"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "embeddings.sqlite"


def prefill(cache_path: Path, vectors: dict[str, list[float]]) -> None:
    cache = EmbeddingCache(cache_path)
    cache.put_many(DEFAULT_MODEL, {text_key(t): np.asarray(v, dtype=np.float32)
                                   for t, v in vectors.items()})
    cache.close()


# -- import ---------------------------------------------------------------------------------
@pytest.mark.skipif(not RELEASE.exists(), reason="paper release data not found")
def test_import_paper_release_to_csv(tmp_path, capsys):
    out = tmp_path / "metrics.csv"
    assert main(["import", str(RELEASE), str(out)]) == 0
    assert "4010 conversations (3702 llm, 308 human)" in capsys.readouterr().out
    table = pd.read_csv(out)
    raw = pd.read_csv(RELEASE)
    assert len(table) == 4010
    assert table["source"].value_counts().to_dict() == {"llm": 3702, "human": 308}
    assert table.loc[0, "model"] == "Mixed" and table.loc[0, "discussion"] == "instructed"
    np.testing.assert_array_equal(table["global_coherence"], raw["global_coherence"])


def test_import_release_with_ratings_to_json(tmp_path, capsys):
    header = ("mean_distance,local_coherence,convergence_ratio,path_length,effective_dims,"
              "cluster_dispersion,max_distance,semantic_velocity,trajectory_curvature,"
              "topic_switching_rate,global_coherence,revisit_score,semantic_spread,file_id,"
              "question_id,n_turns")
    numbers = ",".join(["0.25"] * 13)
    metrics = tmp_path / "metrics.csv"
    metrics.write_text(f"{header}\n{numbers},i1_2,plastic_waste,12\n{numbers},i1_3,plastic_waste,9\n")
    ratings = tmp_path / "ideas_with_ratings_clean.csv"
    ratings.write_text("file_id,question_id,avg_novelty_rating,avg_usefulness_rating,"
                       "avg_creativity_rating,N2\ni1_3,plastic_waste,0.5,0.8,0.4,6\n")
    out = tmp_path / "joined.json"
    assert main(["import", str(metrics), str(out), "--ratings", str(ratings)]) == 0
    assert "1 matched, 1 conversations without rating, 0 ratings" in capsys.readouterr().out
    records = json.loads(out.read_text())
    assert [r["conversation_id"] for r in records] == ["i1_2::plastic_waste", "i1_3::plastic_waste"]
    assert records[0]["creativity"] is None
    assert (records[1]["novelty"], records[1]["creativity"], records[1]["N2"]) == (0.5, 0.4, 6.0)
    assert records[1]["n_turns"] == 9 and records[1]["team"] == "i1"


def test_import_transcripts_with_mapping_to_parquet(tmp_path, capsys):
    source = tmp_path / "chat.csv"
    source.write_text("dialog,idx,who,utterance,team_size\n"
                      "d1,2,bob,later,3\nd1,1,ann,earlier,3\nd2,0,cy,solo,2\n")
    out = tmp_path / "corpus.parquet"
    code = main(["import", str(source), str(out), "--map", "dialog=conversation_id",
                 "--map", "idx=turn", "--map", "who=speaker", "--map", "utterance=text",
                 "--set", "source=human", "--set", "task=plastic_waste"])
    assert code == 0
    assert "2 conversations, 3 turns" in capsys.readouterr().out
    corpus = Corpus.read(out)
    assert corpus["d1"].texts == ["earlier", "later"]
    assert (corpus["d1"].source, corpus["d1"].task, corpus["d1"].team_size) == ("human", "plastic_waste", 3)
    assert corpus["d2"].team_size == 2


def test_import_convokit_folder(tmp_path):
    folder = tmp_path / "ck"
    folder.mkdir()
    (folder / "utterances.jsonl").write_text(
        json.dumps({"id": "b", "conversation_id": "c", "speaker": "s", "text": "second", "timestamp": 2}) + "\n"
        + json.dumps({"id": "a", "conversation_id": "c", "speaker": "t", "text": "first", "timestamp": 1}) + "\n")
    out = tmp_path / "ck.jsonl"
    assert main(["import", str(folder), str(out), "--set", "task=plastic_waste",
                 "--set", "team_size=2", "--set", "site=lab"]) == 0
    conversation = Corpus.read(out)["c"]
    assert conversation.texts == ["first", "second"]
    assert (conversation.task, conversation.team_size, conversation.meta) == ("plastic_waste", 2,
                                                                              {"site": "lab"})


def test_import_bad_file_is_one_line_exit_2(tmp_path, capsys):
    source = tmp_path / "chat.csv"
    source.write_text("conversation_id,turn,speaker,text\na,1,s,x\na,one,s,y\n")
    out = tmp_path / "corpus.jsonl"
    assert main(["import", str(source), str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert str(source) in err and "row 2" in err and "'turn'" in err
    assert not out.exists()


# -- embed ----------------------------------------------------------------------------------
def small_corpus(tmp_path) -> Path:
    corpus = Corpus([
        Conversation("a", turns=[Turn("s", "alpha"), Turn("t", "beta")], task="t1"),
        Conversation("b", turns=[Turn("s", "gamma")], task="t2"),
    ])
    return corpus.write(tmp_path / "corpus.jsonl")


def test_embed_from_cache_writes_vectors_and_index(tmp_path, private_cache, capsys):
    prefill(private_cache, {"alpha": [1, 0, 0], "beta": [0, 1, 0], "gamma": [0, 0, 1]})
    out = tmp_path / "turn_embeddings.npy"
    assert main(["embed", str(small_corpus(tmp_path)), str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "model calls 0, cache hits 3, newly embedded 0" in printed
    np.testing.assert_array_equal(np.load(out), np.eye(3, dtype=np.float32))
    index = pd.read_parquet(tmp_path / "turn_index.parquet")
    assert index.to_dict("list") == {"conversation_id": ["a", "a", "b"], "turn": [0, 1, 0],
                                     "speaker": ["s", "t", "s"]}  # for speaker measures


def test_embed_for_real_then_cached(tmp_path, capsys):
    corpus = small_corpus(tmp_path)
    out = tmp_path / "e.npy"
    assert main(["embed", str(corpus), str(out), "--no-progress"]) == 0
    assert "model calls 1, cache hits 0, newly embedded 3" in capsys.readouterr().out
    first = np.load(out)
    assert first.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    assert main(["embed", str(corpus), str(out), "--no-progress"]) == 0
    assert "model calls 0, cache hits 3, newly embedded 0" in capsys.readouterr().out
    np.testing.assert_array_equal(np.load(out), first)
    assert (tmp_path / "e_index.parquet").exists()


def test_embed_refuses_other_extensions(tmp_path, capsys):
    assert main(["embed", str(small_corpus(tmp_path)), str(tmp_path / "e.csv")]) == 2
    assert ".npy" in capsys.readouterr().err


# -- features -------------------------------------------------------------------------------
def test_features_from_embeddings_by_hand(tmp_path):
    # conversation "zig": e0=(1,0), e1=(0,1), e2=(1,0). Cosine distances of steps: 1, 1.
    #   local_coherence = mean(1 - 1, 1 - 1) = 0; path_length = 2; max_distance = 1;
    #   steps d0=(-1,1), d1=(1,-1): angle pi -> trajectory_curvature = pi.
    # conversation "same": two identical turns: local 1, path 0, max_distance 0.
    # rows are stored out of order; the index puts them back in turn order.
    vectors = np.array([[0, 1], [1, 0], [1, 0], [3, 4], [3, 4]], dtype=np.float32)
    index = pd.DataFrame({"conversation_id": ["zig", "zig", "zig", "same", "same"],
                          "turn": [1, 0, 2, 0, 1]})
    np.save(tmp_path / "e.npy", vectors)
    index.to_parquet(tmp_path / "e_index.parquet")
    out = tmp_path / "features.csv"
    assert main(["features", str(tmp_path / "e.npy"), "-o", str(out), "--no-progress"]) == 0
    table = pd.read_csv(out).set_index("conversation_id")
    zig, same = table.loc["zig"], table.loc["same"]
    assert zig["n_turns"] == 3 and same["n_turns"] == 2
    assert zig["local_coherence"] == pytest.approx(0.0, abs=1e-12)
    assert zig["path_length"] == pytest.approx(2.0)
    assert zig["max_distance"] == pytest.approx(1.0)
    assert zig["trajectory_curvature"] == pytest.approx(math.pi)
    assert math.isnan(zig["convergence_ratio"])  # needs 4 turns
    assert same["local_coherence"] == pytest.approx(1.0)
    assert same["path_length"] == pytest.approx(0.0, abs=1e-12)
    assert same["max_distance"] == pytest.approx(0.0, abs=1e-12)


def test_features_from_corpus_json(tmp_path, private_cache):
    prefill(private_cache, {"alpha": [1, 0], "beta": [0, 1], "gamma": [1, 1]})
    out = tmp_path / "f.json"
    assert main(["features", str(small_corpus(tmp_path)), "-o", str(out), "--no-progress"]) == 0
    records = {r["conversation_id"]: r for r in json.loads(out.read_text())}
    assert records["a"]["task"] == "t1" and records["a"]["n_turns"] == 2
    assert records["a"]["local_coherence"] == pytest.approx(0.0, abs=1e-9)  # orthogonal turns
    assert records["a"]["path_length"] == pytest.approx(1.0)
    assert records["b"]["path_length"] == 0.0 and records["b"]["local_coherence"] is None
    assert records["a"]["embedding_model"] == DEFAULT_MODEL  # for diagnose's embedding check


def test_features_needs_the_index(tmp_path, capsys):
    np.save(tmp_path / "lonely.npy", np.eye(2))
    assert main(["features", str(tmp_path / "lonely.npy")]) == 2
    assert "lonely_index.parquet" in capsys.readouterr().err


# -- diversity ------------------------------------------------------------------------------
def test_diversity_of_a_texts_table(tmp_path, private_cache):
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    method_a = [f"idea number {w} for the city" for w in
                ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]]
    method_b = ["same idea", "same idea"]
    vectors = {t: np.eye(10)[i] for i, t in enumerate(method_a)}  # orthogonal: Vendi = n
    vectors["same idea"] = np.eye(10)[0]
    prefill(private_cache, vectors)
    table = pd.DataFrame({"task": ["t"] * 12, "method": ["a"] * 10 + ["b"] * 2,
                          "text": method_a + method_b})
    source = tmp_path / "ideas.csv"
    table.to_csv(source, index=False)
    out = tmp_path / "div.csv"
    code = main(["diversity", str(source), "-o", str(out), "--no-progress"])
    assert code == 0
    result = pd.read_csv(out).set_index("method")
    a, b = result.loc["a"], result.loc["b"]
    assert a["n_texts"] == 10 and a["vendi"] == pytest.approx(10.0)
    tokens = [t.split() for t in method_a]
    smooth = SmoothingFunction().method1
    expected = 1 - np.mean([sentence_bleu(tokens[:i] + tokens[i + 1:], tokens[i],
                                          smoothing_function=smooth) for i in range(10)])
    assert a["div_bleu"] == pytest.approx(expected, abs=1e-9)
    # inter-session: runs 1-5 and 6-10, each orthogonal -> Vendi 5
    assert a["inter_groups"] == 2 and a["inter_vendi"] == pytest.approx(5.0)
    groups = [tokens[:5], tokens[5:]]
    expected_inter = np.mean([1 - np.mean([sentence_bleu(g[:i] + g[i + 1:], g[i],
                                                         smoothing_function=smooth)
                                           for i in range(5)]) for g in groups])
    assert a["inter_div_bleu"] == pytest.approx(expected_inter, abs=1e-9)
    same = ["same", "idea"]  # two words: NLTK's smoothed BLEU-4 of a copy is not 1
    expected_b = 1 - sentence_bleu([same], same, smoothing_function=smooth)
    assert b["vendi"] == pytest.approx(1.0) and b["div_bleu"] == pytest.approx(expected_b, abs=1e-9)
    assert b["inter_groups"] == 0 and math.isnan(b["inter_vendi"])


def test_diversity_of_corpus_final_ideas(tmp_path, private_cache, capsys):
    prefill(private_cache, {"red": [1, 0], "blue": [0, 1], "last turn": [1, 1]})
    corpus = Corpus([
        Conversation("r1", turns=[Turn("s", "x")], task="t", protocol="open", final_idea="red"),
        Conversation("r2", turns=[Turn("s", "x")], task="t", protocol="open", final_idea="blue"),
        Conversation("r3", turns=[Turn("s", "last turn")], task="t", protocol="none"),
    ])
    path = corpus.write(tmp_path / "c.jsonl")
    assert main(["diversity", str(path), "--no-progress", "--format", "json"]) == 0
    captured = capsys.readouterr()
    rows = {r["protocol"]: r for r in json.loads(captured.out)}
    assert "model calls 0, cache hits 3" in captured.err
    assert rows["open"]["vendi"] == pytest.approx(2.0) and rows["open"]["n_texts"] == 2
    assert rows["none"]["vendi"] == pytest.approx(1.0) and rows["none"]["div_bleu"] is None
    assert rows["none"]["warning"] == "1 text: diversity undefined"
    assert "warning: 1 of 2 group(s) have fewer than 2 texts" in captured.err


def test_diversity_never_pools_runs_of_different_conditions(tmp_path, private_cache, capsys):
    # same method and task, but k differs: two groups, never one
    prefill(private_cache, {"a": [1, 0], "b": [0, 1], "c": [1, 0], "d": [1, 0]})
    conversations = [Conversation(f"r{i}", task="t", protocol="creative_mad", team_size=4, final_idea=text,
                                  meta={"k": k, "rounds": 1, "lenses": True, "peers": "distant",
                                        "temperature": 1.0})
                     for i, (text, k) in enumerate([("a", 1), ("b", 1), ("c", 2), ("d", 2)])]
    path = Corpus(conversations).write(tmp_path / "c.jsonl")
    assert main(["diversity", str(path), "--no-progress", "--format", "json"]) == 0
    rows = {r["condition"]: r for r in json.loads(capsys.readouterr().out)}
    assert sorted(rows) == ["creative_mad [CLA, distant k=1] N=4 R=1 T=1",
                            "creative_mad [CLA, distant k=2] N=4 R=1 T=1"]
    assert rows["creative_mad [CLA, distant k=1] N=4 R=1 T=1"]["vendi"] == pytest.approx(2.0)
    assert rows["creative_mad [CLA, distant k=2] N=4 R=1 T=1"]["vendi"] == pytest.approx(1.0)


def test_help_for_every_subcommand(capsys):
    for command in ("import", "embed", "features", "diversity"):
        with pytest.raises(SystemExit) as exited:
            main([command, "--help"])
        assert exited.value.code == 0
        assert "usage: python -m engine " + command in capsys.readouterr().out


def test_features_reads_embeddings_memory_mapped_without_copies(tmp_path):
    # rows written conversation by conversation (as `embed` does) become slices of the
    # memory-mapped file: nothing is copied before the features reach a conversation
    from engine.cli.data import load_embeddings

    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(9, 4)).astype(np.float32)
    np.save(tmp_path / "e.npy", vectors)
    pd.DataFrame({"conversation_id": ["b"] * 4 + ["a"] * 5,
                  "turn": [0, 1, 2, 3, 0, 1, 2, 3, 4]}).to_parquet(tmp_path / "e_index.parquet")
    ids, blocks = load_embeddings(tmp_path / "e.npy", None)
    assert ids == ["b", "a"] and list(blocks.lengths) == [4, 5]
    assert isinstance(blocks[1], np.memmap) and np.array_equal(blocks[1], vectors[4:])
    # turns out of order inside a conversation are put back in order (a copy)
    pd.DataFrame({"conversation_id": ["b"] * 4 + ["a"] * 5,
                  "turn": [3, 2, 1, 0, 0, 1, 2, 3, 4]}).to_parquet(tmp_path / "e_index.parquet")
    ids, blocks = load_embeddings(tmp_path / "e.npy", None)
    assert np.array_equal(blocks[0], vectors[[3, 2, 1, 0]]) and np.array_equal(blocks[1], vectors[4:])
