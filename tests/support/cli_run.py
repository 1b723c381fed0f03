"""Run ``python -m engine ...`` in this process (fast: no interpreter start, no re-import) and
hold it to the error contract: exit 0, or exit 2 with one line on stderr, never a traceback."""

from __future__ import annotations

import contextlib
import io
import traceback
from dataclasses import dataclass


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    @property
    def error_line(self) -> str:
        lines = [line for line in self.err.splitlines() if line.startswith("error:")]
        return lines[-1] if lines else ""


def cli(argv: list[str]) -> Outcome:
    """``engine.cli.main(argv)`` with stdout and stderr captured; an exception that escapes it
    is returned as code -1 with its traceback in ``err`` (so a test can show it)."""
    from engine.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as stop:  # argparse
            code = stop.code if isinstance(stop.code, int) else 2
        except Exception:  # noqa: BLE001  (what the contract forbids: shown, not raised)
            err.write(traceback.format_exc())
            code = -1
    return Outcome(int(code or 0), out.getvalue(), err.getvalue())


def refused(outcome: Outcome, *words: str) -> str:
    """The one error line of a refused command, after checking the contract and that it names
    each of ``words``."""
    assert outcome.code == 2, (outcome.code, outcome.err[-2000:])
    assert "Traceback" not in outcome.err, outcome.err[-2000:]
    line = outcome.error_line
    assert line, outcome.err
    assert [l for l in outcome.err.splitlines() if l.startswith("error:")] == [line], outcome.err
    for word in words:
        assert word in line, (word, line)
    return line
