"""Benchmark: the Trajectories map's server side from 50k to 1.92M turns (paper-scale: 64k
conversations of 30 turns).

    python -m benchmarks.bench_map [--sizes 50000 500000 1920000] [--repeat 3]

Above ``trajectories.MAX_MAP_POINTS`` turns the page puts every turn into one image
(``dashboard.figures.raster``) and draws a sample of whole conversations over it; a box or
lasso is resolved on the server against every turn (``dashboard.page_data.map_selection``).
For each size, synthetic turns (30 per conversation; positions from a seeded mixture of 12
Gaussian topics, a category and a progress value per turn) go through:

* ``sample``: the drawn turns (``trajectories.drawn_turns``);
* ``image (category)`` and ``image (number)``: ``explore_map.image_of`` coloured by a
  category and by a number, PNG encoding included;
* ``figure``: ``explore_map.turn_map`` of the sample over the image (what the page builds);
* ``lasso``: a 200-corner lasso (a circle around the centre) applied to every turn.

Reference, measured in the same run on the same turns: one ``numpy.histogram2d`` of every
turn at the image's 400 x 400 cells (a plain density, no colour); ratios are stage / reference.
The browser's share does not grow with the turns: one 400 x 400 image and at most
``trajectories.POINTS_OVER_IMAGE`` points (``benchmarks.bench_browser`` times the page).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import pandas as pd

SIZES = (50_000, 500_000, 1_920_000)
TURNS_PER_CONVERSATION = 30


def synthetic_points(n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` turns as the page's map frame holds them (positions, ids, a category, progress)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 3, (12, 2))
    topic = rng.integers(0, 12, n)
    xy = centres[topic] + rng.normal(0, 0.8, (n, 2))
    conversation = np.arange(n) // TURNS_PER_CONVERSATION
    turn = np.arange(n) % TURNS_PER_CONVERSATION
    return pd.DataFrame({"conversation_id": pd.Categorical(conversation).astype(str), "turn": turn,
                         "x": xy[:, 0], "y": xy[:, 1], "speaker": "Agent", "text": "",
                         "discussion": np.array(["open", "instructed", "iterative", "progressive"])[topic % 4],
                         "progress": turn / (TURNS_PER_CONVERSATION - 1), "point_id": np.arange(n)})


def _timed(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def bench_size(n: int, repeat: int) -> dict[str, float]:
    from dashboard.figures import explore_map, raster
    from dashboard.page_data import map_selection, trajectories

    points = synthetic_points(n)
    x, y = points["x"].to_numpy(), points["y"].to_numpy()
    drawn = trajectories.drawn_turns(points)
    angle = np.linspace(0, 2 * np.pi, 200, endpoint=False)
    lasso = np.column_stack([x.mean() + 2 * np.cos(angle), y.mean() + 2 * np.sin(angle)])
    return {
        "reference": _timed(lambda: np.histogram2d(x, y, bins=raster.RASTER_CELLS), repeat),
        "sample": _timed(lambda: trajectories.drawn_turns(points), repeat),
        "image (category)": _timed(lambda: explore_map.image_of(points, "discussion").data_uri(), repeat),
        "image (number)": _timed(lambda: explore_map.image_of(points, "progress").data_uri(), repeat),
        "figure": _timed(lambda: explore_map.turn_map(drawn, "discussion", "map", aggregate=points), repeat),
        "lasso": _timed(lambda: map_selection.in_regions(points, [lasso]), repeat),
        "drawn": len(drawn),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    bench_size(50_000, 1)  # imports and first calls, untimed
    stages = ("sample", "image (category)", "image (number)", "figure", "lasso")
    print(f"{'turns':>10} {'drawn':>6} {'reference s':>12} " + " ".join(f"{s:>17}" for s in stages))
    for n in args.sizes:
        result = bench_size(n, args.repeat)
        cells = " ".join(f"{result[s]:>7.3f}s {result[s] / result['reference']:>6.1f}x" for s in stages)
        print(f"{n:>10,} {result['drawn']:>6,} {result['reference']:>11.3f}s {cells}", flush=True)
    print("(median of --repeat; ratios against numpy.histogram2d of every turn at the image's cells, same run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
