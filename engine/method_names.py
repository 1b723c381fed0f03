"""The names of paper A's discussion structures and paper B's debate methods.

Kept apart from ``engine.protocols`` (which loads numpy, pandas and pydantic) so the
command line can offer them as choices without loading any of it.
"""

PAPER_A = ("none", "open", "instructed", "iterative", "progressive")
PAPER_B = ("direct", "self_refine", "voting", "homo_mad", "hetero_mad", "creative_mad")
METHODS = PAPER_A + PAPER_B
