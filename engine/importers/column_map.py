"""Renaming a transcript's columns to ours: ``THEIRS=OURS`` pairs (the CLI's ``--map``, the
dashboard's upload form)."""

from __future__ import annotations

from engine.errors import InputError


def column_mapping(items: list[str]) -> dict[str, str]:
    """``--map`` values (each ``a=b`` or ``a=b,c=d``) as one renaming dict."""
    return pairs([part for item in items for part in item.split(",") if part.strip()], "--map")


def pairs(items: list[str], option: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"expected NAME=VALUE, got {item!r}", field=option)
        out[key.strip()] = value.strip()
    return out
