"""Every pilot the dashboard runs, kept as a dataset folder in a per-user history.

Folder: ``$CDL_PILOT_DIR``, else ``$CDL_CACHE_DIR/pilots``, else
``~/.cache/creativity-dynamics-lab/pilots``. One sub-folder per pilot
(``<started>_<method>_<task>``), written with ``Dataset.save`` (atomic file writes; the
manifest last, so a folder without one is an unfinished write and is not listed). The
manifest (``pilot_manifest``) holds the form's settings (backend kind, model, base URL with
its credentials redacted as the CLI redacts them, ``engine.llm.secrets``; never an API key),
the number of failed sessions and why, so a failed pilot stays visible in the history.
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


REPOSITORY = Path(__file__).resolve().parents[2]  # the checkout: its cached_runs/ are the project's own


def save_folder(name: str) -> Path:
    """Where "Save as dataset" proposes to save a pilot: under the history root, outside the
    checkout (the user's data never mixes with the project's files, nor gets committed), listed
    in the sidebar with the other kept pilots."""
    return history_root() / name


def save_refusal(target: Path) -> str | None:
    """Why a pilot may not be saved into ``target`` (None: it may): inside the checkout, or
    a folder that already holds a dataset."""
    resolved = Path(target).expanduser().resolve()
    if resolved == REPOSITORY or REPOSITORY in resolved.parents:
        return (f"{target} is inside the project's checkout ({REPOSITORY}); save outside it, e.g. "
                f"{save_folder(Path(target).name)}, so your data does not mix with the project's files")
    if (resolved / "manifest.json").exists():
        return f"{target} already holds a dataset; choose another folder."
    return None


def pilot_manifest(settings: dict, *, started: float, backend: dict | None, error: str | None,
                   cancelled: bool, conversations) -> dict:
    """What a kept pilot's ``manifest.json`` says about it; the base URL redacted
    (``user:pass@``, ``?api-key=``) and every text scrubbed of registered keys, as the CLI
    does for a run's manifest."""
    from datetime import datetime

    from engine.llm.replicas import redact_urls
    from engine.llm.secrets import scrub

    settings = dict(settings, base_url=redact_urls(settings.get("base_url")))
    failed = [c for c in conversations if c.status == "failed"]
    return {"description": f"pilot: {settings['method']} on {settings['task']}, "
                           f"{settings['replicates']} replicate(s)",
            "source": "engine.runs.runner.run_pilot from the dashboard",
            "made_by": "dashboard Pilot page", "settings": settings,
            "created": datetime.fromtimestamp(started).isoformat(timespec="seconds"),
            "backend": backend, "error": None if error is None else scrub(error),
            "cancelled": cancelled, "n_sessions": len(conversations), "n_failed": len(failed),
            "failures": {c.conversation_id: None if c.error is None else scrub(c.error) for c in failed}}


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
