"""The Pilot page's live trajectory map (data side, no widgets).

While a pilot runs, :class:`LiveTrajectories` takes the turns received so far (the
``(conversation_id, Turn)`` list of ``dashboard.pilot.job.PilotJob``), embeds only the turns
it has not seen, and keeps one point per discussion turn. Which turns form the trajectory
follows ``engine.corpus.Corpus.trajectory_view`` (``engine.corpus.is_trajectory_turn``);
the steered discussion's moderator turns (phase "moderator", ``engine.protocols.steered``)
become intervention marks, placed at the session's last trajectory turn received before them
(the turn after which the rule fired).

Projection to 2-D: a FIXED random projection, the two orthonormal columns of the QR
decomposition of a seeded Gaussian matrix (seed ``SEED``), applied to the embeddings without
centring. A point never moves when later turns arrive (a PCA refitted on each poll would
rotate and flip the map); the price is that it keeps distances only roughly, unlike the PCA
of the Trajectories page.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from engine.corpus import Turn, is_trajectory_turn

SEED = 0
PROJECTION_NOTE = (f"Projection: a fixed random projection of the MiniLM turn embeddings (seed {SEED}, "
                   "two orthonormal directions), so points stay where they are as turns arrive; it keeps "
                   "distances only roughly (the Trajectories page uses PCA of a whole dataset).")
POINT_COLUMNS = ["conversation_id", "turn", "speaker", "text", "x", "y"]
MARK_COLUMNS = ["conversation_id", "turn", "rule", "reason", "n_turns", "x", "y"]


def random_projection(dimension: int, seed: int = SEED) -> np.ndarray:
    """``dimension x 2`` matrix with orthonormal columns, the same for the same seed."""
    gaussian = np.random.default_rng(seed).standard_normal((dimension, 2))
    basis, _ = np.linalg.qr(gaussian)
    return basis


class LiveTrajectories:
    """Turns of a running pilot, embedded as they arrive, projected with a fixed basis."""

    def __init__(self, seed: int = SEED):
        self.seed = seed
        self.seen = 0  # turns of the job's list already taken in
        self.points: list[dict] = []
        self.vectors: list[np.ndarray] = []
        self.marks: list[dict] = []
        self.unplaced = 0  # interventions before any trajectory turn of their session (not drawn)
        self.error: str | None = None  # set by the page when embedding failed: the map stops there
        self._basis: np.ndarray | None = None

    def update(self, turns: Sequence[tuple[str, Turn]], encode: Callable[[list[str]], np.ndarray]) -> int:
        """Take in the turns after the ones already seen; returns how many were embedded.
        ``encode`` is called once per update, on the new trajectory turns only."""
        new = list(turns[self.seen:])
        if not new:
            return 0
        counts: dict[str, int] = {}
        for point in self.points:
            counts[point["conversation_id"]] = counts.get(point["conversation_id"], 0) + 1
        fresh, marks = [], []
        for conversation_id, turn in new:
            if is_trajectory_turn(turn):
                index = counts.get(conversation_id, 0)
                counts[conversation_id] = index + 1
                fresh.append({"conversation_id": conversation_id, "turn": index,
                              "speaker": turn.speaker, "text": turn.text or ""})
            elif turn.phase == "moderator":
                made = counts.get(conversation_id, 0)
                meta = turn.meta or {}
                if made == 0:
                    self.unplaced += 1
                    continue
                marks.append({"conversation_id": conversation_id, "turn": made - 1,
                              "rule": meta.get("rule"), "reason": meta.get("reason"),
                              "n_turns": meta.get("n_turns")})
        vectors = np.asarray(encode([p["text"] for p in fresh]), dtype=float) if fresh else np.empty((0, 0))
        if len(vectors) != len(fresh):
            raise ValueError(f"the embedder returned {len(vectors)} vectors for {len(fresh)} turns")
        self.points.extend(fresh)
        self.vectors.extend(vectors)
        self.marks.extend(marks)
        self.seen += len(new)
        return len(fresh)

    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``(points, marks)`` with ``x, y`` for ``dashboard.figures.charts.trajectory_with_interventions``."""
        points = pd.DataFrame(self.points, columns=POINT_COLUMNS[:4])
        if self.vectors:
            vectors = np.stack(self.vectors)
            if self._basis is None or self._basis.shape[0] != vectors.shape[1]:
                self._basis = random_projection(vectors.shape[1], self.seed)
            xy = vectors @ self._basis
            points["x"], points["y"] = xy[:, 0], xy[:, 1]
        else:
            points = pd.DataFrame(columns=POINT_COLUMNS)
        marks = pd.DataFrame(self.marks, columns=MARK_COLUMNS[:5])
        marks = marks.merge(points[["conversation_id", "turn", "x", "y"]], on=["conversation_id", "turn"],
                            how="left") if len(marks) else pd.DataFrame(columns=MARK_COLUMNS)
        return points, marks


def live_map(tracker: LiveTrajectories, title: str = ""):
    """The figure of everything the tracker holds (one path per session, interventions marked)."""
    from dashboard.figures import charts

    points, marks = tracker.frames()
    return charts.trajectory_with_interventions(points, marks, title, axis_label="random projection")
