"""One categorical palette for every chart and export: a level keeps its colour everywhere.

Colours come from two palettes designed to stay distinguishable for the common colour-vision
deficiencies: Okabe & Ito's eight ("Color Universal Design", 2008) and Paul Tol's "muted"
set (Tol, "Colour schemes", SRON technical note, 2021). Known levels get a fixed colour:

* source: LLM blue, human wine (the two groups of paper A, Figure 3a);
* method / discussion: the eleven protocols of the two papers and the steered discussion
  (``engine.names.METHODS``), twelve distinct colours;
* task: the six tasks of paper A (``engine.tasks``).

Any other level (a model name, a persona, a team size...) gets a colour from its name
through a fixed hash, so it is the same in every chart and every session. Missing values
("(none)") are light grey.
"""

from __future__ import annotations

import zlib

OKABE_ITO = {"blue": "#0072B2", "orange": "#E69F00", "green": "#009E73", "purple": "#CC79A7",
             "sky": "#56B4E9", "vermillion": "#D55E00", "yellow": "#F0E442"}
TOL_MUTED = {"indigo": "#332288", "wine": "#882255", "olive": "#999933", "forest": "#117733",
             "teal": "#44AA99", "rose": "#CC6677", "sand": "#DDCC77", "cyan": "#88CCEE"}
BLACK, GREY, MISSING = "#000000", "#7F7F7F", "#C8C8C8"

# The order levels without a fixed colour draw from (by hash of their name).
SEQUENCE = (OKABE_ITO["blue"], OKABE_ITO["orange"], OKABE_ITO["green"], OKABE_ITO["purple"],
            OKABE_ITO["vermillion"], OKABE_ITO["sky"], TOL_MUTED["indigo"], TOL_MUTED["olive"],
            TOL_MUTED["wine"], TOL_MUTED["forest"], TOL_MUTED["rose"], TOL_MUTED["teal"])

SOURCE = {"llm": OKABE_ITO["blue"], "human": TOL_MUTED["wine"]}
METHOD = {
    "none": BLACK, "open": OKABE_ITO["blue"], "instructed": OKABE_ITO["orange"],
    "iterative": OKABE_ITO["green"], "progressive": OKABE_ITO["purple"],
    "direct": TOL_MUTED["indigo"], "self_refine": OKABE_ITO["sky"], "voting": TOL_MUTED["olive"],
    "homo_mad": OKABE_ITO["vermillion"], "hetero_mad": TOL_MUTED["wine"], "creative_mad": TOL_MUTED["forest"],
    "steered": TOL_MUTED["sand"],
}
TASK = {"plastic_waste": OKABE_ITO["blue"], "supply_chain": OKABE_ITO["orange"],
        "sorry_pandemic": OKABE_ITO["green"], "education_inequality": OKABE_ITO["purple"],
        "employee_attrition": OKABE_ITO["vermillion"], "singing_shower": TOL_MUTED["indigo"]}
# Paper A's models (engine.importers.paper_release.MODEL_NAMES) and the local model.
MODEL = {"gpt-4.1": OKABE_ITO["blue"], "o3-high": OKABE_ITO["orange"], "o3-low": OKABE_ITO["sky"],
         "Mixed": TOL_MUTED["olive"], "local": TOL_MUTED["teal"]}
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
    return SEQUENCE[zlib.crc32(text.encode("utf-8")) % len(SEQUENCE)]


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
