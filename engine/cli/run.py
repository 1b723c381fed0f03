"""``python -m engine run``: run a pilot or a grid of sessions on a real model.

    python -m engine run --method homo_mad --task plastic_waste --agents 5 --rounds 2 \\
        --replicates 3 --model local --out runs/pilot
    python -m engine run --grid cached_runs/grids/local_smollm2.yaml --out runs/local
Re-running the same command with the same --out resumes without duplicating sessions.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from engine.cli.checks import seconds, server_url, whole
from engine.errors import InputError

SINGLE_RUN_OPTIONS = ("method", "task", "task_text", "task_id", "tasks_file", "map", "extra_fields",
                      "benchmark", "benchmark_file", "benchmark_limit", "agents", "rounds",
                      "replicates", "model", "base_url", "azure_api_version", "embed_base_url", "embed_model",
                      "reasoning_effort", "seed", "temperature", "max_tokens", "persona", "order",
                      "turn_limit", "min_rounds", "pool", "generation", "initial_generation",
                      "ideas_per_agent", "idea_words", "convergence", "refine_top", "k",
                      "judge_model", "judge_base_url", "judge_mode", "judge_samples",
                      "judge_batch_size", "judge_models", "peers", "consensus", "consensus_retries",
                      "consensus_temperature", "models", "steer", "fidelity", "reply_attempts", "candidates",
                      "judge_paraphrase", "judge_order", "provider", "judge_provider", "option")
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
MAX_SEED = 2 ** 63 - 1  # engine.runs.grid.MAX_SEED (not imported: the grid module is heavy for --help)
MAX_CONCURRENCY = 1024
MAX_REQUESTS = 65_536
MAX_TIMEOUT_S = 86_400.0
PROTOCOL_FLAGS = ("temperature", "max_tokens", "persona", "order", "turn_limit", "min_rounds", "pool",
                  "generation", "ideas_per_agent", "idea_words", "convergence", "refine_top", "k",
                  "peers", "consensus", "consensus_retries", "consensus_temperature", "lenses", "fidelity",
                  "reply_attempts", "candidates")


def register(subparsers) -> None:
    from engine.protocols.registry import MethodChoices

    p = subparsers.add_parser("run", help="run debate / discussion sessions on a model",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = p.add_argument_group("what to run")
    what.add_argument("--grid", help="grid YAML file (conditions x tasks x replicates)")
    what.add_argument("--method", choices=MethodChoices(),  # plugins' methods too, read when needed
                      help="discussion structure or debate method")
    what.add_argument("--task", action="append", help="built-in task id (repeatable, or 'all')")
    what.add_argument("--task-text", help="your own task prompt")
    what.add_argument("--task-id", default="custom", help="id for --task-text (default: custom)")
    what.add_argument("--tasks-file", help="JSONL file of {\"id\": ..., \"prompt\": ...} tasks")
    what.add_argument("--map", action="append", metavar="FIELD=NAME",
                      help="tasks file / benchmark: the file's name for a task field, e.g. id=uid (repeatable)")
    what.add_argument("--extra-fields", choices=("error", "ignore", "keep"),
                      help="tasks file: fields beyond id/prompt/title/benchmark (default: error)")
    what.add_argument("--benchmark", help="paper B benchmark: liveideabench, aae, macgyver, arena_hard_creative")
    what.add_argument("--benchmark-file", help="your downloaded copy of the benchmark's file (or folder); "
                      "default for macgyver and arena_hard_creative: the shipped copy")
    what.add_argument("--benchmark-limit", type=whole(1), help="first N items of the benchmark only")
    what.add_argument("--agents", type=int, help="team size N")
    what.add_argument("--rounds", type=int, help="debate rounds R (paper B; self_refine iterations)")
    what.add_argument("--replicates", type=int, default=1, help="sessions per task (default 1)")
    model = p.add_argument_group("model")
    model.add_argument("--model", default=None, help="'local' (default), a .gguf path, or a model name")
    model.add_argument("--provider", metavar="NAME",
                       help="the backend that runs --model: local, openai (any OpenAI-compatible "
                            "server) or a plugin's (python -m engine plugins); default: local for "
                            "'local' or a .gguf path without --base-url, else openai")
    model.add_argument("--base-url", nargs="+", metavar="URL", type=server_url,
                       help="OpenAI-compatible server URL (vLLM, Ollama, Azure endpoint); several "
                            "URLs (or commas): replicas of the model, calls spread over them with "
                            "failover")
    model.add_argument("--api-key-env", default=None, metavar="NAME",
                       help="environment variable holding the API key (default OPENAI_API_KEY); "
                            "with --grid it replaces the file's, may be any name, and lets the "
                            "file's servers have it")
    model.add_argument("--allow-file-endpoints", action="store_true",
                       help="with --grid: send the key to the servers the file names even when "
                            "they are neither this machine nor the key's provider")
    model.add_argument("--azure-api-version", help="use Azure OpenAI with this API version")
    model.add_argument("--reasoning-effort", help="low/medium/high for reasoning models (o3...)")
    model.add_argument("--temperature", type=float, help="sampling temperature (default 1.0)")
    model.add_argument("--max-tokens", type=int, help="max tokens per reply (default 512)")
    model.add_argument("--seed", type=whole(0, MAX_SEED), default=0, help="grid seed (default 0)")
    options = p.add_argument_group("protocol options (paper A)")
    options.add_argument("--persona", choices=("none", "same", "different"))
    options.add_argument("--order", choices=("fixed", "random", "raise"))
    options.add_argument("--turn-limit", type=int)
    options.add_argument("--min-rounds", type=int, help="instructed: turns before agreeing is allowed")
    options.add_argument("--pool", type=int, help="instructed: replacement pool size (ranks 2..pool+1)")
    options.add_argument("--generation", choices=("interactive", "nominal"))
    options.add_argument("--initial-generation", action=argparse.BooleanOptionalAction, default=None,
                         help="add (or, with --no-, skip) the initial generation-and-selection "
                              "phase; default: off for open (as in paper A's Table 6), on for "
                              "instructed and iterative, always on for none and progressive")
    options.add_argument("--ideas-per-agent", type=int)
    options.add_argument("--idea-words", help="target idea length, e.g. 80-100")
    options.add_argument("--convergence", type=int, help="iterative: same selection this many times")
    options.add_argument("--refine-top", type=int, help="progressive: ideas carried forward")
    options.add_argument("--fidelity", choices=("paper", "release"),
                         help="paper A's structures as the paper describes them (default) or as the "
                              "authors' code ran them (docs/reference/fidelity.md)")
    options.add_argument("--reply-attempts", type=whole(1, 100),
                         help="instructed: asks per turn before a reply counts as unreadable "
                              "(default 3; 50 with --fidelity release)")
    debate = p.add_argument_group("debate options (paper B, every debate method; section 7.4)")
    debate.add_argument("--k", type=int, help="peers per agent for --peers distant|closest|random (default 2)")
    debate.add_argument("--lenses", action=argparse.BooleanOptionalAction, default=None,
                        help="Cognitive Lens Assignment on/off (default: on for creative_mad only)")
    debate.add_argument("--peers", choices=("all", "distant", "closest", "random"),
                        help="peers each agent reads (default: distant for creative_mad, else all)")
    debate.add_argument("--consensus", choices=("judge", "vote", "random", "all"),
                        help="final answer: judge pick (default), agents' vote, seeded random, or keep all")
    debate.add_argument("--consensus-retries", type=int,
                        help="extra judge samples when the pick is unreadable (default 2), then a seeded random pick")
    debate.add_argument("--consensus-temperature", type=float, metavar="T",
                        help="the consensus judge's sampling temperature, 0 to 2 (default: --temperature; "
                             "paper B names none for its judge); recorded per session")
    debate.add_argument("--candidates", type=whole(1, 16),
                        help="direct, self_refine: K answers, the consensus judge picks one (default 1)")
    debate.add_argument("--models", help="one model per agent, comma-separated (cycled): Mixed teams, "
                                         "Hetero-MAD by model; same --base-url / key as --model")
    steer = p.add_argument_group("steered discussion (--method steered)")
    steer.add_argument("--steer", action="append", metavar="TARGET=VALUE",
                       help="a moderator target, e.g. coherence_max=0.8 or spread_min=0.1 "
                            "(repeatable; see engine.protocols.steered.DEFAULT_TARGETS)")
    own = p.add_argument_group("a method's own options (its options model: engine.protocols.config)")
    own.add_argument("--option", action="append", metavar="NAME=VALUE",
                     help="an option of the method's own, e.g. a plugin method's flip_at=3 (repeatable); "
                          "the value is read as JSON (3, 0.5, true, \"text\") or else as text")
    model.add_argument("--embed-base-url", metavar="URL", type=server_url,
                       help="peer selection by distance (Creative-MAD): embed through this "
                            "OpenAI-compatible embeddings server (default: the in-process MiniLM)")
    model.add_argument("--embed-model", metavar="NAME", help="model name on --embed-base-url")
    judge = p.add_argument_group("judge")
    judge.add_argument("--judge-model", help="rate final ideas with this model ('local' or a name)")
    judge.add_argument("--judge-base-url", type=server_url, help="server of the judge model")
    judge.add_argument("--judge-provider", metavar="NAME",
                       help="the backend of the judge model (as --provider; default from its name)")
    judge.add_argument("--judge-mode", choices=("together", "alone"),
                       help="together (default): the final ideas of a task rated together in "
                            "shuffled batches, relative to each other (paper A's consensual "
                            "assessment); alone: each idea on its own")
    judge.add_argument("--judge-samples", type=int,
                       help="raters per judge model (averaged; their agreement ICC(3,k), ICC(2,1) "
                            "recorded; default: 5 for one model, as paper A's five raters, 1 per "
                            "model with --judge-models)")
    judge.add_argument("--judge-batch-size", type=int, help="ideas shown together (default 10)")
    judge.add_argument("--judge-models", help="more judge models on the judge's server, comma-separated")
    judge.add_argument("--judge-paraphrase", metavar="MODEL",
                       help="paraphrase every final idea with MODEL (temperature 0, on the judge's "
                            "server) before the raters read it, as paper A did with GPT-4.1")
    judge.add_argument("--judge-order", choices=("shared", "shuffled"),
                       help="shared (default, paper A): one shuffled order per task for every rater; "
                            "shuffled: each rater its own")
    run = p.add_argument_group("running")
    run.add_argument("--out", help="output folder (corpus.jsonl + manifest.json); optional with --dry-run "
                     "(then nothing counts as already done)")
    run.add_argument("--concurrency", type=whole(1, MAX_CONCURRENCY),
                     help=f"sessions in flight (default 4; 1 to {MAX_CONCURRENCY})")
    run.add_argument("--max-requests", type=whole(1, MAX_REQUESTS),
                     help=f"chat requests in flight (default 8 x concurrency; 1 to {MAX_REQUESTS:,})")
    run.add_argument("--timeout", type=seconds(MAX_TIMEOUT_S), metavar="SECONDS",
                     help="total deadline of one model request, retried after it (default 120; "
                          "grid key request_timeout)")
    run.add_argument("--cache", help="response cache file (default: <out>/llm_cache.sqlite)")
    run.add_argument("--no-cache", action="store_true", help="do not cache responses")
    run.add_argument("--replay", action="store_true", help="answer only from the cache; a miss is an error")
    run.add_argument("--dry-run", action="store_true", help="print the number of calls and tokens, run nothing")
    run.add_argument("--ray", metavar="ADDRESS|auto|local",
                     help="run the sessions as tasks on the Ray cluster whose head is at HOST:PORT "
                          "(grid key ray); this machine alone writes the folder and the cache")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(handler=run_command)


def grid_from_args(args: argparse.Namespace) -> dict:
    """The one-condition grid that a command line describes."""
    if not args.method:
        raise InputError("give --method (or --grid FILE)", field="method")
    condition = {"method": args.method, "replicates": args.replicates}
    if args.agents is not None:
        condition["agents"] = args.agents
    if args.rounds is not None:
        condition["rounds"] = args.rounds
    for name in PROTOCOL_FLAGS:
        value = getattr(args, name)
        if value is not None:
            condition[name] = value
    if args.initial_generation is not None:
        condition["initial_generation"] = args.initial_generation
    if args.models is not None:  # "" is not "no --models": refused as no model names
        condition["models"] = [m.strip() for m in args.models.split(",") if m.strip()]
    if args.steer:
        condition["steering"] = parse_steer(args.steer)
    for name, value in parse_options(args.option).items():
        if name in condition or name in ("method", "replicates", "tasks"):
            raise InputError(f"--option {name}: set by its own flag (--{name.replace('_', '-')})", field="option")
        condition[name] = value
    from engine.llm.replicas import split_urls

    urls = split_urls(args.base_url)
    grid = {"name": f"{args.method}", "model": "local" if args.model is None else args.model, "provider": args.provider,
            "base_url": urls[0] if len(urls) == 1 else (urls or None),
            "api_key_env": args.api_key_env or DEFAULT_KEY_ENV, "azure_api_version": args.azure_api_version,
            "reasoning_effort": args.reasoning_effort, "seed": args.seed,
            "embed_base_url": args.embed_base_url, "embed_model": args.embed_model,
            "concurrency": args.concurrency or 4, "conditions": [condition]}
    if args.timeout is not None:
        grid["request_timeout"] = _positive_timeout(args.timeout)
    mapping = parse_map(args.map)
    if args.tasks_file:
        grid["tasks_file"] = args.tasks_file
        grid["tasks_map"] = mapping
        if args.extra_fields:
            grid["tasks_extra"] = args.extra_fields
    if args.benchmark_limit is not None and not args.benchmark:
        raise InputError("--benchmark-limit applies to --benchmark; add --benchmark NAME [--benchmark-file PATH]",
                         field="benchmark_limit")
    if args.benchmark:
        if not args.benchmark_file:
            from engine.tasks.benchmark_tasks import shipped_path

            shipped_path(args.benchmark)  # LiveIdeaBench / AAE: says to give --benchmark-file
        grid["benchmark"] = {"name": args.benchmark, "path": args.benchmark_file,
                             "limit": args.benchmark_limit, "map": mapping}
    if args.task_text:
        grid["task_texts"] = {args.task_id: args.task_text}
    if args.task and args.task != ["all"]:
        grid["tasks"] = [t.strip() for item in args.task for t in item.split(",") if t.strip()]
    elif not args.task and not args.task_text and not args.tasks_file and not args.benchmark:
        raise InputError("give --task ID (or 'all'), --task-text or --tasks-file", field="task")
    elif args.task_text and not args.task:
        grid["tasks"] = [args.task_id]
    if args.judge_model is not None:  # --judge-model '' is refused, not "no judge"
        grid["judge"] = {"model": args.judge_model, "base_url": args.judge_base_url,
                         "api_key_env": args.api_key_env or DEFAULT_KEY_ENV}
        for name in ("mode", "samples", "batch_size", "paraphrase", "order", "provider"):
            if getattr(args, f"judge_{name}") is not None:
                grid["judge"][name] = getattr(args, f"judge_{name}")
        if args.judge_models is not None:
            grid["judge"]["models"] = [m.strip() for m in args.judge_models.split(",") if m.strip()]
            if not grid["judge"]["models"]:
                raise InputError(f"no model name in {args.judge_models!r}", field="judge_models")
    elif any(getattr(args, f"judge_{n}") is not None
             for n in ("mode", "samples", "batch_size", "models", "paraphrase", "order", "provider")):
        raise InputError("the --judge-* options need --judge-model", field="judge_model")
    return grid


def parse_map(items: list[str] | None) -> dict[str, str]:
    """``["id=uid", ...]`` -> ``{"id": "uid"}``; a malformed item is an InputError."""
    mapping = {}
    for item in items or ():
        field, sep, name = item.partition("=")
        if not sep or not field.strip() or not name.strip():
            raise InputError(f"--map {item!r}: expected FIELD=NAME, e.g. id=uid", field="map")
        mapping[field.strip()] = name.strip()
    return mapping


def parse_options(items: list[str] | None) -> dict[str, object]:
    """``["flip_at=3", ...]`` -> ``{"flip_at": 3}`` (a value read as JSON, else kept as text);
    the method's options model checks them. A malformed item is an InputError."""
    options: dict[str, object] = {}
    for item in items or ():
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise InputError(f"--option {item!r}: expected NAME=VALUE, e.g. flip_at=3", field="option")
        try:
            options[name] = json.loads(text)
        except ValueError:
            options[name] = text
    return options


def parse_steer(items: list[str]) -> dict[str, float]:
    """``["coherence_max=0.8", ...]`` -> ``{"coherence_max": 0.8}``; a malformed item is an InputError."""
    targets = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            targets[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise InputError(f"--steer {item!r}: expected TARGET=NUMBER, e.g. coherence_max=0.8",
                             field="steer")
    return targets


def _positive_timeout(seconds: float) -> float:
    if not seconds > 0 or seconds == float("inf"):
        raise InputError(f"must be a positive number of seconds, got {seconds!r}", field="--timeout")
    return seconds


def _check_ray_address(given: str | None, in_grid: str | None, *, dry_run: bool) -> None:
    """``--ray`` (or the grid's ``ray``): not empty, and its head answers within the stated
    time limit (``engine.cluster.connection.check_reachable``), all before the run folder is
    made; a dry run plans only and asks no cluster."""
    if given is not None and not given.strip():
        raise InputError("give the head's HOST:PORT, auto or local", field="--ray")
    address = given or in_grid
    if address and not dry_run:
        from engine.cluster.connection import check_reachable

        check_reachable(address.strip())


# a dry run without --out plans against a folder that cannot exist (nothing is done yet)
NO_OUT = Path(os.devnull) / "no-out-given"


def run_command(args: argparse.Namespace) -> int:
    from engine.runs.grid import load_grid, with_servers
    from engine.runs.runner import run_grid

    if args.grid:
        given = [name for name in SINGLE_RUN_OPTIONS
                 if getattr(args, name) not in (None, False, [], "OPENAI_API_KEY", 0, 1, "custom")
                 or (name == "initial_generation" and args.initial_generation is False)]
        if args.lenses is not None:
            given.insert(0, "lenses")
        if given:
            raise InputError(f"--{given[0].replace('_', '-')} cannot be combined with --grid "
                             f"(put it in the grid file)", field=given[0])
        # --api-key-env, even OPENAI_API_KEY, is the user naming the secret for the file's servers
        grid = load_grid(args.grid, api_key_env=args.api_key_env,
                         allow_file_endpoints=args.allow_file_endpoints)
        if args.concurrency:
            grid = grid.model_copy(update={"concurrency": args.concurrency})
        if args.timeout is not None:
            grid = with_servers(grid, timeout=float(_positive_timeout(args.timeout)))
    else:
        if args.allow_file_endpoints:
            raise InputError("--allow-file-endpoints applies to --grid FILE only (the servers on "
                             "the command line are your own)", field="allow_file_endpoints")
        grid = load_grid(grid_from_args(args))
    cache = False if args.no_cache else (args.cache or True)
    if args.replay and args.no_cache:
        raise InputError("--replay needs the cache (drop --no-cache)", field="replay")
    _check_ray_address(args.ray, grid.ray, dry_run=args.dry_run)
    if not args.out and not args.dry_run:
        raise InputError("the following arguments are required: --out (optional with --dry-run only)", field="out")
    result = run_grid(grid, args.out or NO_OUT, dry_run=args.dry_run, progress=not args.no_progress,
                      cache=cache, replay=args.replay, max_requests=args.max_requests,
                      command="python -m engine " + " ".join(sys.argv[1:]), ray=args.ray)
    if args.dry_run:
        return 0
    if result.cluster:
        work = result.cluster
        print(f"ray: {result.ok + result.failed} sessions on {len(work['nodes'])} node(s); model calls "
              f"made again after a lost node: {work['calls_repeated']}", file=sys.stderr)
    summary = {"out": str(result.out_dir), "planned": result.planned, "skipped_done": result.skipped,
               "ok": result.ok, "failed": result.failed, "usage": result.usage,
               "cost_usd": result.cost_usd, "elapsed_s": round(result.elapsed_s, 1)}
    if result.consensus.get("sessions"):
        summary["consensus"] = {key: result.consensus[key] for key in
                                ("sessions", "unparsed", "unparsed_share", "resolution", "chosen_agent",
                                 "chosen_lens")}
    print(json.dumps(summary))
    return 1 if result.failed else 0
