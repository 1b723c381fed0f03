"""One categorical palette for every chart and export: a level keeps its colour everywhere.

Colours come from two palettes designed to stay distinguishable for the common colour-vision
deficiencies: Okabe & Ito's eight ("Color Universal Design", 2008) and Paul Tol's "muted"
set (Tol, "Colour schemes", SRON technical note, 2021). Known levels get a fixed colour:

* source: LLM blue, human wine (the two groups of paper A, Figure 3a);
* method / discussion: every registered method has one (``method_colours``). The eleven
  protocols of the two papers and the steered discussion name theirs in their descriptions
  (``Method.colour``, ``engine.protocols.registry``): twelve distinct colours. A method that
  names none (or an unknown name), a new built-in's or a plugin's, is given one by a rule
  that never runs out: in the registry's order, the colour of ``CANDIDATES`` (every sRGB
  colour of a 16-step grid not lighter than ``LIGHTEST``) farthest from the methods' colours
  so far and the missing grey, by the thresholds below (the largest smallest ratio of ΔE00 to
  its threshold, normal vision and the three simulated deficiencies; the first on a tie).
  While a candidate keeps every threshold against all of them, the new colour does; past
  that (a few dozen methods) it is the least close, and a chart showing two close method
  colours moves one (``style.chart_colours``) or shares a colour with its own symbol;
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

import itertools
import re
import zlib
from collections.abc import Mapping
from functools import lru_cache
from typing import Iterator

import numpy as np

from dashboard.figures import colour_difference
from engine.protocols import registry as method_registry
from engine.protocols.registry import is_method

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


# The colours a method naming none may be given: a 16-step sRGB grid (00, 11, ... FF per
# channel), without those lighter than LIGHTEST (L*), hard to see on the white page
# (Okabe–Ito's yellow, L* 88, is left out of SEQUENCE for it).
GRID_STEPS = 16
LIGHTEST = 85.0
VISIONS = (None, *colour_difference.DEFICIENCIES)


@lru_cache(maxsize=1)
def _candidates() -> tuple[tuple[str, ...], dict]:
    """The candidate colours and their L*a*b* in normal vision and each deficiency."""
    steps = np.linspace(0.0, 1.0, GRID_STEPS)
    rows = np.array(list(itertools.product(steps, repeat=3)))
    rows = rows[colour_difference.labs_of_rgb(rows)[:, 0] <= LIGHTEST]
    hexes = tuple(colour_difference.hex_of(row) for row in rows)
    return hexes, {vision: colour_difference.labs_of_rgb(rows, vision) for vision in VISIONS}


def _closeness(colour: str, labs: dict) -> np.ndarray:
    """Each candidate's distance from ``colour`` as a share of the thresholds: the smallest of
    ΔE00 / ``THRESHOLD`` (normal vision) and ΔE00 / ``CVD_THRESHOLD`` (each deficiency); 1 or
    more: apart (``colour_difference.apart``)."""
    rgb = colour_difference.rgb(colour)[None, :]
    shares = []
    for vision, candidates in labs.items():
        own = colour_difference.labs_of_rgb(rgb, vision)[0]
        limit = colour_difference.THRESHOLD if vision is None else colour_difference.CVD_THRESHOLD
        shares.append(colour_difference.ciede2000_many(own, candidates) / limit)
    return np.min(shares, axis=0)


def generated_colours(taken, count: int) -> tuple[str, ...]:
    """``count`` colours, one after the other, each the candidate farthest from ``taken`` and
    the ones generated before it (greedy max–min over the thresholds; never runs out)."""
    hexes, labs = _candidates()
    share = np.full(len(hexes), np.inf)
    for colour in taken:
        share = np.minimum(share, _closeness(colour, labs))
    out = []
    for _ in range(count):
        chosen = hexes[int(np.argmax(share))]
        out.append(chosen)
        share = np.minimum(share, _closeness(chosen, labs))
    return tuple(out)


@lru_cache(maxsize=8)
def _assigned(methods: tuple[tuple[str, str | None], ...]) -> dict[str, str]:
    own = {name: named(colour) for name, colour in methods}
    taken = [MISSING, *(c for c in own.values() if c is not None)]
    without = [name for name, colour in own.items() if colour is None]
    return {**own, **dict(zip(without, generated_colours(taken, len(without))))}


def method_colours() -> dict[str, str]:
    """``{method: colour}`` of every registered method (plugins' included): the colour its
    description names, else one generated (module docstring), the same while the registry
    holds the same methods."""
    return _assigned(tuple((m.name, m.colour) for m in method_registry.METHODS_REGISTRY.values()))


class MethodColours(Mapping):
    """``{method: colour}`` of the registered methods (``method_colours``), read when asked."""

    def __getitem__(self, name: str) -> str:
        if not is_method(name):
            raise KeyError(name)
        return method_colours()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(method_colours())

    def __len__(self) -> int:
        return len(method_colours())

    def __contains__(self, name: object) -> bool:
        return is_method(name)


SOURCE = {"llm": OKABE_ITO["blue"], "human": TOL_MUTED["wine"]}
METHOD = MethodColours()
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
