"""A grid run's manifest: what ran, with what, and how far it got.

``base_manifest`` is written when the run opens (status "running"): the command, the grid
(``engine.runs.resume.storable_config``: URLs without credentials, the key's variable NAME,
never a key), the backends' ``describe()``, the endpoints the run built with their provider
and where it came from (this project or a plugin's name and version), versions, every task
prompt, and ``plugins``: the methods and backends of the run that a plugin registered, each
with the plugin's name and version. ``final_manifest`` adds the sessions, usage, cost, consensus and replies when it ends.
"""

from __future__ import annotations

import datetime as dt
import platform
import sys
from importlib import metadata
from typing import Any, Sequence

from engine.corpus import Corpus
from engine.errors import WriteError
from engine.judging.consensus_check import consensus_summary
from engine.llm.providers import endpoint_record
from engine.llm.secrets import scrub
from engine.protocols.reask import reply_summary
from engine.runs.grid import GridSpec, SessionSpec, embed_endpoint
from engine.runs.resume import storable_config
from engine.runs.run_backends import RunBackends
from engine.runs.run_folder import RunStore, task_record


def versions() -> dict[str, str]:
    versions = {"python": platform.python_version(), "platform": platform.platform()}
    for package in ("creativity-dynamics-lab", "openai", "llama_cpp_python", "numpy", "pandas",
                    "pydantic", "sentence-transformers"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return versions


def plugins_used(specs: Sequence[SessionSpec], endpoints) -> dict[str, dict[str, Any]]:
    """``{"methods": {name: source}, "backends": {name: source}}`` of what plugins registered
    and this run uses (built-ins are left out; ``engine.registry.Source.record``)."""
    from engine.llm.providers import BACKENDS
    from engine.protocols.registry import METHODS_REGISTRY

    methods = {s.config.method for s in specs}
    providers = {e.provider for e in endpoints if getattr(e, "provider", None)}
    return {"methods": {name: source.record() for name, source in METHODS_REGISTRY.from_plugins().items()
                        if name in methods},
            "backends": {name: source.record() for name, source in BACKENDS.from_plugins().items()
                         if name in providers}}


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def base_manifest(grid: GridSpec, specs: Sequence[SessionSpec], previous: dict[str, Any],
                  backends: RunBackends, command: str | None) -> dict[str, Any]:
    """What the manifest says from the start of the run (``previous``: the folder's manifest)."""
    endpoints = dict(backends.endpoints)
    embeddings = embed_endpoint(grid)
    if embeddings is not None:
        endpoints["embeddings"] = embeddings
    return {
        "name": grid.name, "kind": "engine-run", "command": scrub(command or " ".join(sys.argv)),
        "created": previous.get("created") or now(), "config": storable_config(grid),
        "backend": backends.main.describe(), "judge": backends.judge.describe() if backends.judge else None,
        "endpoints": {role: endpoint_record(endpoint) for role, endpoint in endpoints.items()},
        "plugins": plugins_used(specs, endpoints.values()),
        "versions": versions(), "seed": grid.seed, "files": {"corpus": "corpus.jsonl",
                                                              "failed": "failed.jsonl"},
        "sessions": {"planned": len(specs)},
        # every prompt the folder's sessions answered, earlier runs' too (the judge reads them)
        "tasks": {**(previous.get("tasks") if isinstance(previous.get("tasks"), dict) else {}),
                  **{s.task.id: task_record(s.task) for s in specs}},
    }


def final_manifest(base: dict[str, Any], store: RunStore, corpus: Corpus, *, planned: int, complete: bool,
                   usage: dict[str, int], previous_usage: dict[str, int], cost: float | None,
                   cluster: dict[str, Any]) -> dict[str, Any]:
    """The manifest when the run ends (or stops on an error)."""
    total = {k: previous_usage.get(k, 0) + usage.get(k, 0) for k in set(previous_usage) | set(usage)}
    return {**base, "updated": now(), "status": "complete" if complete else "incomplete",
            "sessions": {"planned": planned, "ok": len(store.finished_ids()), "failed": len(store.failed),
                         "failed_ids": sorted(store.failed)},
            "usage_last_run": usage, "usage_total": total, "consensus": consensus_summary(corpus),
            "replies": reply_summary(corpus, store.failed.values()), "cost_usd_last_run": cost,
            **({"ray_last_run": cluster} if cluster else {})}


def write_manifest_unless_failing(store: RunStore, failure: BaseException | None, manifest: dict) -> None:
    """The run's final manifest; when the run is already ending on an error (a full disk),
    a manifest that cannot be written either does not hide that first error."""
    try:
        store.write_manifest(manifest)
    except WriteError:
        if failure is None:
            raise
