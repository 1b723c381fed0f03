"""Run sessions: a pilot in memory (dashboard) or a resumable grid on disk (CLI).

* ``run_pilot``: a few replicates of one method on one task, run concurrently; ``on_turn``
  sees every turn as it arrives, ``on_session`` every finished Conversation; an optional
  judge rates the final ideas. Returns a Corpus (failed sessions included, status "failed").
* ``run_grid``: every session of a grid file, ``concurrency`` sessions in flight, each
  appended to ``<out>/corpus.jsonl`` as it finishes. Re-running resumes: finished sessions
  are skipped (zero calls), failed ones retried. A progress bar shows sessions, calls,
  tokens and cost; ``dry_run`` prints the plan, call count and a token budget instead.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import platform
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from engine.judging.consensus_check import consensus_summary
from engine.corpus import Conversation, Corpus, Turn
from engine.errors import InputError, WriteError
from engine.runs.grid import GridSpec, SessionSpec, load_grid, plan
from engine.judging.judge import (arate_ideas, arate_together, arubric_scores, attach_ratings, judge_summary,
                          scale_within_task)
from engine.llm import Backend, make_backend, run_sync
from engine.llm.pricing import cost_usd, format_cost
from engine.llm.replicas import redact_urls
from engine.llm.secrets import scrub
from engine.judging.paraphrase import aparaphrase
from engine.protocols import expected_calls, make_config, run_session
from engine.protocols.config import DEBATES
from engine.protocols.reask import reply_summary
from engine.storage.run_folder import MANIFEST_FILE, RunStore, read_manifest, session_prompts_in, task_record
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


def _needs_embeddings(specs: Sequence[SessionSpec]) -> bool:
    """Debates whose agents read their most distant or closest peers (Creative-MAD), and
    steered discussions (the moderator embeds every turn)."""
    return any(spec.config.method == "steered"
               or (spec.config.method in DEBATES and spec.config.peer_strategy in ("distant", "closest"))
               for spec in specs)


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
    if embedder is None and _needs_embeddings(specs):
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


# -- grid --------------------------------------------------------------------------------------
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


def estimate(specs: Sequence[SessionSpec]) -> dict[str, Any]:
    """Calls (exact for paper B, maximum for paper A), the most that asking again can add
    (consensus picks, unreadable instructed replies), and a rough token budget."""
    calls = completion = prompt = retries = 0
    for spec in specs:
        n = expected_calls(spec.config)
        retries += expected_calls(spec.config, with_retries=True) - n
        calls += n
        completion += n * spec.config.max_tokens
        context = 300 + len(spec.task.prompt) // 4 + spec.config.max_tokens * min(spec.config.agents, 4)
        prompt += n * context
    return {"sessions": len(specs), "calls": calls, "retry_calls_max": retries,
            "prompt_tokens": prompt, "completion_tokens": completion}


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version(), "platform": platform.platform()}
    for package in ("creativity-dynamics-lab", "openai", "llama_cpp_python", "numpy", "pandas",
                    "pydantic", "sentence-transformers"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return versions


def _backend_for(grid: GridSpec, *, cache: str | Path | None, replay: bool, concurrency: int) -> Backend:
    return make_backend(grid.model, base_url=grid.base_url, api_key_env=grid.api_key_env,
                        azure_api_version=grid.azure_api_version, concurrency=concurrency,
                        reasoning_effort=grid.reasoning_effort, timeout=grid.request_timeout,
                        max_attempts=grid.max_attempts, cache=cache, replay=replay)


def _agent_backends_for(grid: GridSpec, specs: Sequence[SessionSpec], main: Backend, *,
                        cache: str | Path | None, replay: bool, concurrency: int) -> dict[str, Backend]:
    """One backend per model named in the conditions' ``models`` (per-agent models); the
    run's own model reuses the run's backend. Same server options as the run's model."""
    names = sorted({name for spec in specs for name in (spec.config.models or ())})
    backends = {}
    for name in names:
        if name == grid.model:
            backends[name] = main
            continue
        backends[name] = make_backend(name, base_url=grid.base_url, api_key_env=grid.api_key_env,
                                      azure_api_version=grid.azure_api_version, concurrency=concurrency,
                                      reasoning_effort=grid.reasoning_effort, timeout=grid.request_timeout,
                                      max_attempts=grid.max_attempts, cache=cache, replay=replay)
    return backends


def _judge_for(grid: GridSpec, *, cache: str | Path | None, replay: bool, concurrency: int) -> Backend | None:
    if grid.judge is None:
        return None
    spec = grid.judge
    return make_backend(spec.model, base_url=spec.base_url, api_key_env=spec.api_key_env,
                        azure_api_version=spec.azure_api_version, concurrency=concurrency,
                        timeout=grid.request_timeout, max_attempts=grid.max_attempts,
                        cache=cache, replay=replay)


def _extra_judges(grid: GridSpec, *, cache: str | Path | None, replay: bool,
                  concurrency: int) -> list[Backend]:
    """The grid judge's further models (``judge.models``), on the judge's server."""
    if grid.judge is None:
        return []
    spec = grid.judge
    return [make_backend(name, base_url=spec.base_url, api_key_env=spec.api_key_env,
                         azure_api_version=spec.azure_api_version, concurrency=concurrency,
                         timeout=grid.request_timeout, max_attempts=grid.max_attempts,
                         cache=cache, replay=replay) for name in spec.models]


def _session_on_worker(spec: SessionSpec, grid: GridSpec, judge_options: dict | None, requests: int,
                       replay: bool, broker) -> tuple[Conversation, dict, str]:
    """One session on a Ray worker (``engine.cluster.sessions``): its backends built from the grid
    as on one machine, the response cache reached through the driver's broker; returns the
    conversation, its usage per backend and the node it ran on."""
    from engine.cluster.sessions import BrokerCachedBackend, node_id

    def cached(b: Backend | None) -> Backend | None:
        return b if b is None or broker is None else BrokerCachedBackend(b, broker, replay=replay)

    backend = cached(_backend_for(grid, cache=None, replay=False, concurrency=requests))
    judge = cached(_judge_for(grid, cache=None, replay=False, concurrency=requests))
    agents = _agent_backends_for(grid, [spec], backend, cache=None, replay=False, concurrency=requests)
    agents = {name: b if b is backend else cached(b) for name, b in agents.items()}
    embedder = None
    if grid.embed_base_url and _needs_embeddings([spec]):
        from engine.embedding.openai_endpoint import OpenAIEmbedder

        embedder = OpenAIEmbedder(grid.embed_model or "all-MiniLM-L6-v2", base_url=grid.embed_base_url,
                                  api_key_env=grid.api_key_env, timeout=grid.request_timeout,
                                  max_attempts=grid.max_attempts).encode

    async def session() -> Conversation:
        try:
            return await _one_session(spec, backend, judge=judge, judge_options=judge_options,
                                      on_turn=None, embedder=embedder, agent_backends=agents)
        finally:
            for each in {id(b): b for b in (backend, judge, *agents.values()) if b is not None}.values():
                await each.aclose()

    if embedder is None and _needs_embeddings([spec]):
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


def run_grid(config, out_dir: str | Path, *, backend: Backend | None = None,
             judge_backend: Backend | None = None, dry_run: bool = False, progress: bool = True,
             cache: str | Path | None | bool = True, replay: bool = False,
             max_requests: int | None = None, embedder: Embedder | None = None,
             command: str | None = None, stream=None,
             paraphrase_backend: Backend | None = None,
             ray: str | None = None) -> GridResult | dict[str, Any]:
    """Run (or resume) every session of a grid; see the module docstring. ``ray`` (or the
    grid's ``ray`` key): the address of a Ray cluster to run the sessions on
    (``engine.cluster.sessions``); this process stays the only writer of the folder and cache."""
    stream = stream or sys.stderr
    if max_requests is not None and (isinstance(max_requests, bool) or not isinstance(max_requests, int)
                                     or max_requests < 1):
        raise InputError(f"must be a whole number of at least 1, got {max_requests!r}", field="max_requests")
    grid = load_grid(config)
    specs = plan(grid)
    if dry_run:
        sessions = session_prompts_in(out_dir)
        _refuse_other_prompts(sessions, specs, Path(out_dir))
        _refuse_other_session_options(read_manifest(Path(out_dir) / MANIFEST_FILE), grid, Path(out_dir))
        done = {cid for cid, (_, _, finished) in sessions.items() if finished}
        todo = [s for s in specs if s.conversation_id not in done]
        budget = estimate(todo)
        budget.update(planned=len(specs), done=len(specs) - len(todo))
        price_cost = cost_usd("local" if grid.model == "local" else "openai", grid.model,
                              budget["prompt_tokens"], budget["completion_tokens"], grid.prices)
        budget["cost_usd"] = price_cost
        judge_note = ""
        if grid.judge:
            spec = grid.judge
            if spec.mode == "together":  # batches per task x raters, plus the rubric per session
                per_task: dict[str, int] = {}
                for s in specs:
                    per_task[s.task.id] = per_task.get(s.task.id, 0) + 1
                raters = spec.samples * (1 + len(spec.models))
                batches = sum(-(-n // spec.batch_size) for n in per_task.values())
                budget["judge_calls"] = batches * raters + len(todo) * int(spec.rubric)
            else:
                budget["judge_calls"] = len(todo) * (1 + int(spec.rubric))
            judge_note = (f"; the judge adds {budget['judge_calls']} calls "
                          f"(at most {budget['judge_calls'] * (1 + grid.judge.retries)} with retries)")
        retry_note = (f" (+ at most {budget['retry_calls_max']} calls asking again after "
                      f"unreadable replies)" if budget["retry_calls_max"] else "")
        print(f"{budget['sessions']} sessions, at most {budget['calls']} chat calls "
              f"(exact for paper B methods){retry_note}, about {budget['prompt_tokens']:,} prompt + "
              f"{budget['completion_tokens']:,} completion tokens at most "
              f"({format_cost(price_cost)}){judge_note}; to do: {len(todo)} of {len(specs)} "
              f"planned sessions ({budget['done']} already done in {out_dir})", file=stream)
        return budget

    out = Path(out_dir)
    started = time.perf_counter()
    with RunStore(out, name=grid.name, meta={"grid": grid.name, "model": grid.model}) as store:
        manifest = store.read_manifest()
        _refuse_other_session_options(manifest, grid, out)
        finished = store.finished_ids()
        _refuse_other_prompts(session_prompts_in(out), specs, out)
        todo = [s for s in specs if s.conversation_id not in finished]
        cache_path = (out / "llm_cache.sqlite") if cache is True else (cache or None)
        requests = max_requests or max(8, grid.concurrency * 8)
        backend = backend or _backend_for(grid, cache=cache_path, replay=replay, concurrency=requests)
        judge = judge_backend or _judge_for(grid, cache=cache_path, replay=replay, concurrency=requests)
        agent_backends = _agent_backends_for(grid, todo, backend, cache=cache_path, replay=replay,
                                             concurrency=requests)
        together = grid.judge is not None and grid.judge.mode == "together"
        judge_options = ({"max_tokens": grid.judge.max_tokens, "rubric": grid.judge.rubric,
                          "temperature": grid.judge.temperature, "retries": grid.judge.retries,
                          "novelty_usefulness": not together}
                         if grid.judge else None)
        judges = ([judge] + _extra_judges(grid, cache=cache_path, replay=replay, concurrency=requests)
                  if judge is not None else [])
        backends = [b for b in (backend, *judges, *agent_backends.values()) if b is not None]
        usage_before = [dict(b.usage.as_dict()) for b in backends]

        def usage_now() -> dict[str, int]:
            total: dict[str, int] = {}
            seen = set()
            for b, before in zip(backends, usage_before):
                if id(b.usage) in seen:
                    continue
                seen.add(id(b.usage))
                for key, value in b.usage.as_dict().items():
                    total[key] = total.get(key, 0) + value - before.get(key, 0)
            return total

        def cost_now() -> float | None:
            total = 0.0
            seen = set()
            for b, before in zip(backends, usage_before):
                if id(b.usage) in seen:
                    continue
                seen.add(id(b.usage))
                now = b.usage.as_dict()
                part = cost_usd(b.kind, b.model, now["prompt_tokens"] - before["prompt_tokens"],
                                now["completion_tokens"] - before["completion_tokens"], grid.prices)
                if part is None:
                    return None
                total += part
            return total

        base_manifest = {
            "name": grid.name, "kind": "engine-run", "command": scrub(command or " ".join(sys.argv)),
            "created": manifest.get("created") or _now(), "config": _storable_config(grid),
            "backend": backend.describe(), "judge": judge.describe() if judge else None,
            "versions": _versions(), "seed": grid.seed, "files": {"corpus": "corpus.jsonl",
                                                                   "failed": "failed.jsonl"},
            "sessions": {"planned": len(specs)},
            # every prompt the folder's sessions answered, earlier runs' too (the judge reads them)
            "tasks": {**(manifest.get("tasks") if isinstance(manifest.get("tasks"), dict) else {}),
                      **{s.task.id: task_record(s.task) for s in specs}},
        }
        previous_usage = manifest.get("usage_total", {})
        store.write_manifest({**base_manifest, "updated": _now(), "status": "running"})

        counts = {"ok": 0, "failed": 0}
        bar = None
        if progress and todo:
            from tqdm import tqdm

            bar = tqdm(total=len(todo), unit="session", file=stream, dynamic_ncols=True,
                       desc=f"{grid.name}")

        def done(conversation: Conversation) -> None:
            if conversation.status == "ok":
                store.append(conversation)
                counts["ok"] += 1
            else:
                store.record_failure(conversation)
                counts["failed"] += 1
            if bar is not None:
                usage = usage_now()
                bar.set_postfix_str(f"calls={usage.get('calls', 0)} cached={usage.get('cache_hits', 0)} "
                                    f"tokens={usage.get('prompt_tokens', 0) + usage.get('completion_tokens', 0):,} "
                                    f"{format_cost(cost_now())} failed={counts['failed']}", refresh=False)
                bar.update(1)

        if embedder is None and grid.embed_base_url and _needs_embeddings(todo):
            from engine.embedding.openai_endpoint import OpenAIEmbedder

            embedder = OpenAIEmbedder(grid.embed_model or "all-MiniLM-L6-v2", base_url=grid.embed_base_url,
                                      api_key_env=grid.api_key_env, timeout=grid.request_timeout,
                                      max_attempts=grid.max_attempts).encode
        ray = ray or grid.ray
        cluster_work: dict[str, Any] = {}
        failure: BaseException | None = None
        try:
            if ray and todo:
                cluster_work = _run_on_cluster(ray, todo, grid, backend, judge, agent_backends,
                                               judge_options=judge_options, requests=requests,
                                               replay=replay, done=done)
            else:
                run_sync(_run_specs(todo, backend, concurrency=grid.concurrency, on_turn=None,
                                    on_done=done, judge=judge, judge_options=judge_options,
                                    embedder=embedder, progress=progress,
                                    agent_backends=agent_backends))
        except BaseException as error:
            failure = error
            raise
        finally:
            if bar is not None:
                bar.close()
            usage = usage_now()
            total_usage = {k: previous_usage.get(k, 0) + usage.get(k, 0)
                           for k in set(previous_usage) | set(usage)}
            finished_corpus = store.read_corpus()
            consensus = consensus_summary(finished_corpus)
            _write_manifest_unless_failing(store, failure, {**base_manifest, "updated": _now(),
                                  "status": "complete" if not store.failed and counts["ok"] + len(finished) >= len(specs) else "incomplete",
                                  "sessions": {"planned": len(specs), "ok": len(store.finished_ids()),
                                               "failed": len(store.failed),
                                               "failed_ids": sorted(store.failed)},
                                  "usage_last_run": usage, "usage_total": total_usage,
                                  "consensus": consensus,
                                  "replies": reply_summary(finished_corpus, store.failed.values()),
                                  "cost_usd_last_run": cost_now(),
                                  **({"ray_last_run": cluster_work} if cluster_work else {})})
        if together and judge is not None:
            _judge_together(store, judges, grid, {s.task.id: s.task for s in specs}, cache=cache_path,
                            replay=replay, rewriter=paraphrase_backend)
        elif judge is not None and counts["ok"]:
            _rescale(store)
        result = GridResult(out_dir=out, planned=len(specs), skipped=len(specs) - len(todo),
                            ok=counts["ok"], failed=counts["failed"], usage=usage_now(),
                            cost_usd=cost_now(), elapsed_s=time.perf_counter() - started,
                            consensus=consensus, cluster=cluster_work)
    return result


def _run_on_cluster(address: str, todo: Sequence[SessionSpec], grid: GridSpec, backend: Backend,
                    judge: Backend | None, agent_backends: dict[str, Backend], *,
                    judge_options: dict | None, requests: int, replay: bool,
                    done: Callable[[Conversation], None]) -> dict[str, Any]:
    """The sessions as Ray tasks; their usage added to this process's backends, so the
    manifest's usage and cost are counted as on one machine."""
    from engine.llm import is_local_model
    from engine.cluster.connection import connect
    from engine.cluster.sessions import run_specs_on_cluster

    cache = getattr(backend, "cache", None)  # the driver's ResponseCache, when there is one

    def finished(conversation: Conversation, usage: dict) -> None:
        backend.usage.merge(usage["backend"])
        if judge is not None and usage.get("judge"):
            judge.usage.merge(usage["judge"])
        for name, counts in usage.get("agents", {}).items():
            if name in agent_backends and agent_backends[name] is not backend:
                agent_backends[name].usage.merge(counts)
        done(conversation)

    local = is_local_model(grid.model, grid.base_url)
    with connect(address) as cluster:
        work = run_specs_on_cluster(cluster, todo, _session_on_worker,
                                    (grid, judge_options, requests, replay), cache=cache,
                                    concurrency=grid.concurrency, cpus_per_session=1.0 if local else 0.25,
                                    on_done=finished,
                                    on_lost=lambda spec, reason: done(_lost_session(spec, reason)))
    return {"address": address, **work}


def _judge_together(store: RunStore, judges: list[Backend], grid: GridSpec, tasks: dict, *,
                    cache: str | Path | None = None, replay: bool = False,
                    rewriter: Backend | None = None) -> None:
    """Paper A's consensual assessment of every finished session's final idea, task by task
    (``engine.judging.judge.arate_together``); the corpus is rewritten with the scaled ratings and
    the manifest gets the raters, counts and ICC. With ``judge.paraphrase`` every idea is
    first paraphrased by that model (paper A's harmonisation; ``outcomes["paraphrased_idea"]``,
    failures counted in the summary). Re-run after new sessions (the response
    cache answers the batches already asked). A judge failure is recorded, not raised:
    the sessions are kept and the next run judges again."""
    import pandas as pd

    corpus = store.read_corpus()
    rated = [c for c in corpus if c.status == "ok" and c.final_idea]
    if not rated:
        return
    spec = grid.judge
    frame = pd.DataFrame({"idea": [c.final_idea for c in rated], "task": [c.task for c in rated]})
    if rewriter is None and spec.paraphrase:
        rewriter = make_backend(spec.paraphrase, base_url=spec.base_url, api_key_env=spec.api_key_env,
                                azure_api_version=spec.azure_api_version, timeout=grid.request_timeout,
                                max_attempts=grid.max_attempts, cache=cache, replay=replay)
    paraphrased: dict = {}

    async def judge_all():
        try:
            if rewriter is not None:  # paper A's raters read paraphrases (engine.judging.paraphrase)
                texts, done, counts = await aparaphrase(list(frame["idea"]), rewriter,
                                                        max_tokens=spec.paraphrase_max_tokens)
                frame["idea"] = texts
                paraphrased.update(done=done, counts=counts)
            return await arate_together(frame, tasks, judges, samples=spec.samples,
                                        batch_size=spec.batch_size, retries=spec.retries,
                                        max_tokens=spec.max_tokens,
                                        temperature=spec.temperature if spec.samples == 1 else None,
                                        seed=grid.seed, order=spec.order)
        finally:
            for each in [*judges, *([rewriter] if rewriter else [])]:
                await each.aclose()

    manifest = store.read_manifest()
    try:
        result = run_sync(judge_all())
    except WriteError:
        raise
    except Exception as error:  # kept for the next run; the sessions are safe on disk
        store.write_manifest({**manifest, "judge_summary": {
            "status": "failed", "error": scrub(f"{type(error).__name__}: {error}")}})
        return
    attach_ratings(rated, result, "llm:" + "+".join(dict.fromkeys(j.model for j in judges)))
    summary = {"status": "ok", "mode": "together", **judge_summary(result)}
    if paraphrased:
        for conversation, text, done in zip(rated, frame["idea"], paraphrased["done"]):
            conversation.outcomes["paraphrased_idea"] = text if done else None
        summary["paraphrase"] = paraphrased["counts"]
    store.rewrite_corpus(corpus)
    store.write_manifest({**manifest, "judge_summary": summary})


def _write_manifest_unless_failing(store: RunStore, failure: BaseException | None, manifest: dict) -> None:
    """The run's final manifest; when the run is already ending on an error (a full disk),
    a manifest that cannot be written either does not hide that first error."""
    try:
        store.write_manifest(manifest)
    except WriteError:
        if failure is None:
            raise


# Options that shape a session but are not part of its id: a folder keeps one value of each.
SESSION_OPTIONS = ("model", "base_url", "seed", "reasoning_effort", "embed_base_url", "embed_model", "judge")
OPTION_FLAGS = {"model": "--model", "base_url": "--base-url", "seed": "--seed",
                "reasoning_effort": "--reasoning-effort", "embed_base_url": "--embed-base-url",
                "embed_model": "--embed-model", "judge": "the judge options (--judge-*)"}


def _refuse_other_session_options(manifest: dict[str, Any], grid: GridSpec, out: Path) -> None:
    """Refuse to resume a folder with another model, seed, server or judge than its sessions had.

    A session's id holds its protocol options and prompt, not these: with another seed a
    resumed run would find every session "done" and make none (the manifest then claiming
    the new seed), or add new sessions under the same ids' replicates. The folder keeps one
    value of each; another value needs another ``--out``.
    """
    recorded = manifest.get("config") if isinstance(manifest.get("config"), dict) else None
    if not recorded:
        return
    current = _storable_config(grid)
    for key in SESSION_OPTIONS:
        old, new = recorded.get(key), current.get(key)
        if key == "seed" and old is None:
            old = manifest.get("seed", 0)
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


def _same_judge(old, new) -> bool:
    """Judge settings equal (which variable holds the key does not matter), counting keys an
    older manifest did not record as equal."""
    if old is None or new is None:
        return old is new
    if not isinstance(old, dict):
        return False
    return all(old.get(k, v) == v for k, v in new.items() if k != "api_key_env") and set(old) <= set(new)


def _storable_config(grid: GridSpec) -> dict[str, Any]:
    """The grid as the manifest stores it: credentials inside server URLs redacted."""
    config = grid.model_dump(mode="json")
    config["base_url"] = redact_urls(config.get("base_url"))
    config["embed_base_url"] = redact_urls(config.get("embed_base_url"))
    if config.get("judge"):
        config["judge"]["base_url"] = redact_urls(config["judge"].get("base_url"))
    return config


def _refuse_other_prompts(sessions: dict[str, tuple], specs: Sequence[SessionSpec], out: Path) -> None:
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


def _rescale(store: RunStore) -> None:
    """Scale every session's raw judge scores within its task (paper A) and rewrite the corpus."""
    import pandas as pd

    corpus = store.read_corpus()
    rated = [c for c in corpus if "novelty_raw" in c.outcomes]
    if not rated:
        return
    frame = pd.DataFrame({"task": [c.task for c in rated],
                          "novelty_raw": [c.outcomes.get("novelty_raw") for c in rated],
                          "usefulness_raw": [c.outcomes.get("usefulness_raw") for c in rated]},
                         dtype=object)
    frame["novelty_raw"] = pd.to_numeric(frame["novelty_raw"])
    frame["usefulness_raw"] = pd.to_numeric(frame["usefulness_raw"])
    scaled = scale_within_task(frame)
    for conversation, (_, row) in zip(rated, scaled.iterrows()):
        for column in ("novelty", "usefulness", "creativity"):
            value = row[column]
            conversation.outcomes[column] = None if pd.isna(value) else float(value)
        conversation.outcomes["irrelevant"] = bool(row["irrelevant"])  # rated 0: not scaled
    store.rewrite_corpus(corpus)


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
