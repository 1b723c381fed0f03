"""Reading structure out of free-text replies: idea lists, 'Idea N: score' ratings, single
numbers and 'Response N' choices (Agree / Modify / Replace: ``engine.protocols.actions``).

Models, small ones especially, do not always follow the format: every parser returns what
it could read and says when it could not (None), so protocols can record the miss.
"""

from __future__ import annotations

import re

_BULLET = re.compile(r"^\s*(?:[-*\u2022]+|\(?\d{1,2}[.):]|idea\s*\d+\s*[:.)-]|#+)\s*", re.IGNORECASE)
_RATING = re.compile(r"(?:idea|response)?\s*#?\s*(\d{1,3})\s*[:=)\-\u2013]\s*\**\s*(\d{1,2}(?:\.\d+)?)",
                     re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def clean_idea(text: str) -> str:
    """Strip list markers, 'FINAL IDEA:' style prefixes and surrounding quotes."""
    text = _BULLET.sub("", text.strip())
    text = re.sub(r"^\s*\**\s*(final idea|idea)\s*\**\s*:\s*\**", "", text, flags=re.IGNORECASE)
    return text.strip().strip('"').strip("*").strip()


def split_ideas(text: str, limit: int | None = None, *, min_words: int = 4) -> list[str]:
    """One idea per non-empty line (markers removed); short header lines dropped.

    When no line looks like an idea, the whole reply is one idea (if it is not empty).
    """
    ideas = []
    for line in text.splitlines():
        idea = clean_idea(line)
        if len(idea.split()) >= min_words and not idea.endswith(":"):
            ideas.append(idea)
    if not ideas and text.strip():
        ideas = [clean_idea(" ".join(text.split()))]
    return ideas[:limit] if limit else ideas


def parse_ratings(text: str, n_items: int, low: float = 1, high: float = 10) -> dict[int, float]:
    """``{item index (0-based): score}`` from lines like 'Idea 3: 7'; out-of-range lines ignored."""
    scores: dict[int, float] = {}
    for match in _RATING.finditer(text):
        number, score = int(match.group(1)), float(match.group(2))
        if 1 <= number <= n_items and low <= score <= high and (number - 1) not in scores:
            scores[number - 1] = score
    return scores


def parse_number(text: str, low: float, high: float) -> float | None:
    """The first number in ``[low, high]`` in the text, or None."""
    for match in _NUMBER.finditer(text):
        value = float(match.group(0))
        if low <= value <= high:
            return value
    return None


def parse_labelled(text: str, label: str, low: float, high: float) -> float | None:
    """The number after 'label:' (e.g. 'Novelty: 7'), within range, or None."""
    match = re.search(rf"{label}\s*\**\s*[:=\-]?\s*\**\s*(\d+(?:\.\d+)?)", text, re.IGNORECASE)
    if not match:
        return None
    value = float(match.group(1))
    return value if low <= value <= high else None


def parse_choice(text: str, n_items: int, label: str = "Response") -> int | None:
    """0-based index from 'Response N' (or a bare number) within range, else None."""
    match = re.search(rf"{label}\s*#?\s*(\d+)", text, re.IGNORECASE)
    if match and 1 <= int(match.group(1)) <= n_items:
        return int(match.group(1)) - 1
    value = parse_number(text, 1, n_items)
    return int(value) - 1 if value is not None and value == int(value) else None


def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of lower-cased word sets (used to tell a pool idea from a new one)."""
    wa, wb = set(re.findall(r"\w+", a.lower())), set(re.findall(r"\w+", b.lower()))
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0
