"""Readable names and numbers for what the pages print (no Streamlit here).

* ``readable_term``: a model term as a person reads it: ``C(discussion)[T.open]`` ->
  ``discussion: open``, ``a:b`` -> ``a × b``, a registered feature -> its label (``engine.measures.registry``:
  paper A's nine as Table 19 names them, and every other registered measure), the
  mixed model's ``Group Var`` -> ``task intercept variance``.
* ``format_p``: p-values as printed in papers: ``<0.001`` below one in a thousand, three
  decimals otherwise (never a bare ``0``).
* ``regression_table``: a fitted table with both applied, for display.
"""

from __future__ import annotations

import re

import pandas as pd

from engine.stats.p_format import format_p  # noqa: F401  (the one p formatter; pages import it here)


_CATEGORICAL = re.compile(r"^C\((?P<factor>[^,)]+)(?:,.*)?\)\[(?:T\.)?(?P<level>.*)\]$")


def readable_term(term) -> str:
    text = str(term)
    parts = re.split(r":(?![^\[]*\])", text)  # an interaction; a ':' inside [...] is a level
    if len(parts) > 1:
        return " × ".join(readable_term(part) for part in parts)
    match = _CATEGORICAL.match(text)
    if match:
        return f"{match['factor'].strip().replace('_', ' ')}: {match['level']}"
    if text == "Group Var":
        return "task intercept variance"
    from engine.measures.registry import FEATURES

    if text in FEATURES:
        return FEATURES.get(text).label
    return text.replace("_", " ")


def regression_table(table: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """Readable terms, p-values as text, other numbers rounded."""
    out = table.copy()
    if "term" in out:
        out["term"] = out["term"].map(readable_term)
    for column in [c for c in out.columns if c == "p" or c.endswith("_p") or c.startswith("p_")]:
        out[column] = out[column].map(format_p)
    numeric = out.select_dtypes("number").columns
    out[numeric] = out[numeric].round(digits)
    return out
