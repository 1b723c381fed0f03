"""``python -m engine judge quality|pairwise RUN_DIR``: paper B's quality side on a run folder.

    python -m engine judge quality runs/paper_b --judge-model local              # rubric score of every final output
    python -m engine judge quality runs/paper_b --judge-model local --per-round  # + every debater's answer per round (7.1)
    python -m engine judge quality runs/paper_b --judge-model a --judge-models b,c   # one score from each of 3 models
Each output is scored by a panel of raters, as paper A's ideas were by five: by default
--samples 5 samples (distinct seeds, temperature 0.7) of the judge model, or one score
(temperature 0) from each model when --judge-models adds more; --samples 1 is one rating
per item (then no agreement can be computed). The summary printed at the end says which
judge, how many ratings per item and their agreement (ICC(3,k), ICC(2,1), N items, k raters).
    python -m engine judge pairwise runs/paper_b --judge-model gpt-4.1-mini --base-url https://api.openai.com/v1
    python -m engine judge validate HUMAN_FILE --measure judge|semdis     # agreement with people's ratings
Results are appended to RUN_DIR/quality.jsonl and the replies cached in the run's response
cache: re-running resumes and a finished run costs zero calls. ``--dry-run`` prints the
number of judge calls instead (each may be retried ``--retries`` times when unreadable).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from engine.cli.checks import server_url, whole
from engine.cli.judge_options import Named, judge_endpoint, judge_name, more_models
from engine.errors import InputError

MAX_RETRIES = 20
MAX_CONCURRENCY = 1024
MAX_SAMPLES = 20


def register(subparsers) -> None:
    p = subparsers.add_parser("judge", help="rate a run's outputs (rubric score, pairwise win rate); validate a judge against people",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="judge_command", required=True, metavar="quality|pairwise|validate")
    for name, help_text in (("quality", "rubric absolute score (1-10) of final outputs (and per round)"),
                            ("pairwise", "average pairwise win rate between conditions, both orders")):
        q = sub.add_parser(name, help=help_text, description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        q.add_argument("run_dir", help="output folder of `python -m engine run`")
        q.add_argument("--judge-model", default="local", help="'local' (default) or a model name")
        q.add_argument("--provider", metavar="NAME",
                       help="the judge model's backend: local, openai or a plugin's (python -m engine "
                            "plugins); default: local for 'local' or a .gguf path, else openai")
        q.add_argument("--base-url", type=server_url, help="OpenAI-compatible server of the judge model")
        q.add_argument("--api-key-env", default="OPENAI_API_KEY", help="variable holding the judge's API key")
        q.add_argument("--retries", type=whole(0, MAX_RETRIES), default=2,
                       help=f"asks again when a verdict is unreadable (default 2; 0 to {MAX_RETRIES})")
        q.add_argument("--concurrency", type=whole(1, MAX_CONCURRENCY), default=8,
                       help=f"judge calls in flight (default 8; 1 to {MAX_CONCURRENCY})")
        q.add_argument("--dry-run", action="store_true", help="print the number of judge calls, judge nothing")
        if name == "quality":
            q.add_argument("--samples", type=whole(1, MAX_SAMPLES),
                           help="raters per judge model (default: 5 for one model, as paper A's five raters; "
                                f"1 per model with --judge-models; 1 to {MAX_SAMPLES})")
            q.add_argument("--judge-models", metavar="A,B",
                           help="more judge models on the same server, comma-separated: one panel")
            q.add_argument("--per-round", action="store_true",
                           help="also score each debater's answer in each round (section 7.1)")
            q.add_argument("--per-round-limit", type=whole(1),
                           help="round answers of the first N sessions of each condition and task only")
        else:
            q.add_argument("--pairs", choices=("matched", "all"), default="matched",
                           help="matched: replicate i vs replicate i (default); all: every pair")
            q.add_argument("--max-per-pair", type=whole(1), help="at most this many comparisons per condition pair and task")
        q.set_defaults(handler=judge_command)
    from engine.cli.judge_validate import add_validate

    add_validate(sub, max_retries=MAX_RETRIES, max_concurrency=MAX_CONCURRENCY, max_samples=MAX_SAMPLES)


def judge_command(args: argparse.Namespace) -> int:
    """One writer per run folder: the judge holds the folder's lock while it writes
    ``quality.jsonl`` and the response cache (``--dry-run`` only reads)."""
    from engine.runs.run_folder import CORPUS_FILE

    if getattr(args, "per_round_limit", None) is not None and not args.per_round:
        raise InputError("applies to the round answers: add --per-round",
                         field="--per-round-limit")
    folder = Path(args.run_dir)
    if not folder.is_dir() or not (folder / CORPUS_FILE).exists():
        raise InputError(f"no {CORPUS_FILE}: not a run folder", path=str(folder))
    if args.dry_run:
        return _judge(args, folder)
    from engine.storage.folder_lock import FolderLock

    with FolderLock(folder, f"judge {args.judge_command}"):
        return _judge(args, folder)


def _judge(args: argparse.Namespace, folder: Path) -> int:
    from engine.judging import quality
    from engine.llm import make_backend, run_sync
    from engine.runs.run_folder import MANIFEST_FILE, read_manifest, read_run_corpus, recorded_tasks

    corpus = read_run_corpus(folder)
    manifest = read_manifest(folder / MANIFEST_FILE)
    # the prompts the sessions answered, as the run recorded them (never the tasks file again)
    tasks = recorded_tasks(folder, manifest, corpus, say=lambda text: print(text, file=sys.stderr))
    store = quality.QualityStore(folder, writer=not args.dry_run)
    endpoint = judge_endpoint(args)
    name = judge_name(endpoint)  # what the records say judged them
    if args.judge_command == "quality":
        endpoints = [endpoint, *(replace(endpoint, model=m) for m in more_models(args))]
        items = quality.rubric_items(corpus, per_round=args.per_round, per_round_limit=args.per_round_limit)
        raters = quality.rubric_raters([Named(judge_name(e)) for e in endpoints], args.samples)
        todo = quality.rubric_todo(items, raters, store)
        plan_text = (f"{len(todo)} rubric calls ({len(items)} items x {len(raters)} raters; "
                     f"{len(items) * len(raters) - len(todo)} already judged)")
    else:
        plan = quality.pairwise_plan(list(corpus), pairs=args.pairs, max_per_pair=args.max_per_pair)
        todo = [p for p in plan if not store.has(quality._pair_key(p[0], p[1]), name)]
        plan_text = f"{2 * len(todo)} pairwise calls ({len(todo)} comparisons x 2 orders; " \
                    f"{len(plan) - len(todo)} already judged)"
    print(f"{plan_text}, each retried at most {args.retries} times when unreadable", file=sys.stderr)
    if args.dry_run or not todo:
        return _report(quality.summary(store))
    cache = folder / "llm_cache.sqlite"
    judge = make_backend(endpoint, concurrency=args.concurrency, cache=cache)
    judges = [judge]
    if args.judge_command == "quality":
        judges += [make_backend(e, concurrency=args.concurrency, cache=cache) for e in endpoints[1:]]
    from tqdm import tqdm

    bar = tqdm(total=len(todo), unit="item", file=sys.stderr, desc=f"judge {args.judge_command}")

    async def go():
        try:
            if args.judge_command == "quality":
                return await quality.arubric(items, tasks, judges, store, samples=args.samples,
                                             retries=args.retries, on_done=lambda: bar.update(1))
            return await quality.apairwise(plan, tasks, judge, store, retries=args.retries,
                                           on_done=lambda: bar.update(1))
        finally:
            for each in judges:
                await each.aclose()

    try:
        run_sync(go())
    finally:
        bar.close()
    return _report(quality.summary(store))


def _report(summary: dict) -> int:
    """The summary as JSON on stdout, and the rubric raters' agreement in words on stderr."""
    print(json.dumps(summary))
    if summary.get("agreement"):
        print(f"rubric raters: {summary['agreement']['text']}", file=sys.stderr)
    return 0
