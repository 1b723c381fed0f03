"""Discussion structures of paper A and debate methods of paper B, one module each.

``run_session`` runs one session of any method and returns a Conversation; a backend that
fails mid-session gives a Conversation with status "failed", the turns received so far and
the error (never a key); its meta holds the session's prompt, completion and total tokens
(every call, failed sessions included). ``expected_calls`` gives the number of chat calls a session makes
(exact for paper B, an upper bound for paper A's stopping rules).
"""

from __future__ import annotations

import importlib
from typing import Callable, Sequence

import numpy as np

from engine.corpus import Conversation
from engine.errors import WriteError
from engine.llm.base import Backend
from engine.llm.secrets import scrub
from engine.protocols.config import (DEBATES, METHODS, PAPER_A, PAPER_B, WITH_CONSENSUS, ProtocolConfig,
                                     make_config)
from engine.protocols.session import OnTurn, Session
from engine.tasks import Task, get_task

__all__ = ["METHODS", "PAPER_A", "PAPER_B", "ProtocolConfig", "Session", "expected_calls",
           "make_config", "run_session"]


def protocol_module(method: str):
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}")
    return importlib.import_module(f"engine.protocols.{method}")


async def run_session(backend: Backend, task: Task | str, config: ProtocolConfig, *,
                      conversation_id: str, seed: int = 0, replicate: int = 0,
                      on_turn: OnTurn | None = None,
                      embedder: Callable[[Sequence[str]], np.ndarray] | None = None,
                      agent_backends: dict[str, Backend] | None = None) -> Conversation:
    """Run one session; never raises for a backend failure (the Conversation says 'failed').

    ``agent_backends`` maps each name of ``config.models`` to its backend (per-agent models).
    """
    task = get_task(task)
    session = Session(backend, task, config, conversation_id=conversation_id, seed=seed,
                      replicate=replicate, on_turn=on_turn, embedder=embedder,
                      agent_backends=agent_backends)
    conversation = Conversation(
        conversation_id=conversation_id, source="llm", task=task.id, model=session_model(config, backend),
        protocol=config.method, persona=config.persona if config.paper == "A" else _paper_b_persona(config),
        team_size=config.agents, order=config.order if config.paper == "A" else None,
        replicate=replicate, meta={"paper": config.paper, **config.meta(), "seed": seed,
                                   "task_prompt": task.prompt,
                                   "task_prompt_sha256": task.prompt_sha256})
    try:
        final = await protocol_module(config.method).run(session)
        conversation.final_idea = final
    except WriteError:  # the disk, not the session: the run stops in one line (engine.storage.durable)
        raise
    except Exception as error:  # a failed session is data, kept with its turns
        conversation.status = "failed"
        conversation.error = scrub(f"{type(error).__name__}: {error}")
    conversation.turns = list(session.turns)
    conversation.meta.update(session.meta)
    conversation.meta["calls"] = session._calls
    conversation.meta.update(session.token_meta())  # prompt / completion / total tokens (Table 29)
    return conversation


def session_model(config: ProtocolConfig, backend: Backend) -> str:
    """The model a session is filed under: its backend's, or "mixed" when agents differ
    (paper A's reference level "Mixed", Tables 7 and 20)."""
    models = set(config.models or ())
    if not models:
        return backend.model
    return next(iter(models)) if len(models) == 1 else "mixed"


def _paper_b_persona(config: ProtocolConfig) -> str:
    return {"hetero_mad": "different", "creative_mad": "lens"}.get(config.method, "none")


def consensus_calls(config: ProtocolConfig, *, with_retries: bool = False) -> int:
    """Calls of the consensus step: judge 1 (+ retries), vote N, random / all none."""
    if not config.has_consensus:
        return 0
    return {"judge": 1 + (config.consensus_retries if with_retries else 0),
            "vote": config.agents, "random": 0, "all": 0}[config.consensus]


def expected_calls(config: ProtocolConfig, *, with_retries: bool = False) -> int:
    """Chat calls of one session: exact for paper B, the maximum for paper A; ``with_retries``
    adds the most that asking again can add (the consensus judge's retries of an unreadable
    pick; an instructed turn's unreadable replies, ``config.attempts`` asks in all)."""
    n, r, m = config.agents, config.rounds, config.method
    if m == "direct":
        return config.candidates + consensus_calls(config, with_retries=with_retries)
    if m == "self_refine":
        return config.candidates * (1 + 2 * r) + consensus_calls(config, with_retries=with_retries)
    if m == "voting":
        return n + consensus_calls(config, with_retries=with_retries)
    if m in DEBATES:
        return n * (r + 1) + consensus_calls(config, with_retries=with_retries)
    initial = 2 * n if config.initial_generation else 0
    limit = config.turn_limit
    if m == "none":
        return initial
    if m in ("open", "steered"):  # the steering moderator makes no chat calls
        return initial + limit + 1
    if m == "instructed":
        asked = n if config.order == "raise" else 1  # turns that must be read (hand-raising: drafts)
        bids = n if config.order == "raise" else 0
        # the release asks once without an initial phase (fixed / random order)
        asks_again = config.fidelity != "release" or config.initial_generation or config.order == "raise"
        attempts = config.attempts if with_retries and asks_again else 1
        return initial + limit * (asked * attempts + bids)
    if m == "iterative":
        return initial + limit * (2 if config.fidelity == "release" else 1 + n)
    if m == "progressive":
        return initial + 4 * n
    raise ValueError(m)
