"""Run sessions: a pilot in memory (dashboard) or a resumable grid on disk (CLI).

* ``run_pilot``: a few replicates of one method on one task, run concurrently; ``on_turn``
  sees every turn as it arrives, ``on_session`` every finished Conversation; an optional
  judge rates the final ideas. Returns a Corpus (failed sessions included, status "failed").
* ``run_grid``: every session of a grid file, ``concurrency`` sessions in flight, each
  appended to ``<out>/corpus.jsonl`` as it finishes. Re-running resumes: finished sessions
  are skipped (zero calls), failed ones retried. A progress bar shows sessions, calls,
  tokens and cost; ``dry_run`` prints the plan, call count and a token budget instead.
  Its steps: plan and estimate (``engine.runs.estimate``), ``open_run`` (the folder's lock,
  the checks of ``engine.runs.resume``, the backends of the grid's endpoints,
  ``engine.runs.run_backends``, the manifest, ``engine.runs.run_manifest``), ``execute``
  (here, or as Ray tasks: ``engine.cluster.sessions``), finish (``engine.runs.grid_judge``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from engine.corpus import Conversation, Corpus, Turn
from engine.errors import InputError, WriteError
from engine.judging.judge import arate_ideas, arate_together, arubric_scores, attach_ratings, judge_summary
from engine.llm.base import Backend, run_sync
from engine.llm.pricing import format_cost
from engine.llm.providers import runs_in_process
from engine.llm.secrets import scrub
from engine.protocols import make_config, run_session
from engine.runs.estimate import budget_text, dry_run_budget, estimate  # noqa: F401  (estimate: engine.diagnosis.prescribe)
from engine.runs.grid import GridSpec, SessionSpec, load_grid, model_endpoint, plan
from engine.runs.grid_judge import finish_judging
from engine.runs.resume import check_folder
from engine.runs.run_backends import RunBackends, needs_embeddings, server_embedder
from engine.runs.run_manifest import base_manifest, final_manifest, now, write_manifest_unless_failing
from engine.runs.run_folder import RunStore, session_prompts_in
from engine.tasks import Task, get_task

OnTurn = Callable[[str, Turn], None]
OnSession = Callable[[Conversation], None]
Embedder = Callable[[Sequence[str]], np.ndarray]


# -- one session plus its judge ------------------------------------------------------------
async def _judge_session(conversation: Conversation, task: Task, judge: Backend, *,
                         max_tokens: int = 24, rubric: bool = True, temperature: float = 0.0,
                         retries: int = 2, novelty_usefulness: bool = True) -> None:
    """Raw judge scores of the final idea, kept in outcomes (scaled later, within task).

    ``task`` is the session's own Task (a built-in, ``--task-text`` or ``--tasks-file`` one):
    the judge sees the prompt the team was given. With ``novelty_usefulness`` off (the
    grid's judge mode "together"), only paper B's rubric score is asked here; novelty and
    usefulness come from ``_judge_together`` at the end of the run.
    """
    idea = conversation.final_idea
    outcomes = conversation.outcomes
    if novelty_usefulness:
        frame = await arate_ideas([idea], task, judge, max_tokens=max_tokens,
                                  temperature=temperature, retries=retries)
        for column in ("novelty_raw", "usefulness_raw"):
            value = frame[column].iloc[0]
            outcomes[column] = None if np.isnan(value) else float(value)
    if rubric:
        score = (await arubric_scores([idea], task, judge, max_tokens=max_tokens,
                                      temperature=temperature, retries=retries))[0]
        outcomes["rubric_score"] = None if np.isnan(score) else float(score)
    outcomes["rater"] = f"llm:{judge.model}"


async def _one_session(spec: SessionSpec, backend: Backend, *, judge: Backend | None,
                       judge_options: dict | None, on_turn: OnTurn | None, embedder: Embedder | None,
                       agent_backends: dict[str, Backend] | None) -> Conversation:
    """One session and, if it finished, its judge (a judge failure fails the session, so the
    next run tries it again)."""
    conversation = await run_session(backend, spec.task, spec.config,
                                     conversation_id=spec.conversation_id, seed=spec.seed,
                                     replicate=spec.replicate, on_turn=on_turn,
                                     embedder=embedder, agent_backends=agent_backends)
    if judge is not None and conversation.status == "ok":
        try:
            await _judge_session(conversation, spec.task, judge, **(judge_options or {}))
        except WriteError:  # a full disk stops the run (one line), not the session
            raise
        except Exception as error:  # the judge failed: retry the session next run
            conversation.status = "failed"
            conversation.error = scrub(f"judge: {type(error).__name__}: {error}")
    return conversation


async def _run_specs(specs: Sequence[SessionSpec], backend: Backend, *, concurrency: int,
                     on_turn: OnTurn | None, on_done: Callable[[Conversation], None],
                     judge: Backend | None = None, judge_options: dict | None = None,
                     embedder: Embedder | None = None, progress: bool = True,
                     agent_backends: dict[str, Backend] | None = None) -> None:
    gate = asyncio.Semaphore(concurrency)
    if embedder is None and needs_embeddings(specs):
        from engine.embedding.embedder import Embedder as SentenceEmbedder

        # one model for every session (loaded on first use)
        embedder = SentenceEmbedder(progress=progress).encode

    async def one(spec: SessionSpec) -> None:
        async with gate:
            conversation = await _one_session(spec, backend, judge=judge, judge_options=judge_options,
                                              on_turn=on_turn, embedder=embedder,
                                              agent_backends=agent_backends)
        on_done(conversation)

    try:
        await asyncio.gather(*(one(spec) for spec in specs))
    finally:  # HTTP clients belong to this event loop: close them before it ends
        others = list((agent_backends or {}).values())
        for each in {id(b): b for b in (backend, judge, *others) if b is not None}.values():
            await each.aclose()


# -- pilot -----------------------------------------------------------------------------------
def run_pilot(method: str, task, agents: int | None, rounds: int | None, replicates: int,
              backend: Backend, *, on_turn: OnTurn | None = None, on_session: OnSession | None = None,
              judge_backend: Backend | None = None, seed: int = 0, concurrency: int | None = None,
              embedder: Embedder | None = None, agent_backends: dict[str, Backend] | None = None,
              **protocol_options: Any) -> Corpus:
    """Run ``replicates`` sessions of one method on one task and return them as a Corpus."""
    if not isinstance(replicates, int) or replicates < 1:
        raise InputError("replicates must be a positive integer", field="replicates")
    config = make_config(method, agents=agents, rounds=rounds, **protocol_options)
    task = get_task(task)
    from engine.runs.grid import session_seed, session_stem

    stem = session_stem(config, task)
    specs = [SessionSpec(f"{stem}-r{r}", task, config, r, session_seed(seed, f"{stem}-r{r}"))
             for r in range(replicates)]
    finished: dict[str, Conversation] = {}

    def done(conversation: Conversation) -> None:
        finished[conversation.conversation_id] = conversation
        if on_session is not None:
            on_session(conversation)

    run_sync(_run_specs(specs, backend, concurrency=concurrency or replicates, on_turn=on_turn,
                        on_done=done, embedder=embedder, agent_backends=agent_backends))
    conversations = [finished[s.conversation_id] for s in specs]
    ok = [c for c in conversations if c.status == "ok" and c.final_idea]
    if judge_backend is not None and ok:
        async def judge_all():  # paper A's consensual assessment: the final ideas rated together
            try:
                return await arate_together([c.final_idea for c in ok], task, judge_backend)
            finally:
                await judge_backend.aclose()

        frame = run_sync(judge_all())
        attach_ratings(ok, frame, f"llm:{judge_backend.model}")
        judged = judge_summary(frame)
    return Corpus(conversations, name=f"pilot-{method}-{task.id}",
                  meta={"pilot": True, "backend": backend.describe(), "seed": seed,
                        **({"judge": judged} if judge_backend is not None and ok else {})})


# -- grid: plan and estimate, open the run, execute (here or on Ray), finish (judge) ------------
@dataclass
class GridResult:
    out_dir: Path
    planned: int
    skipped: int
    ok: int
    failed: int
    usage: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = None
    elapsed_s: float = 0.0
    consensus: dict[str, Any] = field(default_factory=dict)
    cluster: dict[str, Any] = field(default_factory=dict)  # what a Ray cluster did (``--ray``)


@dataclass
class OpenRun:
    """A run folder opened for writing (its lock held by ``store``): the sessions left to do,
    the backends, and the manifest written when it opened (status "running")."""

    store: RunStore
    grid: GridSpec
    specs: list[SessionSpec]
    todo: list[SessionSpec]
    backends: RunBackends
    cache: Path | None
    replay: bool
    requests: int  # chat requests in flight, per backend
    manifest: dict[str, Any]
    previous_usage: dict[str, int]
    finished_before: int
    counts: dict[str, int] = field(default_factory=lambda: {"ok": 0, "failed": 0})


def run_grid(config, out_dir: str | Path, *, backend: Backend | None = None,
             judge_backend: Backend | None = None, dry_run: bool = False, progress: bool = True,
             cache: str | Path | None | bool = True, replay: bool = False,
             max_requests: int | None = None, embedder: Embedder | None = None,
             command: str | None = None, stream=None,
             paraphrase_backend: Backend | None = None,
             ray: str | None = None) -> GridResult | dict[str, Any]:
    """Run (or resume) every session of a grid; see the module docstring.

    Four steps: plan and estimate (``engine.runs.estimate``; a ``dry_run`` prints the plan and
    returns its budget dict), open the run (``open_run``: folder, lock, manifest), execute the
    sessions (``execute``: here, or on the Ray cluster at ``ray`` or the grid's ``ray`` key,
    ``engine.cluster.sessions``; this process stays the only writer of the folder and cache),
    finish (``engine.runs.grid_judge.finish_judging``). ``backend``, ``judge_backend`` and
    ``paraphrase_backend`` replace the backends the grid's endpoints describe."""
    stream = stream or sys.stderr
    if max_requests is not None and (isinstance(max_requests, bool) or not isinstance(max_requests, int)
                                     or max_requests < 1):
        raise InputError(f"must be a whole number of at least 1, got {max_requests!r}", field="max_requests")
    grid = load_grid(config)
    specs = plan(grid)
    if dry_run:
        budget = dry_run_budget(grid, specs, Path(out_dir))
        print(budget_text(budget, grid, out_dir), file=stream)
        return budget
    out = Path(out_dir)
    started = time.perf_counter()
    with RunStore(out, name=grid.name, meta={"grid": grid.name, "model": grid.endpoint.model}) as store:
        run = open_run(store, grid, specs, cache=cache, replay=replay, max_requests=max_requests,
                       backend=backend, judge=judge_backend, command=command)
        cluster, consensus = execute(run, ray=ray or grid.ray, embedder=embedder, progress=progress,
                                     stream=stream)
        finish_judging(store, grid, run.backends.judges, {s.task.id: s.task for s in specs},
                       new_sessions=run.counts["ok"], cache=run.cache, replay=replay,
                       rewriter=paraphrase_backend)
        return GridResult(out_dir=out, planned=len(specs), skipped=len(specs) - len(run.todo),
                          ok=run.counts["ok"], failed=run.counts["failed"], usage=run.backends.usage(),
                          cost_usd=run.backends.cost(), elapsed_s=time.perf_counter() - started,
                          consensus=consensus, cluster=cluster)


def open_run(store: RunStore, grid: GridSpec, specs: list[SessionSpec], *,
             cache: str | Path | None | bool = True, replay: bool = False, max_requests: int | None = None,
             backend: Backend | None = None, judge: Backend | None = None,
             command: str | None = None) -> OpenRun:
    """Open the run in ``store``'s folder (its lock held): refuse a folder of other settings or
    prompts (``engine.runs.resume``), find the sessions left, build the backends from the
    grid's endpoints, write the manifest "running". ``cache`` True: the folder's own
    ``llm_cache.sqlite``; False or None: no response cache."""
    out = store.folder
    previous = store.read_manifest()
    finished = store.finished_ids()
    check_folder(previous, session_prompts_in(out), grid, specs, out)
    todo = [s for s in specs if s.conversation_id not in finished]
    cache_path = (out / "llm_cache.sqlite") if cache is True else (Path(cache) if cache else None)
    requests = max_requests or max(8, grid.concurrency * 8)
    backends = RunBackends.for_grid(grid, todo, cache=cache_path, replay=replay, concurrency=requests,
                                    backend=backend, judge=judge)
    manifest = base_manifest(grid, specs, previous, backends, command)
    store.write_manifest({**manifest, "updated": now(), "status": "running"})
    return OpenRun(store, grid, list(specs), todo, backends, cache_path, replay, requests, manifest,
                   previous.get("usage_total", {}), len(finished))


def judge_options(grid: GridSpec) -> dict | None:
    """How each session's judge rates its final idea as it finishes (``_judge_session``)."""
    if grid.judge is None:
        return None
    return {"max_tokens": grid.judge.max_tokens, "rubric": grid.judge.rubric,
            "temperature": grid.judge.temperature, "retries": grid.judge.retries,
            "novelty_usefulness": grid.judge.mode != "together"}


def execute(run: OpenRun, *, ray: str | None = None, embedder: Embedder | None = None,
            progress: bool = True, stream=None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the sessions left, ``concurrency`` at once here or as Ray tasks at ``ray``, each
    appended to the folder as it finishes (a failed one recorded, to be tried again); the
    final manifest is written even when this stops on an error. Returns what the cluster did
    (empty here) and the consensus summary of the folder's sessions."""
    store, grid, backends = run.store, run.grid, run.backends
    bar = None
    if progress and run.todo:
        from tqdm import tqdm

        bar = tqdm(total=len(run.todo), unit="session", file=stream or sys.stderr, dynamic_ncols=True,
                   desc=f"{grid.name}")

    def done(conversation: Conversation) -> None:
        if conversation.status == "ok":
            store.append(conversation)
            run.counts["ok"] += 1
        else:
            store.record_failure(conversation)
            run.counts["failed"] += 1
        if bar is not None:
            usage = backends.usage()
            bar.set_postfix_str(f"calls={usage.get('calls', 0)} cached={usage.get('cache_hits', 0)} "
                                f"tokens={usage.get('prompt_tokens', 0) + usage.get('completion_tokens', 0):,} "
                                f"{format_cost(backends.cost())} failed={run.counts['failed']}", refresh=False)
            bar.update(1)

    if embedder is None:
        embedder = server_embedder(grid, run.todo)
    cluster_work: dict[str, Any] = {}
    failure: BaseException | None = None
    manifest: dict[str, Any] = {}
    try:
        if ray and run.todo:
            cluster_work = _run_on_cluster(ray, run, done)
        else:
            run_sync(_run_specs(run.todo, backends.main, concurrency=grid.concurrency, on_turn=None,
                                on_done=done, judge=backends.judge, judge_options=judge_options(grid),
                                embedder=embedder, progress=progress, agent_backends=backends.agents))
    except BaseException as error:
        failure = error
        raise
    finally:
        if bar is not None:
            bar.close()
        complete = not store.failed and run.counts["ok"] + run.finished_before >= len(run.specs)
        manifest = final_manifest(run.manifest, store, store.read_corpus(), planned=len(run.specs),
                                  complete=complete, usage=backends.usage(),
                                  previous_usage=run.previous_usage, cost=backends.cost(),
                                  cluster=cluster_work)
        write_manifest_unless_failing(store, failure, manifest)
    return cluster_work, manifest["consensus"]


def _run_on_cluster(address: str, run: OpenRun, done: Callable[[Conversation], None]) -> dict[str, Any]:
    """The sessions as Ray tasks; their usage added to this process's backends, so the
    manifest's usage and cost are counted as on one machine."""
    from engine.cluster.connection import connect
    from engine.cluster.sessions import run_specs_on_cluster

    backends = run.backends
    backend, judge, agents = backends.main, backends.judge, backends.agents
    cache = getattr(backend, "cache", None)  # the driver's ResponseCache, when there is one

    def finished(conversation: Conversation, usage: dict) -> None:
        backend.usage.merge(usage["backend"])
        if judge is not None and usage.get("judge"):
            judge.usage.merge(usage["judge"])
        for name, counts in usage.get("agents", {}).items():
            if name in agents and agents[name] is not backend:
                agents[name].usage.merge(counts)
        done(conversation)

    local = runs_in_process(model_endpoint(run.grid))
    with connect(address) as cluster:
        work = run_specs_on_cluster(cluster, run.todo, _session_on_worker,
                                    (run.grid, judge_options(run.grid), run.requests, run.replay),
                                    cache=cache, concurrency=run.grid.concurrency,
                                    cpus_per_session=1.0 if local else 0.25, on_done=finished,
                                    on_lost=lambda spec, reason: done(_lost_session(spec, reason)))
    return {"address": address, **work}


def _session_on_worker(spec: SessionSpec, grid: GridSpec, judge_options: dict | None, requests: int,
                       replay: bool, broker) -> tuple[Conversation, dict, str]:
    """One session on a Ray worker (``engine.cluster.sessions``): its backends built from the grid
    as on one machine, the response cache reached through the driver's broker; returns the
    conversation, its usage per backend and the node it ran on."""
    from engine.cluster.sessions import BrokerCachedBackend, node_id

    def cached(b: Backend) -> Backend:
        return b if broker is None else BrokerCachedBackend(b, broker, replay=replay)

    backends = RunBackends.on_worker(grid, spec, concurrency=requests, wrap=cached)
    backend, judge, agents = backends.main, backends.judge, backends.agents
    embedder = server_embedder(grid, [spec])

    async def session() -> Conversation:
        try:
            return await _one_session(spec, backend, judge=judge, judge_options=judge_options,
                                      on_turn=None, embedder=embedder, agent_backends=agents)
        finally:
            for each in {id(b): b for b in (backend, judge, *agents.values()) if b is not None}.values():
                await each.aclose()

    if embedder is None and needs_embeddings([spec]):
        from engine.embedding.embedder import Embedder as SentenceEmbedder

        embedder = SentenceEmbedder(progress=False).encode  # this node's own embedding cache
    conversation = run_sync(session())
    usage = {"backend": backend.usage.as_dict(), "judge": judge.usage.as_dict() if judge else None,
             "agents": {name: b.usage.as_dict() for name, b in agents.items() if b is not backend}}
    return conversation, usage, node_id()


def _lost_session(spec: SessionSpec, reason: str) -> Conversation:
    """A session whose Ray task was given up on (its node lost more often than Ray retries):
    recorded as failed, so the next run tries it again."""
    return Conversation(conversation_id=spec.conversation_id, task=spec.task.id,
                        protocol=spec.config.method, replicate=spec.replicate, status="failed",
                        error=scrub(f"ray: {reason}"),
                        meta={"task_prompt": spec.task.prompt,
                              "task_prompt_sha256": spec.task.prompt_sha256, "seed": spec.seed})
