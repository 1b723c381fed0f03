"""Run one session of any method into a Conversation, through the method's description.

``run_session`` looks the method up in ``engine.protocols.registry`` and awaits its ``run``
(a built-in's protocol module is imported then); a backend that fails mid-session gives a
Conversation with status "failed", the turns received so far and the error (never a key);
its meta holds the session's prompt, completion and total tokens (every call, failed
sessions included).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from engine.corpus import Conversation
from engine.errors import WriteError
from engine.llm.base import Backend
from engine.llm.secrets import scrub
from engine.protocols.config import ProtocolConfig
from engine.protocols.implementation import GENERATOR, PROMPTS_REVISION
from engine.protocols.registry import method
from engine.protocols.session import OnTurn, Session
from engine.tasks import Task, get_task


async def run_session(backend: Backend, task: Task | str, config: ProtocolConfig, *,
                      conversation_id: str, seed: int = 0, replicate: int = 0,
                      on_turn: OnTurn | None = None,
                      embedder: Callable[[Sequence[str]], np.ndarray] | None = None,
                      agent_backends: dict[str, Backend] | None = None) -> Conversation:
    """Run one session; never raises for a backend failure (the Conversation says 'failed').

    ``agent_backends`` maps each name of ``config.models`` to its backend (per-agent models).
    """
    task = get_task(task)
    described = method(config.method)
    session = Session(backend, task, config, conversation_id=conversation_id, seed=seed,
                      replicate=replicate, on_turn=on_turn, embedder=embedder,
                      agent_backends=agent_backends)
    team_factors = config.turn_limited  # persona and speaking order are paper A's factors
    conversation = Conversation(
        conversation_id=conversation_id, source="llm", task=task.id, model=session_model(config, backend),
        protocol=config.method, persona=config.persona if team_factors else described.persona,
        team_size=config.agents, order=config.order if team_factors else None,
        replicate=replicate, meta={"paper": config.paper, **config.meta(), "seed": seed,
                                   # how it was made (engine.protocols.implementation)
                                   "generator": GENERATOR, "prompts_revision": PROMPTS_REVISION,
                                   "task_prompt": task.prompt,
                                   "task_prompt_sha256": task.prompt_sha256})
    try:
        final = await described.runner()(session)
        conversation.final_idea = final
    except WriteError:  # the disk, not the session: the run stops in one line (engine.storage.durable)
        raise
    except Exception as error:  # a failed session is data, kept with its turns
        conversation.status = "failed"
        conversation.error = scrub(f"{type(error).__name__}: {error}")
    conversation.turns = list(session.turns)
    conversation.meta.update(session.meta)
    conversation.meta["calls"] = session.calls_made
    conversation.meta.update(session.token_meta())  # prompt / completion / total tokens (Table 29)
    return conversation


def session_model(config: ProtocolConfig, backend: Backend) -> str:
    """The model a session is filed under: its backend's, or "mixed" when agents differ
    (paper A's reference level "Mixed", Tables 7 and 20)."""
    models = set(config.models or ())
    if not models:
        return backend.model
    return next(iter(models)) if len(models) == 1 else "mixed"
