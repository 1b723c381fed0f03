"""``python -m engine judge validate HUMAN_FILE``: how far a measure agrees with people.

    python -m engine judge validate data/human_ratings/ocsai1_test/ratings.csv --measure semdis
    python -m engine judge validate data/human_ratings/ocsai1_test/ratings.csv --measure judge --judge-model local
    python -m engine judge validate ratings_export.csv --scale novelty --measure judge --judge-model gpt-4.1-mini \\
        --base-url https://api.openai.com/v1 --out report.json

HUMAN_FILE (CSV/TSV, JSONL or Parquet) holds one row per rated item: ``prompt``, ``response`` and
``human`` (a mean) or ``human_1`` ... ``human_k`` (one column per rater); or paper A's idea-file
shape (the rating page's export: ``question_id``, ``final_idea``, ``N*``/``U*`` per rater, with
``--scale novelty|usefulness``). ``--measure recorded --dataset FOLDER`` takes the ratings the
dataset's own judge gave the same ideas (matched by id, no call). ``--measure semdis`` scores each item 1 - cos(prompt, response)
with the embedder (options as ``embed``); ``--measure judge`` asks an LLM judge for one score per
item on the people's scale (``--judge-scale``, default: the whole numbers the people's ratings
span), by a panel (``--samples``, default 5 as paper A's five raters). The report (printed, and
JSON with ``--out``): Pearson and Spearman with 95% intervals, weighted kappa where the judge
answers on the people's scale, the people's own ICC(2,1)/(2,k)/(3,k) and Krippendorff's alpha where
the file has several raters, the measure beside the raters, per prompt, the largest
disagreements and a calibration table. Judge answers go through the response cache
(``--judge-cache``, default ``$CDL_CACHE_DIR/llm_responses.sqlite``): a second run makes no call.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import replace
from pathlib import Path

from engine.cli.checks import server_url, whole
from engine.errors import InputError

MEASURES = ("semdis", "judge", "recorded")
SCALE_TEXT = re.compile(r"^\s*(-?\d+)\s*(?:-|\.\.|to)\s*(-?\d+)\s*$")
MAX_SCALE_POINTS = 101


def add_validate(sub, *, max_retries: int, max_concurrency: int, max_samples: int) -> None:
    from engine.cli.data import add_embedder_options

    q = sub.add_parser("validate", help="agreement of a judge or semantic distance with people's ratings",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("human_file", help="rated items: .csv/.tsv/.jsonl/.parquet (see above)")
    q.add_argument("--measure", choices=MEASURES, default="judge",
                   help="judge: an LLM judge's score (default); semdis: 1 - cosine(prompt, response); recorded: "
                        "the ratings a dataset's own judge gave the same ideas (--dataset, --scale; no call)")
    q.add_argument("--dataset", metavar="FOLDER",
                   help="with --measure recorded: the dataset whose judge rated these ideas (ids = file_id)")
    q.add_argument("--scale", choices=("novelty", "usefulness"),
                   help="which of an ideas file's two scales (N* or U* columns) to validate against")
    q.add_argument("--out", metavar="REPORT.json", help="also write the report as JSON here")
    judge = q.add_argument_group("judge (--measure judge)")
    judge.add_argument("--judge-model", default="local", help="'local' (default) or a model name")
    judge.add_argument("--provider", metavar="NAME", help="the judge model's backend (as `judge quality`)")
    judge.add_argument("--base-url", type=server_url, help="OpenAI-compatible server of the judge model")
    judge.add_argument("--api-key-env", default="OPENAI_API_KEY", help="variable holding the judge's API key")
    judge.add_argument("--judge-models", metavar="A,B", help="more judge models on the same server: one panel")
    judge.add_argument("--samples", type=whole(1, max_samples),
                       help="raters per judge model (default 5 for one model, 1 per model with --judge-models)")
    judge.add_argument("--criterion", help="what the judge rates (default: originality for a file of items, "
                                           "the --scale for an ideas file)")
    judge.add_argument("--judge-scale", metavar="LOW-HIGH",
                       help="the judge's whole-number scale (default: the whole numbers the people's ratings span)")
    judge.add_argument("--retries", type=whole(0, max_retries), default=2,
                       help="asks again when an answer is unreadable (default 2)")
    judge.add_argument("--concurrency", type=whole(1, max_concurrency), default=8, help="judge calls in flight")
    judge.add_argument("--judge-cache", metavar="PATH",
                       help="response cache (default: $CDL_CACHE_DIR/llm_responses.sqlite)")
    judge.add_argument("--limit", type=whole(1), help="validate on the first N items only (said in the report)")
    judge.add_argument("--dry-run", action="store_true", help="print the number of judge calls, judge nothing")
    add_embedder_options(q)  # semantic distance (--measure semdis): the embedder, as `embed` has it
    q.set_defaults(handler=validate_command)


def parse_scale(text: str) -> tuple[int, int]:
    match = SCALE_TEXT.match(text or "")
    if not match:
        raise InputError(f"expected LOW-HIGH whole numbers such as 1-5, got {text!r}", field="--judge-scale")
    low, high = int(match.group(1)), int(match.group(2))
    if not low < high or high - low + 1 > MAX_SCALE_POINTS:
        raise InputError(f"expected LOW < HIGH with at most {MAX_SCALE_POINTS} points, got {text!r}",
                         field="--judge-scale")
    return low, high


def people_scale(frame) -> tuple[int, int]:
    """The whole numbers the people's ratings span (floor of the lowest to ceiling of the highest)."""
    import numpy as np

    columns = [c for c in frame.columns if c.startswith("human")]
    values = frame[columns].to_numpy(dtype=float)
    low, high = int(math.floor(np.nanmin(values))), int(math.ceil(np.nanmax(values)))
    if low == high:
        high = low + 1
    return low, high


def _embedding_defaults_used(args: argparse.Namespace) -> list[str]:
    given = [name for name in ("embed_base_url", "embed_model", "cache") if getattr(args, name)]
    if args.model != "all-MiniLM-L6-v2":
        given.append("model")
    if args.embed_backend != "torch":
        given.append("embed_backend")
    return given


def _judge_options_given(args: argparse.Namespace) -> list[str]:
    defaults = {"judge_model": "local", "provider": None, "base_url": None, "judge_models": None, "samples": None,
                "criterion": None, "judge_scale": None, "judge_cache": None, "limit": None}
    return [name for name, default in defaults.items() if getattr(args, name) != default] + \
        (["dry_run"] if args.dry_run else [])


def validate_command(args: argparse.Namespace) -> int:
    from engine.importers.human_scores import read_human_scores

    if args.measure != "judge" and _judge_options_given(args):
        flag = "--" + _judge_options_given(args)[0].replace("_", "-")
        raise InputError(f"is a judge option; --measure {args.measure} asks no judge", field=flag)
    if args.measure != "semdis" and _embedding_defaults_used(args):
        flag = "--" + _embedding_defaults_used(args)[0].replace("_", "-")
        raise InputError("is an embedding option; give --measure semdis to use it", field=flag)
    if (args.measure == "recorded") != bool(args.dataset):
        raise InputError("--measure recorded and --dataset go together", field="--dataset")
    if args.measure == "recorded" and args.scale is None:
        raise InputError("--measure recorded compares one of paper A's scales: give --scale novelty|usefulness",
                         field="--scale")
    frame = read_human_scores(args.human_file, scale=args.scale)
    limited = None
    if getattr(args, "limit", None) and args.limit < len(frame):
        attrs = frame.attrs
        frame = frame.head(args.limit).copy()
        frame.attrs = attrs
        limited = args.limit
    if args.measure == "semdis":
        measure, info, scale, panel = _semdis(args, frame)
    elif args.measure == "recorded":
        from engine.judging.item_scores import recorded_ratings

        measure, info, scale, panel = recorded_ratings(frame, args.dataset, args.scale)
    else:
        found = _judge(args, frame)
        if found is None:  # a dry run
            return 0
        measure, info, scale, panel = found
    if limited:
        info["limit"] = f"the first {limited:,} items of the file"
    from engine.judging.validate import validation_report

    report = validation_report(frame, measure, measure_info=info, scale=scale, panel_scores=panel)
    report["command"] = _command()
    for line in report["text"]:
        print(line)
    if args.out:
        from engine.storage.durable import atomic_write_bytes
        from engine.storage.jsonl import to_json

        atomic_write_bytes(Path(args.out), (to_json(report, indent=1) + "\n").encode("utf-8"))
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _command() -> str:
    """The command line as typed, credentials in a URL scrubbed (``engine.llm.secrets.scrub``)."""
    import shlex

    from engine.llm.secrets import scrub

    return scrub("python -m engine " + " ".join(shlex.quote(a) for a in sys.argv[1:]))


def _semdis(args: argparse.Namespace, frame):
    from engine.cli.data import embedder_from_args
    from engine.judging.item_scores import semantic_distance, semantic_distance_info

    embedder = embedder_from_args(args)
    values = semantic_distance(list(frame["prompt"]), list(frame["response"]), embedder)
    info = {**semantic_distance_info(embedder.model_name), "model_calls": getattr(embedder, "model_calls", None)}
    return values, info, None, None


def _judge(args: argparse.Namespace, frame):
    from engine.cli.judge_options import Named, judge_endpoint, judge_name, more_models
    from engine.judging.item_scores import ajudge_scores
    from engine.judging.validate import row_means
    from engine.judging.quality import rubric_raters
    from engine.llm import make_backend, run_sync
    from engine.llm.cache import default_cache_path

    scale = parse_scale(args.judge_scale) if args.judge_scale else people_scale(frame)
    criterion = args.criterion or frame.attrs["human_scores"].get("scale") or "originality"
    endpoint = judge_endpoint(args)
    endpoints = [endpoint, *(replace(endpoint, model=m) for m in more_models(args))]

    raters = rubric_raters([Named(judge_name(e)) for e in endpoints], args.samples)
    calls = len(frame) * len(raters)
    print(f"{calls:,} answers to ask ({len(frame):,} items x {len(raters)} raters; an unreadable one is asked again at most "
          f"{args.retries} times; answers in the cache are not asked again)", file=sys.stderr)
    if args.dry_run:
        return None
    cache = Path(args.judge_cache) if args.judge_cache else default_cache_path()
    cache.parent.mkdir(parents=True, exist_ok=True)
    judges = [make_backend(e, concurrency=args.concurrency, cache=cache) for e in endpoints]
    from tqdm import tqdm

    bar = tqdm(total=calls, unit="answer", file=sys.stderr, desc="judge validate")

    async def go():
        try:
            return await ajudge_scores(list(frame["prompt"]), list(frame["response"]), judges, criterion=criterion,
                                       low=scale[0], high=scale[1], samples=args.samples, retries=args.retries,
                                       on_done=lambda: bar.update(1))
        finally:
            for each in judges:
                await each.aclose()

    try:
        found = run_sync(go())
    finally:
        bar.close()
    usage = {"calls": sum(j.usage.calls for j in judges), "cache_hits": sum(j.usage.cache_hits for j in judges)}
    scores = found["scores"]
    measure = row_means(scores)
    info = {"kind": "judge", "name": f"judge {found['judge']}", "judge": found["judge"], "raters": found["raters"],
            "samples": found["samples"], "temperature": found["temperature"], "criterion": criterion,
            "scale": list(scale), "scale_from": "--judge-scale" if args.judge_scale else "the people's ratings",
            "unreadable_answers": found["unreadable_answers"], "unread_items": found["unread_items"],
            "answers_asked": calls, "model_calls": usage["calls"], "cache_hits": usage["cache_hits"],
            "cache": args.judge_cache or "the default response cache ($CDL_CACHE_DIR/llm_responses.sqlite)",
            "score": "mean of the raters' readable answers"}
    print(f"judge calls: {usage['calls']:,} made, {usage['cache_hits']:,} answered from the cache; "
          f"{found['unreadable_answers']:,} answers unreadable", file=sys.stderr)
    return measure, info, scale, scores
