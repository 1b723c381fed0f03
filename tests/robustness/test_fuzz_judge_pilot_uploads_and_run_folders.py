"""Generated inputs for the newer entry points: ``judge``, ``pilot``, an embedding server that
misbehaves (``--embed-base-url``), idea files, benchmark files, dashboard uploads and damaged
run folders; ``N_EXAMPLES`` below (at least 400 in all).

Each generator knows what it broke, and an oracle written from the documented rules (not from
the code under test) says what must happen to that input: the exact refusal (exit 2, one
``error:`` line naming the option, or the file with the row and field at fault, nothing written,
nothing read changed) or acceptance with the values the generator put in (the retries given, the
server's vectors, the ideas' ratings, one task per distinct item, every uploaded turn). The rules:
whole numbers are ASCII digits with an optional sign inside the option's range, the first bad
option in argv order is named (argparse reads left to right; unknown options are reported after
the others); idea ratings and counts follow the release's data dictionary (avg_* ratings 0-1,
rater columns 0-10, counts whole: agents 1-100, run 0-1,000,000, pool 0-1,000; tokens
0-1e12); integers are 64-bit; a CSV line whose only cell is blank is a blank line. Commands run
in this process (``engine.cli.main``: no interpreter start per case); the loopback servers stop
by themselves after ``lifetime``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from benchmarks.loopback_server import EMBEDDING_FAULTS, LoopbackServer, embedding_of
from engine.corpus import Conversation, Corpus, Turn
from engine.llm import ScriptedBackend
from engine.llm.retry import RetryPolicy
from engine.runs.runner import run_grid
from tests.support.cli_run import Outcome, cli

pytestmark = pytest.mark.timeout(600)
N_EXAMPLES = {"judge": 70, "pilot": 40, "embed": 50, "ideas": 80, "benchmark": 70, "upload": 70,
              "run_folder": 60}
assert sum(N_EXAMPLES.values()) >= 400
INT64 = 2 ** 63


def fuzz(entry_point: str):
    return settings(max_examples=N_EXAMPLES[entry_point], deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


def contract(outcome: Outcome) -> None:
    """Never a traceback; exit 0 or 2; a refusal is exactly one ``error:`` line."""
    assert "Traceback" not in outcome.err, outcome.err[-3000:]
    assert outcome.code in (0, 2), (outcome.code, outcome.err[-3000:])
    errors = [line for line in outcome.err.splitlines() if "error:" in line]
    assert len(errors) == (1 if outcome.code == 2 else 0), outcome.err[-3000:]


def accepted(outcome: Outcome) -> None:
    contract(outcome)
    assert outcome.code == 0, outcome.err[-3000:]
    event("accepted")


def refused(outcome: Outcome, *parts: str) -> str:
    """The one error line, after checking it holds every one of ``parts``."""
    contract(outcome)
    assert outcome.code == 2, ("accepted, expected a refusal naming", parts, outcome.err[-2000:])
    line = outcome.error_line
    for part in parts:
        assert part in line, (part, line)
    event("refused")
    return line


def where(path, row: int | None = None, field: str | None = None) -> list[str]:
    """What an error line must name: ``file PATH``, ``row N``, ``field 'F'``."""
    return [f"file {path}", *([f"row {row}"] if row is not None else []),
            *([f"field {field!r}"] if field is not None else [])]


@contextmanager
def folder():
    with tempfile.TemporaryDirectory(prefix="fuzz2-") as name:
        yield Path(name)


def digest(path: Path) -> str | None:
    """A fingerprint of a file or folder tree (None when absent): a dry run must not change it."""
    if not path.exists():
        return None
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    if not path.is_dir():
        return "special:" + str(path.stat().st_mode)
    parts = sorted((str(p.relative_to(path)), digest(p)) for p in path.rglob("*"))
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def whole_number(text: str, low: int, high: int | None = None) -> bool:
    """ASCII digits with an optional sign (blanks around allowed), from ``low`` to ``high``."""
    text = text.strip()
    if not re.fullmatch(r"[+-]?[0-9]+", text) or len(text) > 25:
        return False
    return low <= int(text) and (high is None or int(text) <= high)


def server_url(text: str) -> bool:
    """Comma-separated http(s) URLs, each with a host (and a numeric port if any), none empty."""
    from urllib.parse import urlsplit

    parts = text.split(",")
    if not text.strip() or any(not p.strip() for p in parts):
        return False
    for part in parts:
        try:
            split = urlsplit(part.strip())
            split.port  # noqa: B018  (a port that is not a number raises)
        except ValueError:
            return False
        if split.scheme not in ("http", "https") or not split.hostname:
            return False
    return True


# -- junk ------------------------------------------------------------------------------------
NUMBERS = st.one_of(st.integers(-5, 30).map(str), st.sampled_from(
    ["0", "-1", "1e3", "2.5", "0x10", "abc", "", " ", "nan", "inf", "9" * 30, "9" * 5000, "\u0661", "+3", "07",
     "+-3", " 4 ", "1_0", "20", "21", "1024", "1025"]))
URLS = st.sampled_from(["", " ", ",", "http://127.0.0.1:9/v1", "https://host.example/v1", "ftp://x/v1",
                        "localhost:8000/v1", "http://", "http://h:port/v1", "http://127.0.0.1:9/v1,",
                        "http://user:pw@127.0.0.1:9/v1?api-key=sk-FAKE-12345678",
                        "http://a.example:1/v1,https://b.example/v1"])
TEXT = st.text(st.characters(exclude_categories=("Cs", "Cc")), max_size=8)
CELLS = st.one_of(
    st.sampled_from(["", " ", "nan", "NaN", "inf", "-inf", "1e308", "1e400", "-1", "0", "0.5", "1", "5", "10",
                     "11", "2.5", "abc", "9" * 30, "9" * 5000, "1,5", "\u2028", "\u00e9", "None", "TRUE", "3.0",
                     "9223372036854775807", "9223372036854775808", "-9223372036854775808", "07", "\u0661"]),
    st.integers(-10 ** 6, 10 ** 6).map(str), st.integers(-2 ** 70, 2 ** 70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr), TEXT)


# -- judge ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("fuzz-judge") / "run"
    grid = {"name": "q", "model": "scripted", "tasks": ["plastic_waste"],
            "conditions": [{"method": "homo_mad", "agents": 2, "rounds": 1, "replicates": 2},
                           {"method": "homo_mad", "agents": 2, "rounds": 1, "lenses": True, "replicates": 2}]}

    def reply(messages):
        return "Response 1" if "Answer only 'Response N'" in messages[-1]["content"] else "an idea"

    run_grid(grid, out, backend=ScriptedBackend(responder=reply), progress=False, cache=False)
    return out


JUDGE_OPTIONS = {"--retries": lambda v: whole_number(v, 0, 20), "--concurrency": lambda v: whole_number(v, 1, 1024),
                 "--per-round-limit": lambda v: whole_number(v, 1), "--max-per-pair": lambda v: whole_number(v, 1),
                 "--base-url": server_url}
ONLY_FOR = {"--per-round-limit": "quality", "--max-per-pair": "pairwise"}
# 4 sessions; 5 answers each; a rubric panel of 5 raters by default; 2 pairs x 2 orders
CALLS = {("quality", False): "20 rubric calls (4 items x 5 raters", ("quality", True): "100 rubric calls (20 items x 5 raters",
         ("pairwise", False): "4 pairwise calls"}


@fuzz("judge")
@given(kind=st.sampled_from(["quality", "pairwise"]), per_round=st.booleans(),
       options=st.dictionaries(st.sampled_from(list(JUDGE_OPTIONS)), st.one_of(NUMBERS, URLS), max_size=3))
def test_judge_options(run_dir, kind, per_round, options):
    per_round = per_round and kind == "quality"
    argv = ["judge", kind, run_dir, "--dry-run", *(["--per-round"] if per_round else [])]
    for name, value in options.items():
        argv += [name, value]
    before = digest(run_dir)
    outcome = cli(argv)
    assert digest(run_dir) == before  # a dry run reads only
    known = {n: v for n, v in options.items() if ONLY_FOR.get(n, kind) == kind}
    bad = [n for n, v in known.items() if not JUDGE_OPTIONS[n](v)]
    unknown = [n for n in options if n not in known]
    if bad:  # the first bad value in argv order, as argparse reads them
        refused(outcome, f"argument {bad[0]}:")
    elif unknown:
        refused(outcome, "unrecognized arguments", unknown[0])
    elif "--per-round-limit" in known and not per_round:
        refused(outcome, "field '--per-round-limit'", "add --per-round")
    else:
        accepted(outcome)
        retries = int(options.get("--retries", "2"))
        assert f"each retried at most {retries} times" in outcome.err  # the value given, not a default
        if "--per-round-limit" not in known and "--max-per-pair" not in known:
            assert outcome.err.startswith(CALLS[kind, per_round]), outcome.err


# -- pilot ------------------------------------------------------------------------------------
PILOT_OPTIONS = {"--seed": lambda v: whole_number(v, 0, INT64 - 2), "--budget": lambda v: v in ("small", "standard"),
                 "--baseline": lambda v: True, "--base-url": server_url}


@fuzz("pilot")
@given(seed=st.none() | NUMBERS, budget=st.sampled_from([None, "small", "standard", "large", ""]),
       baseline=st.sampled_from([None, "open", "instructed", "iterative", "creative_mad", "zzz", ""]),
       model=st.sampled_from(["local", "gpt-x"]), url=st.none() | URLS)
def test_pilot_dry_run_options(seed, budget, baseline, model, url):
    with folder() as tmp:
        argv = ["pilot", "--model", model, "--out", tmp / "pilot", "--dry-run"]
        given_options = {n: v for n, v in (("--seed", seed), ("--budget", budget), ("--baseline", baseline),
                                           ("--base-url", url)) if v is not None}
        for name, value in given_options.items():
            argv += [name, value]
        outcome = cli(argv)
        bad = [n for n, v in given_options.items() if not PILOT_OPTIONS[n](v)]
        if bad:  # else the baseline must be one of the released designs (open by default)
            refused(outcome, f"argument {bad[0]}:")
        elif (baseline if baseline is not None else "open") not in ("open", "instructed", "iterative"):
            refused(outcome, "field 'baseline'", repr(baseline))
        else:
            accepted(outcome)
            assert outcome.out.startswith("Plan (nothing has run yet)")
        assert not (tmp / "pilot").exists()  # a dry run writes nothing


# -- an embedding server that misbehaves ------------------------------------------------------------
# every broken reply but "emb_resized" and "emb_ragged" (a server of another size throughout is
# consistent, and so is a "ragged" reply of one vector; test_embed_server_replies checks sizes
# that change); retryable faults among them
SERVER_FAULTS = (*[f for f in EMBEDDING_FAULTS if f not in ("emb_resized", "emb_ragged")], "ok", "ok", "ok", "500",
                 "429", "malformed", "html", "redirect")


@pytest.fixture(scope="module")
def embed_server():
    with LoopbackServer(lifetime=400, retry_after=0.01) as server:
        yield server


@fuzz("embed")
@given(texts=st.lists(st.text(min_size=1, max_size=30).filter(str.strip), min_size=1, max_size=6),
       script=st.lists(st.sampled_from(SERVER_FAULTS), max_size=3), batch=st.integers(1, 4),
       dead=st.integers(0, 19))
def test_embedding_server_replies(embed_server, texts, script, batch, dead):
    import engine.embedding.openai_endpoint

    with folder() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine.embedding.openai_endpoint, "RetryPolicy",
                      lambda max_attempts=6, **_: RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.002))
        corpus = Corpus([Conversation("c1", [Turn("AB"[i % 2], text) for i, text in enumerate(texts)])])
        path = corpus.to_jsonl(tmp / "corpus.jsonl")
        url = "http://127.0.0.1:9/v1" if dead == 0 else embed_server.base_url
        embed_server.script = list(script)
        outcome = cli(["embed", path, tmp / "e.npy", "--embed-base-url", url, "--embed-model", "m",
                       "--cache", tmp / "cache.sqlite", "--batch-size", batch, "--embed-concurrency", 1,
                       "--no-progress"])
        embed_server.script = []
        kept = Corpus.from_jsonl(path).trajectory_view()
        distinct = len(dict.fromkeys(t.text for c in kept for t in c.turns))
        expected = "refuse" if dead == 0 else expected_embedding(-(-distinct // batch), script)
        if expected == "refuse" or (expected is None and outcome.code == 2):
            refused(outcome, url.split("/v1")[0])
            assert not (tmp / "e.npy").exists()  # nothing written
            return
        accepted(outcome)
        vectors = np.load(tmp / "e.npy")
        expected = np.array([embedding_of(t.text) for c in kept for t in c.turns], dtype=np.float64)
        expected /= np.linalg.norm(expected, axis=1, keepdims=True)
        np.testing.assert_allclose(vectors, expected, rtol=1e-6)  # the server's vectors, nothing else


RETRYABLE, UNSURE = {"500", "429"}, {"malformed", "html"}


def expected_embedding(batches: int, script: list[str]) -> str | None:
    """What the client must do when the server answers its requests in turn with ``script``
    (then "ok"): each batch tried at most 3 times; 500/429 are tried again; a broken embedding
    reply or a redirect is refused at once; None where either is defensible (a reply that
    is not JSON may be a passing proxy error or not)."""
    queue = list(script)
    for _ in range(batches):
        for _attempt in range(3):
            fault = queue.pop(0) if queue else "ok"
            if fault == "ok":
                break
            if fault in UNSURE:
                return None
            if fault not in RETRYABLE:
                return "refuse"
        else:
            return "refuse"
    return "accept"


# -- idea files -------------------------------------------------------------------------------
# the numeric columns of the release's ideas file and what each may hold (DATA_DICTIONARY.md:
# avg_* ratings min-max scaled 0-1, the raters' N*/U* scores 0-10, counts whole)
IDEA_RANGES = {"avg_novelty_rating": (0, 1, False), "avg_usefulness_rating": (0, 1, False),
               "avg_creativity_rating": (0, 1, False), "N2": (0, 10, False), "U4": (0, 10, False),
               "number_of_agents": (1, 100, True), "run_num": (0, 1_000_000, True),
               "replacement_pool_size": (0, 1_000, True), "grand_total_tokens": (0, 1e12, False)}
RENAMED = {"avg_novelty_rating": "novelty", "avg_usefulness_rating": "usefulness",
           "avg_creativity_rating": "creativity", "number_of_agents": "team_size",
           "run_num": "replicate", "replacement_pool_size": "pool", "grand_total_tokens": "tokens"}


def idea_cell(column: str, text: str) -> str:
    """"blank", "ok" or what is wrong with ``text`` in ``column``."""
    if not text.strip() or text.strip().lower() in ("nan", "na", "n/a"):
        return "blank"
    stripped = text.strip()
    # a number as files write it: ASCII digits only (Python's float() also reads "1_000" and "١")
    if not (re.fullmatch(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?", stripped)
            or re.fullmatch(r"[+-]?(inf|infinity)", stripped, re.IGNORECASE)):
        return "expected a number"
    value = float(stripped)
    if not math.isfinite(value):
        return "expected a finite number"
    low, high, whole = IDEA_RANGES[column]
    if whole and not value.is_integer():
        return "expected a whole number"
    return "ok" if low <= value <= high else "out of range"


@pytest.fixture(scope="module")
def ideas_base():
    from tests.support.ideas_fixture import RELEASE, build_ideas

    if not RELEASE.exists():
        pytest.skip("needs the paper release metrics file")
    frame = build_ideas()
    human = frame[frame["data_type"].eq("human")].head(5)
    return pd.concat([frame.head(25), human, frame.tail(5)], ignore_index=True)


@fuzz("ideas")
@given(row=st.integers(0, 34), column=st.sampled_from(list(IDEA_RANGES)), value=CELLS,
       duplicate=st.integers(0, 9), line_end=st.sampled_from(["\n", "\n", "\r\n", "\r"]))
def test_idea_files(ideas_base, row, column, value, duplicate, line_end):
    frame = ideas_base.astype(object).copy()
    frame.loc[row, column] = value
    if duplicate == 0:  # row 4 listed again at the end
        frame = pd.concat([frame, frame.iloc[[3]]], ignore_index=True)
    with folder() as tmp:
        path = tmp / "ideas.csv"
        # every cell quoted: a lone "\r" inside a cell stays inside it
        path.write_bytes(frame.to_csv(index=False, lineterminator=line_end, quoting=csv.QUOTE_ALL).encode())
        outcome = cli(["import", path, tmp / "out.csv"])
        verdict = idea_cell(column, value)
        if verdict not in ("ok", "blank"):
            refused(outcome, *where(path, row + 1, column), verdict)
            assert not (tmp / "out.csv").exists()
            return
        if duplicate == 0:
            refused(outcome, *where(path, len(frame), "file_id"), "appears twice (also on row 4)")
            assert not (tmp / "out.csv").exists()
            return
        accepted(outcome)
        out = pd.read_csv(tmp / "out.csv", keep_default_na=False, dtype=str)
        assert len(out) == len(frame)  # no idea dropped or added
        shown = out.loc[row, RENAMED.get(column, column)]
        if verdict == "blank":
            if column != "number_of_agents":  # a blank team size is read from llm_count
                assert shown == "", (column, value, shown)
        else:
            assert float(shown) == pytest.approx(float(value)), (column, value, shown)


# -- benchmark files ----------------------------------------------------------------------------
KEYWORDS = st.one_of(st.sampled_from(["C++", "C#", "量子", "光合作用", "a b", "a_b", "A B", "x" * 80, "", " ",
                                      "photosynthesis", "quantum dots", "\u2028", "e\u0301"]),
                     st.text(st.characters(exclude_categories=("Cs", "Cc")), max_size=10))


@fuzz("benchmark")
@given(name=st.sampled_from(["liveideabench", "macgyver", "arena_hard_creative"]),
       items=st.lists(st.tuples(KEYWORDS, st.one_of(st.integers(-3, 5), KEYWORDS, st.none()),
                                st.sampled_from(["creative_writing", "Creative Writing", "coding", None])),
                      min_size=1, max_size=6),
       as_jsonl=st.booleans())
def test_benchmark_files(name, items, as_jsonl):
    column = {"liveideabench": "keywords", "macgyver": "Problem", "arena_hard_creative": "prompt"}[name]
    id_column = {"liveideabench": None, "macgyver": "id", "arena_hard_creative": "uid"}[name]
    rows = []
    for text, item_id, category in items:
        row = {column: text}
        if id_column:
            row[id_column] = item_id
        if name == "arena_hard_creative":
            row["category"] = category
        rows.append(row)
    with folder() as tmp:
        path = tmp / ("items.jsonl" if as_jsonl else "items.csv")
        if as_jsonl:
            path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8", errors="surrogatepass")
        else:
            # every cell quoted: pandas leaves a lone "\r" unquoted, which CSV reads as a line end
            pd.DataFrame(rows).to_csv(path, index=False, encoding="utf-8", errors="surrogatepass",
                                      quoting=csv.QUOTE_ALL)
        outcome = cli(["run", "--method", "direct", "--benchmark", name, "--benchmark-file", path,
                       "--out", tmp / "out", "--dry-run"])
        expected = expected_benchmark(name, path, column, id_column)
        if expected[0] == "refuse":
            refused(outcome, *where(path, *expected[1:3]), expected[3])
        else:
            accepted(outcome)
            from engine.tasks.benchmark_tasks import load_benchmark

            tasks = load_benchmark(name, path)
            assert len({t.id for t in tasks}) == len(tasks)  # unique ids, always
            assert outcome.err.startswith(f"{len(tasks)} sessions")
            assert [" ".join(t.prompt.split()) if name == "arena_hard_creative" else t.title for t in tasks] == \
                [text[:60] if name == "macgyver" else text for text in expected[1]]
        assert not (tmp / "out").exists()


def expected_benchmark(name: str, path: Path, column: str, id_column: str | None):
    """("accept", item texts) or ("refuse", row, field, words), read from the file with Python's
    own csv/json modules: every item needs a non-blank text and (macgyver, arena) an id, text or
    a whole number, that no other item has; LiveIdeaBench keeps one item per keyword (case and
    spacing ignored), Arena-Hard only its creative-writing rows; a CSV line whose only cell is
    blank is a blank line (skipped, not counted)."""
    if path.suffix == ".jsonl":
        rows = [(n, json.loads(line)) for n, line in enumerate(path.read_text().splitlines(), start=1)]
    else:
        with open(path, newline="", encoding="utf-8") as handle:
            lines = [cells for cells in csv.reader(handle)
                     if cells and not (len(cells) == 1 and not cells[0].strip())]
        rows = [(n, dict(zip(lines[0], cells))) for n, cells in enumerate(lines[1:], start=1)]
        if not rows:
            return "refuse", None, None, "has a header but no data rows"

    def blank_text(value) -> bool:
        return not isinstance(value, str) or not value.strip()

    def bad_id(value) -> bool:
        return value is None or isinstance(value, bool) or not str(value).strip()

    texts, ids = [], []
    for number, values in rows:
        if name == "arena_hard_creative":
            label = str(values.get("category")).lower().replace("-", "_").replace(" ", "_")
            if "creative_writing" not in label:
                continue
        if id_column and bad_id(values.get(id_column)):
            return "refuse", number, id_column, "expected an id"
        if blank_text(values.get(column)):
            return "refuse", number, column, "missing or empty"
        text = " ".join(values[column].split())
        if name == "liveideabench" and text.lower() in {t.lower() for t in texts}:
            continue
        texts.append(text if name != "arena_hard_creative" else " ".join(values[column].split()))
        ids.append(str(values[id_column]).strip() if id_column else None)
    if name == "arena_hard_creative" and not texts:
        return "refuse", None, "category", "no creative-writing rows"
    if id_column and len(set(ids)) < len(ids):
        return "refuse", None, "id", "have the same id"
    return "accept", texts, None, None


# -- dashboard uploads ------------------------------------------------------------------------------
class HashEmbedder:
    """Deterministic unit vectors from each text's hash (a test stand-in for the model)."""

    model_name = "hash-embedder"

    def encode(self, texts, progress=False):
        rows = [np.frombuffer(hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest()[:16], dtype=np.uint8)
                .astype(np.float32) + 1 for t in texts]
        vectors = np.array(rows, dtype=np.float32).reshape(len(texts), 16)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    __call__ = encode


@fuzz("upload")
@given(turns=st.lists(st.tuples(st.sampled_from(["c1", "c2", "c3"]), st.sampled_from(["A", "B"]),
                                st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=12)
                                .filter(str.strip), CELLS), min_size=1, max_size=8),
       suffix=st.sampled_from([".csv", ".jsonl"]), line_end=st.sampled_from(["\n", "\r\n", "\r"]))
def test_dashboard_uploads(turns, suffix, line_end):
    from dashboard.page_data.uploads import read_upload
    from engine.errors import InputError

    rows = [{"conversation_id": c, "speaker": s, "text": t, "turn": n} for c, s, t, n in turns]
    if suffix == ".csv":
        payload = pd.DataFrame(rows).to_csv(index=False, lineterminator=line_end, quoting=csv.QUOTE_ALL).encode()
    else:
        lines = []
        for row in rows:
            turn = row["turn"]
            literal = turn if JSON_NUMBER.fullmatch(turn) else json.dumps(turn)
            lines.append(json.dumps({k: v for k, v in row.items() if k != "turn"})[:-1] + f', "turn": {literal}}}')
        payload = "\n".join(lines).encode() + b"\n"
    expected = expected_upload(rows, json_lines=suffix == ".jsonl")
    try:
        dataset = read_upload(f"upload{suffix}", payload, embedder_factory=HashEmbedder)
    except InputError as error:
        assert expected is not None, ("refused, expected acceptance", str(error))
        row, words = expected
        assert (error.path, error.row, error.field) == (f"upload{suffix}", row, "turn"), (str(error), expected)
        assert words in str(error) and "\n" not in str(error), (str(error), expected)
        event("refused")
        return
    assert expected is None, ("accepted, expected a refusal", expected)
    event("accepted")
    written = pd.Series([c for c, *_ in turns]).value_counts().to_dict()
    read = dict(zip(dataset.conversations["conversation_id"], dataset.conversations["n_turns"]))
    assert read == written  # every turn of every conversation, none dropped


JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?|NaN|-?Infinity")


def turn_number(value) -> tuple[int | None, str]:
    """A turn as a whole number of 64 bits: 3, "3", "3.0" and 3.0 are 3; a blank one (or NaN) is "empty";
    anything else is named. (A JSON integer literal is checked here as its digits.)"""
    if isinstance(value, float):
        if math.isnan(value):  # JSON's NaN literal is a missing value, as a blank cell is
            return None, "empty"
        if math.isfinite(value) and value.is_integer() and abs(value) < INT64:
            return int(value), ""
        return None, "expected an integer"
    if not value.strip():
        return None, "empty"
    match = re.fullmatch(r"([+-]?[0-9]+)(\.0*)?", value.strip())  # ASCII digits: int() also reads "١"
    if not match:
        return None, "expected an integer"
    digits = match.group(1)
    if len(digits.lstrip("+-")) > 19 or not -INT64 <= int(digits) < INT64:
        return None, "is out of range"
    return int(digits), ""


def expected_upload(rows: list[dict], *, json_lines: bool) -> tuple[int, str] | None:
    """None when every turn is fine, else (row, words) of the first bad one: a JSON number that
    fits no 64-bit type comes first (the lines are parsed before the rows are read), then, row by
    row, a turn that is not a whole number and a turn a conversation already has."""
    values = []
    for number, row in enumerate(rows, start=1):
        value = row["turn"]
        if json_lines and JSON_NUMBER.fullmatch(value):
            if value in ("NaN", "Infinity", "-Infinity"):
                value = float(value)
            elif re.fullmatch(r"-?[0-9]+", value):
                if len(value.lstrip("-")) > 19 or not -INT64 <= int(value) < INT64:
                    return number, "is out of range"
            else:
                value = float(value)
                if math.isinf(value):
                    return number, "too large for a 64-bit float"
        values.append(value)
    seen = set()
    for number, (row, value) in enumerate(zip(rows, values), start=1):
        turn, problem = turn_number(value)
        if problem:
            return number, problem
        if (row["conversation_id"], turn) in seen:
            return number, f"turn {turn} of conversation {row['conversation_id']!r} appears"
        seen.add((row["conversation_id"], turn))
    return None


# -- damaged run folders --------------------------------------------------------------------------
DAMAGE = ["corpus_junk_line", "corpus_huge_int", "corpus_cut_line", "corpus_not_object", "corpus_empty",
          "manifest_junk", "manifest_huge_int", "manifest_folder", "quality_junk", "quality_no_kind",
          "quality_folder", "quality_cut", "corpus_folder", "corpus_fifo", "failed_junk"]


def damage(run: Path, kind: str, junk: str) -> None:
    corpus, manifest, quality = run / "corpus.jsonl", run / "manifest.json", run / "quality.jsonl"
    if kind == "corpus_junk_line":
        with open(corpus, "a", encoding="utf-8", errors="surrogatepass") as handle:
            handle.write(junk + "\n")
    elif kind == "corpus_huge_int":
        lines = corpus.read_text().splitlines()
        lines[1] = lines[1].replace('"replicate": 0', '"replicate": ' + "9" * 5000, 1)
        corpus.write_text("\n".join(lines) + "\n")
    elif kind == "corpus_cut_line":
        data = corpus.read_bytes()
        corpus.write_bytes(data[: max(1, len(data) - 1 - len(junk) % 40)])
    elif kind == "corpus_not_object":
        with open(corpus, "a") as handle:
            handle.write("[1, 2, 3]\n")
    elif kind == "corpus_empty":
        corpus.write_bytes(b"")
    elif kind == "manifest_junk":
        manifest.write_text(junk[:50] or "{")
    elif kind == "manifest_huge_int":
        manifest.write_text('{"seed": ' + "9" * 5000 + "}")
    elif kind == "manifest_folder":
        manifest.unlink()
        manifest.mkdir()
    elif kind == "quality_junk":
        quality.write_text(junk + "\n", encoding="utf-8", errors="surrogatepass")
    elif kind == "quality_no_kind":
        quality.write_text('{"key": "k", "judge": "j", "score": 3}\n')
    elif kind == "quality_folder":
        quality.mkdir()
    elif kind == "quality_cut":
        quality.write_text('{"kind": "rubric", "key": "k1", "judge": "j", "score": 3}\n{"kind": "rub')
    elif kind == "corpus_folder":
        corpus.unlink()
        corpus.mkdir()
    elif kind == "corpus_fifo":
        corpus.unlink()
        os.mkfifo(corpus)
    elif kind == "failed_junk":
        (run / "failed.jsonl").write_text(junk + "\n", encoding="utf-8", errors="surrogatepass")


JUNK_WORDS = {"{": (None, "not valid JSON"), "not json": (None, "not valid JSON"),
              "null": (None, "expected a JSON object"), "\u2028": (None, "not valid JSON"),
              "\x00": (None, "not valid JSON"), "{}" * 3: (None, "not valid JSON"),
              '{"x": 1e400}': ("x", "too large for a 64-bit float")}
OBJECTS = ('{"conversation_id": 5}', '{"conversation_id": "c", "turns": "no"}')  # JSON objects, wrong inside


def expected_damage(kind: str, junk: str, run: Path, corpus_lines: int):
    """("refuse", error line parts) or ("accept", a line the output must hold) for a dry run of
    the judge on ``run`` with ``kind`` of damage (one file damaged at a time)."""
    corpus, manifest, quality = run / "corpus.jsonl", run / "manifest.json", run / "quality.jsonl"
    file_errors = {"corpus_folder": (corpus, "is a folder"), "corpus_fifo": (corpus, "named pipe (FIFO)"),
                   "manifest_folder": (manifest, "is a folder"), "quality_folder": (quality, "is a folder"),
                   "manifest_huge_int": (manifest, "(5,000 digits) is out of range")}
    if kind in file_errors:
        path, words = file_errors[kind]
        return "refuse", [*where(path), words]
    if kind == "corpus_huge_int":
        return "refuse", [*where(corpus, 2, "replicate"), "(5,000 digits) is out of range"]
    if kind == "corpus_not_object":
        return "refuse", [*where(corpus, corpus_lines + 1), "expected a JSON object, got list"]
    if kind == "quality_no_kind":
        return "refuse", [*where(quality, 1, "kind"), "expected 'rubric' or 'pairwise'"]
    if kind == "corpus_cut_line":  # the last record, cut short: left out and said so
        return "accept", f"note: file {corpus}, line {corpus_lines}: a record cut short"
    if kind == "quality_cut":
        return "accept", f"note: file {quality}, line 2: a record cut short"
    if kind == "corpus_empty":  # no session finished yet: nothing to judge
        return "accept", None
    if kind == "failed_junk":  # the judge does not read the failed sessions' file
        return "accept", None
    if kind == "corpus_junk_line":
        if junk == OBJECTS[0]:
            return "refuse", [*where(corpus, corpus_lines + 1, "conversation_id"), "must be a non-empty string"]
        if junk == OBJECTS[1]:
            return "refuse", [*where(corpus, corpus_lines + 1, "turns"), "expected a list of turns"]
        field, words = JUNK_WORDS[junk]
        return "refuse", [*where(corpus, corpus_lines + 1, field), words]
    if kind == "manifest_junk":  # any JSON object is a manifest; the judge needs nothing from it
        if junk in OBJECTS:
            return "accept", None
        field, words = JUNK_WORDS[junk]
        return "refuse", [*where(manifest), words]
    if kind == "quality_junk":
        if junk in OBJECTS:
            return "refuse", [*where(quality, 1), "missing key or judge"]
        field, words = JUNK_WORDS[junk]
        return "refuse", [*where(quality, 1, field), words]
    raise AssertionError(kind)


@fuzz("run_folder")
@given(kind=st.sampled_from(DAMAGE),
       junk=st.sampled_from(["{", "not json", "null", '{"conversation_id": 5}', '{"x": 1e400}', "\u2028",
                             '{"conversation_id": "c", "turns": "no"}', "\x00", "{}" * 3]),
       command=st.sampled_from([["judge", "quality"], ["judge", "pairwise"], ["judge", "quality", "--per-round"]]))
def test_damaged_run_folders(run_dir, kind, junk, command):
    corpus_lines = (run_dir / "corpus.jsonl").read_bytes().count(b"\n")
    with folder() as tmp:
        run = tmp / "run"
        shutil.copytree(run_dir, run)
        damage(run, kind, junk)
        before = {name: digest(run / name) for name in ("corpus.jsonl", "manifest.json", "quality.jsonl")}
        outcome = cli([command[0], command[1], run, "--dry-run", *command[2:]])
        verdict, detail = expected_damage(kind, junk, run, corpus_lines)
        if verdict == "refuse":
            refused(outcome, *detail)
        else:
            accepted(outcome)
            if detail is not None:
                assert detail in outcome.err, (detail, outcome.err)
            if kind == "corpus_empty":
                assert re.match(r"0 (rubric|pairwise) calls", outcome.err), outcome.err
            if kind in ("failed_junk", "manifest_junk"):  # every session judged as without the damage
                per_round = "--per-round" in command
                assert outcome.err.startswith(CALLS[command[1], per_round]), outcome.err
        after = {name: digest(run / name) for name in before}
        assert after == before  # a dry run repairs nothing silently and writes nothing
