"""A cached_runs folder for one test: chosen datasets only, so the dashboard's default is fixed."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def cached_runs_folder(tmp_path: Path, *names: str) -> tuple[Path, dict[str, str]]:
    """``tmp_path/cached_runs`` holding the named datasets of the repository's ``cached_runs/``
    (symlinked), and the environment that points the dashboard at it, with its own
    embedding cache."""
    root = tmp_path / "cached_runs"
    root.mkdir()
    for name in names:
        (root / name).symlink_to(REPO / "cached_runs" / name, target_is_directory=True)
    return root, {"CDL_CACHED_RUNS": str(root), "CDL_CACHE_DIR": str(tmp_path / "cache")}
