"""The CLI: one module per group of subcommands, each exposing ``register(subparsers)``.

* ``engine.cli.data``: import, embed, features, diversity (foundation)
* ``engine.cli.analyze``: analyze {regress, manipulability, compare, diagnose} (statistics)
* ``engine.cli.run``: run (the debate engine)
* ``engine.cli.judge``: judge {quality, pairwise} (paper B's quality side on a run folder) and judge validate (``engine.cli.judge_validate``: a measure against people's ratings)
* ``engine.cli.pilot``: pilot (prescribe a design for a model and verify it, ``engine.diagnosis.prescribe``)
* ``engine.cli.dataset``: dataset {build, release} (the datasets the dashboard reads)
* ``engine.cli.plugins``: plugins (the registered features, methods, backends and their sources)
Errors meant for people (``InputError``) print one line and exit 2, never a traceback; so
does a full disk wherever it is met ("disk full while writing FILE; nothing was lost, ...").
"""

from __future__ import annotations

import argparse
import sys

from engine.errors import InputError


def build_parser() -> argparse.ArgumentParser:
    from engine.cli import analyze, data, dataset, judge, pilot, plugins, run
    from engine.cli.checks import OneLineParser

    parser = OneLineParser(
        prog="python -m engine",
        description="creativity-dynamics lab: run, measure and analyse team creativity.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (data, analyze, run, judge, pilot, dataset, plugins):
        module.register(subparsers)
    return parser


def _disk_full(error: OSError) -> str | None:
    """The one-line message of a full disk met where no writer said which file (a folder
    being made, a library writing on its own); None for any other OSError."""
    import errno

    from engine.errors import disk_full_message

    if error.errno not in (errno.ENOSPC, errno.EDQUOT):
        return None
    return disk_full_message(error.filename or "a file")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except InputError as error:
        # one line, whatever a message quotes (the error contract, docs/reference/errors.md)
        print("error: " + " ".join(str(error).splitlines()), file=sys.stderr)
        return 2
    except Exception as error:
        from engine.llm.errors import BackendError

        if not isinstance(error, BackendError):
            raise
        # a server that failed for good (refused, redirected, gave up after retries): its
        # message names the server and never holds a key
        print("error: " + " ".join(str(error).split()), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as error:
        full = _disk_full(error)
        if full is None:
            raise
        print("error: " + full, file=sys.stderr)
        return 2
    except Exception as error:  # SQLite's own "database or disk is full"
        if type(error).__module__ != "sqlite3" or "full" not in str(error).lower():
            raise
        print("error: disk full while writing a cache; nothing was lost, re-run when there is space",
              file=sys.stderr)
        return 2
