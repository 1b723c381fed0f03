"""A cached_runs folder for one test: chosen datasets only, so the dashboard's default is fixed."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# what a test's cache folder borrows from the session's (``shared_cache``): vectors keyed by
# model and text hash, projections keyed by the turns they project; never the LLM response
# cache or anything a test counts on being empty
SHARED_CACHE_ENTRIES = ("embeddings.sqlite", "projections")


def make_shared_cache(folder: Path) -> Path:
    """``folder`` made into a cache the session's tests share: an embedding store and a
    projections folder (so a notebook kernel or a served dashboard embeds a text once per
    session, not once per test)."""
    from engine.embedding.embedder import EmbeddingCache

    folder.mkdir(parents=True, exist_ok=True)
    EmbeddingCache(folder / "embeddings.sqlite")  # created, so a link to it is never dangling
    (folder / "projections").mkdir(exist_ok=True)
    return folder


def cached_runs_folder(tmp_path: Path, *names: str, shared_cache: Path | None = None) -> tuple[Path, dict[str, str]]:
    """``tmp_path/cached_runs`` holding the named datasets of the repository's ``cached_runs/``
    (symlinked), and the environment that points the dashboard at it, with its own
    cache folder (whose embeddings and projections are those of ``shared_cache`` when given)."""
    root = tmp_path / "cached_runs"
    root.mkdir()
    for name in names:
        (root / name).symlink_to(REPO / "cached_runs" / name, target_is_directory=True)
    cache = tmp_path / "cache"
    if shared_cache is not None:
        cache.mkdir()
        for entry in SHARED_CACHE_ENTRIES:
            (cache / entry).symlink_to(shared_cache / entry)
    return root, {"CDL_CACHED_RUNS": str(root), "CDL_CACHE_DIR": str(cache)}
