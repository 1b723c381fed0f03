"""Counting calls in a test: each named function of a module wrapped (with pytest's
``monkeypatch``, undone after the test) so that every call adds one to its name's count."""

from __future__ import annotations

from collections import Counter


def count_calls(monkeypatch, module, names, counted: Counter | None = None) -> Counter:
    """``Counter`` of calls to ``module.<name>`` for each of ``names`` (``counted`` to add them
    to an existing one)."""
    counted = Counter() if counted is None else counted
    for name in names:
        original = getattr(module, name)

        def wrapper(*args, _original=original, _name=name, **kwargs):
            counted[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)
    return counted
