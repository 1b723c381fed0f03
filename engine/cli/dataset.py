"""``python -m engine dataset``: build the datasets the dashboard reads (``engine.dataset_builds``).

    python -m engine dataset build runs/local_smollm2 --out cached_runs/local_smollm2
    python -m engine dataset build runs/local_smollm2_paper_b --kind paper-b --out cached_runs/local_smollm2_paper_b
    python -m engine dataset build runs/steered --kind steered --out cached_runs/local_smollm2_steered
    python -m engine dataset build runs/local_smollm2_paper_b_benchmarks --kind paper-b-benchmarks \
        --out cached_runs/local_smollm2_paper_b_benchmarks
    python -m engine dataset release --out cached_runs/paper_release
    python -m engine dataset features cached_runs/local_smollm2

``build`` turns a run folder of ``python -m engine run`` into a dataset: finished sessions, judge
ratings scaled within task, turn embeddings and the nine trajectory features. ``--out`` must be a
new or empty folder or one a build wrote (its ``dataset-build.json`` names every file); never a
run folder. The dataset is built beside it and swapped in whole
(``engine.dataset_builds.output_folder``); a run with no finished session is refused. ``--kind``
chooses the description written into its manifest (all protocols, paper B's ablation) or, for
``steered``, adds the final-idea embeddings and the moderator's interventions; a run whose
paper-A sessions include ``fidelity: release`` ones (``cached_runs/grids/fidelity.yaml``) is
described as the fidelity comparison (``engine.dataset_builds.fidelity_manifest``). ``release`` reads
paper A's released metrics files. ``features`` adds to a dataset's table every registered
feature it lacks (a measure added since it was built, or a plugin's), computed from its own
turn embeddings; columns it has are never changed (``engine.dataset_builds.more_features``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.errors import InputError

KINDS = ("run", "paper-b", "steered", "paper-b-benchmarks")
REPO = Path(__file__).resolve().parents[2]


def register(subparsers) -> None:
    p = subparsers.add_parser("dataset", help="build a dataset for the dashboard (run folder, paper release)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="dataset_command", required=True, metavar="ACTION")
    build = actions.add_parser("build", help="a run folder -> a dataset (embeddings, features, ratings)")
    build.add_argument("run_dir", type=Path, help="output folder of `python -m engine run`")
    build.add_argument("--out", type=Path, required=True, help="dataset folder to write (e.g. cached_runs/NAME)")
    build.add_argument("--kind", choices=KINDS, default="run",
                       help="run: all protocols (default); paper-b: paper B's ablation; steered: the "
                            "steered discussion with final-idea embeddings and interventions; "
                            "paper-b-benchmarks: paper B's comparison on the shipped MacGyver and Arena-Hard "
                            "items (engine.dataset_builds.paper_b_benchmarks)")
    build.add_argument("--embedding-model", help="sentence-transformers model (default: the bundled MiniLM)")
    build.add_argument("--grid", type=Path,
                       help="steered only: keep the sessions this grid file plans "
                            "(default cached_runs/grids/steered.yaml)")
    build.set_defaults(handler=build_command)
    release = actions.add_parser("release", help="paper A's released metrics -> cached_runs/paper_release")
    release.add_argument("--source", type=Path, help="folder holding the release's metrics CSV files "
                                                     "(default ../shared/data/paper_release)")
    release.add_argument("--out", type=Path, help="dataset folder to write (default cached_runs/paper_release)")
    release.set_defaults(handler=release_command)
    more = actions.add_parser("features", help="add the registered features a dataset's table lacks")
    more.add_argument("folder", type=Path, help="dataset folder (with turn embeddings)")
    more.add_argument("--features", metavar="NAMES",
                      help="comma-separated features to add (default: every registered one it lacks)")
    more.set_defaults(handler=features_command)


def features_command(args: argparse.Namespace) -> int:
    from engine.dataset_builds.more_features import add_features
    from engine.measures.registry import named_features

    names = None if args.features is None else named_features(args.features)
    added = add_features(args.folder, names)
    print(f"{args.folder}: added {', '.join(added)}" if added else
          f"{args.folder}: nothing to add (the table has every registered feature it can)")
    return 0


def build_command(args: argparse.Namespace) -> int:
    """Never into a run folder nor over files no build wrote; built beside ``--out`` and
    swapped in whole, one writer at a time (``engine.dataset_builds.output_folder``)."""
    from engine.dataset_builds.output_folder import staged
    from engine.runs.run_folder import CORPUS_FILE, MANIFEST_FILE

    for name in (CORPUS_FILE, MANIFEST_FILE):
        if not (args.run_dir / name).is_file():
            raise InputError(f"{args.run_dir}: no {name}: not a run folder of `python -m engine run`")
    if args.grid is not None and args.kind != "steered":
        raise InputError("--grid applies to --kind steered only")
    with staged(args.out, "python -m engine dataset build", run_dir=args.run_dir) as folder:
        _build(args, folder)
    print(f"wrote {args.out}")
    return 0


def _build(args: argparse.Namespace, out: Path) -> Path:
    if args.kind == "steered":
        if args.embedding_model:
            raise InputError("--embedding-model: the steered dataset uses the bundled MiniLM")
        from engine.dataset_builds import steered

        grid = args.grid or REPO / "cached_runs" / "grids" / "steered.yaml"
        folder = steered.build(args.run_dir, out, grid)
    elif args.kind == "paper-b-benchmarks":
        from engine.dataset_builds import paper_b_benchmarks
        from engine.embedding.embedder import DEFAULT_MODEL

        folder = paper_b_benchmarks.build(args.run_dir, out, embedding_model=args.embedding_model or DEFAULT_MODEL)
    else:
        from engine.dataset_builds import run_folder
        from engine.embedding.embedder import DEFAULT_MODEL

        paper_b = args.kind == "paper-b"
        folder = run_folder.build(args.run_dir, out, embedding_model=args.embedding_model or DEFAULT_MODEL,
                                  paper_b=paper_b,
                                  regenerate="make cached-runs-paper-b" if paper_b else run_folder.REGENERATE)
    return folder


def release_command(args: argparse.Namespace) -> int:
    from engine.dataset_builds import paper_release
    from engine.dataset_builds.output_folder import staged

    out = args.out or paper_release.DEFAULT_OUT
    with staged(out, "python -m engine dataset release") as folder:
        dataset = paper_release.build(args.source or paper_release.DEFAULT_SOURCE, folder)
    m = dataset.manifest
    print(f"wrote {out}: {m['n_llm']} LLM + {m['n_human']} human conversations")
    return 0
