"""A pilot's run as the Pilot page starts and reports it (no Streamlit here): the backend of the
form's endpoint, the function the background job runs (``engine.runs.runner.run_pilot``), and
what the page says about a finished job (its status line, the judge's summary, its failed
sessions, the last turns, the options its notebook is written with)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pandas as pd

from dashboard.pilot import settings as pilot_settings

SHOWN_TURNS = 30  # the last turns the live table shows
SHOWN_CHARACTERS = 300  # of each turn's text


def backend(kind: str, values: dict[str, str], api_key: str, local: Callable[[str], Any]):
    """The backend of the form's endpoint (``pilot_settings.pilot_endpoint``; ``local(model)`` for
    the local model, loaded once by the page); a key typed in the form stays in memory (never in
    the ``Endpoint``, which names only the key's variable, used when the field is empty)."""
    from engine import llm

    endpoint = pilot_settings.pilot_endpoint(kind, values)
    if endpoint.provider == "local":
        return local(endpoint.model)
    return llm.make_backend(endpoint, api_key=api_key or None)


def form_settings(kind: str, values: dict[str, str], **chosen) -> dict[str, Any]:
    """The settings the form's values make (checked by ``pilot_settings.check_settings``)."""
    return {"backend": kind, "model": values.get("model", "").strip(),
            "base_url": values.get("base_url", "").strip() or None, **chosen}


def started_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The checked settings as the job keeps them: team size, replicates and tokens as ints."""
    return {**settings, "agents": pilot_settings.team(settings) or 1, "replicates": int(settings["replicates"]),
            "max_tokens": int(settings["max_tokens"]), "temperature": float(settings["temperature"])}


def job_function(settings: dict[str, Any], backend, judge_backend, embed) -> Callable:
    """What the background job (``dashboard.pilot.job.PilotJob.start``) runs: the pilot's sessions,
    every model call guarded by the job (so Cancel stops before the next one)."""
    def run(job):
        from engine.runs.runner import run_pilot

        return run_pilot(settings["method"], settings["task"], pilot_settings.team(settings),
                         pilot_settings.rounds(settings), int(settings["replicates"]), job.guard(backend),
                         on_turn=job.on_turn, on_session=job.on_session,
                         judge_backend=None if judge_backend is None else job.guard(judge_backend),
                         embedder=embed, **pilot_settings.protocol_options(settings))
    return run


def notebook_options(job_settings: dict | None, kept: str | None, reference: str | None) -> dict:
    """The Pilot page's notebook options: the form's plain settings only (never a key, nor a URL,
    which may carry credentials), the kept pilot and the reference dataset."""
    plain = None if job_settings is None else {
        k: v for k, v in job_settings.items() if isinstance(v, (str, int, float, bool, type(None)))
        and not any(word in k.lower() for word in ("key", "secret", "token", "url"))}
    return {"settings": plain, "pilot": kept or None, "reference": reference}


def turns_table(turns) -> pd.DataFrame:
    """The last ``SHOWN_TURNS`` turns received, each text cut at ``SHOWN_CHARACTERS``."""
    rows = [{"conversation": cid.rsplit("-", 1)[-1], "speaker": t.speaker, "round": t.round,
             "phase": t.phase, "text": (t.text or "")[:SHOWN_CHARACTERS]} for cid, t in turns[-SHOWN_TURNS:]]
    return pd.DataFrame(rows, columns=["conversation", "speaker", "round", "phase", "text"])


def failed_sessions(job) -> list:
    return [c for c in (job.corpus or []) if c.status == "failed"]


def status(job, turns_received: int) -> tuple[str, str]:
    """(label, state) of the finished job's status box."""
    planned = job.settings["replicates"]
    failed = failed_sessions(job)
    if job.cancelled:
        return f"Pilot cancelled after {turns_received} turns", "error"
    if job.error:
        return "Pilot stopped by an error", "error"
    if failed:
        return f"Pilot finished, {len(failed)} of {planned} session(s) failed", "error"
    return "Pilot finished", "complete"


def judge_summary(judged: dict) -> str:
    """What the judge did (``engine.judging.judge.rate_together``'s record on the corpus)."""
    return (f"Judge: {judged.get('ideas', 0)} final ideas rated together in batches of at most "
            f"{judged.get('batch_size')} by {len(judged.get('raters', []))} rater(s); "
            f"irrelevant (rated 0, left out of the scaling): {judged.get('irrelevant', 0)}; "
            f"unreadable verdicts (left missing): {judged.get('unreadable_verdicts', 0)}; "
            f"replies asked again: {judged.get('retries', 0)}.")


def failures_table(failed: list) -> pd.DataFrame:
    return pd.DataFrame([{"session": c.conversation_id, "turns received": len(c.turns), "error": c.error or ""}
                         for c in failed])


def run_name(settings: dict, started: str) -> str:
    """The folder name of a pilot (``<started>_<method>_<task>``) in the run history."""
    return f"{started}_{settings['method']}_{settings['task']}"


def reference_folder(root: Path, name: str | None) -> str | None:
    return str(root / name) if name else None
