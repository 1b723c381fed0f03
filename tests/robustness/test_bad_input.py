"""Bad input that used to end in a traceback, a hang or a silent acceptance: each case now
gives one line naming the file (and row/field), or the correct result.

Covers YAML (grid and specification files), pilot feature tables and run folders for
``analyze diagnose``, Parquet corpora whose JSON cells are not JSON, JSON lines holding a
lone surrogate escape, and the transcript conveniences (``--map a=b,c=d``, ``features
--map``, ``diversity`` on a transcript file, the stated ``source`` default).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.cli import main
from engine.corpus import Conversation, Corpus, Turn
from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.stats.reference import default_release_path

REPO = Path(__file__).resolve().parents[2]
RELEASE = default_release_path()  # the paper release beside the repository (or $CDL_PAPER_RELEASE)
EXAMPLE = REPO / "docs" / "reference" / "example_transcripts.csv"


def run_cli(argv, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


# -- YAML ---------------------------------------------------------------------------------
GOOD_GRID = "name: g\nmodel: local\ntasks: [plastic_waste]\nconditions:\n  - {method: direct}\n"


def alias_bomb(levels: int = 7, width: int = 10) -> str:
    lines = ['a0: &a0 ["lol"]']
    for level in range(1, levels):
        refs = ", ".join(f"*a{level - 1}" for _ in range(width))
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines.append(f"task_texts: {{t: *a{levels - 1}}}")
    return "\n".join(lines) + "\n"


def test_grid_yaml_that_is_not_utf8_names_file_and_line(tmp_path):
    from engine.runs.grid import load_grid

    path = tmp_path / "grid.yaml"
    path.write_bytes(GOOD_GRID.replace("name: g", "name: caf\xe9").encode("latin-1"))
    with pytest.raises(InputError) as caught:
        load_grid(path)
    assert caught.value.path == str(path) and caught.value.row == 1
    assert "not UTF-8" in str(caught.value)


@pytest.mark.timeout(60)  # a hang guard, not a timing: the refusal comes before any deep parse
def test_deeply_nested_grid_yaml_is_refused_quickly(tmp_path):
    from engine.runs.grid import load_grid

    path = tmp_path / "deep.yaml"
    path.write_text("conditions: " + "[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(InputError, match="nested more than 64 levels") as caught:
        load_grid(path)
    assert caught.value.path == str(path) and caught.value.row == 1


@pytest.mark.timeout(30)  # a hang guard: expanding the bomb would not finish in time
def test_yaml_alias_bomb_is_refused_before_it_expands(tmp_path):
    from engine.runs.grid import load_grid
    from engine.stats.spec import load_specs

    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb())  # 10**6 strings once expanded
    for loader in (load_grid, load_specs):
        with pytest.raises(InputError) as caught:
            loader(path)
        assert caught.value.path == str(path) and "alias bomb" in caught.value.reason


def test_yaml_with_a_repeated_key_is_refused_not_silently_overwritten(tmp_path):
    from engine.runs.grid import load_grid

    path = tmp_path / "grid.yaml"
    path.write_text(GOOD_GRID + "model: gpt-4o\n")  # model given twice: which one?
    with pytest.raises(InputError, match="'model' appears twice") as caught:
        load_grid(path)
    assert caught.value.row == 6


def test_grid_condition_error_names_the_grid_file(tmp_path):
    from engine.runs.grid import load_grid

    path = tmp_path / "grid.yaml"
    path.write_text(GOOD_GRID.replace("{method: direct}", "{method: direct, rounds: many}"))
    with pytest.raises(InputError) as caught:
        load_grid(path)
    assert caught.value.path == str(path) and caught.value.field == "conditions[0].rounds"


@pytest.mark.parametrize("line, field", [
    ("star_levels: 5", "star_levels"),
    ("star_levels: [a, b, c]", "star_levels"),
    ("star_levels: [true, 0.01, 0.001]", "star_levels"),
    ("zscore: 'no'", "zscore"),
    ("group: [task]", "group"),
    ("reference: {discussion: [none]}", "reference"),
    ("columns: 3", "columns"),
])
def test_spec_values_of_the_wrong_type_are_refused(tmp_path, line, field):
    from engine.stats.spec import load_specs

    path = tmp_path / "spec.yaml"
    path.write_text(f"name: s\noutcome: creativity\nblocks: [trajectory]\n{line}\n")
    with pytest.raises(InputError) as caught:
        load_specs(path)
    assert caught.value.path == str(path) and caught.value.field == field


def test_spec_yaml_cli_error_is_one_line(tmp_path, capsys):
    path = tmp_path / "spec.yaml"
    path.write_text("name: s\noutcome: creativity\nblocks: [trajectory]\nstar_levels: 5\n")
    code, _, err = run_cli(["analyze", "regress", "--spec", path, "--metrics", RELEASE], capsys)
    assert code == 2
    assert str(path) in one_line_error(err) and "star_levels" in err


# -- pilot tables and run folders ---------------------------------------------------------
def pilot_frame(n: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    table = pd.DataFrame({name: rng.uniform(0.1, 0.9, n) for name in PAPER_A_FEATURES})
    table.insert(0, "conversation_id", [f"p{i}" for i in range(n)])
    return table


@pytest.mark.parametrize("cell", ["abc", "inf", "-inf", "1e308", "-1e308", "true"])
def test_pilot_feature_cell_that_is_not_a_plausible_number_is_refused(tmp_path, capsys, cell):
    table = pilot_frame().astype({"path_length": object})
    table.loc[3, "path_length"] = cell
    path = tmp_path / "pilot.csv"
    table.to_csv(path, index=False)
    code, _, err = run_cli(["analyze", "diagnose", "--pilot", path, "--reference", RELEASE], capsys)
    assert code == 2
    line = one_line_error(err)
    assert f"file {path}, row 4, field 'path_length'" in line and repr(cell) in line


def test_pilot_csv_with_a_ragged_later_row_names_the_row(tmp_path, capsys):
    path = tmp_path / "pilot.csv"
    text = pilot_frame().to_csv(index=False).splitlines()
    text[4] += ",0.5"  # the 4th data row has one cell too many
    path.write_text("\n".join(text) + "\n")
    code, _, err = run_cli(["analyze", "diagnose", "--pilot", path, "--reference", RELEASE], capsys)
    assert code == 2
    assert f"file {path}, row 4" in one_line_error(err) and "11 cells but the header has 10" in err


def test_pilot_features_are_read_exactly(tmp_path):
    from engine.diagnosis.diagnose import load_pilot

    table = pilot_frame()
    table.loc[2, "revisit_score"] = np.nan  # a missing feature stays missing, not an error
    path = tmp_path / "pilot.csv"
    table.to_csv(path, index=False)
    pilot = load_pilot(path)
    assert pilot.embedding_model is None
    np.testing.assert_allclose(pilot.table[list(PAPER_A_FEATURES)].to_numpy(dtype=float),
                               table[list(PAPER_A_FEATURES)].to_numpy(dtype=float), rtol=1e-15)


class HashEmbedder:
    """Deterministic unit vectors from a text (test double for the sentence embedder)."""

    model_name = "hash-test"

    def encode(self, texts, progress=False):
        out = []
        for text in texts:
            rng = np.random.default_rng(sum(ord(c) * (i + 1) for i, c in enumerate(text)) % 2 ** 32)
            vector = rng.normal(size=8)
            out.append(vector / np.linalg.norm(vector))
        return np.asarray(out)


def write_run_folder(folder: Path) -> Corpus:
    """A folder as `engine run` leaves it: corpus.jsonl (+ manifest.json), one failed session."""
    conversations = []
    for i in range(4):
        turns = [Turn(speaker=f"agent_{k % 2}", text=f"idea {i}.{k}: " + "more " * k, round=k)
                 for k in range(5)]
        conversations.append(Conversation(conversation_id=f"open-plastic_waste-r{i}", turns=turns,
                                          task="plastic_waste", model="local", protocol="open"))
    conversations.append(Conversation(conversation_id="open-plastic_waste-r9", status="failed",
                                      error="backend down", turns=[], task="plastic_waste"))
    corpus = Corpus(conversations, name="run")
    folder.mkdir()
    corpus.to_jsonl(folder / "corpus.jsonl")
    (folder / "manifest.json").write_text(json.dumps({"status": "finished"}))
    return corpus


def test_diagnose_accepts_a_run_folder_and_measures_its_turns(tmp_path, capsys, monkeypatch):
    import engine.embedding.embedder

    corpus = write_run_folder(tmp_path / "run")
    from engine.diagnosis.diagnose import load_pilot

    pilot = load_pilot(tmp_path / "run", HashEmbedder)
    assert list(pilot.table["conversation_id"]) == [f"open-plastic_waste-r{i}" for i in range(4)]
    assert pilot.embedding_model == "hash-test"
    for conversation, path_length in zip(corpus, pilot.table["path_length"]):
        e = HashEmbedder().encode(conversation.texts)  # by hand: sum of consecutive cosine distances
        assert path_length == pytest.approx(sum(1 - e[k] @ e[k + 1] for k in range(len(e) - 1)))

    monkeypatch.setattr(engine.embedding.embedder, "Embedder", lambda *a, **k: HashEmbedder())
    code, out, err = run_cli(["analyze", "diagnose", "--pilot", tmp_path / "run",
                              "--reference", RELEASE], capsys)
    assert code == 0, err
    assert "run folder" in out and "4 conversations" in out
    assert "Pilot diagnosis: based on 4 pilot conversations" in out
    # hash-test is not the reference's Qwen3 model: the values side by side, nothing ranked
    assert "pilot hash-test, reference Qwen/Qwen3-Embedding-0.6B; they differ" in out
    assert "nothing is ranked across them" in out and "Flags and recommendation: none (not comparable)" in out


def test_diagnose_refuses_a_folder_that_is_neither_run_nor_dataset(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, _, err = run_cli(["analyze", "diagnose", "--pilot", tmp_path / "empty",
                            "--reference", RELEASE], capsys)
    assert code == 2 and "neither a run folder" in one_line_error(err)


# -- Parquet cells, JSON lines ------------------------------------------------------------
def test_parquet_corpus_whose_meta_is_not_json_names_row_and_field(tmp_path):
    path = tmp_path / "corpus.parquet"
    Corpus([Conversation("a", [Turn("x", "hi")]), Conversation("b", [Turn("y", "yo")])]).to_parquet(path)
    table = pq.read_table(path)
    meta = table.column("meta").to_pylist()
    meta[1] = "{not json"
    table = table.set_column(table.schema.get_field_index("meta"), "meta", pa.array(meta))
    pq.write_table(table, path)
    with pytest.raises(InputError) as caught:
        Corpus.from_parquet(path)
    assert (caught.value.path, caught.value.row, caught.value.field) == (str(path), 2, "meta")


def test_jsonl_with_a_lone_surrogate_escape_names_row_and_field(tmp_path, capsys):
    from engine.importers.transcripts import read_transcripts

    path = tmp_path / "turns.jsonl"
    path.write_text('{"conversation_id": "a", "turn": 0, "speaker": "x", "text": "ok"}\n'
                    '{"conversation_id": "a", "turn": 1, "speaker": "x", "text": "bad \\ud800 here"}\n')
    with pytest.raises(InputError) as caught:
        read_transcripts(path)
    assert (caught.value.row, caught.value.field) == (2, "text")
    assert "lone surrogate" in str(caught.value)
    # a real pair of escapes is one character and stays fine
    path.write_text('{"conversation_id": "a", "turn": 0, "speaker": "x", "text": "\\ud83d\\ude00"}\n')
    assert read_transcripts(path)["a"].turns[0].text == "\U0001F600"


def test_json_error_says_at_once(tmp_path):
    from engine.importers.transcripts import read_transcripts

    path = tmp_path / "turns.jsonl"
    path.write_text('{"conversation_id": "a", "text": "never closed}\n')
    with pytest.raises(InputError) as caught:
        read_transcripts(path)
    assert "Unterminated string starting at column 34" in str(caught.value)
    assert " at at " not in str(caught.value)


# -- transcripts: documentation and conveniences ------------------------------------------
def test_documented_example_file_imports_cleanly(tmp_path, capsys):
    out_path = tmp_path / "corpus.jsonl"
    code, out, err = run_cli(["import", EXAMPLE, out_path], capsys)
    assert code == 0, err
    corpus = Corpus.from_jsonl(out_path)
    assert [c.conversation_id for c in corpus] == ["team-01", "team-02"]
    human, llm = corpus["team-01"], corpus["team-02"]
    assert (human.source, human.team_size, human.outcomes) == ("human", 3, {"creativity": 3.4})
    assert (llm.source, llm.model, llm.protocol) == ("llm", "SmolLM2-135M", "open")
    assert llm.turns[0].text == 'A "refill passport": one stamp per refill, ten stamps buy a reusable bottle.'
    assert human.turns[2].meta == {"rater_note": "kept"} and human.turns[2].round == 2
    assert "source:" not in out  # every row names its source: nothing defaulted


def renamed_example(tmp_path) -> Path:
    table = pd.read_csv(EXAMPLE).rename(columns={"conversation_id": "dialog", "text": "utterance"})
    table = table.drop(columns=["source"])
    path = tmp_path / "theirs.csv"
    table.to_csv(path, index=False)
    return path


def test_map_accepts_comma_separated_pairs_and_source_default_is_stated(tmp_path, capsys):
    path = renamed_example(tmp_path)
    for maps in (["--map", "dialog=conversation_id,utterance=text"],
                 ["--map", "dialog=conversation_id", "--map", "utterance=text"]):
        code, out, err = run_cli(["import", path, tmp_path / "c.jsonl", *maps], capsys)
        assert code == 0, err
        assert ("source: 2 of 2 conversations have no 'source' in the file and are counted as "
                "'llm' by default") in out
    code, out, _ = run_cli(["import", path, tmp_path / "c.jsonl", "--set", "source=human",
                            "--map", "dialog=conversation_id,utterance=text"], capsys)
    assert code == 0 and "counted as 'human' as set by --set source" in out
    assert {c.source for c in Corpus.from_jsonl(tmp_path / "c.jsonl")} == {"human"}


def test_features_takes_map(tmp_path, capsys, monkeypatch):
    import engine.embedding.embedder

    monkeypatch.setattr(engine.embedding.embedder, "Embedder", lambda *a, **k: HashEmbedder())
    monkeypatch.setattr("engine.cli.data.embedder_from_args", lambda args, cluster=None: _CachedHash())
    path = renamed_example(tmp_path)
    code, out, err = run_cli(["features", path, "--map", "dialog=conversation_id,utterance=text",
                              "--no-progress"], capsys)
    assert code == 0, err
    table = pd.read_csv(pd.io.common.StringIO(out))
    assert list(table["conversation_id"]) == ["team-01", "team-02"]
    assert list(table["n_turns"]) == [3, 2]
    assert list(table["source"]) == ["llm", "llm"]  # renamed_example drops the column ...
    assert "source: 2 of 2 conversations have no 'source'" in err  # ... and that is said
    texts = pd.read_csv(EXAMPLE).query("conversation_id == 'team-02'")["text"].tolist()
    e = HashEmbedder().encode(texts)
    assert table["path_length"].iloc[1] == pytest.approx(1 - e[0] @ e[1])


class _CachedHash(HashEmbedder):
    """HashEmbedder with the cache interface `embed_texts` reads (nothing cached)."""

    model_calls = 0

    class cache:
        @staticmethod
        def get_many(model, keys):
            return {}

        @staticmethod
        def count(model, keys):
            return 0


def test_diversity_on_a_transcript_file_takes_one_text_per_conversation(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("engine.cli.data.embedder_from_args", lambda args, cluster=None: _CachedHash())
    code, out, err = run_cli(["diversity", EXAMPLE, "--no-progress", "--group-by", "task"], capsys)
    assert code == 0, err
    assert "read as transcripts, one text per conversation" in err
    table = pd.read_csv(pd.io.common.StringIO(out))
    assert table["n_texts"].tolist() == [2]  # two conversations, not five turns
    e = HashEmbedder().encode(["Deposit on plastic trays refunded at the till",
                               "Refill passport with stamps for reusable bottles"])
    eigen = np.linalg.eigvalsh(e @ e.T / 2)  # Vendi score by hand: exp of the eigenvalue entropy
    eigen = eigen[eigen > 1e-12]
    assert table["vendi"].iloc[0] == pytest.approx(math.exp(-(eigen * np.log(eigen)).sum()))


# -- analysis inputs: every error names the data file, in one line -------------------------
def test_analysis_of_a_ragged_metrics_table_names_file_and_row(tmp_path, capsys):
    path = tmp_path / "metrics.csv"
    path.write_text("conversation_id,source,global_coherence,creativity\nc1,llm,0.5,3\nc2,human,0.4,2,9\n")
    code, _, err = run_cli(["analyze", "regress", "--metrics", path, "--outcome", "creativity",
                            "--sample", "all"], capsys)
    assert code == 2
    assert f"file {path}, row 2" in one_line_error(err) and "5 cells but the header has 4" in err


def test_analysis_error_about_a_column_names_the_data_file(tmp_path, capsys):
    path = tmp_path / "table.csv"
    path.write_text("a,b\n1,2\n3,4\n")
    code, _, err = run_cli(["analyze", "compare", "--metrics", path, "--value", "a"], capsys)
    assert code == 2
    assert one_line_error(err) == f"error: file {path}, field 'source': column 'source' is not in the data"


def test_dataset_folder_without_its_table_is_named(tmp_path, capsys):
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "manifest.json").write_text("{}")
    code, _, err = run_cli(["analyze", "manipulability", "--dataset", folder], capsys)
    assert code == 2
    assert f"file {folder}: no conversations.parquet" in one_line_error(err)


def test_paper_release_csv_with_a_ragged_row_is_one_line(tmp_path, capsys):
    lines = RELEASE.read_text(encoding="utf-8").splitlines()[:4]
    lines[2] += ",surplus"
    path = tmp_path / "release.csv"
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(["import", path, tmp_path / "out.csv"], capsys)
    assert code == 2
    assert str(path) in one_line_error(err) and "line 3" in err


@pytest.mark.parametrize("value", ["yes", "true", "'3'", "2.0"])
def test_grid_count_that_is_not_an_integer_is_refused(tmp_path, value):
    from engine.runs.grid import load_grid

    path = tmp_path / "grid.yaml"
    path.write_text(GOOD_GRID.replace("{method: direct}", f"{{method: direct, replicates: {value}}}"))
    with pytest.raises(InputError) as caught:  # YAML's `yes` used to become 1 replicate
        load_grid(path)
    assert caught.value.path == str(path) and caught.value.field == "conditions.0.replicates"
