"""Every pilot the dashboard runs, kept as a dataset folder in a per-user history.

Folder: ``$CDL_PILOT_DIR``, else ``$CDL_CACHE_DIR/pilots``, else
``~/.cache/creativity-dynamics-lab/pilots``. One sub-folder per pilot
(``<started>_<method>_<task>``), written with ``Dataset.save`` (atomic file writes; the
manifest last, so a folder without one is an unfinished write and is not listed). The
manifest holds the form's settings (backend kind, model, base URL; never an API key), the
number of failed sessions and why, so a failed pilot stays visible in the history.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from engine.datasets import Dataset


def history_root() -> Path:
    explicit = os.environ.get("CDL_PILOT_DIR")
    if explicit:
        return Path(explicit).expanduser()
    cache = os.environ.get("CDL_CACHE_DIR") or Path.home() / ".cache" / "creativity-dynamics-lab"
    return Path(cache).expanduser() / "pilots"


def keep(dataset: Dataset, folder_name: str, root: Path | None = None) -> Path:
    """Save ``dataset`` under the history root (a new folder; never over an existing pilot)."""
    root = Path(root or history_root())
    target = root / folder_name
    suffix = 1
    while (target / "manifest.json").exists():
        suffix += 1
        target = root / f"{folder_name}-{suffix}"
    return dataset.save(target)


def listing(root: Path | None = None) -> pd.DataFrame:
    """One row per kept pilot, newest first: name, created, method, task, model, sessions, failed."""
    root = Path(root or history_root())
    columns = ["name", "created", "method", "task", "model", "sessions", "failed", "path"]
    rows = []
    if root.is_dir():
        for manifest_path in root.glob("*/manifest.json"):
            try:
                manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # an unreadable manifest is not offered (its folder stays untouched)
            settings = manifest.get("settings", {})
            rows.append({"name": manifest_path.parent.name, "created": manifest.get("created", ""),
                         "method": settings.get("method"), "task": settings.get("task"),
                         "model": settings.get("model"), "sessions": manifest.get("n_sessions"),
                         "failed": manifest.get("n_failed"), "path": str(manifest_path.parent)})
    table = pd.DataFrame(rows, columns=columns)
    return table.sort_values("created", ascending=False, kind="stable").reset_index(drop=True)
