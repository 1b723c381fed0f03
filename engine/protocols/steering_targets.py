"""The steered discussion's moderator targets and their validation.

Kept apart from ``engine.protocols.steered`` so that the configuration
(``engine.protocols.config``) can check a grid's ``steering:`` block without importing the
protocol, which imports the session, which imports the configuration. ``TRACKED`` lists the
trajectory features (paper A, Table 19) the moderator watches.
"""

from __future__ import annotations

import math
from typing import Any

TRACKED = ("global_coherence", "semantic_spread", "path_length", "max_distance", "convergence_ratio")
DEFAULT_TARGETS: dict[str, float] = {
    "coherence_max": 0.80,     # leap above this global coherence ...
    "patience": 2,             # ... for this many checks in a row
    "spread_min": 0.10,        # floor to the farthest agent below this semantic spread
    "drift_min": 0.90,         # lens for an agent this similar (cosine) to the centroid
    "max_distance_max": 0.95,  # converge if two turns are farther apart than this
    "path_budget": 6.0,        # converge once the path is this long (cosine distance units)
    "explore_share": 0.7,      # converge once this share of turn_limit is spoken
    "warmup": 3,               # discussion turns before the first check
    "recent": 2,               # turns per agent that define its position for the floor rule
}
INTEGER_TARGETS = ("patience", "warmup", "recent")


def steering_targets(options: dict[str, Any] | None) -> dict[str, float]:
    """The defaults overridden by ``options``; an unknown key or a bad value is a ValueError."""
    targets = dict(DEFAULT_TARGETS)
    for key, value in (options or {}).items():
        if key not in DEFAULT_TARGETS:
            raise ValueError(f"steering: unknown target {key!r}; choose from {', '.join(DEFAULT_TARGETS)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"steering.{key}: expected a number, got {value!r}")
        if key in INTEGER_TARGETS:
            if int(value) != value or value < 1:
                raise ValueError(f"steering.{key}: expected a positive whole number, got {value!r}")
            value = int(value)
        elif value < 0:
            raise ValueError(f"steering.{key}: expected a non-negative number, got {value!r}")
        targets[key] = value
    return targets
