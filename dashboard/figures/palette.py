"""One categorical palette for every chart and export: a level keeps its colour everywhere.

Colours come from two palettes designed to stay distinguishable for the common colour-vision
deficiencies: Okabe & Ito's eight ("Color Universal Design", 2008) and Paul Tol's "muted"
set (Tol, "Colour schemes", SRON technical note, 2021). Known levels get a fixed colour:

* source: LLM blue, human wine (the two groups of paper A, Figure 3a);
* method / discussion: the eleven protocols of the two papers and the steered discussion,
  twelve distinct colours, each named by the method's own description (``Method.colour``,
  ``engine.protocols.registry``); a plugin's method that names no colour (or an unknown one)
  gets one of the colours no built-in method uses, chosen from its name by a fixed hash;
* task: the six tasks of paper A (``engine.tasks``).

Any other level (a model name, a persona, a team size...) gets a colour from its name
through a fixed hash, so it is the same in every chart and every session. Missing values
("(none)") are light grey.

``SEQUENCE`` (the colours hashed levels draw from) and every fixed table hold only colours
that stay apart from each other by the thresholds of ``dashboard.figures.colour_difference``
(CIEDE2000 ≥ 15 in normal vision, ≥ 5 under simulated protan, deutan and tritan vision):
Tol's rose (ΔE00 12 from Okabe–Ito's purple, both pink), teal (9.6 from Okabe–Ito's green)
and cyan (8 from sky) are left out of it, and Okabe–Ito's yellow (10 from sand, and hard to
see on white). ``dashboard.figures.style.series_styles`` makes sure the colours of one chart
keep the thresholds.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from typing import Iterator

from engine.protocols.registry import BUILT_IN_METHODS, MethodChoices, is_method
from engine.protocols.registry import method as described

OKABE_ITO = {"blue": "#0072B2", "orange": "#E69F00", "green": "#009E73", "purple": "#CC79A7",
             "sky": "#56B4E9", "vermillion": "#D55E00", "yellow": "#F0E442"}
TOL_MUTED = {"indigo": "#332288", "wine": "#882255", "olive": "#999933", "forest": "#117733",
             "teal": "#44AA99", "rose": "#CC6677", "sand": "#DDCC77", "cyan": "#88CCEE"}
BLACK, GREY, MISSING = "#000000", "#7F7F7F", "#C8C8C8"

# The order levels without a fixed colour draw from (by hash of their name): eleven colours,
# any two of them apart by the thresholds (module docstring), black the twelfth for a chart
# that needs one more (``DISTINCT``).
SEQUENCE = (OKABE_ITO["blue"], OKABE_ITO["orange"], OKABE_ITO["green"], OKABE_ITO["purple"],
            OKABE_ITO["vermillion"], OKABE_ITO["sky"], TOL_MUTED["indigo"], TOL_MUTED["olive"],
            TOL_MUTED["wine"], TOL_MUTED["forest"], TOL_MUTED["sand"])
DISTINCT = (*SEQUENCE, BLACK)

# The colours a method's description may name (``Method.colour``), besides "#RRGGBB".
NAMED = {**OKABE_ITO, **TOL_MUTED, "black": BLACK, "grey": GREY}
HEX = re.compile(r"^#[0-9A-Fa-f]{6}$")


def named(key: str | None) -> str | None:
    """A colour name of ``NAMED`` or a ``#RRGGBB`` as its hex; None for anything else."""
    if not isinstance(key, str):
        return None
    return key if HEX.match(key) else NAMED.get(key.lower())


class MethodColours(Mapping):
    """``{method: colour}`` of the registered methods that name a colour (plugins' included),
    read from their descriptions when asked."""

    def __getitem__(self, name: str) -> str:
        found = named(described(name).colour) if is_method(name) else None
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return (name for name in MethodChoices() if name in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return is_method(name) and named(described(name).colour) is not None


SOURCE = {"llm": OKABE_ITO["blue"], "human": TOL_MUTED["wine"]}
METHOD = MethodColours()
# A method that names no colour: one of the palettes' colours no built-in method uses.
_TAKEN = {named(m.colour) for m in BUILT_IN_METHODS}
# (Tol's rose, teal and cyan: a chart moves one away from a built-in method's colour it is too
# close to, ``style.series_styles``)
METHOD_FALLBACK = tuple(dict.fromkeys(c for c in (*SEQUENCE, *TOL_MUTED.values()) if c not in _TAKEN))
TASK = {"plastic_waste": OKABE_ITO["blue"], "supply_chain": OKABE_ITO["orange"],
        "sorry_pandemic": OKABE_ITO["green"], "education_inequality": OKABE_ITO["purple"],
        "employee_attrition": OKABE_ITO["vermillion"], "singing_shower": TOL_MUTED["indigo"]}
# Paper A's models (engine.importers.paper_release.MODEL_NAMES) and the local model.
MODEL = {"gpt-4.1": OKABE_ITO["blue"], "o3-high": OKABE_ITO["orange"], "o3-low": OKABE_ITO["sky"],
         "Mixed": TOL_MUTED["olive"], "local": TOL_MUTED["forest"]}
KINDS = {"source": SOURCE, "method": METHOD, "discussion": METHOD, "protocol": METHOD, "task": TASK,
         "model": MODEL}
MISSING_LABELS = ("(none)", "nan", "None", "")


def colour(value, kind: str | None = None) -> str:
    """The colour of one level. ``kind`` (source, method, discussion, task, model) picks the
    table to look in; without it, every fixed table is tried (source first)."""
    text = "" if value is None else str(value)
    if text in MISSING_LABELS:
        return MISSING
    tables = [KINDS[kind]] if kind in KINDS else [SOURCE, METHOD, TASK, MODEL]
    for table in tables:
        if text in table:
            return table[text]
        if text.lower() in table:
            return table[text.lower()]
    if any(table is METHOD for table in tables) and is_method(text):  # a method without a colour
        return _hashed(text, METHOD_FALLBACK)
    return _hashed(text, SEQUENCE)


def _hashed(text: str, choices: tuple[str, ...]) -> str:
    return choices[zlib.crc32(text.encode("utf-8")) % len(choices)]


def colours(values, kind: str | None = None) -> dict[str, str]:
    """``{level: colour}`` for several levels (same answer as ``colour`` one by one)."""
    return {str(v): colour(v, kind) for v in values}


def has_fixed_colour(value, kind: str | None = None) -> bool:
    """True when ``value`` has a colour of its own in a fixed table (not one from the hash)."""
    text = "" if value is None else str(value)
    if text in MISSING_LABELS:
        return True
    tables = [KINDS[kind]] if kind in KINDS else [SOURCE, METHOD, TASK, MODEL]
    return any(text in table or text.lower() in table for table in tables)
