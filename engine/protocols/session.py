"""One running session: the agents, the turns recorded so far, and how a turn is asked.

Every model call goes through ``Session.ask`` (or ``ask_all`` for calls issued
concurrently, as in one debate round of paper B): it derives a per-call seed from the
session seed, calls the backend, and records a Turn with speaker, round, phase, prompt
hash, tokens and latency. Turns are recorded in a fixed order, whatever order concurrent
replies arrive in; turns already received survive a later failure (``Session.turns``).

With ``config.models`` (one model per agent: paper A's "Mixed" teams, Tables 7 and 20;
Hetero-MAD by model) an agent's calls go to the backend of its model, taken from
``agent_backends`` (model name -> Backend), and each turn records ``meta["model"]``;
calls by non-agents (the consensus judge) go to the session's own backend.
``Session.usage`` sums the tokens of every call, recorded as a turn or not (hand-raising
drafts that were not chosen), for the per-conversation token count of paper A's Table 29;
calls whose backend reported no usage are counted, never taken as zero tokens.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from engine.corpus import Turn
from engine.llm.base import Backend, Message, prompt_hash
from engine.protocols.config import ProtocolConfig
from engine.tasks import Task

OnTurn = Callable[[str, Turn], None]


@dataclass(frozen=True)
class Agent:
    name: str
    system: str
    persona: str | None = None
    lens: str | None = None


@dataclass
class Ask:
    """One request: who asks, the messages, and how the turn is labelled."""

    speaker: str
    messages: list[Message]
    phase: str
    round: int | None = None
    max_tokens: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    temperature: float | None = None  # None: the session's temperature


class Session:
    def __init__(self, backend: Backend, task: Task, config: ProtocolConfig, *,
                 conversation_id: str = "session", seed: int = 0, replicate: int = 0,
                 on_turn: OnTurn | None = None,
                 embedder: Callable[[Sequence[str]], np.ndarray] | None = None,
                 agent_backends: dict[str, Backend] | None = None):
        self.backend = backend
        self.agent_backends = dict(agent_backends or {})
        missing = sorted(set(config.models or ()) - set(self.agent_backends) - {backend.model})
        if missing:
            raise ValueError(f"models: no backend given for {', '.join(missing)}")
        self.task = task
        self.config = config
        self.conversation_id = conversation_id
        self.seed = seed
        self.replicate = replicate
        self.on_turn = on_turn
        self.rng = random.Random(seed)
        self.shown_order: list[int] | None = None  # the last rating's presentation order (team.rank)
        self.tie_draws = 0  # seeded tie-breaks drawn so far (team.rank, paper mode)
        self.turns: list[Turn] = []
        self.meta: dict[str, Any] = {}
        self.agents: list[Agent] = []
        self._embedder = embedder
        self._calls = 0
        self.usage = {"answered_calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                      "calls_without_usage": 0}
        self._last_speaker: int | None = None

    # -- model calls --------------------------------------------------------------------
    @property
    def calls_made(self) -> int:
        """Chat calls asked so far (answered or not)."""
        return self._calls

    def _next_seed(self) -> int:
        self._calls += 1
        return (self.seed * 1_000_003 + self._calls * 7919) % (2 ** 31 - 1)

    def backend_for(self, speaker: str) -> Backend:
        """The backend answering for ``speaker`` (its model's, when models are per agent)."""
        models = self.config.models
        if models:
            for index, agent in enumerate(self.agents):
                if agent.name == speaker:
                    name = models[index % len(models)]
                    return self.agent_backends.get(name) or self.backend
        return self.backend

    async def _call(self, ask: Ask, seed: int) -> Turn:
        backend = self.backend_for(ask.speaker)
        temperature = self.config.temperature if ask.temperature is None else ask.temperature
        result = await backend.achat(
            ask.messages, temperature=temperature,
            max_tokens=ask.max_tokens or self.config.max_tokens, seed=seed, replicate=self.replicate)
        self._count_usage(result)
        meta = {"prompt_tokens": result.prompt_tokens, "seed": seed, **ask.meta}
        if self.config.models:
            meta["model"] = backend.model
        if ask.temperature is not None:
            meta["temperature"] = ask.temperature
        if result.cached:
            meta["cached"] = True
        if result.lone_surrogates_replaced:
            meta["lone_surrogates_replaced"] = result.lone_surrogates_replaced
        return Turn(speaker=ask.speaker, text=result.text.strip(), round=ask.round, phase=ask.phase,
                    tokens=result.completion_tokens, latency_s=round(result.latency_s, 4),
                    prompt_hash=prompt_hash(ask.messages), meta=meta)

    def _count_usage(self, result) -> None:
        self.usage["answered_calls"] += 1
        if result.prompt_tokens is None or result.completion_tokens is None:
            self.usage["calls_without_usage"] += 1
        self.usage["prompt_tokens"] += result.prompt_tokens or 0
        self.usage["completion_tokens"] += result.completion_tokens or 0

    def token_meta(self) -> dict[str, int | None]:
        """Prompt, completion and total tokens of the whole session (None if no call said)."""
        usage = {k: v for k, v in self.usage.items() if k != "answered_calls"}
        answered = self.usage["answered_calls"]
        if answered and usage["calls_without_usage"] == answered:
            usage["prompt_tokens"] = usage["completion_tokens"] = None
        known = (usage["prompt_tokens"], usage["completion_tokens"])
        usage["total_tokens"] = None if None in known else sum(known)
        return usage

    def record(self, turn: Turn) -> Turn:
        self.turns.append(turn)
        if self.on_turn is not None:
            self.on_turn(self.conversation_id, turn)
        return turn

    async def ask(self, speaker: str, messages: list[Message], *, phase: str, round: int | None = None,
                  max_tokens: int | None = None, record: bool = True, temperature: float | None = None,
                  **meta: Any) -> Turn:
        turn = await self._call(Ask(speaker, messages, phase, round, max_tokens, meta, temperature),
                                self._next_seed())
        return self.record(turn) if record else turn

    async def ask_all(self, asks: Sequence[Ask], *, record: bool = True) -> list[Turn]:
        """Issue the calls concurrently; record the replies in request order.

        If some calls fail, the successful ones are still recorded, then the first error is raised.
        """
        seeds = [self._next_seed() for _ in asks]
        results = await asyncio.gather(*(self._call(a, s) for a, s in zip(asks, seeds)),
                                       return_exceptions=True)
        turns = []
        for result in results:
            if isinstance(result, BaseException):
                continue
            turns.append(self.record(result) if record else result)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return turns

    # -- helpers shared by protocols ----------------------------------------------------
    def agent(self, name: str) -> Agent:
        return next(a for a in self.agents if a.name == name)

    def next_speaker(self, eligible: Sequence[Agent]) -> Agent:
        """Paper A's order: fixed = rotate through the team (skipping ineligible agents);
        random = a uniformly random eligible agent each turn."""
        if not eligible:
            raise ValueError("no eligible speaker")
        if self.config.order == "random":
            chosen = self.rng.choice(list(eligible))
        else:
            names = {a.name for a in eligible}
            start = -1 if self._last_speaker is None else self._last_speaker
            for step in range(1, len(self.agents) + 1):
                candidate = self.agents[(start + step) % len(self.agents)]
                if candidate.name in names:
                    chosen = candidate
                    break
        self._last_speaker = self.agents.index(chosen)
        return chosen

    def spoke(self, agent: Agent) -> None:
        """Note who spoke last (for the fixed rotation) when the speaker was chosen otherwise."""
        self._last_speaker = self.agents.index(agent)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._embedder is None:
            from engine.embedding.embedder import Embedder

            self._embedder = Embedder().encode
        return np.asarray(await asyncio.to_thread(self._embedder, list(texts)), dtype=float)


def transcript(turns: Sequence[Turn], phases: Sequence[str] = ("discussion",)) -> str:
    """The discussion so far as 'Speaker: text' lines (only the given phases)."""
    return "\n".join(f"{t.speaker}: {t.text}" for t in turns if t.phase in phases)
