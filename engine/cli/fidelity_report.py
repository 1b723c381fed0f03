"""``python -m engine analyze fidelity``: the nine trajectory features when paper A's
structures run as the paper describes them and as the authors' code ran them
(``engine.stats.mode_differences``; the modes: ``engine.protocols.fidelity_modes``, ``docs/reference/fidelity.md``).

Prints, per structure, what each mode did (turns, calls, replies asked again or read as
Agree) and, per feature, N and mean per mode, release − paper with Welch's 95% interval,
Holm-adjusted p over the nine features and Hedges' g; rows with too few sessions say so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from engine.errors import InputError

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATASET = REPO / "cached_runs" / "local_smollm2_fidelity"


def report(dataset: str | None, out: str | None, *, write: Callable, show: Callable) -> int:
    from engine.datasets import Dataset
    from engine.stats.mode_differences import mode_differences, mode_mechanics

    folder = Path(dataset) if dataset else DEFAULT_DATASET
    if not (folder / "manifest.json").exists():
        raise InputError("not a dataset folder (no manifest.json)", path=str(folder))
    data = Dataset.load(folder, with_corpus=False)
    table = data.conversations
    differences = mode_differences(table)
    if differences.empty:
        raise InputError("no structure has sessions of both fidelities (paper and release) here",
                         path=str(folder))
    model = data.manifest.get("run", {}).get("config", {}).get("model") or "?"
    print(f"data: dataset {folder.name} ({len(table):,} conversations; model {model}; "
          f"embeddings {data.manifest.get('embedding_model', '?')})")
    print("How each mode ran (means per session; counts summed):")
    show(mode_mechanics(table), digits=2)
    for structure, block in differences.groupby("structure", sort=False):
        print(f"\n== {structure}: release − paper, Welch 95% interval, Holm over the "
              f"{len(block)} features (N per mode in the table)")
        show(block.drop(columns=["structure"]), digits=3)
    print("\nOurs, on this dataset only: neither paper reports this comparison.")
    write(out, differences, {"dataset": str(folder), "differences": differences.to_dict(orient="records"),
                             "mechanics": mode_mechanics(table).to_dict(orient="records")})
    return 0
