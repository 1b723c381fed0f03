"""Generated bad input for every entry point the importer fuzz suite does not cover.

Grid YAML, specification YAML, tasks files, pilot feature tables (CSV, JSON lines,
Parquet), Parquet corpora and dashboard uploads each get hundreds of generated inputs
(hypothesis; ``N_EXAMPLES`` below). Every input must give either

* an ``InputError`` that names the file (and a row inside it, when it gives one) in one
  line, within 10 s, or
* the correct result, checked against what the generator put in the file.

Anything else (another exception, a hang, a value that differs from the file) fails.
Transcript CSV/JSONL and ConvoKit imports are fuzzed in ``test_importers_fuzz.py``.
"""

from __future__ import annotations

import io
import json
import math
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES

pytestmark = pytest.mark.timeout(300)  # the whole module; each case is held to 10 s below
N_EXAMPLES = {"grid": 120, "spec": 100, "tasks": 80, "pilot": 100, "parquet": 60, "upload": 100}


def fuzz_settings(entry_point: str):
    return settings(max_examples=N_EXAMPLES[entry_point], deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


@contextmanager
def file_with(name: str, data: bytes):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        yield path


def outcome(call, *paths: Path):
    """The call's result, or its InputError after checking it names one of ``paths`` on one
    line with a plausible row; any other exception propagates (and fails the test)."""
    started = time.perf_counter()
    try:
        result = call()
        event("accepted")
        return result
    except InputError as error:
        event("refused")
        assert error.path in {str(p) for p in paths}, (str(error), paths)
        assert "\n" not in str(error) and str(error), str(error)
        if error.row is not None and Path(error.path).is_file() and Path(error.path).suffix != ".parquet":
            n_lines = Path(error.path).read_bytes().count(b"\n") + 1
            assert 1 <= error.row <= n_lines, (str(error), n_lines)
        return error
    finally:
        assert time.perf_counter() - started < 10


# -- junk values ---------------------------------------------------------------------------
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10 ** 30, 10 ** 30), st.integers(-3, 12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.sampled_from(["", " ", "all", "local", "direct", "open", "homo_mad",
                                           "plastic_waste", "trajectory", "ols_cluster", "mixedlm",
                                           "!!python/none", "*alias", "&anchor", "{}", "[]", "\t",
                                           "\u2028", "\ufeff", "é", "0x1f", "1e400", "yes", "null"]))
junk = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6) | st.integers(), inner, max_size=3)),
    max_leaves=6)
raw_yaml = st.lists(st.sampled_from([
    "a: &x [1, 2]\n", "b: *x\n", "c: *missing\n", "conditions:\n", "  - method: direct\n",
    "- ", "[", "]", "{", "}", ": ", "\t", "!!python/object/apply:os.system ['true']\n",
    "---\n", "%YAML 1.1\n", "? complex\n", "name: g\n", "key: 'unterminated\n", "&a ", "*a ",
    "\x00", "\x85", "\ud7ff", "\\", "|\n  block\n", ">-\n folded\n", "<<: *x\n", "\n"]), max_size=25).map("".join)


def yaml_bytes(value) -> bytes:
    try:
        return yaml.safe_dump(value, allow_unicode=True).encode("utf-8", "surrogatepass")
    except (yaml.YAMLError, ValueError, TypeError):
        return repr(value).encode("utf-8", "surrogatepass")


def mutate(base: dict, paths: list[tuple], data) -> dict:
    """``base`` with one to three of its ``paths`` set to junk (or deleted)."""
    value = json.loads(json.dumps(base))
    for _ in range(data.draw(st.integers(1, 3))):
        *parents, last = data.draw(st.sampled_from(paths))
        target = value
        for key in parents:
            if isinstance(target, dict) and key in target:
                target = target[key]
            elif isinstance(target, list) and isinstance(key, int) and key < len(target):
                target = target[key]
            else:
                target = None
                break
        if isinstance(target, dict):
            if last in target and data.draw(st.integers(0, 3)) == 0:
                del target[last]
            else:
                target[last] = data.draw(junk)
        elif isinstance(target, list) and isinstance(last, int) and last < len(target):
            target[last] = data.draw(junk)
    return value


# -- grid YAML -----------------------------------------------------------------------------
GRID = {"name": "g", "model": "local", "seed": 1, "concurrency": 2, "tasks": ["plastic_waste"],
        "defaults": {"max_tokens": 50}, "judge": {"model": "local", "max_tokens": 24},
        "prices": {"local": [0.0, 0.0]}, "task_texts": {"mine": "Invent a new sport."},
        "conditions": [{"method": "direct", "replicates": 2}, {"method": "open", "turn_limit": 4}]}
GRID_PATHS = [("name",), ("model",), ("seed",), ("concurrency",), ("tasks",), ("defaults",),
              ("defaults", "max_tokens"), ("judge",), ("judge", "max_tokens"), ("prices",),
              ("prices", "local"), ("task_texts",), ("task_texts", "mine"), ("conditions",),
              ("conditions", 0), ("conditions", 0, "method"), ("conditions", 0, "replicates"),
              ("conditions", 1, "turn_limit"), ("conditions", 1, "tasks"), ("request_timeout",),
              ("max_attempts",), ("api_key_env",), ("base_url",), ("unknown_key",)]


@fuzz_settings("grid")
@given(data=st.data())
def test_generated_grid_files(data):
    from engine.runs.grid import load_grid

    kind = data.draw(st.sampled_from(["mutated", "mutated", "raw", "bytes"]))
    if kind == "mutated":
        value = mutate(GRID, GRID_PATHS, data)
        payload = yaml_bytes(value)
    elif kind == "raw":
        value, payload = None, data.draw(raw_yaml).encode("utf-8", "surrogatepass")
    else:
        value, payload = None, data.draw(st.binary(max_size=200))
    with file_with("grid.yaml", payload) as path:
        result = outcome(lambda: load_grid(path), path)
    if not isinstance(result, InputError) and isinstance(value, dict) and "name" in value:
        assert result.name == value["name"]  # what the file says, not a default
        assert len(result.conditions) == len(value["conditions"])
        assert [c.method for c in result.conditions] == [c["method"] for c in value["conditions"]]


# -- specification YAML --------------------------------------------------------------------
SPEC = {"name": "s", "outcome": "creativity", "blocks": ["trajectory", "task"], "estimator": "ols_hc3",
        "group": "task", "zscore": True, "cluster": None, "reference": {"task": "plastic_waste"},
        "columns": {"task": "question_id"}, "star_levels": [0.1, 0.05, 0.01]}
SPEC_PATHS = [(name,) for name in SPEC] + [("blocks", 0), ("star_levels", 1), ("reference", "task"),
                                           ("extra",)]


@fuzz_settings("spec")
@given(data=st.data())
def test_generated_spec_files(data):
    from engine.stats.spec import load_specs

    kind = data.draw(st.sampled_from(["mutated", "mutated", "list", "raw"]))
    if kind == "raw":
        value, payload = None, data.draw(raw_yaml).encode("utf-8", "surrogatepass")
    else:
        value = mutate(SPEC, SPEC_PATHS, data)
        if kind == "list":
            value = {"specs": [SPEC, value]}
        payload = yaml_bytes(value)
    with file_with("spec.yaml", payload) as path:
        result = outcome(lambda: load_specs(path), path)
    if isinstance(result, list) and isinstance(value, dict):
        given_spec = value["specs"][-1] if "specs" in value else value
        spec = result[-1]
        assert (spec.name, spec.outcome) == (given_spec["name"], given_spec["outcome"])
        assert spec.zscore is given_spec.get("zscore", True)
        assert list(spec.star_levels) == [float(p) for p in given_spec.get("star_levels", [0.05, 0.01, 0.001])]
        for level in spec.star_levels:
            assert 0 < level < 1


# -- tasks files ---------------------------------------------------------------------------
task_lines = st.one_of(
    st.fixed_dictionaries({"id": st.sampled_from(["t1", "t2", "my.task", "x" * 70, "", "a/b", 3]),
                           "prompt": st.one_of(st.text(max_size=30), st.integers(), st.none())},
                          optional={"title": junk, "extra": junk}).map(json.dumps),
    st.sampled_from(['{"id": "t1", "prompt": "\\ud800"}', '{"id": "t1", "prompt": "\\ud83d\\ude00 ok"}',
                     '{"id": "t1"', "[1, 2]", "null", '"text"', "", "   ", '{"id": "t1", "prompt": NaN}',
                     '{"id": "t\\u2028", "prompt": "p"}', '{"id": "t1", "prompt": "p\\u2028q"}']),
    st.text(max_size=20))


@fuzz_settings("tasks")
@given(lines=st.lists(task_lines, max_size=6))
def test_generated_tasks_files(lines):
    from engine.tasks import load_tasks_file

    with file_with("tasks.jsonl", "\n".join(lines).encode("utf-8", "surrogatepass")) as path:
        result = outcome(lambda: load_tasks_file(path), path)
    if isinstance(result, list):
        records = [json.loads(line) for line in lines if line.strip()]
        assert [t.id for t in result] == [str(r["id"]) for r in records]  # an integer id is read as text
        assert [t.prompt for t in result] == [r["prompt"].strip() for r in records]


# -- pilot feature tables ------------------------------------------------------------------
# cell text -> the value it must be read as; every other token must be refused
GOOD_CELLS = {"0.5": 0.5, " 0.25 ": 0.25, "1e5": 1e5, "-0": -0.0, "7": 7.0, "": math.nan,
              "nan": math.nan, "NaN": math.nan, "-1000000": -1e6}
BAD_CELLS = ["abc", "inf", "-inf", "Infinity", "1e308", "-1e308", "1e7", "0x10", "true", "∞",
             "½", "1,5", "--1", "1e999", "0.5.1", "e5"]


@fuzz_settings("pilot")
@given(data=st.data())
def test_generated_pilot_tables(data):
    from engine.diagnosis.diagnose import load_pilot

    n = data.draw(st.integers(1, 5))
    tokens = st.sampled_from([*GOOD_CELLS, *BAD_CELLS])
    plain = st.sampled_from(["0.1", "0.2", "0.35"])
    cells = {name: [data.draw(tokens if data.draw(st.integers(0, 9)) == 0 else plain) for _ in range(n)]
             for name in PAPER_A_FEATURES}
    columns = ["conversation_id", *PAPER_A_FEATURES]
    dropped = data.draw(st.sampled_from([None, None, None, *PAPER_A_FEATURES]))
    if dropped:
        columns.remove(dropped)
    fmt = data.draw(st.sampled_from(["csv", "jsonl", "parquet"]))
    rows = [{"conversation_id": f"p{i}", **{f: cells[f][i] for f in PAPER_A_FEATURES}} for i in range(n)]
    damaged = False
    if fmt == "csv":
        payload = pd.DataFrame(rows)[columns].to_csv(index=False).encode()
        if data.draw(st.integers(0, 5)) == 0:  # damage: a ragged last row or a bad byte
            payload = payload.rstrip(b"\n") + data.draw(st.sampled_from([b",9\n", b"\xff\n"]))
            damaged = True
    elif fmt == "jsonl":
        as_json = lambda v: v if data.draw(st.booleans()) else _json_number(v)  # noqa: E731
        payload = "\n".join(json.dumps({k: r[k] if k == "conversation_id" else as_json(r[k]) for k in columns})
                            for r in rows).encode()
    else:
        buffer = io.BytesIO()
        pd.DataFrame(rows)[columns].to_parquet(buffer, index=False)
        payload = buffer.getvalue()
    with file_with(f"pilot.{fmt}", payload) as path:
        result = outcome(lambda: load_pilot(path), path)
    bad = {(i + 1, f) for f in PAPER_A_FEATURES if f != dropped for i, v in enumerate(cells[f])
           if v in BAD_CELLS}
    if isinstance(result, InputError):
        assert bad or dropped or damaged, str(result)  # refused only with a reason
        if not damaged and result.field in PAPER_A_FEATURES and result.row is not None:
            assert (result.row, result.field) in bad, (str(result), bad)
        return
    assert not bad and not dropped and not damaged, (bad, dropped, damaged)
    for name in PAPER_A_FEATURES:  # every value exactly as written
        expected = [GOOD_CELLS[v] if v in GOOD_CELLS else float(v) for v in cells[name]]
        np.testing.assert_array_equal(result.table[name].to_numpy(dtype=float), np.array(expected))


def _json_number(cell: str):
    """A cell written as a JSON number where JSON (Python's) can write it, else as text."""
    try:
        value = float(cell)
    except ValueError:
        return cell
    return value if cell.strip() else None


# -- Parquet corpora -----------------------------------------------------------------------
def corpus_table() -> pa.Table:
    from engine.corpus import Conversation, Corpus, Turn

    corpus = Corpus([Conversation("a", [Turn("x", "hi", round=1)], task="plastic_waste", team_size=2),
                     Conversation("b", [Turn("y", "yo")], source="human")])
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as folder:
        corpus.to_parquet(Path(folder) / "c.parquet")
        buffer.write((Path(folder) / "c.parquet").read_bytes())
    return pq.read_table(io.BytesIO(buffer.getvalue()))


@fuzz_settings("parquet")
@given(data=st.data())
def test_generated_parquet_corpora(data):
    from engine.corpus import Corpus
    from engine.importers.transcripts import read_any

    table = corpus_table()
    records = table.to_pylist()
    kind = data.draw(st.sampled_from(["cell", "cell", "header", "truncate"]))
    if kind == "cell":
        row = data.draw(st.integers(0, 1))
        column = data.draw(st.sampled_from(["conversation_id", "meta", "outcomes", "source", "status",
                                            "team_size", "task", "turns"]))
        records[row][column] = data.draw(st.one_of(
            st.sampled_from(["{not json", "[]", "null", "", "robot", "\ud83d", "1e999", '{"a": NaN}']),
            st.integers(-5, 5), st.none(), st.lists(st.text(max_size=3), max_size=2)).filter(
            lambda v: not (isinstance(v, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in v))))
        try:
            table = pa.Table.from_pylist(records).replace_schema_metadata(table.schema.metadata)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            table = pa.Table.from_pylist(
                [{k: json.dumps(v) if k == column else v for k, v in r.items()} for r in records])
    elif kind == "header":
        table = table.replace_schema_metadata({b"corpus": data.draw(st.binary(max_size=20))})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    payload = buffer.getvalue()
    if kind == "truncate":
        payload = payload[: data.draw(st.integers(0, len(payload) - 1))]
    with file_with("corpus.parquet", payload) as path:
        for read in (Corpus.from_parquet, read_any):
            result = outcome(lambda: read(path), path)
            if isinstance(result, Corpus):
                assert [c.conversation_id for c in result] == [str(r["conversation_id"]) for r in table.to_pylist()]
                for conversation in result:
                    assert conversation.source in ("llm", "human") and isinstance(conversation.meta, dict)


# -- dashboard uploads ---------------------------------------------------------------------
class HashEmbedder:
    model_name = "hash-test"

    def encode(self, texts, progress=False):
        vectors = [np.random.default_rng(sum(map(ord, t)) % 2 ** 32).normal(size=8) for t in texts]
        return np.asarray([v / np.linalg.norm(v) for v in vectors]).reshape(len(texts), 8)


UPLOAD_LINES = ["c1,0,a,hello\n", "c1,1,b,\"q\n", "c1,x,a,hi\n", "c2,0,,yo\n", "c1,0,a,dup\n", ",,,\n",
                "c3,1,a,b,c\n", "c1,inf\n", "c2,0.5\n", "c3,abc\n", "\x00\n", "c4,2,![x](http://h/x.png),hi\n"]
near_valid = st.one_of(
    st.lists(st.sampled_from(UPLOAD_LINES), max_size=2).map(
        lambda junk: ("conversation_id,turn,speaker,text\nc8,0,a,one idea\nc8,1,b,another idea\n"
                      + "".join(junk)).encode()),
    st.lists(st.sampled_from(UPLOAD_LINES), max_size=2).map(
        lambda junk: ("conversation_id,global_coherence,path_length\nc8,0.4,1.5\nc9,0.6,2.5\n"
                      + "".join(junk)).encode()))
upload_payloads = st.one_of(
    near_valid, near_valid,
    st.binary(max_size=120),
    st.lists(st.sampled_from(["conversation_id,turn,speaker,text\n", "c1,0,a,hello\n", "c1,1,b,\"q\n",
                              "c1,x,a,hi\n", "c2,0,,yo\n", "c1,0,a,dup\n", ",,,\n", "c3,1,a,b,c\n",
                              "conversation_id,global_coherence\n", "c1,inf\n", "c2,0.5\n", "c3,abc\n",
                              '{"conversation_id": "a", "turn": 0, "speaker": "s", "text": "t"}\n',
                              '{"turns": 3}\n', "\ufeff", "\x00", "\u2028"]), max_size=8).map(
        lambda parts: "".join(parts).encode("utf-8")))


@fuzz_settings("upload")
@given(name=st.sampled_from(["data.csv", "data.tsv", "data.jsonl", "data.ndjson", "data.parquet",
                             "data.txt", "data", "x.CSV", "[a](http:x).csv", "<img src=x>.jsonl"]),
       payload=upload_payloads)
def test_generated_dashboard_uploads(name, payload):
    from dashboard.page_data.uploads import read_upload
    from engine.datasets import Dataset

    started = time.perf_counter()
    try:
        result = read_upload(name, payload, embedder_factory=HashEmbedder)
        event("accepted")
    except InputError as error:
        event("refused")
        assert error.path == name and "\n" not in str(error), str(error)
        return
    finally:
        assert time.perf_counter() - started < 10
    assert isinstance(result, Dataset) and len(result.conversations) > 0
    assert result.conversations["conversation_id"].notna().all()
    for feature in PAPER_A_FEATURES:
        if feature in result.conversations.columns:
            values = result.conversations[feature].to_numpy(dtype=float)
            assert not np.isinf(values).any()


def test_fuzz_budget_is_at_least_300_generated_inputs():
    assert sum(N_EXAMPLES.values()) >= 300


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
