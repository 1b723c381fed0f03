"""Which of paper A's released tables a file is, told from its columns (never one name).

Two shapes come from the authors' release (pitehu/llm_multiagent_creativity, ``data/``):

* ``metrics``: ``comprehensive_trajectory_metrics*.csv``, one row per conversation with the
  nine Table 19 features, ``file_id``, ``question_id`` and ``n_turns``;
* ``ideas``: ``ideas_with_ratings_clean.csv`` (DATA_DICTIONARY.md), one row per final idea
  with ``file_id``, ``question_id``, the three ``avg_*_rating`` columns and the columns
  that say who made it (``source`` or ``data_type``).

A file is of a kind when it has every column of that kind's signature. Having both
signatures is ambiguous and an error; having neither is ``None`` (the caller's other
readers, e.g. transcripts, apply).
"""

from __future__ import annotations

from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES

METRICS_SIGNATURE = frozenset({"file_id", "question_id", "n_turns", *PAPER_A_FEATURES})
IDEAS_SIGNATURE = frozenset({"file_id", "question_id", "avg_novelty_rating",
                             "avg_usefulness_rating", "avg_creativity_rating"})
IDEAS_ORIGIN = frozenset({"source", "data_type"})  # at least one of them


def table_kind(columns, *, path: str | None = None) -> str | None:
    """``"metrics"``, ``"ideas"`` or ``None`` for a file with these header ``columns``."""
    names = {str(c).strip() for c in columns}
    is_metrics = METRICS_SIGNATURE <= names
    is_ideas = IDEAS_SIGNATURE <= names and bool(IDEAS_ORIGIN & names)
    if is_metrics and is_ideas:
        raise InputError("has the columns of both the metrics file (the nine features, n_turns) and "
                         "the ideas file (avg_*_rating, source/data_type); import each file on its "
                         "own and join them with engine.importers.ratings.ideas_with_metrics",
                         path=path)
    if is_metrics:
        return "metrics"
    if is_ideas:
        return "ideas"
    return None


def missing_for(kind: str, columns) -> list[str]:
    """Columns of ``kind``'s signature that ``columns`` lacks (for error messages)."""
    names = {str(c).strip() for c in columns}
    signature = METRICS_SIGNATURE if kind == "metrics" else IDEAS_SIGNATURE
    missing = sorted(signature - names)
    if kind == "ideas" and not IDEAS_ORIGIN & names:
        missing.append("source or data_type")
    return missing
