"""Numbers that don't fit and files that are not files: every reader names them in one line.

* integers of more than 64 bits (Python will not even parse one of more than 4,300 digits;
  Parquet cannot store one above 2^63 - 1) in JSON lines, a CSV ``turn``, a tasks file, a
  YAML seed, an ideas file; ConvoKit timestamps of 1e400;
* old-Mac CSV files (``\\r`` alone ends a line) are read like any other;
* ConvoKit's ``0001-01-01T00:00:00`` is an ISO date (year 1), read as UTC;
* ``/dev/zero``, a FIFO or a folder where a file is expected is refused at once (never read
  until memory runs out, never waited on).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.corpus import Corpus
from tests.support.cli_run import cli, refused

ROOT = Path(__file__).resolve().parents[2]
HUGE = "9" * 5000  # beyond Python's 4,300-digit limit for int()
BIG = "9" * 30  # parses, but no 64-bit column holds it


def turns_csv(turn: str) -> str:
    return f"conversation_id,speaker,text,turn\nc1,A,hello,{turn}\nc1,B,there,1\n"


@pytest.mark.parametrize("number", [HUGE, BIG, "-" + BIG, "9223372036854775808"])
def test_integers_beyond_64_bits_are_refused_naming_row_and_field(tmp_path, number):
    jsonl = tmp_path / "turns.jsonl"
    jsonl.write_text('{"conversation_id": "c1", "speaker": "A", "text": "hi", "turn": 0}\n'
                     f'{{"conversation_id": "c1", "speaker": "B", "text": "yo", "turn": 1, "team_size": {number}}}\n')
    for output in ("out.jsonl", "out.parquet"):
        refused(cli(["import", jsonl, tmp_path / output]), str(jsonl), "row 2", "team_size", "out of range")
        assert not (tmp_path / output).exists()
    csv = tmp_path / "turns.csv"
    csv.write_text(turns_csv(number))
    refused(cli(["import", csv, tmp_path / "out.parquet"]), str(csv), "row 1", "'turn'", "out of range")


def test_the_largest_64_bit_integer_is_still_read(tmp_path):
    jsonl = tmp_path / "turns.jsonl"
    jsonl.write_text('{"conversation_id": "c1", "speaker": "A", "text": "hi", "turn": 0, '
                     '"team_size": 9223372036854775807}\n')
    assert cli(["import", jsonl, tmp_path / "out.parquet"]).code == 0
    assert Corpus.from_parquet(tmp_path / "out.parquet")["c1"].team_size == 2 ** 63 - 1


def test_a_tasks_file_and_a_yaml_seed_with_huge_integers_are_refused(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(f'{{"id": "t1", "prompt": "Do something new.", "n": {HUGE}}}\n')
    refused(cli(["run", "--method", "open", "--tasks-file", tasks, "--extra-fields", "keep",
                 "--out", tmp_path / "o", "--dry-run"]), str(tasks), "row 1", "'n'", "out of range")
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"seed: {HUGE}\nconditions:\n  - {{method: open}}\n")
    refused(cli(["run", "--grid", grid, "--out", tmp_path / "o", "--dry-run"]), str(grid), "row 1", "out of range")


def _convokit(folder: Path, timestamp) -> Path:
    folder.mkdir()
    lines = [{"id": "u1", "conversation_id": "c1", "speaker": "A", "text": "first", "timestamp": timestamp},
             {"id": "u2", "conversation_id": "c1", "speaker": "B", "text": "second", "timestamp": "2020-01-01T00:00:00"}]
    (folder / "utterances.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines)
                                             .replace('"@TS@"', str(timestamp)))
    return folder


@pytest.mark.parametrize("timestamp", ["@TS@", "1e400"])
def test_a_convokit_timestamp_of_1e400_is_refused(tmp_path, timestamp):
    folder = _convokit(tmp_path / "ck", "@TS@" if timestamp == "@TS@" else timestamp)
    if timestamp == "@TS@":  # the bare JSON number 1e400
        text = (folder / "utterances.jsonl").read_text().replace('"@TS@"', "1e400")
        (folder / "utterances.jsonl").write_text(text)
    refused(cli(["import", folder, tmp_path / "out.jsonl"]), "utterances.jsonl", "row 1", "timestamp")


def test_convokit_year_one_is_an_iso_date_read_as_utc(tmp_path):
    folder = _convokit(tmp_path / "ck", "0001-01-01T00:00:00")
    assert cli(["import", folder, tmp_path / "out.jsonl"]).code == 0
    corpus = Corpus.from_jsonl(tmp_path / "out.jsonl")
    assert [t.text for t in corpus["c1"].turns] == ["first", "second"]  # year 1 sorts first
    from engine.importers.convokit import _iso_seconds

    # 1969 years of 365 days + 477 leap days, by hand: 719,162 days before 1970-01-01
    assert _iso_seconds("0001-01-01T00:00:00") == -719_162 * 86_400
    assert _iso_seconds("1970-01-01T01:00:00+01:00") == 0.0


def test_an_old_mac_csv_reads_like_a_unix_one(tmp_path):
    unix, mac = tmp_path / "unix.csv", tmp_path / "mac.csv"
    text = 'conversation_id,speaker,text,turn\nc1,A,"hello, you",0\nc1,B,there,1\nc2,A,again,0\n'
    unix.write_text(text)
    mac.write_bytes(text.replace("\n", "\r").encode())
    assert cli(["import", unix, tmp_path / "u.jsonl"]).code == 0
    outcome = cli(["import", mac, tmp_path / "m.jsonl"])
    assert outcome.code == 0, outcome.err
    read = [[(t.speaker, t.text) for t in c.turns] for c in Corpus.from_jsonl(tmp_path / "m.jsonl")]
    assert read == [[("A", "hello, you"), ("B", "there")], [("A", "again")]]
    from dashboard.page_data.uploads import read_upload
    from engine.measures.trajectory import PAPER_A_FEATURES

    table = "conversation_id,source," + ",".join(PAPER_A_FEATURES) + "\rc1,llm," + ",".join(["0.5"] * 9) + \
        "\rc2,human," + ",".join(["0.25"] * 9) + "\r"
    dataset = read_upload("features.csv", table.encode())
    assert list(dataset.conversations["conversation_id"]) == ["c1", "c2"]
    assert list(dataset.conversations["global_coherence"]) == [0.5, 0.25]


NOT_FILES = """
import json, os, sys
from engine.cli import main
sys.exit(main(json.loads(sys.argv[1])))
"""


def _run_with_deadline(argv, tmp_path, seconds=60):
    """In a child process: on the old code a FIFO waits forever and /dev/zero fills memory."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        done = subprocess.run([sys.executable, "-c", NOT_FILES, json.dumps([str(a) for a in argv])], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=seconds,
                              preexec_fn=lambda: __import__("resource").setrlimit(
                                  __import__("resource").RLIMIT_AS, (4 << 30, 4 << 30)))
    except subprocess.TimeoutExpired:
        pytest.fail(f"{argv} did not end within {seconds} s")
    return done


def _fifo_guard(pipe: Path, seconds: float):
    """From ``seconds`` on, open the FIFO's write end (and close it) every 0.2 s until cancelled:
    a reader stuck waiting for a writer (the old code) gets end-of-file, however often it
    opens the pipe, and the test sees how long it waited."""
    import threading

    stop = threading.Event()

    def release():
        if stop.wait(seconds):
            return
        while not stop.is_set():
            try:
                os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # nobody is waiting on it right now
                pass
            stop.wait(0.2)

    threading.Thread(target=release, daemon=True).start()
    return stop


def _argv(where: str, target: str, tmp_path: Path) -> list:
    if where == "--grid":
        return ["run", "--grid", target, "--out", tmp_path / "o", "--dry-run"]
    if where == "tasks_file":
        grid = tmp_path / "grid.yaml"
        grid.write_text(f"tasks_file: {target}\nconditions:\n  - {{method: open}}\n")
        return ["run", "--grid", grid, "--out", tmp_path / "o", "--dry-run"]
    return ["run", "--method", "open", "--tasks-file", target, "--out", tmp_path / "o", "--dry-run"]


@pytest.mark.parametrize("where", ["--grid", "tasks_file", "--tasks-file"])
@pytest.mark.parametrize("what", ["fifo", "folder"])
def test_a_fifo_or_a_folder_is_refused_at_once(tmp_path, where, what):
    import time

    target = tmp_path / ("pipe" if what == "fifo" else "folder")
    os.mkfifo(target) if what == "fifo" else target.mkdir()
    guard = _fifo_guard(target, 20) if what == "fifo" else None
    started = time.perf_counter()
    outcome = cli(_argv(where, str(target), tmp_path))
    if guard:
        guard.set()
    assert time.perf_counter() - started < 15, "waited on the FIFO"
    refused(outcome, str(target), "named pipe" if what == "fifo" else "folder")


@pytest.mark.parametrize("where", ["--grid", "tasks_file", "--tasks-file"])
def test_dev_zero_is_refused_unread(tmp_path, where):
    """In a child process with 4 GB of address space: the old code read /dev/zero until then."""
    done = _run_with_deadline(_argv(where, "/dev/zero", tmp_path), tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "/dev/zero" in errors[0] and "device" in errors[0], done.stderr


def test_a_tasks_file_over_its_size_limit_is_refused_unread(tmp_path):
    from engine.storage.files import MAX_TASKS_BYTES

    tasks = tmp_path / "tasks.jsonl"
    with open(tasks, "wb") as handle:  # sparse: no disk used
        handle.truncate(MAX_TASKS_BYTES + 1)
    refused(cli(["run", "--method", "open", "--tasks-file", tasks, "--out", tmp_path / "o", "--dry-run"]),
            str(tasks), f"{MAX_TASKS_BYTES + 1:,} bytes")


@pytest.mark.parametrize("command", [["features"], ["import"], ["diversity"], ["analyze", "table", "4", "--metrics"]])
@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_data_commands_refuse_a_fifo_without_waiting(tmp_path, command, suffix):
    import time

    pipe = tmp_path / f"pipe{suffix}"
    os.mkfifo(pipe)
    argv = [*command, pipe] + ([tmp_path / "out.jsonl"] if command == ["import"] else [])
    guard = _fifo_guard(pipe, 20)
    started = time.perf_counter()
    outcome = cli(argv)
    guard.set()
    assert time.perf_counter() - started < 15, "waited on the FIFO"
    refused(outcome, str(pipe))


def _parquet_bytes(table) -> bytes:
    import io

    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


@pytest.mark.parametrize("field", ["team_size", "replicate"])
def test_an_uploaded_parquet_corpus_with_a_uint64_beyond_64_bit_signed_is_refused(tmp_path, field):
    """Parquet stores unsigned 64-bit integers up to 2**64 - 1; the corpus (and every table we
    write) holds signed ones, so 2**64 - 1 is named as the JSON and CSV readers name it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dashboard.page_data.uploads import read_upload
    from engine.corpus import Conversation, Turn
    from engine.errors import InputError

    Corpus([Conversation("c1", [Turn("A", "hi"), Turn("B", "yo"), Turn("A", "so")])]).to_parquet(
        tmp_path / "c.parquet")
    table = pq.read_table(tmp_path / "c.parquet")
    table = table.set_column(table.column_names.index(field), field, pa.array([2 ** 64 - 1], pa.uint64()))
    with pytest.raises(InputError) as caught:
        read_upload("c.parquet", _parquet_bytes(table))
    assert (caught.value.path, caught.value.row, caught.value.field) == ("c.parquet", 1, field)
    assert "18446744073709551615 is out of range" in str(caught.value) and "\n" not in str(caught.value)


def test_an_uploaded_parquet_table_of_turns_is_not_taken_for_a_conversation_table():
    """One row per turn in Parquet (no nested ``turns``, no feature column) was read as a
    'conversation table' of the turns, a conversation listed once per turn; now one line."""
    import pyarrow as pa

    from dashboard.page_data.uploads import read_upload
    from engine.errors import InputError

    table = pa.table({"conversation_id": ["c1", "c1"], "speaker": ["A", "B"], "text": ["hi", "yo"],
                      "turn": pa.array([0, 2 ** 64 - 1], pa.uint64())})
    with pytest.raises(InputError) as caught:
        read_upload("t.parquet", _parquet_bytes(table))
    assert (caught.value.path, caught.value.field) == ("t.parquet", "turns")
    assert "save one-row-per-turn transcripts as CSV or JSONL" in str(caught.value)
