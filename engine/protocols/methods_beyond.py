"""Methods beyond the two papers, this project's own: the trajectory-steered discussion.

``steered`` (``engine.protocols.steered``) is paper A's open discussion (A.1.2) with a
moderator that steers the running trajectory toward the features paper A's Table 23
associates with creative ideas, and hands out paper B's Cognitive Lenses (section 5). It
runs and is recorded like ``open`` (turn-limited, team of 3, no initial phase by default);
the moderator makes no chat calls; ``fidelity`` does not apply (it follows no release code).
"""

from __future__ import annotations

from engine.protocols.method import Method, initial_calls
from engine.protocols.methods_paper_a import TEAM_OPTIONS


def _steered_calls(config, with_retries: bool) -> int:
    """Like the open discussion: ``turn_limit`` turns and one synthesis."""
    return initial_calls(config) + config.turn_limit + 1


STEERED = Method(
    name="steered", run="engine.protocols.steered:run", calls=_steered_calls, paper=None,
    label="steered discussion", code="STEER", colour="sand",
    citation="Beyond the papers: paper A's open discussion (A.1.2) steered by its Table 23 "
             "trajectory features, with paper B's lenses (section 5)",
    turn_limited=True, initial_generation=False, options=TEAM_OPTIONS | {"turn_limit", "steering"},
    small_options=dict(agents=2, turn_limit=3),
    worked_calls=(({"agents": 3, "turn_limit": 8}, 9, 9),))  # 8 turns + 1 synthesis

METHODS = (STEERED,)
