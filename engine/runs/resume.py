"""Resuming a run folder: what it already holds must match what this run would add.

A folder keeps one model, provider, server, seed, judge... (none of them is part of a
session's id) and one prompt per task id (the prompt hash is). ``check_folder`` refuses a
run that would mix two of them, on a dry run as on a real one; ``storable_config`` is the
grid as the manifest records it (``engine.runs.grid.grid_record``: server URLs without
credentials, the key's variable NAME, and only the server fields each backend takes).
A manifest written before records held only those (the local model with ``api_key_env``,
``request_timeout``, ``base_url: null``) compares the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from engine.errors import InputError
from engine.llm.endpoints import default_provider
from engine.llm.replicas import split_urls
from engine.runs.grid import DEFAULT_EMBED_MODEL, GridSpec, SessionSpec, grid_record

# Options that shape a session but are not part of its id: a folder keeps one value of each.
SESSION_OPTIONS = ("model", "provider", "base_url", "seed", "reasoning_effort", "embed_base_url",
                   "embed_model", "judge")
OPTION_FLAGS = {"model": "--model", "provider": "--provider", "base_url": "--base-url", "seed": "--seed",
                "reasoning_effort": "--reasoning-effort", "embed_base_url": "--embed-base-url",
                "embed_model": "--embed-model", "judge": "the judge options (--judge-*)"}


def check_folder(manifest: dict[str, Any], sessions: dict[str, tuple], grid: GridSpec,
                 specs: Sequence[SessionSpec], out: Path) -> None:
    """Refuse another model, server, seed or judge (``refuse_other_session_options``) and
    another prompt for a planned task id (``refuse_other_prompts``) than the folder's."""
    refuse_other_session_options(manifest, grid, out)
    refuse_other_prompts(sessions, specs, out)


def refuse_other_session_options(manifest: dict[str, Any], grid: GridSpec, out: Path) -> None:
    """Refuse to resume a folder with another model, seed, server or judge than its sessions had.

    A session's id holds its protocol options and prompt, not these: with another seed a
    resumed run would find every session "done" and make none (the manifest then claiming
    the new seed), or add new sessions under the same ids' replicates. The folder keeps one
    value of each; another value needs another ``--out``. The provider is compared as
    chosen (a folder written before providers had names ran its model's default provider).
    """
    recorded = manifest.get("config") if isinstance(manifest.get("config"), dict) else None
    if not recorded:
        return
    current = storable_config(grid)
    for key in SESSION_OPTIONS:
        old, new = recorded.get(key), current.get(key)
        if key == "seed" and old is None:
            old = manifest.get("seed", 0)
        if key == "provider":
            old, new = _provider_of(recorded), _provider_of(current)
        if key in ("base_url", "embed_base_url"):  # "a,b" as written then, ["a", "b"] now
            old, new = split_urls(old) or None, split_urls(new) or None
        if key == "embed_model" and recorded.get("embed_base_url"):  # not given then: the default
            old = old or DEFAULT_EMBED_MODEL
        if old == new or (key == "judge" and _same_judge(old, new)):
            continue
        if key == "model":
            raise InputError(f"this folder holds a run of model {old!r}; use another --out for {new!r}",
                             path=str(out))
        shown_old = "none" if old is None else (json.dumps(old) if isinstance(old, (dict, list)) else repr(old))
        shown_new = "none" if new is None else (json.dumps(new) if isinstance(new, (dict, list)) else repr(new))
        raise InputError(f"this folder's sessions were made with {key} {shown_old}, this run has "
                         f"{shown_new}: the two would be mixed in one folder (the {key} is not part of "
                         f"a session's id); use another --out, or {OPTION_FLAGS[key]} as before to resume",
                         path=str(out))


def _provider_of(config: dict[str, Any]) -> str:
    return config.get("provider") or default_provider(config.get("model", "local"), config.get("base_url"))


def _same_judge(old, new) -> bool:
    """Judge settings equal (which variable holds the key does not matter), counting keys an
    older manifest did not record as equal, and a server field recorded as none (a local
    judge's ``base_url: null`` of older manifests) as not recorded."""
    if old is None or new is None:
        return old is new
    if not isinstance(old, dict):
        return False
    old, new = _judge_settings(old), _judge_settings(new)
    return all(old.get(k, v) == v for k, v in new.items()) and set(old) <= set(new)


def _judge_settings(judge: dict[str, Any]) -> dict[str, Any]:
    settings = {k: v for k, v in judge.items()
                if k != "api_key_env" and not (k in ("base_url", "azure_api_version") and v is None)}
    return {**settings, "provider": _provider_of(judge)}


def storable_config(grid: GridSpec) -> dict[str, Any]:
    """The grid as the manifest stores it (``engine.runs.grid.grid_record``)."""
    return grid_record(grid)


def refuse_other_prompts(sessions: dict[str, tuple], specs: Sequence[SessionSpec], out: Path) -> None:
    """Refuse a folder whose sessions answered another prompt for one of the planned task ids.

    The prompt hash is part of every session id, so an edited prompt never reuses old
    answers; refusing (rather than adding new sessions beside the old ones) keeps one prompt
    per task id in a folder, so analyses grouped by task never mix answers to two prompts.
    """
    planned = {s.task.id: s.task.prompt_sha256 for s in specs}
    for task_id, recorded, _finished in sessions.values():
        wanted = planned.get(task_id)
        if wanted is None or recorded == wanted:
            continue
        if recorded is None:
            raise InputError(f"this folder holds sessions of task {task_id!r} written without a "
                             f"record of their prompt (an older version); use another --out "
                             f"(--cache {out / 'llm_cache.sqlite'} reuses its answers)", path=str(out))
        raise InputError(f"task {task_id!r} has a different prompt now (sha256 {wanted[:12]}) than "
                         f"the sessions in this folder answered (sha256 {recorded[:12]}); use "
                         f"another --out, or give the edited task a new id", path=str(out))
