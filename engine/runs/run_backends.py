"""The backends of a grid run, built once from the grid's endpoints, and what they used.

``RunBackends.for_grid``: the debaters' backend (``engine.runs.grid.model_endpoint``), one
per other model a condition's ``models`` names (on the same server), the judge and its
further ``models`` (``judge_endpoint``); a backend the caller gives (tests, benchmarks)
replaces the one the grid describes. ``RunBackends.on_worker`` builds the same for one
session on a Ray worker. ``usage`` and ``cost`` count from when they were built, each set of
counters once (a backend and its cache share counters); a backend of unknown price makes
the cost unknown (None), never 0. ``paraphraser`` and ``server_embedder`` build the judge's
paraphrase model and the embeddings server's client from their endpoints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from engine.llm.base import Backend
from engine.llm.endpoints import Endpoint
from engine.llm.pricing import Price, cost_of
from engine.llm.providers import make_backend
from engine.protocols.registry import debate_methods
from engine.runs.grid import GridSpec, SessionSpec, embed_endpoint, judge_endpoint, model_endpoint


@dataclass
class RunBackends:
    main: Backend
    judge: Backend | None = None
    extra_judges: list[Backend] = field(default_factory=list)
    agents: dict[str, Backend] = field(default_factory=dict)  # per-agent models (a condition's models)
    prices: dict[str, Price] = field(default_factory=dict)  # the grid's prices: (any backend of the model)
    endpoints: dict[str, Endpoint] = field(default_factory=dict)  # "debaters", "judge": those built here

    def __post_init__(self) -> None:
        self._before = {id(b.usage): b.usage.as_dict() for b in self.counted()}

    @classmethod
    def for_grid(cls, grid: GridSpec, specs: Sequence[SessionSpec], *, cache: str | Path | None,
                 replay: bool, concurrency: int, backend: Backend | None = None,
                 judge: Backend | None = None) -> "RunBackends":
        """What ``specs`` of ``grid`` talk to, each through the response cache at ``cache``."""
        def build(endpoint: Endpoint) -> Backend:
            return make_backend(endpoint, concurrency=concurrency, cache=cache, replay=replay)

        endpoints = {}
        if backend is None:
            endpoints["debaters"] = model_endpoint(grid)
            backend = build(endpoints["debaters"])
        if judge is None and grid.judge is not None:
            endpoints["judge"] = judge_endpoint(grid)
            judge = build(endpoints["judge"])
        agents = agent_backends(grid, specs, backend, build)
        extra = ([build(judge_endpoint(grid, name)) for name in grid.judge.models]
                 if judge is not None and grid.judge is not None else [])
        return cls(backend, judge, extra, agents, dict(grid.prices), endpoints)

    @classmethod
    def on_worker(cls, grid: GridSpec, spec: SessionSpec, *, concurrency: int,
                  wrap: Callable[[Backend], Backend]) -> "RunBackends":
        """One session's backends on a Ray worker, each wrapped by ``wrap`` (the broker's cache)."""
        def build(endpoint: Endpoint) -> Backend:
            return wrap(make_backend(endpoint, concurrency=concurrency))

        main = build(model_endpoint(grid))
        judge = build(judge_endpoint(grid)) if grid.judge is not None else None
        return cls(main, judge, [], agent_backends(grid, [spec], main, build), dict(grid.prices))

    @property
    def judges(self) -> list[Backend]:
        """The judge and the judge's further models (paper A's raters)."""
        return [self.judge, *self.extra_judges] if self.judge is not None else []

    def counted(self) -> list[Backend]:
        """Every backend, once per set of usage counters."""
        seen: set[int] = set()
        unique = []
        for backend in (self.main, *self.judges, *self.agents.values()):
            if id(backend.usage) not in seen:
                seen.add(id(backend.usage))
                unique.append(backend)
        return unique

    def _since(self, backend: Backend) -> dict[str, int]:
        before = self._before.get(id(backend.usage), {})
        return {key: value - before.get(key, 0) for key, value in backend.usage.as_dict().items()}

    def usage(self) -> dict[str, int]:
        """Calls, cache hits, retries, failures and tokens of every backend since they were built."""
        total: dict[str, int] = {}
        for backend in self.counted():
            for key, value in self._since(backend).items():
                total[key] = total.get(key, 0) + value
        return total

    def price_of(self, backend: Backend) -> Price | None:
        """The grid's ``prices:`` entry of the backend's model (a model run elsewhere than in
        this process), else the backend's own price."""
        if backend.kind != "local" and backend.model in self.prices:
            return self.prices[backend.model]
        return backend.price

    def cost(self) -> float | None:
        """USD since they were built; None when a backend's price is unknown."""
        total = 0.0
        for backend in self.counted():
            used = self._since(backend)
            part = cost_of(self.price_of(backend), used["prompt_tokens"], used["completion_tokens"])
            if part is None:
                return None
            total += part
        return total


def agent_backends(grid: GridSpec, specs: Sequence[SessionSpec], main: Backend,
                   build: Callable[[Endpoint], Backend]) -> dict[str, Backend]:
    """One backend per model named in the conditions' ``models`` (per-agent models); the
    run's own model reuses the run's backend. Same server as the run's model."""
    names = sorted({name for spec in specs for name in (spec.config.models or ())})
    return {name: main if name == grid.endpoint.model else build(model_endpoint(grid, name)) for name in names}


def paraphraser(grid: GridSpec, *, cache: str | Path | None, replay: bool) -> Backend | None:
    """The judge's ``paraphrase`` model on the judge's server (paper A's GPT-4.1 paraphrases)."""
    if grid.judge is None or not grid.judge.paraphrase:
        return None
    return make_backend(judge_endpoint(grid, grid.judge.paraphrase), cache=cache, replay=replay)


def needs_embeddings(specs: Sequence[SessionSpec]) -> bool:
    """Debates whose agents read their most distant or closest peers (Creative-MAD), and
    steered discussions (the moderator embeds every turn)."""
    return any(spec.config.method == "steered"
               or (spec.config.method in debate_methods() and spec.config.peer_strategy in ("distant", "closest"))
               for spec in specs)


def server_embedder(grid: GridSpec, specs: Sequence[SessionSpec]):
    """``encode`` of the grid's embeddings server when ``specs`` need embeddings; else None
    (the sessions then use the in-process MiniLM)."""
    endpoint = embed_endpoint(grid)
    if endpoint is None or not needs_embeddings(specs):
        return None
    from engine.embedding.openai_endpoint import OpenAIEmbedder

    return OpenAIEmbedder.for_endpoint(endpoint).encode
