"""The CLI: one module per group of subcommands, each exposing ``register(subparsers)``.

* ``engine.cli.data``: import, embed, features, diversity (foundation)
* ``engine.cli.analyze``: analyze {regress, manipulability, compare, diagnose} (statistics)
* ``engine.cli.run``: run (the debate engine)
* ``engine.cli.judge``: judge {quality, pairwise} (paper B's quality side on a run folder)
* ``engine.cli.pilot``: pilot (prescribe a design for a model and verify it, ``engine.pilot``)
* ``engine.cli.dataset``: dataset {build, release} (the datasets the dashboard reads)
Errors meant for people (``InputError``) print one line and exit 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from engine.errors import InputError


def build_parser() -> argparse.ArgumentParser:
    from engine.cli import analyze, data, dataset, judge, pilot, run
    from engine.cli.checks import OneLineParser

    parser = OneLineParser(
        prog="python -m engine",
        description="creativity-dynamics lab: run, measure and analyse team creativity.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (data, analyze, run, judge, pilot, dataset):
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except InputError as error:
        # one line, whatever a message quotes (the error contract in the README)
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
