"""A full disk never cuts a record in half and never locks a folder out of its own data.

The disk is simulated by replacing ``engine.storage.durable._write`` (every byte the project writes
to a run folder goes through it) with one that stores K more bytes and then fails with
ENOSPC, after a short write, for many K; once more on a real tmpfs of a few pages where the
machine allows mounting one. Held to: the run stops with the one line of docs/reference/errors.md, every
file holds whole records only (the records it held before the failing one), and a re-run
with space finishes exactly the missing sessions, keeping every byte written before.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import subprocess
from pathlib import Path

import pytest

from engine.cli import main
from engine.corpus import Corpus
from engine.errors import InputError
from engine.llm import ScriptedBackend
from engine.llm.cache import CachedBackend
from engine.runs.runner import run_grid

SESSIONS = 24
GRID = {"name": "disk", "model": "scripted", "seed": 0, "concurrency": 3, "tasks": ["plastic_waste"],
        "conditions": [{"method": "direct", "replicates": SESSIONS}]}
FULL = "; nothing was lost, re-run when there is space"


def reply(messages):
    """Replies of different lengths (so records end at irregular byte offsets), fixed by the prompt."""
    seed = sum(map(ord, messages[-1]["content"])) + len(messages)
    return "Idea: " + " ".join(f"word{(seed * k) % 97}" for k in range(5 + seed % 40))


class Seeded(ScriptedBackend):
    """The scripted replies above, each ending with the request's seed: every session differs."""

    async def _complete(self, messages, *, temperature, max_tokens, seed):
        result = await super()._complete(messages, temperature=temperature, max_tokens=max_tokens, seed=seed)
        return dataclasses.replace(result, text=f"{result.text} s{seed}")


class FillingDisk:
    """``os.write`` that stores ``budget`` more bytes, then fails as a full disk does: the
    write that crosses the limit is short, every later one raises ENOSPC."""

    def __init__(self, budget: float):
        self.left = budget
        self.written = 0

    def write(self, fd, data):
        if self.left <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        take = int(min(len(data), self.left))
        done = os.write(fd, bytes(data[:take]))
        self.left -= done
        self.written += done
        return done


def run(folder: Path, backend=None):
    return run_grid(GRID, folder, backend=backend or Seeded(responder=reply), progress=False,
                    cache=False)


def whole_lines(path: Path) -> list[bytes]:
    """The file's lines, asserting that each is a whole JSON object ending in a newline."""
    data = path.read_bytes()
    assert data == b"" or data.endswith(b"\n"), f"{path.name} ends inside a record"
    lines = data.split(b"\n")[:-1]
    for line in lines:
        assert isinstance(json.loads(line), dict)
    return lines


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A run with all the space it needs: its folder and its sessions."""
    folder = tmp_path_factory.mktemp("reference")
    result = run(folder)
    assert (result.ok, result.failed) == (SESSIONS, 0)
    ideas = {c.conversation_id: c.final_idea for c in Corpus.from_jsonl(folder / "corpus.jsonl")}
    return ideas, folder


def bytes_of_a_whole_run(tmp_path, monkeypatch) -> int:
    from engine.storage import durable

    disk = FillingDisk(float("inf"))
    monkeypatch.setattr(durable, "_write", disk.write)
    run(tmp_path / "measure")
    monkeypatch.setattr(durable, "_write", os.write)
    return disk.written


def budgets(total: int) -> list[int]:
    """K from 0 to past the end: 40 steps plus the bytes around the first records' ends."""
    steps = {round(total * i / 40) for i in range(41)}
    return sorted(steps | {0, 1, 200, 399, 400, 401, total - 1, total + 10})


def test_a_full_disk_after_k_bytes_loses_nothing_and_a_rerun_finishes_exactly_the_rest(
        reference, tmp_path, monkeypatch):
    from engine.storage import durable

    total = bytes_of_a_whole_run(tmp_path, monkeypatch)
    ideas, _ = reference
    outcomes = {"stopped": 0, "finished": 0}
    for budget in budgets(total):
        folder = tmp_path / f"k{budget}"
        disk = FillingDisk(budget)
        monkeypatch.setattr(durable, "_write", disk.write)
        try:
            run(folder)
            outcomes["finished"] += 1
            assert budget >= total, f"K={budget}: finished on a disk too small"
        except InputError as error:
            outcomes["stopped"] += 1
            message = str(error)
            assert message.startswith("disk full while writing ") and message.endswith(FULL), message
            assert str(folder) in message and "\n" not in message
        monkeypatch.setattr(durable, "_write", os.write)
        # every file of the folder holds whole records: the ones it held before the failure
        before = whole_lines(folder / "corpus.jsonl") if (folder / "corpus.jsonl").exists() else []
        if (folder / "failed.jsonl").exists():
            whole_lines(folder / "failed.jsonl")
        if (folder / "manifest.json").exists():
            json.loads((folder / "manifest.json").read_text())
        assert not list(folder.glob("*.torn")) and not list(folder.glob(".*.tmp-*"))
        saved = [json.loads(line)["conversation_id"] for line in before[1:]]
        # with space again: the missing sessions run, one call each; nothing saved is redone
        backend = Seeded(responder=reply)
        result = run(folder, backend)
        assert (result.ok, result.skipped, len(backend.history)) == (SESSIONS - len(saved), len(saved),
                                                                      SESSIONS - len(saved)), budget
        after = whole_lines(folder / "corpus.jsonl")
        assert after[:len(before)] == before  # byte for byte
        corpus = Corpus.from_jsonl(folder / "corpus.jsonl")
        assert {c.conversation_id: c.final_idea for c in corpus} == ideas
    assert outcomes["stopped"] >= 40 and outcomes["finished"] >= 1


class FullForAMoment:
    """A disk full for a moment: the write that crosses ``budget`` is short (``short``) or
    fails with ENOSPC, and every later write has space again (how the older writer glued a
    cut record to the next one)."""

    def __init__(self, budget: int, *, short: bool):
        self.left, self.short, self.hit = budget, short, False

    def write(self, fd, data):
        if not self.hit and len(data) > self.left:
            self.hit = True
            if not self.short:
                raise OSError(errno.ENOSPC, "No space left on device")
            return os.write(fd, bytes(data[: max(1, int(self.left))]))
        self.left -= len(data)
        return os.write(fd, bytes(data))


@pytest.mark.parametrize("short", [True, False])
def test_a_disk_full_for_a_moment_never_glues_records(reference, tmp_path, monkeypatch, capsys, short):
    """Short write then space: the record is finished by the next write. ENOSPC then space:
    the run stops in one line with whole records; the re-run finishes. Either way the judge
    and the re-run read the folder."""
    from engine.storage import durable

    ideas, _ = reference
    total = bytes_of_a_whole_run(tmp_path, monkeypatch)
    for budget in range(total // 10, total, total // 10):
        folder = tmp_path / f"m{budget}-{short}"
        disk = FullForAMoment(budget, short=short)
        monkeypatch.setattr(durable, "_write", disk.write)
        try:
            run(folder)
            assert short, "a failed write went unnoticed"
        except InputError as error:
            assert not short and str(error).endswith(FULL)
        monkeypatch.setattr(durable, "_write", os.write)
        assert disk.hit
        whole_lines(folder / "corpus.jsonl")
        assert main(["judge", "quality", "--samples", "1", str(folder), "--dry-run"]) == 0
        result = run(folder)
        assert result.ok + result.skipped == SESSIONS and result.failed == 0
        corpus = Corpus.from_jsonl(folder / "corpus.jsonl")
        assert {c.conversation_id: c.final_idea for c in corpus} == ideas
    capsys.readouterr()


def test_a_failed_fsync_takes_the_record_back(tmp_path, monkeypatch):
    from engine.storage import durable

    path = tmp_path / "records.jsonl"
    durable.append_line(path, '{"n": 1}')

    def full_at_flush(fd):  # a filesystem that finds out at fsync that the blocks are gone
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(durable, "_fsync", full_at_flush)
    with pytest.raises(InputError, match=f"disk full while writing {path}{FULL}"):
        durable.append_line(path, '{"n": 2, "text": "' + "x" * 5000 + '"}')
    assert path.read_bytes() == b'{"n": 1}\n'


def test_damage_left_by_the_older_writer_is_read_around_and_repaired(reference, tmp_path, capsys):
    """The older writer ignored a short write and appended the next record after the cut one:
    one line holds a fragment and a whole record. Every session stays reachable, the judge
    reads the folder, and the run sets the fragment aside and redoes only that session."""
    ideas, source = reference
    folder = tmp_path / "damaged"
    folder.mkdir()
    for name in ("corpus.jsonl", "manifest.json"):
        (folder / name).write_bytes((source / name).read_bytes())
    lines = (folder / "corpus.jsonl").read_bytes().split(b"\n")
    cut = lines[5][: len(lines[5]) // 2]
    lost = json.loads(lines[5])["conversation_id"]
    (folder / "corpus.jsonl").write_bytes(b"\n".join(lines[:5] + [cut + lines[6]] + lines[7:]))
    assert main(["judge", "quality", "--samples", "1", str(folder), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "line 6: a record cut short" in err and f"{SESSIONS - 1} rubric calls" in err
    backend = Seeded(responder=reply)
    result = run(folder, backend)
    assert (result.ok, result.skipped, len(backend.history)) == (1, SESSIONS - 1, 1)
    assert (folder / "corpus.jsonl.torn").read_bytes() == cut + b"\n"
    whole_lines(folder / "corpus.jsonl")
    corpus = Corpus.from_jsonl(folder / "corpus.jsonl")
    assert {c.conversation_id: c.final_idea for c in corpus} == ideas and lost in ideas


def test_a_torn_last_line_is_reported_never_fatal(reference, tmp_path, capsys):
    ideas, source = reference
    folder = tmp_path / "torn"
    folder.mkdir()
    for name in ("corpus.jsonl", "manifest.json"):
        (folder / name).write_bytes((source / name).read_bytes())
    with open(folder / "corpus.jsonl", "ab") as handle:
        handle.write(b'{"conversation_id": "direct-half", "turns": [{"speak')
    assert main(["judge", "quality", "--samples", "1", str(folder), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert f"line {SESSIONS + 2}: a record cut short" in err and "at the end of the file" in err
    assert f"{SESSIONS} rubric calls" in err and "not valid JSON" not in err
    from engine.runs.run_folder import read_run_corpus

    assert {c.conversation_id for c in read_run_corpus(folder)} == set(ideas)


def judge_backend_factory(cache_of_folder, calls):
    def judge_reply(messages):
        calls.append(messages[-1]["content"])
        return "Score: 6"

    def make_backend(model="local", base_url=None, cache=None, **_):
        return CachedBackend(ScriptedBackend(responder=judge_reply, model="judge"), cache)

    return make_backend


@pytest.mark.parametrize("budget", [0, 150, 900, 2500, 3500])
def test_judge_on_a_full_disk_stops_in_one_line_and_resumes_without_paying_twice(
        reference, tmp_path, monkeypatch, capsys, budget):
    from engine.storage import durable

    ideas, source = reference
    folder = tmp_path / "judged"
    folder.mkdir()
    for name in ("corpus.jsonl", "manifest.json"):
        (folder / name).write_bytes((source / name).read_bytes())
    calls = []
    import engine.llm

    monkeypatch.setattr(engine.llm, "make_backend", judge_backend_factory(folder, calls))
    monkeypatch.setattr(durable, "_write", FillingDisk(budget).write)
    code = main(["judge", "quality", "--samples", "1", str(folder), "--judge-model", "judge", "--base-url", "http://127.0.0.1:9"])
    err = capsys.readouterr().err.strip().splitlines()
    monkeypatch.setattr(durable, "_write", os.write)
    assert code == 2 and err[-1] == f"error: disk full while writing {folder / 'quality.jsonl'}{FULL}"
    kept = whole_lines(folder / "quality.jsonl") if (folder / "quality.jsonl").exists() else []
    assert len(kept) < SESSIONS
    assert main(["judge", "quality", "--samples", "1", str(folder), "--judge-model", "judge", "--base-url",
                 "http://127.0.0.1:9"]) == 0
    records = [json.loads(line) for line in whole_lines(folder / "quality.jsonl")]
    assert sorted(r["conversation_id"] for r in records) == sorted(ideas)  # each item once
    assert len(calls) == SESSIONS  # the replies of records that failed to save came from the cache


def test_import_on_a_full_disk_is_one_line(tmp_path, monkeypatch, capsys):
    source = tmp_path / "chat.csv"
    source.write_text("conversation_id,turn,speaker,text\nd1,0,ann,hello\nd1,1,bob,hi\n")
    out = tmp_path / "corpus.jsonl"
    from engine.storage import durable

    monkeypatch.setattr(durable, "_write", FillingDisk(10).write)
    assert main(["import", str(source), str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"error: disk full while writing {out}{FULL}"
    assert not out.exists() and not list(tmp_path.glob(".*tmp*"))


# -- a real full disk -----------------------------------------------------------------------------
@pytest.fixture
def small_tmpfs(tmp_path):
    """A tmpfs of 64 KiB at ``tmp_path/disk`` (root and a kernel that allows it), unmounted after."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def big_reply(messages):
    return reply(messages) + " " + "padding " * 500  # about 4 KB per session


def test_a_real_small_tmpfs_fills_and_the_run_resumes_after_it_grows(small_tmpfs):
    folder = small_tmpfs / "run"
    with pytest.raises(InputError) as caught:
        run_grid(GRID, folder, backend=Seeded(responder=big_reply), progress=False, cache=False)
    message = str(caught.value)
    assert message.startswith(f"disk full while writing {folder}") and message.endswith(FULL)
    before = whole_lines(folder / "corpus.jsonl")
    assert 1 < len(before) < SESSIONS + 1
    subprocess.run(["mount", "-o", "remount,size=4m", str(small_tmpfs)], check=True)
    backend = Seeded(responder=big_reply)
    result = run_grid(GRID, folder, backend=backend, progress=False, cache=False)
    saved = len(before) - 1
    assert (result.ok, result.skipped, len(backend.history)) == (SESSIONS - saved, saved, SESSIONS - saved)
    after = whole_lines(folder / "corpus.jsonl")
    assert after[:len(before)] == before and len(after) == SESSIONS + 1


def test_a_real_small_tmpfs_with_the_response_cache_on_it(small_tmpfs):
    """The SQLite response cache fills the disk too: still one line, no session recorded as
    failed for it (a full disk is not the session's fault), and the re-run completes."""
    folder = small_tmpfs / "run"
    folder.mkdir()
    first = Seeded(responder=big_reply)
    with pytest.raises(InputError) as caught:
        run_grid(GRID, folder, backend=CachedBackend(first, folder / "llm_cache.sqlite"), progress=False)
    assert str(caught.value).startswith(f"disk full while writing {folder}") and str(caught.value).endswith(FULL)
    assert not (folder / "failed.jsonl").exists() or b"disk full" not in (folder / "failed.jsonl").read_bytes()
    before = whole_lines(folder / "corpus.jsonl") if (folder / "corpus.jsonl").exists() else [b""]
    subprocess.run(["mount", "-o", "remount,size=8m", str(small_tmpfs)], check=True)
    again = Seeded(responder=big_reply)
    result = run_grid(GRID, folder, backend=CachedBackend(again, folder / "llm_cache.sqlite"), progress=False)
    saved = len(before) - 1
    assert (result.ok, result.skipped, result.failed) == (SESSIONS - saved, saved, 0)
    assert len(again.history) <= SESSIONS - saved  # replies the cache kept are not paid again
    after = whole_lines(folder / "corpus.jsonl")
    assert len(after) == SESSIONS + 1 and after[:len(before)] == before[:len(after)]


@pytest.mark.parametrize("judged", [False, True])
def test_a_cache_that_cannot_store_stops_the_run_not_the_session(tmp_path, judged):
    """A full disk met while storing a reply (the response cache) is the disk's fault: the
    run stops in one line, no session is recorded as failed for it."""
    from engine.errors import disk_full_message, WriteError

    def full(messages):
        if judged and "Score" not in messages[-1]["content"] and "Novelty" not in messages[-1]["content"]:
            return "Idea: a refill van."
        raise WriteError(disk_full_message(tmp_path / "run" / "llm_cache.sqlite"))

    grid = {**GRID, "judge": {"model": "scripted", "mode": "alone"}} if judged else GRID
    backend = ScriptedBackend(responder=full)
    with pytest.raises(InputError, match=f"disk full while writing .*llm_cache.sqlite{FULL}"):
        run_grid(grid, tmp_path / "run", backend=backend, judge_backend=backend if judged else None,
                 progress=False, cache=False)
    assert not (tmp_path / "run" / "failed.jsonl").exists()
