"""Options checked at the door: argparse types with ranges, and a parser that errs in one line.

Every numeric option of ``run``, ``judge`` and ``pilot`` has a type from here, so a value out of
range (``--retries -1``, ``--concurrency 0``, ``--max-requests -5``) stops the command before
anything is planned, ``--dry-run`` included, with exit code 2 and one line naming the option,
instead of being replaced by a default or passed on to a model. Server URLs go through
``engine.llm.endpoints.check_base_url`` (never empty, http(s) with a host).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Callable


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr and exit code 2 (the project's
    error contract), naming the command; ``--help`` still prints the full usage."""

    def error(self, message: str):  # noqa: D401  (argparse's signature)
        text = " ".join(str(message).split())
        print(f"error: {self.prog}: {text} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def whole(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high`` (no upper end when None)."""
    span = f"from {low:,} to {high:,}" if high is not None else f"of at least {low:,}"

    def parse(text: str) -> int:
        value = text.strip()
        digits = value.lstrip("+-")
        if not digits.isdigit() or not digits.isascii() or len(digits) > 20:
            raise argparse.ArgumentTypeError(f"expected a whole number {span}, got {text!r}")
        number = int(value)
        if number < low or (high is not None and number > high):
            raise argparse.ArgumentTypeError(f"expected a whole number {span}, got {number}")
        return number

    parse.__name__ = "whole number"  # what argparse names in its own messages
    return parse


def seconds(high: float) -> Callable[[str], float]:
    """An argparse type: a finite number of seconds above 0 and at most ``high``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (0 < value <= high):
            raise argparse.ArgumentTypeError(f"expected a number of seconds above 0 and at most "
                                             f"{high:g}, got {text!r}")
        return value

    parse.__name__ = "seconds"
    return parse


def server_url(text: str) -> str:
    """An argparse type: a server URL (or several, separated by commas), never empty."""
    from engine.errors import InputError
    from engine.llm.endpoints import check_base_urls

    try:
        check_base_urls(text)
    except InputError as error:
        raise argparse.ArgumentTypeError(error.reason) from None
    return text.strip()


server_url.__name__ = "URL"
