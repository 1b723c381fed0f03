"""The Pilot page's live trajectory map (dashboard.figures.live_map) and the shared chart of
trajectories with interventions (dashboard.figures.charts.trajectory_with_interventions).

Turns carry known vectors through a fake embedder (a dict from text to vector), so every
expected position is worked out here by hand: with the fixed projection, a turn's point is
its vector times the 2 columns of the basis, and an intervention sits on the point of the
turn after which it fired."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.figures import charts
from dashboard.figures.live_map import LiveTrajectories, live_map, random_projection
from engine.corpus import Turn

DIM = 6


def vector(i: int) -> np.ndarray:
    out = np.zeros(DIM)
    out[i % DIM] = 1.0 + i  # distinct, known vectors
    return out


class FakeEmbedder:
    def __init__(self, table):
        self.table, self.calls = table, []

    def encode(self, texts):
        self.calls.append(list(texts))
        return np.stack([self.table[t] for t in texts])


def pilot_turns():
    """Two sessions interleaved as a pilot delivers them: s1 has 3 discussion turns and a
    'floor' intervention after its 2nd; s2 has an idea list (not a trajectory turn), 2
    discussion turns and a 'leap' intervention (a name with markup) after its 1st."""
    s1, s2 = "pilot-steered-plastic_waste-r0", "pilot-steered-plastic_waste-r1"
    return [
        (s1, Turn(speaker="A", text="t0", phase="discussion")),
        (s2, Turn(speaker="A", text="ideas", phase="generation")),
        (s1, Turn(speaker="B", text="t1", phase="discussion")),
        (s2, Turn(speaker="B", text="t3", phase="discussion")),
        (s1, Turn(speaker="moderator", text="over to C", phase="moderator",
                  meta={"rule": "floor", "reason": "semantic_spread", "n_turns": 2})),
        (s2, Turn(speaker="moderator", text="leap", phase="moderator",
                  meta={"rule": "<b>leap</b>", "reason": "global_coherence", "n_turns": 1})),
        (s1, Turn(speaker="C", text="t2", phase="discussion")),
        (s2, Turn(speaker="C", text="t4 <script>", phase="discussion")),
    ]


TABLE = {"t0": vector(0), "t1": vector(1), "t2": vector(2), "t3": vector(3), "t4 <script>": vector(4),
         "ideas": vector(5)}


def test_basis_is_orthonormal_and_fixed_by_the_seed():
    basis = random_projection(DIM)
    assert np.allclose(basis.T @ basis, np.eye(2))
    assert np.array_equal(basis, random_projection(DIM))
    assert not np.allclose(basis, random_projection(DIM, seed=1))


def test_one_path_per_session_interventions_at_their_turn_and_rule_in_hover():
    turns = pilot_turns()
    embedder = FakeEmbedder(TABLE)
    tracker = LiveTrajectories()
    tracker.update(turns[:4], embedder.encode)
    first, _ = tracker.frames()
    tracker.update(turns, embedder.encode)
    # only new trajectory turns are embedded; the idea list and moderator turns never
    assert embedder.calls == [["t0", "t1", "t3"], ["t2", "t4 <script>"]]
    assert tracker.update(turns, embedder.encode) == 0 and len(embedder.calls) == 2

    basis = random_projection(DIM)
    figure = live_map(tracker)
    paths = [t for t in figure.data if t.mode.startswith("lines")]
    stars = [t for t in figure.data if t.marker.symbol == "star"]
    assert len(paths) == 2 and len(stars) == 1
    s1, s2 = paths
    assert len(s1.x) == 3 and len(s2.x) == 2
    expected_s1 = np.stack([TABLE["t0"], TABLE["t1"], TABLE["t2"]]) @ basis
    expected_s2 = np.stack([TABLE["t3"], TABLE["t4 <script>"]]) @ basis
    assert np.allclose(np.c_[s1.x, s1.y], expected_s1) and np.allclose(np.c_[s2.x, s2.y], expected_s2)
    # points taken in earlier stay where they were (the projection does not move)
    assert np.allclose(first[["x", "y"]].to_numpy(), np.stack([expected_s1[0], expected_s1[1], expected_s2[0]]))
    # floor after s1's 2nd turn (t1), leap after s2's 1st (t3)
    marks = np.c_[stars[0].x, stars[0].y]
    assert np.allclose(marks, np.stack([expected_s1[1], expected_s2[0]]))
    floor, leap = stars[0].hovertext
    assert "floor" in floor and "after turn 2" in floor
    assert "&lt;b&gt;leap&lt;/b&gt;" in leap and "<b>" not in leap and "after turn 1" in leap
    # path colours: the palette, one per session
    assert s1.line.color != s2.line.color
    assert {s1.line.color, s2.line.color} <= set(charts.SEQUENCE)
    assert all("<script>" not in h for h in s2.hovertext)


def test_intervention_before_any_turn_is_counted_not_drawn():
    tracker = LiveTrajectories()
    tracker.update([("s", Turn(speaker="moderator", text="x", phase="moderator", meta={"rule": "leap"})),
                    ("s", Turn(speaker="A", text="t0", phase="discussion"))], FakeEmbedder(TABLE).encode)
    points, marks = tracker.frames()
    assert tracker.unplaced == 1 and len(points) == 1 and marks.empty


def test_steering_page_marks_reach_the_shared_chart():
    from dashboard.page_data.steering import trajectory_with_marks

    vectors = np.stack([vector(i) for i in range(4)])
    records = pd.DataFrame([{"conversation_id": "c", "n_turns": 3, "rule": "lens", "reason": "drift_to_majority"}])
    points, marks = trajectory_with_marks(vectors, "c", records)
    figure = charts.trajectory_with_interventions(points, marks, label_turns=True)
    (star,) = [t for t in figure.data if t.marker.symbol == "star"]
    row = points[points["turn"] == 2]
    assert (star.x[0], star.y[0]) == (row["x"].iloc[0], row["y"].iloc[0])
    assert "lens" in star.hovertext[0] and "after turn 3" in star.hovertext[0]
