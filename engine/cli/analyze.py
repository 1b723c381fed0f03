"""``python -m engine analyze {regress,manipulability,compare,table,diagnose,fidelity}``: paper A's analyses.

Data come from ``--metrics`` (a metrics CSV; default the paper release beside the
repository) or ``--dataset`` (a dataset folder). Tables print to stdout; ``--out`` writes
CSV (``.csv``) or JSON (``.json``).
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.cli.checks import server_url
from engine.errors import InputError
from engine.names import RELEASE_EMBEDDING as REFERENCE_EMBEDDING_MODEL

SAMPLES = ("llm", "human", "all")


def register(subparsers) -> None:
    analyze = subparsers.add_parser("analyze", help="regressions, manipulability, comparisons, pilot diagnosis",
                                    description=__doc__)
    commands = analyze.add_subparsers(dest="analysis", required=True, metavar="ANALYSIS")

    regress = commands.add_parser("regress", help="fit a regression specification (Tables 1, 7, 20, 21)")
    _data_arguments(regress)
    _spec_arguments(regress)
    regress.add_argument("--hierarchical", action="store_true",
                         help="fit the paper's ladder (trajectory, +task, +model, +discussion, mixed) for --outcome")
    regress.set_defaults(handler=run_regress)

    manip = commands.add_parser("manipulability", help="Table 24: R² of each feature explained by design")
    _data_arguments(manip)
    manip.set_defaults(handler=run_manipulability)

    compare = commands.add_parser("compare", help="LLM vs human: coefficients (Table 23) or group means (Fig. 1)")
    _data_arguments(compare, sample=False)
    compare.add_argument("--outcome", help="fit the same specification on both samples and compare coefficients")
    compare.add_argument("--blocks", default="trajectory,task", help="blocks for --outcome (default trajectory,task)")
    compare.add_argument("--value", help="compare group means of this column (t-tests, Cohen's d)")
    compare.add_argument("--group", default="source", help="column holding the two groups (default source)")
    compare.add_argument("--groups", default="llm,human", help="the two groups, first minus second (default llm,human)")
    compare.add_argument("--by", help="also compare within each level of this column (e.g. task)")
    compare.add_argument("--paper-sample", metavar="NAME",
                         help="with --value: compare within one of paper A's samples (engine.samples: ideas = "
                              "Figure 1's LLM-team and human ideas, trajectory, design, ...); default every row")
    compare.add_argument("--robustness", action="store_true",
                         help="with --value: also task fixed effects (HC3, clustered), task-level and mixed models (A.5)")
    compare.add_argument("--cluster", help="generating-cluster column for --robustness; 'generating' builds it from the paper release "
                              "(LLM condition x task, human team)")
    compare.set_defaults(handler=run_compare)

    table = commands.add_parser("table", help="one table of paper A (1, 4, 5, 7-13, 15-18, 20-26, 28, 29, fig1) "
                                "on the paper's sample, ours and published; 'list' lists them")
    table.add_argument("number", help="the paper's table number (e.g. 7), fig1, or list")
    table.add_argument("--ideas", help="the authors' ideas_with_ratings_clean.csv (needed by every table with "
                                       "ratings); its ideas get the features of --metrics")
    source = table.add_mutually_exclusive_group()
    source.add_argument("--metrics", help="metrics CSV (default: the paper release, with its 4B features when "
                                          "comprehensive_trajectory_metrics_4b.csv is beside it)")
    source.add_argument("--dataset", help="a dataset folder (conversations.parquet) instead")
    table.add_argument("--stars", default="paper",
                       help="significance stars: paper (the levels of the paper's table; default), "
                            "conventional (.05/.01/.001), tenths (.10/.05/.01) or three p values, e.g. .1,.05,.01")
    table.add_argument("--out", help="write our tables to .csv (all parts, stacked) or .json")
    table.set_defaults(handler=run_table)

    fidelity = commands.add_parser("fidelity", help="the nine features when paper A's structures run as the "
                                   "paper describes them vs as the authors' code ran them")
    fidelity.add_argument("--dataset", help="a dataset with sessions of both fidelities "
                                            "(default cached_runs/local_smollm2_fidelity)")
    fidelity.add_argument("--out", help="write the differences to .csv or .json")
    fidelity.set_defaults(handler=run_fidelity)

    diag = commands.add_parser("diagnose", help="place pilot conversations against the paper's reference")
    diag.add_argument("--pilot", required=True,
                      help="pilot: a feature table (CSV/TSV/JSONL/Parquet), a dataset folder, a run "
                           "folder written by `engine run`, or transcripts (features computed here)")
    diag.add_argument("--embedding-model", default="all-MiniLM-L6-v2",
                      help="embedding model for a pilot given as turns (default all-MiniLM-L6-v2; "
                           f"the reference used {REFERENCE_EMBEDDING_MODEL})")
    diag.add_argument("--cache", help="embedding cache file (default: $CDL_CACHE_DIR/embeddings.sqlite)")
    diag.add_argument("--reference", help="reference: the paper release's metrics CSV (default) or a "
                                           "dataset folder (e.g. cached_runs/local_smollm2, measured with "
                                           "all-MiniLM-L6-v2)")
    server = diag.add_argument_group("embedding server (OpenAI-compatible /v1/embeddings), to measure a "
                                     "pilot given as turns with the reference's model")
    server.add_argument("--embed-base-url", metavar="URL", type=server_url,
                        help="embed the pilot's turns through this server (e.g. vLLM serving "
                             "Qwen/Qwen3-Embedding-0.6B, the release's model)")
    server.add_argument("--embed-model", metavar="NAME", help="model name on the server (default: --embedding-model)")
    server.add_argument("--embed-api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                        help="environment variable holding the server's key (default OPENAI_API_KEY)")
    same = diag.add_mutually_exclusive_group()
    same.add_argument("--same-embedding", action="store_true",
                      help="treat the two embedding models as the same (when a manifest does not record "
                           "its model and you know it); said in the output")
    same.add_argument("--different-embedding", action="store_true",
                      help="treat the two embedding models as different: values side by side, no ranks")
    diag.add_argument("--same-implementation", action="store_true",
                      help="treat the pilot as made the way the reference was (fidelity, system prompt, "
                           "turn visibility) when its file records none; said in the output")
    diag.add_argument("--out", help="write the diagnosis as JSON (.json) or the evidence as CSV (.csv)")
    diag.set_defaults(handler=run_diagnose)


def _data_arguments(parser, sample: bool = True) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--metrics", help="metrics CSV (default: the paper release, "
                        "../shared/data/paper_release/comprehensive_trajectory_metrics.csv)")
    source.add_argument("--dataset", help="a dataset folder (conversations.parquet)")
    if sample:
        parser.add_argument("--sample", choices=SAMPLES, default="llm", help="rows to use (default llm)")
        parser.add_argument("--structures", default="instructed,open,iterative",
                            help="LLM discussion structures kept (default: the paper's trajectory sample; 'all' keeps every row)")
    parser.add_argument("--out", help="write results to .csv or .json")


def _spec_arguments(parser) -> None:
    parser.add_argument("--spec", help="YAML file with one or more specifications")
    parser.add_argument("--outcome", help="outcome column")
    parser.add_argument("--blocks", default="trajectory,task",
                        help="comma-separated blocks: trajectory, task, model, discussion, persona, team_size, "
                             "order, tokens, model_x_discussion, or any column (default trajectory,task)")
    parser.add_argument("--estimator", default="ols_hc3", help="ols_hc3 | ols | ols_cluster | mixedlm")
    parser.add_argument("--group", default="task", help="random-intercept group for mixedlm (default task)")
    parser.add_argument("--cluster", help="cluster column for ols_cluster")
    parser.add_argument("--no-zscore", action="store_true", help="keep raw scales (default: z-score within sample)")
    parser.add_argument("--allow-nonconvergence", action="store_true",
                        help="report a mixed model that did not converge (flagged) instead of stopping")
    parser.add_argument("--stars", default="paper",
                        help="significance stars: paper (--hierarchical: Tables 20/21's .10/.05/.01; otherwise "
                             ".05/.01/.001), conventional, tenths, or three p values e.g. .1,.05,.01")


# ---------------------------------------------------------------- data

def csv_header(path: Path) -> list[str]:
    """The column names on a CSV file's first line (a regular file: never a FIFO's wait)."""
    import csv

    from engine.storage.files import check_regular, first_line

    check_regular(path)
    try:
        return [c.strip() for c in next(csv.reader([first_line(path)]), [])]
    except csv.Error as error:
        raise InputError(f"not a readable CSV header ({error})", path=str(path)) from None


def load_table(metrics: str | None = None, dataset: str | None = None) -> tuple[pd.DataFrame, str]:
    """A conversation table from a metrics file or a dataset folder, and a label for it."""
    import pandas as pd

    from engine.stats.reference import default_release_path

    if dataset:
        from engine.datasets import Dataset

        return Dataset.load(dataset, with_corpus=False).conversations, f"dataset {dataset}"
    path = Path(metrics) if metrics else default_release_path()
    if not path.exists():
        raise InputError("no such file" + ("" if metrics else " (the default paper release; pass --metrics)"),
                         path=str(path))
    if path.is_dir():
        from engine.datasets import Dataset

        return Dataset.load(path, with_corpus=False).conversations, f"dataset {path}"
    from engine.storage.files import check_regular

    check_regular(path)  # a FIFO would wait forever, a device never end
    if path.suffix == ".parquet":
        try:
            return pd.read_parquet(path), str(path)
        except Exception as error:  # pyarrow raises many types for a bad file
            raise InputError(f"not a readable Parquet file ({error})", path=str(path)) from None
    header = csv_header(path)
    from engine.importers.kinds import table_kind

    kind = table_kind(header, path=str(path))
    if kind == "metrics":
        from engine.importers.paper_release import read_metrics
        from engine.stats.reference import release_embedding

        table = read_metrics(path)
        table.attrs["embedding_model"] = release_embedding(path)  # known for the release files
        return table, str(path)
    if kind == "ideas":
        from engine.importers.ratings import read_ideas

        return read_ideas(path), str(path)
    from engine.measures.feature_table import read_feature_table  # strict: ragged rows, bad cells named

    return read_feature_table(path), str(path)


def _errors_name_the_data(run):
    """An analysis error about a column of the data (it has a field that is not an option)
    names the data file or folder, as every error about a file does."""
    import functools

    @functools.wraps(run)
    def wrapper(args):
        try:
            return run(args)
        except InputError as error:
            if error.path or not error.field or error.field.startswith("-"):
                raise
            from engine.stats.reference import default_release_path

            source = args.dataset or args.metrics or default_release_path()
            raise InputError(error.reason, path=str(source), row=error.row, field=error.field) from None
    return wrapper


def select_sample(df: pd.DataFrame, sample: str, structures: str) -> pd.DataFrame:
    """Rows of one source; with the default structures, paper A's trajectory sample
    (``engine.samples``: turn-by-turn LLM structures, no baselines, no paper-B debates)."""
    from engine import samples

    wanted = [s.strip() for s in structures.split(",") if s.strip()]
    if sample in ("llm", "all") and tuple(wanted) == samples.TRAJECTORY_STRUCTURES and \
            {"source", "discussion"} <= set(df.columns):
        df = samples.select(df, "trajectory")
    if sample != "all":
        if "source" not in df.columns:
            raise InputError(f"--sample {sample} needs a 'source' column (llm/human); use --sample all",
                             field="source")
        df = df[df["source"] == sample]
    if sample == "llm" and structures != "all" and "discussion" in df.columns:
        wanted = [s.strip() for s in structures.split(",") if s.strip()]
        df = df[df["discussion"].isin(wanted)]
    if df.empty:
        raise InputError(f"no rows left after selecting sample {sample!r} and structures {structures!r}")
    return df


def _write(out: str | None, table: pd.DataFrame | None, payload) -> None:
    if not out:
        return
    path = Path(out)
    from engine.corpus import atomic_write_text

    if path.suffix == ".json":
        atomic_write_text(path, json.dumps(payload, indent=2, default=_json_default) + "\n")
    elif path.suffix == ".csv":
        if table is None:
            raise InputError("this result is JSON-only; use a .json file", path=str(path))
        from engine.storage.csv_cells import safe_csv

        atomic_write_text(path, safe_csv(table))  # formulas escaped for spreadsheets
    else:
        raise InputError("--out must end in .csv or .json", path=str(path))
    print(f"wrote {path}")


def _json_default(value):
    import numpy as np

    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    return str(value)


def _print_table(table: pd.DataFrame, digits: int | None = 4) -> None:
    """Print without the positional index (a labelled index is kept as a column); ``digits``
    None prints numbers as given (published tables keep the paper's precision)."""
    import pandas as pd

    if not pd.api.types.is_integer_dtype(table.index):
        table = table.reset_index(names=table.index.name or "")
    number = (lambda v: f"{v:g}") if digits is None else (lambda v: f"{v:.{digits}f}")
    with pd.option_context("display.max_rows", 500, "display.max_columns", 50, "display.width", 200):
        print(table.to_string(index=False, float_format=number))


# ---------------------------------------------------------------- regress

def _specs_from_args(args) -> list:
    from engine.stats import RegressionSpec, hierarchical_specs, load_specs
    from engine.stats.spec import parse_star_levels

    stars = getattr(args, "stars", "paper")
    levels = None if stars == "paper" else parse_star_levels(stars)
    if args.spec:
        specs = load_specs(args.spec)
    elif not args.outcome:
        raise InputError("give --outcome (the column to explain) or --spec FILE.yaml; the paper release has "
                         "no creativity ratings, so use a column of your data")
    elif args.hierarchical:
        if args.sample not in ("llm", "human"):
            raise InputError("--hierarchical needs --sample llm or --sample human")
        specs = hierarchical_specs(args.outcome, args.sample)
    else:
        specs = [RegressionSpec(name=args.outcome, outcome=args.outcome, blocks=args.blocks, estimator=args.estimator,
                                group=args.group, cluster=args.cluster, zscore=not args.no_zscore)]
    for spec in specs:
        spec.star_levels = levels or spec.star_levels
    return specs


@_errors_name_the_data
def run_regress(args) -> int:
    import pandas as pd

    from engine.stats import fit

    specs = _specs_from_args(args)
    df, label = load_table(args.metrics, args.dataset)
    df = select_sample(df, args.sample, args.structures)
    from engine.stats.guards import SampleTooSmall, headline_r2

    results, refused = [], []
    for spec in specs:
        try:
            results.append(fit(spec, df, allow_nonconvergence=args.allow_nonconvergence))
        except SampleTooSmall as error:
            if len(specs) == 1:
                raise
            refused.append((spec, error))
            print(f"== {spec.name} on {label}: {error.guard.refusal}\n")
            continue
        result = results[-1]
        s = result.summary
        if s["r2"] is not None:
            name, value, beside = headline_r2(s)
            fit_line = f"{name} {value:.3f} ({beside})"
        else:
            fit_line = (f"marginal R² {s['marginal_r2']:.3f}, conditional R² {s['conditional_r2']:.3f}, " +
                        ("converged" if s["converged"] else "NOT CONVERGED: do not trust these estimates"))
        print(f"== {result.spec.name} ({result.spec.estimator}) on {label}: N = {s['n']:,}, k = {s['k']}, "
              f"N − k = {s['df_resid']:,}; {fit_line}")
        if s["sample_warning"]:
            print(s["sample_warning"])
        _print_table(result.table)
        for warning in s["warnings"]:
            print(f"   note: {warning}")
        print()
    tables = [r.table.assign(spec=r.spec.name, n=r.summary["n"], k=r.summary["k"], df_resid=r.summary["df_resid"],
                             r2=r.summary["r2"], adj_r2=r.summary["adj_r2"], small_sample=r.summary["small_sample"])
              for r in results]
    if results:
        _write(args.out, pd.concat(tables, ignore_index=True),
               [r.to_dict() for r in results] + [{"spec": spec.to_dict(), "refused": error.guard.to_dict()}
                                                  for spec, error in refused])
    if refused:
        raise InputError(f"{len(refused)} of {len(specs)} fits refused (fewer than 5 residual degrees of "
                         "freedom); the others are shown")
    return 0


# ---------------------------------------------------------------- manipulability

@_errors_name_the_data
def run_manipulability(args) -> int:
    import pandas as pd

    from engine.stats.published_a import published_reference
    from engine.stats import MANIPULABILITY_COLUMNS, manipulability
    from engine.stats.reference import RELEASE_FILE

    df, label = load_table(args.metrics, args.dataset)
    df = select_sample(df, args.sample, args.structures)
    table = manipulability(df)
    percent = (100 * table).round(1)
    published = published_reference()
    is_release = Path(label).name == RELEASE_FILE and args.sample == "llm" and \
        args.structures == "instructed,open,iterative"
    print(f"Manipulability of trajectory features (paper A, Table 24): R² in percent, "
          f"N = {table.attrs['n']:,} ({table.attrs['n_dropped']} incomplete rows dropped) from {label}")
    if is_release:
        print("Each cell: ours [published in paper A, Table 24]; the mean row is Table 2.")
    order = [f for f in published["table24"] if f in percent.index] if is_release else list(percent.index)
    rows = []
    mismatches = []
    for feature in order:
        row = {"feature": feature}
        for position, column in enumerate(MANIPULABILITY_COLUMNS):
            value = percent.loc[feature, column]
            if is_release:
                reference = published["table24"][feature][position]
                row[column] = f"{value:.1f} [{reference:.1f}]"
                if abs(value - reference) > 1e-9:
                    mismatches.append(f"{feature}/{column}")
            else:
                row[column] = f"{value:.1f}"
        rows.append(row)
    means = (100 * table.mean()).round(1)
    mean_row = {"feature": "mean across features"}
    for position, column in enumerate(MANIPULABILITY_COLUMNS):
        if is_release:
            reference = published["table2_mean"][position]
            mean_row[column] = f"{means[column]:.1f} [{reference:.1f}]"
            if abs(means[column] - reference) > 1e-9:
                mismatches.append(f"mean/{column}")
        else:
            mean_row[column] = f"{means[column]:.1f}"
    rows.append(mean_row)
    from engine.stats.manipulability import guard_lines

    for line in guard_lines(table):  # N < 10 k, or a column refused (N − k < 5), above the numbers
        print(line)
    _print_table(pd.DataFrame(rows))
    if is_release:
        print("All 45 cells and the mean row match the published values to one decimal." if not mismatches
              else f"Differs from the published table in: {', '.join(mismatches)}")
    output = table.reset_index()
    payload = {"n": table.attrs["n"], "source": label, "r2": output.to_dict(orient="records"),
               "fits": table.attrs["fits"]}
    if is_release:
        payload["published_percent"] = {"table24": published["table24"], "table2_mean": published["table2_mean"]}
    _write(args.out, output, payload)
    return 0


# ---------------------------------------------------------------- compare

@_errors_name_the_data
def run_compare(args) -> int:
    from engine.stats import RegressionSpec, compare_results, fit, group_comparison

    groups = tuple(g.strip() for g in args.groups.split(","))
    if len(groups) != 2:
        raise InputError(f"--groups needs two names separated by a comma, got {args.groups!r}")
    if bool(args.outcome) == bool(args.value):
        raise InputError("give exactly one of --outcome (compare coefficients, Table 23) or --value "
                         "(compare group means, Figure 1)")
    df, label = load_table(args.metrics, args.dataset)
    if args.group not in df.columns:
        raise InputError(f"column {args.group!r} is not in the data", field=args.group)
    if args.value:
        sample_note = ""
        if args.paper_sample:
            from engine import samples

            sample_note = f"; {samples.sample(args.paper_sample).label(df)}"
            df = samples.select(df, args.paper_sample)
        table = group_comparison(df, args.value, args.group, groups, by=args.by)
        print(f"{args.value}: {groups[0]} vs {groups[1]} ({args.group}) from {label}{sample_note}")
        _print_table(table)
        payload = {"comparison": table.to_dict(orient="records")}
        if args.robustness:
            from engine.stats import group_effect_robustness

            cluster = args.cluster
            if cluster == "generating" and "generating" not in df.columns:
                from engine.stats import generating_cluster

                df = df.assign(generating=generating_cluster(df))
            robust = group_effect_robustness(df, args.value, args.group, groups, cluster=cluster)
            print(f"\nRobustness of the {groups[0]} - {groups[1]} difference (paper A, A.5):")
            _print_table(robust)
            payload["robustness"] = robust.to_dict(orient="records")
        _write(args.out, table, payload)
        return 0
    results = []
    for name in groups:
        rows = df[df[args.group].astype(str) == name]
        if {"discussion", "source"} <= set(rows.columns) and name == "llm":
            from engine import samples  # Table 23: the trajectory sample's LLM rows

            rows = samples.select(rows, "trajectory")
        spec = RegressionSpec(name=f"{name}: {args.outcome} ~ {args.blocks}", outcome=args.outcome, blocks=args.blocks)
        results.append(fit(spec, rows))
    table = compare_results(results[0], results[1], labels=groups)
    print(f"{args.outcome} ~ {args.blocks}: {groups[0]} (N = {results[0].summary['n']:,}) vs "
          f"{groups[1]} (N = {results[1].summary['n']:,}); diff = {groups[0]} - {groups[1]} (paper A, Table 23)")
    _print_table(table)
    _write(args.out, table, {"comparison": table.to_dict(orient="records"),
                             "results": [r.to_dict() for r in results]})
    return 0


# ---------------------------------------------------------------- table N

def paper_table_data(ideas: str | None, metrics: str | None, dataset: str | None):
    """The rows paper A's tables start from: the ideas file joined to the metrics, or the
    metrics (or a dataset) alone; and a label saying where they came from."""
    import pandas as pd

    from engine.stats.reference import default_release_path

    if dataset:
        df, label = load_table(None, dataset)
    else:
        path = Path(metrics) if metrics else default_release_path()
        if not path.exists():
            raise InputError("no such file" + ("" if metrics else " (the default paper release; pass --metrics)"),
                             path=str(path))
        from engine.importers.kinds import table_kind

        header = csv_header(path) if path.suffix == ".csv" else []
        if path.suffix == ".csv" and table_kind(header, path=str(path)) == "metrics":
            from engine.importers.paper_release import read_release

            df, label = read_release(path), str(path)
        else:
            df, label = load_table(str(path), None)
    if ideas:
        from engine.importers.ratings import ideas_with_metrics, read_ideas

        joined = ideas_with_metrics(read_ideas(ideas), df)
        info = joined.attrs["ideas_with_metrics"]
        label = (f"{ideas} ({info['ideas']:,} ideas; features from {label} for {info['with_metrics']:,}, "
                 f"none for {info['without_metrics']:,})")
        df = joined
    return df, label


def run_table(args) -> int:
    import pandas as pd

    from engine import samples
    from engine.stats import paper_tables

    if args.number == "list":
        rows = [{"table": "Figure 1" if d.key == "fig1" else f"Table {d.key}", "what": d.title,
                 "sample": d.sample, "needs": " + ".join(d.needs)} for d in paper_tables.TABLES.values()]
        _print_table(pd.DataFrame(rows))
        return 0
    definition = paper_tables.table_def(args.number)
    df, label = paper_table_data(args.ideas, args.metrics, args.dataset)
    name = "Figure 1" if definition.key == "fig1" else "Table " + definition.key
    lacking = paper_tables.missing_needs(definition.key, df)
    if lacking and args.ideas and "ratings" in definition.needs and not paper_tables.has_need(df, "ratings"):
        empty = [m for m in paper_tables.MEASURES if m not in df.columns or df[m].isna().all()]
        raise InputError(f"{name} needs ratings, but the ideas file has no {' / '.join(empty)} value in any "
                         "row (every avg_*_rating cell is blank)", path=args.ideas, field=f"avg_{empty[0]}_rating")
    if lacking:
        hint = " (pass --ideas ideas_with_ratings_clean.csv)" if any("ideas file" in n for n in lacking) \
            and not args.ideas else ""
        raise InputError(f"{name} needs " + "; and ".join(lacking) + hint)
    import warnings

    with warnings.catch_warnings():  # constant groups: scipy warns, the table shows NaN without stars
        warnings.simplefilter("ignore", RuntimeWarning)
        result = paper_tables.build(definition.key, df, stars=args.stars)
    if not any(len(part) for part in result.parts.values()):  # one row, one source, constant ratings...
        reason = result.notes[0] if result.notes else \
            f"none of the groups it compares has rows here ({samples.sample(result.sample).title})"
        raise InputError(f"{name}: nothing could be computed on the {result.n:,} row(s) of its sample "
                         f"({result.sample}): {reason}" + (f" (and {len(result.notes) - 1} more like it)"
                                                           if len(result.notes) > 1 else ""))
    print(f"== {result.label}")
    print(f"data: {label}")
    print(f"sample: {samples.sample(result.sample).label(df)}")
    # a table whose fits use fewer rows than the sample (Tables 24, 25: the LLM rows with every
    # feature) says so in the header, so the N above is never read as the fits' N
    fitted = [note for note in result.notes if note.startswith("N = ")]
    for note in fitted:
        print(f"fitted on: {note}")
    print(f"stars: * p < {result.star_levels[0]:g}, ** p < {result.star_levels[1]:g}, *** p < {result.star_levels[2]:g}")
    for title, part in result.parts.items():
        print(f"\n-- ours: {title}")
        _print_table(part)
    for note in result.notes:
        if note not in fitted:
            print(f"   note: {note}")
    if result.published is not None:
        print(f"\n-- published (paper A, {'Figure 1' if result.key == 'fig1' else 'Table ' + result.key}):")
        _print_table(result.published, digits=None)
        for name, value in result.published.attrs.items():
            print(f"   published {name}: {value if not isinstance(value, pd.DataFrame) else ''}")
            if isinstance(value, pd.DataFrame):
                _print_table(value, digits=None)
    stacked = pd.concat([part.assign(part=title) for title, part in result.parts.items()], ignore_index=True)
    _write(args.out, stacked, {"table": result.key, "title": result.title, "sample": result.sample,
                               "n": result.n, "star_levels": list(result.star_levels), "notes": result.notes,
                               "parts": {t: p.to_dict(orient="records") for t, p in result.parts.items()}})
    return 0


# ---------------------------------------------------------------- fidelity
def run_fidelity(args) -> int:
    from engine.cli.fidelity_report import report

    return report(args.dataset, args.out, write=_write, show=_print_table)


# ---------------------------------------------------------------- diagnose

def run_diagnose(args) -> int:
    from engine.diagnosis.diagnose import diagnose, load_pilot, load_reference_for_diagnosis

    if args.embed_model and not args.embed_base_url:
        raise InputError("--embed-model names a model on a server: give --embed-base-url too",
                         field="--embed-model")

    def embedder():
        from engine.cli.judge_options import embed_server
        from engine.embedding.openai_endpoint import make_embedder

        return make_embedder(args.embedding_model, cache=args.cache,
                             server=embed_server(args, args.embed_model or args.embedding_model))

    pilot = load_pilot(args.pilot, embedder)
    reference = load_reference_for_diagnosis(args.reference)
    print(f"pilot: {pilot.description}")
    forced = True if args.same_embedding else False if args.different_embedding else None
    result = diagnose(pilot.table, reference, same_embedding=forced, pilot_embedding=pilot.embedding_model,
                      same_implementation=True if args.same_implementation else None)
    print(result.to_text())
    _write(args.out, result.evidence, result.to_dict())
    return 0
