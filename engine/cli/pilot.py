"""``python -m engine pilot``: prescribe and verify a discussion design for a model
(``engine.diagnosis.prescribe``): a budgeted pilot, the diagnosis against the paper release, a predicted
shift per candidate design, and a verification run with a verdict.

    python -m engine pilot --model local --budget small --out runs/pilot_local --dry-run
    python -m engine pilot --model local --budget small --out runs/pilot_local
Re-running the same command resumes: finished sessions and computed stages are reused.
"""

from __future__ import annotations

import argparse
import json

from engine.cli.checks import server_url, whole

MAX_SEED = 2 ** 63 - 2  # the verification runs on seed + 1 (engine.runs.grid.MAX_SEED)


def register(subparsers) -> None:
    p = subparsers.add_parser("pilot", help="pilot a model, predict the best design, verify it",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="local", help="'local' (default), a .gguf path, or a model name")
    p.add_argument("--base-url", type=server_url, help="OpenAI-compatible server URL for --model")
    p.add_argument("--api-key-env", help="environment variable holding the API key (default OPENAI_API_KEY)")
    p.add_argument("--budget", choices=("small", "standard"), default="small",
                   help="small: one task, short turns (minutes on the local model); standard: the six "
                        "tasks, 2 replicates of each design")
    p.add_argument("--baseline", default="open", help="the design to improve on (default open)")
    p.add_argument("--seed", type=whole(0, MAX_SEED), default=0, help="pilot seed; verification uses seed + 1")
    p.add_argument("--out", default="runs/pilot", help="output folder (default runs/pilot)")
    p.add_argument("--dry-run", action="store_true", help="print the plan (calls, tokens, cost), run nothing")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(handler=pilot_command)


def pilot_command(args: argparse.Namespace) -> int:
    from engine.diagnosis.prescribe import recommended_text, prescribe_and_verify

    study = prescribe_and_verify(args.out, model=args.model, budget=args.budget, baseline=args.baseline,
                            seed=args.seed, base_url=args.base_url, api_key_env=args.api_key_env,
                            dry_run=args.dry_run, progress=not args.no_progress)
    if args.dry_run:
        return 0
    report = study.report
    print(report["diagnosis"]["text"])
    print(f"Recommended: {recommended_text(report)}")
    print(f"Verdict: {report['verdict_text']}")
    print(json.dumps({"out": str(study.out), "report": str(study.out / "report.html"),
                      "timings_s": report.get("timings")}))
    return 0
