"""What the manifest of a fidelity dataset says (``cached_runs/local_smollm2_fidelity``).

A run folder whose paper-A sessions include ``fidelity="release"`` ones (the grid
``cached_runs/grids/fidelity.yaml``: open, instructed and iterative in both fidelities,
``engine.protocols.fidelity_modes``) is described as such by ``engine.dataset_builds.run_folder``:
what was run, how replies were asked again or read (``engine.protocols.reask.reply_summary``)
and how the comparison is read (``engine.stats.mode_differences``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from engine.protocols.reask import reply_summary

GRID = "cached_runs/grids/fidelity.yaml"
LOCAL = "the local SmolLM2-135M-Instruct (Q4_1, llama.cpp, CPU)"
DESCRIPTION = ("Paper A's open, instructed and iterative structures in both fidelities: as the paper's "
               "text describes them (fidelity = paper) and as the authors' released code ran them "
               "(fidelity = release; docs/reference/fidelity.md), with the same task, team, turn limits and token "
               "budget, on {model}; no judge. Turn "
               "embeddings: all-MiniLM-L6-v2, and the nine Table 19 features. Compared by `python -m "
               "engine analyze fidelity` and on the Design levers page.")


def is_fidelity_run(corpus) -> bool:
    return any(c.meta.get("fidelity") == "release" for c in corpus)


def manifest_parts(run_dir: Path, corpus, failed_records=(), *, model: str = LOCAL) -> dict:
    """Description, commands and counts; ``model``: what the sessions ran on (the run's own
    record when it was not the local SmolLM2, whose commands ``regenerate`` then gives)."""
    sessions = Counter((c.protocol, c.meta.get("fidelity")) for c in corpus)
    calls = Counter()
    for c in corpus:  # every chat call of the sessions (the run's own usage counts one run only)
        calls[(c.protocol, c.meta.get("fidelity"))] += int(c.meta.get("calls") or 0)
    return {
        "description": DESCRIPTION.format(model=model),
        "made_by": f"python -m engine dataset build {run_dir.name}",
        "regenerate": (f"nice -n 10 python -m engine run --grid {GRID} --out runs/fidelity && "
                       f"python -m engine dataset build runs/fidelity --out cached_runs/local_smollm2_fidelity"),
        "extra": {"fidelity": {
            "grid": GRID,
            "sessions": [{"structure": p, "fidelity": f, "n": n, "chat_calls": calls[(p, f)]}
                         for (p, f), n in sorted(sessions.items())],
            "replies": reply_summary(corpus, failed_records),
            "read_with": "engine.stats.mode_differences (Welch 95% intervals, Holm over nine features, Hedges' g)",
        }},
    }
