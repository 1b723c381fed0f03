"""Data subcommands: ``import``, ``embed``, ``features``, ``diversity``.

* ``import``: the paper release (metrics CSV, optionally joined with the authors' ratings)
  -> a table (.csv/.json/.parquet); generic transcripts or a ConvoKit folder -> a corpus
  (.jsonl/.parquet).
* ``embed``: a corpus -> turn embeddings ``.npy`` + an index parquet (``conversation_id,
  turn``) naming its rows, through the on-disk embedding cache.
* ``features``: a corpus, or embeddings + index -> the nine Table 19 features of paper A
  per conversation.
* ``diversity``: final ideas (a corpus, or a CSV/JSONL table with a text column) grouped by
  task and method -> Vendi Score, Div-BLEU and paper B's inter-session diversity (runs in
  groups of 5, section 3.2).
Tables are CSV, JSON (a list of records) or Parquet, chosen by the output file's
extension or ``--format``; without an output file the table is printed as CSV.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from engine.cli.checks import server_url, whole
from engine.embedding.in_chunks import embed_texts
from engine.embedding.turn_blocks import TurnBlocks, default_index_path, load_embeddings, split_rows
from engine.errors import InputError
from engine.importers.column_map import column_mapping, pairs

TABLE_FORMATS = ("csv", "json", "parquet")
CORPUS_SUFFIXES = (".jsonl", ".parquet")
DEFAULT_GROUPS = ("task", "condition")
CONDITION_META = ("rounds", "k", "lenses", "peers", "temperature", "consensus")


def register(subparsers) -> None:
    _register_import(subparsers)
    _register_embed(subparsers)
    _register_features(subparsers)
    _register_diversity(subparsers)


# -- import ------------------------------------------------------------------------------
def _register_import(subparsers) -> None:
    p = subparsers.add_parser(
        "import", help="paper release / transcripts / ConvoKit -> corpus or metrics table",
        description="Import data. The paper release (comprehensive_trajectory_metrics.csv) "
                    "becomes a metrics table (.csv/.json/.parquet); a transcript CSV/JSONL (one "
                    "row per turn) or a ConvoKit folder becomes a corpus (.jsonl/.parquet).")
    p.add_argument("source", help="file or ConvoKit folder to import")
    p.add_argument("output", help="where to write: .jsonl/.parquet corpus or .csv/.json/.parquet table")
    p.add_argument("--kind", choices=("auto", "paper-release", "ideas", "transcripts", "convokit"),
                   default="auto", help="what SOURCE is (default: guessed from its contents)")
    _add_map_option(p)
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="default for a column the file lacks, e.g. --set source=human")
    p.add_argument("--ratings", help="ideas_with_ratings_clean.csv to join onto the paper release")
    p.add_argument("--metrics", help="with an ideas file: the metrics CSV whose nine features are "
                                     "filled in for the ideas that have a conversation there")
    p.add_argument("--drop-empty", action="store_true", help="skip turns with empty text")
    p.add_argument("--format", choices=(*TABLE_FORMATS, "jsonl"),
                   help="output format (default: from the output extension)")
    p.set_defaults(handler=run_import)


def run_import(args: argparse.Namespace) -> int:
    source = Path(args.source)
    kind = args.kind if args.kind != "auto" else guess_kind(source)
    if kind == "paper-release":
        from engine.importers.paper_release import LICENCE_NOTE, read_metrics

        if Path(args.output).suffix.lower() == ".jsonl" and not args.format:
            raise InputError("the paper release has one row per conversation and no turns: "
                             "write a table (.csv, .json or .parquet)", path=args.output)
        table = read_metrics(source)
        if args.ratings:
            from engine.importers.ratings import join_ratings

            table = join_ratings(table, args.ratings)
            counts = table.attrs["ratings_join"]
            print(f"ratings joined: {counts['matched']} matched, {counts['metrics_without_rating']} "
                  f"conversations without rating, {counts['ratings_without_metrics']} ratings "
                  "without conversation")
        fmt = table_format(args.output, args.format)
        write_table(table, args.output, fmt)
        n_llm = int((table["source"] == "llm").sum())
        print(f"imported {len(table)} conversations ({n_llm} llm, {len(table) - n_llm} human) "
              f"-> {args.output}")
        print(f"licence: {LICENCE_NOTE}")
        return 0
    if kind == "ideas":
        return _import_ideas(source, args)
    if args.metrics:
        raise InputError("--metrics goes with an ideas file (ideas_with_ratings_clean.csv)", field="--metrics")
    if args.ratings:
        raise InputError("--ratings joins onto the paper release only", field="--ratings")
    if kind == "convokit":
        from engine.importers.convokit import read_convokit

        corpus = read_convokit(source, drop_empty_text=args.drop_empty,
                               **_typed(pairs(args.set, "--set")))
    else:
        from engine.importers.transcripts import read_transcripts

        corpus = read_transcripts(source, column_mapping(args.map),
                                  drop_empty_text=args.drop_empty, **_typed(pairs(args.set, "--set")))
    write_corpus(corpus, args.output, args.format)
    n_turns = sum(len(c.turns) for c in corpus)
    print(f"imported {len(corpus)} conversations, {n_turns} turns -> {args.output}")
    note = source_note(corpus, set_by_option="source" in pairs(args.set, "--set"))
    if note:
        print(note)
    return 0


def source_note(corpus: Corpus, *, set_by_option: bool = False) -> str | None:
    """One line saying how many conversations got their ``source`` (llm/human) from a
    default rather than from the file, or None when the file named every source."""
    default = corpus.meta.get("source_from_default") or {}
    n = int(default.get("conversations") or 0)
    if n == 0:
        return None
    how = "as set by --set source" if set_by_option else \
        "by default; pass --set source=llm or --set source=human to say which"
    return (f"source: {n} of {len(corpus)} conversations have no 'source' in the file and are "
            f"counted as {default.get('value')!r} {how}")


def _import_ideas(source: Path, args: argparse.Namespace) -> int:
    """The authors' idea-level file: every idea, features joined from ``--metrics`` if given."""
    from engine.importers.paper_release import LICENCE_NOTE, read_metrics
    from engine.importers.ratings import ideas_with_metrics, read_ideas

    if args.ratings:
        raise InputError("an ideas file already holds the ratings; --ratings is for the metrics file",
                         field="--ratings")
    if Path(args.output).suffix.lower() == ".jsonl" and not args.format:
        raise InputError("an ideas file has one row per idea and no turns: write a table "
                         "(.csv, .json or .parquet)", path=args.output)
    table = read_ideas(source)
    counts = table.attrs["ideas"]
    if args.metrics:
        table = ideas_with_metrics(table, read_metrics(args.metrics))
        joined = table.attrs["ideas_with_metrics"]
        print(f"features joined from {args.metrics}: {joined['with_metrics']} ideas with a conversation, "
              f"{joined['without_metrics']} without ({', '.join(f'{k}: {v}' for k, v in joined['without_metrics_by'].items()) or 'none'}), "
              f"{joined['metrics_without_idea']} conversations without an idea")
    write_table(table, args.output, table_format(args.output, args.format))
    kinds = ", ".join(f"{k}: {v}" for k, v in counts["by_source_and_type"].items())
    print(f"imported {len(table)} ideas ({kinds}) -> {args.output}")
    if counts["data_type_inferred"]:
        print(f"note: data_type was blank on {counts['data_type_inferred']} row(s) and was inferred")
    if counts["discussion_filled_none"]:
        print(f"note: {counts['discussion_filled_none']} LLM row(s) had no discussion label: read as none")
    for label, number in counts["unmapped"].items():
        print(f"note: {number} row(s) with {label}, a label the paper does not use, kept as written")
    print(f"licence: {LICENCE_NOTE}")
    return 0


def guess_kind(source: Path) -> str:
    """``convokit`` for a folder; for a CSV, what its columns say (``engine.importers.kinds``):
    ``paper-release`` (metrics) or ``ideas``; else ``transcripts``."""
    if source.is_dir():
        return "convokit"
    if source.suffix.lower() == ".csv" and source.exists():
        import csv

        from engine.importers.kinds import table_kind

        from engine.storage.files import first_line

        header = next(csv.reader([first_line(source, limit=100_000)]), [])
        kind = table_kind(header, path=str(source))
        if kind == "metrics":
            return "paper-release"
        if kind == "ideas":
            return "ideas"
    return "transcripts"


def _add_map_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--map", action="append", default=[], metavar="THEIRS=OURS[,...]",
                   help="rename transcript columns, e.g. --map dialog_id=conversation_id,utterance=text "
                        "(comma-separated or repeated; see docs/reference/transcripts.md)")


def _typed(values: dict[str, str]) -> dict[str, Any]:
    """Integers stay integers (``--set team_size=3``); everything else is text."""
    return {k: int(v) if v.lstrip("-").isdigit() else v for k, v in values.items()}


# -- embed ---------------------------------------------------------------------------------
def _register_embed(subparsers) -> None:
    p = subparsers.add_parser(
        "embed", help="corpus -> turn embeddings (.npy) + index (.parquet), cached",
        description="Embed every turn of a corpus with a sentence-transformers model "
                    "(normalised). Vectors are cached on disk by model and text, so a second "
                    "run makes no model call.")
    p.add_argument("corpus", help="corpus .jsonl/.parquet (or a transcript .csv/.tsv)")
    _add_map_option(p)
    p.add_argument("output", help="embeddings file, .npy")
    p.add_argument("--index", help="index parquet (default: next to OUTPUT, "
                                   "turn_embeddings.npy -> turn_index.parquet, x.npy -> x_index.parquet)")
    _add_model_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(handler=run_embed)


def _add_model_options(p: argparse.ArgumentParser) -> None:
    add_embedder_options(p)
    p.add_argument("--all-turns", action="store_true",
                   help="keep every recorded turn; by default ratings, idea lists, hand-raising "
                        "bids and consensus picks of engine runs are left out of the trajectory")
    _add_ray_options(p)


def add_embedder_options(p: argparse.ArgumentParser) -> None:
    """The embedding model, its cache, runtime and server options (``embed``, ``features``,
    ``diversity`` and ``judge validate --measure semdis`` share them)."""
    p.add_argument("--model", default="all-MiniLM-L6-v2",
                   help="sentence-transformers model name or local path (default: the bundled "
                        "all-MiniLM-L6-v2; Qwen/Qwen3-Embedding-0.6B is paper A's setting)")
    p.add_argument("--cache", help="embedding cache file (default: $CDL_CACHE_DIR/embeddings.sqlite)")
    p.add_argument("--batch-size", type=whole(1, 100_000), default=64,
                   help="texts per model batch or per server request (default 64)")
    server = p.add_argument_group("embedding server (OpenAI-compatible /v1/embeddings: vLLM, TEI, "
                                  "Ollama, llama.cpp, OpenAI)")
    server.add_argument("--embed-base-url", metavar="URL", type=server_url,
                        help="embed through this server instead of in process")
    server.add_argument("--embed-model", metavar="NAME",
                        help="model name on the server (default: --model)")
    server.add_argument("--embed-api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                        help="environment variable holding the server's key (default OPENAI_API_KEY)")
    server.add_argument("--embed-concurrency", type=whole(1, 1024), default=4,
                        help="requests in flight to the server (default 4)")
    p.add_argument("--embed-backend", choices=("torch", "onnx", "onnx-int8"), default="torch",
                   help="in-process model runtime: torch (sentence-transformers, default), onnx "
                        "(ONNX Runtime, same vectors, exported once beside the model) or onnx-int8 "
                        "(quantised: faster, its fidelity printed); each backend's vectors are "
                        "cached apart")


RAY_DEFAULTS = {"ray_gpus": 0.0, "ray_batch_size": 256, "ray_shard_turns": 60_000}
RAY_OPTIONS = ("ray_actors", "ray_gpus", "ray_batch_size", "ray_shard_turns")


def _add_ray_options(p: argparse.ArgumentParser) -> None:
    # the --ray-* defaults are None here and filled in by check_ray_options, so that an option
    # given without --ray is seen (and refused) rather than silently ignored
    ray = p.add_argument_group("Ray cluster (see docs/howto/ray-cluster.md)")
    ray.add_argument("--ray", metavar="ADDRESS|auto|local",
                     help="run on the Ray cluster whose head is at HOST:PORT (auto: the one this "
                          "machine belongs to; local: a private one on this machine for this command "
                          "alone); the cache stays on this machine")
    ray.add_argument("--ray-actors", type=int, metavar="N",
                     help="embedder actors (default: one per CPU slot, or per GPU with --ray-gpus)")
    ray.add_argument("--ray-gpus", type=float, metavar="G",
                     help="GPUs per embedder actor (default 0: CPU)")
    ray.add_argument("--ray-batch-size", type=int, metavar="N",
                     help="texts per Ray Data batch handed to an actor (default 256)")


def check_ray_options(args: argparse.Namespace) -> None:
    """The ``--ray-*`` options: refused without ``--ray`` (naming the first one given), checked
    for range (finite numbers: ``nan`` and ``inf`` are no number of GPUs), defaults filled in."""
    if getattr(args, "ray", None) is not None and not str(args.ray).strip():
        raise InputError("give the head's HOST:PORT, auto or local", field="--ray")
    given = [name for name in RAY_OPTIONS if getattr(args, name, None) is not None]
    option = lambda name: "--" + name.replace("_", "-")  # noqa: E731
    if not getattr(args, "ray", None):
        if given:
            raise InputError(f"{option(given[0])} applies to a Ray cluster only: add --ray HOST:PORT "
                             "(or auto, or local), or leave it out", field=option(given[0]))
        return
    for name in given:  # argparse hands over an empty list for a value of "--"
        value = getattr(args, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"expected a number, got {value!r}", field=option(name))
    for name, default in RAY_DEFAULTS.items():
        if hasattr(args, name) and getattr(args, name) is None:
            setattr(args, name, default)
    if args.ray_batch_size < 1:
        raise InputError(f"must be at least 1, got {args.ray_batch_size}", field="--ray-batch-size")
    if args.ray_actors is not None and args.ray_actors < 1:
        raise InputError(f"must be at least 1, got {args.ray_actors}", field="--ray-actors")
    if not math.isfinite(args.ray_gpus) or args.ray_gpus < 0:
        raise InputError(f"must be a finite number of GPUs, 0 or more, got {args.ray_gpus!r}",
                         field="--ray-gpus")
    if getattr(args, "ray_shard_turns", 1) < 1:
        raise InputError(f"must be at least 1, got {args.ray_shard_turns}", field="--ray-shard-turns")


def ray_needs(args: argparse.Namespace) -> dict[str, tuple[str, float, int]]:
    """What the embedder actors ask of the cluster (``engine.cluster.connection.check_placement``):
    each actor one CPU, or ``--ray-gpus`` GPUs; ``--ray-actors`` of them at once."""
    actors = args.ray_actors or 1
    if args.ray_gpus:
        return {"--ray-gpus": ("GPU", args.ray_gpus, actors)}
    return {"--ray-actors": ("CPU", 1.0, actors)}


def _trajectory_corpus(corpus: Corpus, args: argparse.Namespace) -> Corpus:
    return corpus if args.all_turns else corpus.trajectory_view()


def run_embed(args: argparse.Namespace) -> int:
    import pandas as pd

    from engine.embedding.embedder import write_embeddings

    check_embed_options(args)
    output = Path(args.output)
    if output.suffix.lower() != ".npy":
        raise InputError("embeddings are written as .npy", path=str(output))
    corpus = _trajectory_corpus(load_corpus(args.corpus, column_mapping(args.map)), args)
    texts = [turn.text for c in corpus for turn in c.turns]
    index = pd.DataFrame({
        "conversation_id": [c.conversation_id for c in corpus for _ in c.turns],
        "turn": [position for c in corpus for position in range(len(c.turns))],
        "speaker": [turn.speaker for c in corpus for turn in c.turns],  # for speaker measures
    })
    index_path = Path(args.index) if args.index else default_index_path(output)
    with cluster_for(args) as cluster:
        embedder = embedder_from_args(args, cluster)
        started = time.perf_counter()
        vectors, hits = embed_texts(embedder, texts, progress=not args.no_progress)
        elapsed = time.perf_counter() - started
    write_embeddings(vectors, index, output, index_path)
    unique = len(set(texts))
    print(f"embedded {len(texts)} turns ({unique} distinct texts) with {embedder.model_name} in "
          f"{elapsed:.2f} s: model calls {embedder.model_calls}, cache hits {hits}, "
          f"newly embedded {unique - hits}")
    print(f"wrote {output} {tuple(vectors.shape)} and {index_path}")
    say_cluster_work(embedder)
    say_backend(embedder)
    _say_token_level(embedder)
    return 0


def _say_token_level(embedder) -> None:
    """Texts a server answered with one vector per token, mean-pooled here: said, not hidden."""
    if getattr(embedder, "token_level", 0):
        print(f"note: the server returned one vector per token for {embedder.token_level} texts "
              "(no pooling on its side); they were mean-pooled over tokens", file=sys.stderr)


def check_embed_options(args: argparse.Namespace) -> None:
    """The embedding options' mistakes, found before any file is read."""
    if args.batch_size < 1:
        raise InputError("must be at least 1", field="--batch-size")
    check_ray_options(args)
    if getattr(args, "ray", None) and args.embed_base_url:
        raise InputError("--ray embeds with in-process models on the cluster's nodes; an "
                         "embedding server (--embed-base-url) spreads its own work: give one",
                         field="--ray")
    if getattr(args, "embed_backend", "torch") != "torch" and args.embed_base_url:
        raise InputError("--embed-backend chooses the in-process runtime; the server embeds "
                         "with its own", field="--embed-backend")
    if args.embed_concurrency < 1:
        raise InputError("must be at least 1", field="--embed-concurrency")
    if args.embed_model and not args.embed_base_url:
        raise InputError("--embed-model names a model on a server: give --embed-base-url too",
                         field="--embed-model")


def embedder_from_args(args: argparse.Namespace, cluster=None):
    """The embedder the options of ``add_embedder_options`` (and ``--ray``) describe."""
    check_embed_options(args)
    if cluster is not None:
        from engine.cluster.embedding import RayEmbedder

        return RayEmbedder(cluster, args.model, backend=args.embed_backend, cache=args.cache,
                           batch_size=args.batch_size, ray_batch=args.ray_batch_size,
                           actors=args.ray_actors, gpus_per_actor=args.ray_gpus,
                           progress=not getattr(args, "no_progress", False))
    if args.embed_backend != "torch":
        from engine.embedding.embedder import Embedder

        return Embedder(args.model, cache=args.cache, batch_size=args.batch_size,
                        progress=not getattr(args, "no_progress", False), backend=args.embed_backend)
    from engine.cli.judge_options import embed_server
    from engine.embedding.openai_endpoint import make_embedder

    return make_embedder(args.model, server=embed_server(args, args.embed_model or args.model),
                         cache=args.cache, batch_size=args.batch_size,
                         concurrency=args.embed_concurrency,
                         progress=not getattr(args, "no_progress", False))


def cluster_for(args: argparse.Namespace):
    """``with cluster_for(args) as cluster``: the Ray cluster of ``--ray``, or None."""
    import contextlib

    check_ray_options(args)
    if not getattr(args, "ray", None):
        return contextlib.nullcontext(None)
    check_embed_options(args)
    from engine.cluster.connection import connect

    return connect(args.ray, needs=ray_needs(args))


def say_backend(embedder) -> None:
    """For an ONNX backend, its fidelity to torch as measured when it was exported."""
    backend = getattr(embedder, "backend", "torch")
    if backend == "torch":
        return
    from engine.embedding.embedder import resolve_model_path
    from engine.embedding.onnx_runtime import fidelity

    measured = fidelity(resolve_model_path(embedder.base_model)).get(
        "int8" if backend == "onnx-int8" else "fp32")
    if measured:
        print(f"{backend}: cosine to torch's vectors min {measured['min_cosine']:.4f}, mean "
              f"{measured['mean_cosine']:.4f} over {measured['sentences']} sentences (measured at "
              f"export); cached apart as {embedder.model_name}", file=sys.stderr)


def say_cluster_work(embedder) -> None:
    """What the cluster did, on stderr: nodes that embedded, texts embedded twice."""
    if not hasattr(embedder, "repeated"):
        return
    if getattr(embedder, "tally_lost", False):
        print("ray: every text embedded; the nodes, batches and texts embedded twice are unknown "
              "(the tally of work done was lost)", file=sys.stderr)
        return
    print(f"ray: embedded on {len(embedder.nodes)} node(s) in {embedder.model_calls} batches; "
          f"texts embedded twice (work lost with a node and redone): {embedder.repeated}"
          + (f"; passes ended by a lost actor (texts not returned sent again): {embedder.lost_passes}"
             if getattr(embedder, "lost_passes", 0) else ""), file=sys.stderr)


# -- features ------------------------------------------------------------------------------
def _register_features(subparsers) -> None:
    p = subparsers.add_parser(
        "features", help="corpus or embeddings -> the trajectory features per conversation",
        description="Every registered conversation feature for each conversation: paper A's "
                    "nine semantic-trajectory features (Table 19), the project's other built-in "
                    "measures and any a plugin adds (`python -m engine plugins` lists them all), from a corpus (embedded through the cache) or from an "
                    "embeddings .npy with its index parquet (speaker measures need its speaker "
                    "column, which `embed` writes; features of the turns' text need a corpus).")
    p.add_argument("input", help="corpus .jsonl/.parquet, transcript .csv, or embeddings .npy")
    p.add_argument("-o", "--output", help="table .csv/.json/.parquet (default: CSV on stdout)")
    p.add_argument("--index", help="index parquet of an .npy input (default: as `embed` writes it)")
    _add_map_option(p)
    p.add_argument("--features", metavar="NAMES",
                   help="comma-separated features to compute (default: every registered one)")
    p.add_argument("--kmeans", choices=("batched", "sklearn"), default="batched",
                   help="topic-switching k-means: batched numpy (fast) or scikit-learn per conversation")
    p.add_argument("--ray-shard-turns", type=int, metavar="N",
                   help="with --ray: turns per shard of conversations sent to a worker (default 60000)")
    p.add_argument("--format", choices=TABLE_FORMATS, help="output format (default: from extension)")
    _add_model_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(handler=run_features)


def run_features(args: argparse.Namespace) -> int:
    import pandas as pd

    from engine.measures.compute import features_for_corpus

    source = Path(args.input)
    names = chosen_feature_names(args.features)
    progress = not args.no_progress
    with cluster_for(args) as cluster:
        if source.suffix.lower() == ".npy":
            ids, arrays = load_embeddings(source, Path(args.index) if args.index else None)
            info = pd.DataFrame({"conversation_id": ids})
            turn_fields = {} if arrays.speakers is None else {"speaker": arrays.speakers}
        else:
            corpus = _trajectory_corpus(load_corpus(source, column_mapping(args.map)), args)
            note = source_note(corpus)
            if note:
                print(note, file=sys.stderr)
            embedder = embedder_from_args(args, cluster)
            texts = [t.text for c in corpus for t in c.turns]
            vectors, hits = embed_texts(embedder, texts, progress=progress)
            arrays = split_rows(vectors, [len(c.turns) for c in corpus])
            turn_fields = TurnFields(corpus)  # each field read only if a chosen feature needs it
            frame = corpus.conversations_frame()
            # how the conversations were made (engine.protocols.implementation), where recorded
            made = [c for c in ("paper", "fidelity", "generator", "prompts_revision") if c in frame]
            info = frame[["conversation_id", "source", "task", "model", "protocol", *made]].copy()
            info["embedding_model"] = embedder.model_name  # diagnose compares it with the reference's
            print(f"embeddings: model calls {embedder.model_calls}, cache hits {hits}",
                  file=sys.stderr)
            _say_token_level(embedder)
            say_cluster_work(embedder)
            say_backend(embedder)
        names = computable_features(names, turn_fields)
        turns = needed_turn_fields(names, turn_fields)
        if cluster is None:
            features = features_for_corpus(arrays, turns=turns, names=names,
                                           kmeans=args.kmeans, progress=progress)
        else:
            from engine.cluster.features import features_on_cluster

            features, work = features_on_cluster(cluster, arrays, turns=turns, names=names,
                                                 kmeans=args.kmeans, shard_turns=args.ray_shard_turns,
                                                 progress=progress)
            print(f"ray: features of {len(features)} conversations in {work['shards']} shards on "
                  f"{len(work['nodes'])} node(s); shards computed twice (lost with a node and "
                  f"redone): {work['repeated_shards']}", file=sys.stderr)
    lengths = arrays.lengths if isinstance(arrays, TurnBlocks) else [len(a) for a in arrays]
    table = pd.concat([info.reset_index(drop=True), pd.DataFrame({"n_turns": lengths}), features],
                      axis=1)
    table = table[[*info.columns, "n_turns", *names]]
    emit_table(table, args.output, args.format)
    return 0


def chosen_feature_names(option: str | None) -> tuple[str, ...]:
    """``--features``: the names given, each checked against the registry; else every one."""
    from engine.measures.registry import feature_names, named_features

    return feature_names() if option is None else named_features(option)


def computable_features(names: tuple[str, ...], turn_fields) -> tuple[str, ...]:
    """The names without the features that need a turn field the input lacks (said on stderr)."""
    from engine.measures.registry import feature

    left_out = {n: [f for f in feature(n).needs if f not in turn_fields] for n in names}
    left_out = {n: fields for n, fields in left_out.items() if fields}
    for name, fields in left_out.items():
        hint = " (an index written by `embed` names the speakers)" if fields == ["speaker"] else ""
        print(f"note: {name} left out: the input has no turn {', '.join(fields)}{hint}", file=sys.stderr)
    return tuple(n for n in names if n not in left_out)


def needed_turn_fields(names: tuple[str, ...], turn_fields) -> dict[str, list]:
    """The turn fields the named features read, and only those."""
    from engine.measures.compute import needed_fields
    from engine.measures.registry import feature

    return {field: turn_fields[field] for field in needed_fields([feature(n) for n in names])}


class TurnFields:
    """A corpus's turn fields, one list per conversation, read on first use: ``"text"`` in this
    mapping, and ``self["text"]`` the texts of every conversation's turns."""

    def __init__(self, corpus):
        from engine.measures.feature import TURN_FIELDS

        self.corpus, self.fields, self.read = corpus, TURN_FIELDS, {}

    def __contains__(self, field) -> bool:
        return field in self.fields

    def __getitem__(self, field: str) -> list[list]:
        if field not in self.read:
            self.read[field] = [[getattr(t, field) for t in c.turns] for c in self.corpus]
        return self.read[field]


# -- diversity -----------------------------------------------------------------------------
def _register_diversity(subparsers) -> None:
    p = subparsers.add_parser(
        "diversity", help="final ideas grouped by task and condition -> Vendi, Div-BLEU, inter-session",
        description="Diversity of final ideas (paper B, section 3.2) per group (default: task "
                    "and the full condition: method, lenses, peers, k, N, R, model, temperature, "
                    "consensus, so runs that differ are never pooled): Vendi Score (cosine kernel "
                    "of the embeddings) and Div-BLEU over all the group's texts, and inter-session "
                    "diversity: paper B's protocol, the runs split into consecutive groups of "
                    "--group-size (15 runs -> 3 groups of 5), scored and averaged. A group with "
                    "fewer than 2 texts gets a warning.")
    p.add_argument("input", help="corpus .jsonl/.parquet, or a .csv/.tsv/.jsonl table with a text column")
    p.add_argument("-o", "--output", help="table .csv/.json/.parquet (default: CSV on stdout)")
    p.add_argument("--text-column", default="text", help="text column of a table input (default: text)")
    _add_map_option(p)
    p.add_argument("--text", choices=("auto", "final-idea", "last-turn"), default="auto",
                   help="for a corpus: the final idea (auto: final_idea, else the last turn)")
    p.add_argument("--group-by", default=",".join(DEFAULT_GROUPS),
                   help="comma-separated columns (default: task,condition; 'condition' is built from "
                        "the method/protocol/discussion column and the run options the input has; "
                        "columns the input lacks are ignored)")
    p.add_argument("--group-size", type=whole(2, 1_000_000), default=5,
                   help="runs per inter-session group (paper B: 15 runs -> 3 groups of 5)")
    p.add_argument("--format", choices=TABLE_FORMATS, help="output format (default: from extension)")
    _add_model_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(handler=run_diversity)


def run_diversity(args: argparse.Namespace) -> int:
    import pandas as pd

    from engine.measures.diversity import div_bleu, inter_session_diversity, vendi_score

    if args.group_size < 2:
        raise InputError("must be at least 2", field="--group-size")
    table = load_texts(Path(args.input), args.text_column, args.text, column_mapping(args.map))
    if any(c in table.columns for c in ("protocol", "method", "discussion")):
        from engine.protocols.conditions import add_condition

        table = add_condition(table)
    wanted = [c.strip() for c in args.group_by.split(",") if c.strip()]
    group_columns = [c for c in wanted if c in table.columns and table[c].notna().any()]
    with cluster_for(args) as cluster:
        embedder = embedder_from_args(args, cluster)
        vectors, hits = embed_texts(embedder, table["text"].tolist(), progress=not args.no_progress)
    print(f"embeddings: model calls {embedder.model_calls}, cache hits {hits}", file=sys.stderr)
    _say_token_level(embedder)
    say_cluster_work(embedder)
    say_backend(embedder)
    rows = []
    groups = table.groupby(group_columns, sort=True, dropna=False) if group_columns else [((), table)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        texts = group["text"].tolist()
        embeddings = vectors[group.index.to_numpy()]
        row = dict(zip(group_columns, key))
        for name in ("method", "protocol", "discussion"):  # the condition's method, for reading
            if name in group.columns and name not in row:
                row[name] = group[name].iat[0]
        row.update(n_texts=len(texts), vendi=vendi_score(embeddings),
                   div_bleu=div_bleu(texts) if len(texts) >= 2 else float("nan"),
                   inter_vendi=float("nan"), inter_div_bleu=float("nan"), inter_groups=0,
                   warning="" if len(texts) >= 2 else "1 text: diversity undefined")
        if len(texts) >= args.group_size:
            inter = inter_session_diversity(texts, embeddings, group_size=args.group_size)
            row.update(inter_vendi=inter["vendi"], inter_div_bleu=inter["div_bleu"],
                       inter_groups=inter["n_groups"])
        rows.append(row)
    result = pd.DataFrame(rows)
    single = int((result["n_texts"] < 2).sum())
    if single:
        print(f"warning: {single} of {len(result)} group(s) have fewer than 2 texts (Vendi 1.0 by "
              f"definition, Div-BLEU blank): check the grouping (--group-by {','.join(group_columns)})",
              file=sys.stderr)
    emit_table(result, args.output, args.format)
    return 0


def load_texts(path: Path, text_column: str, choice: str,
               mapping: dict[str, str] | None = None) -> pd.DataFrame:
    """A table with a ``text`` column (+ grouping columns), in run order, from a corpus or table.

    A table shaped like transcripts (``conversation_id, turn, speaker, text`` after
    ``mapping``) is read as one: one text per conversation (its final idea, else its last
    turn), said on stderr, instead of every turn counted as a separate final output.
    """
    import pandas as pd

    transcripts = not _is_corpus(path) and _is_transcript_table(path, mapping or {})
    if transcripts:
        print(f"{path}: one row per turn (conversation_id, turn, speaker, text): read as "
              "transcripts, one text per conversation (final_idea, else the last turn)",
              file=sys.stderr)
    if _is_corpus(path) or transcripts:
        corpus = load_corpus(path, mapping)
        rows = []
        for c in corpus:
            text = c.final_idea if choice in ("auto", "final-idea") else None
            if text is None and choice == "final-idea":
                raise InputError("no final_idea; use --text last-turn", path=str(path),
                                 field=f"{c.conversation_id}.final_idea")
            if text is None:
                if not c.turns:
                    raise InputError("no turns and no final idea", path=str(path),
                                     field=f"{c.conversation_id}.turns")
                text = c.turns[-1].text
            rows.append({"conversation_id": c.conversation_id, "task": c.task,
                         "protocol": c.protocol, "model": c.model, "replicate": c.replicate,
                         "team_size": c.team_size,
                         **{key: c.meta.get(key) for key in CONDITION_META}, "text": text})
        table = pd.DataFrame(rows)
    else:
        from engine.storage.records import read_records

        records = read_records(path)
        for record in records:
            value = record.values.get(text_column)
            if not isinstance(value, str) or not value.strip():
                raise InputError("missing or empty text", path=str(path), row=record.row,
                                 field=text_column)
        table = pd.DataFrame([r.values for r in records])
        table = table.rename(columns={text_column: "text"})
    if table.empty:
        raise InputError("no texts", path=str(path))
    if "replicate" in table.columns and table["replicate"].notna().all():
        table = table.sort_values("replicate", kind="stable")
    return table.reset_index(drop=True)


def _is_corpus(path: Path) -> bool:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return True
    if suffix == ".jsonl" and path.exists():
        from engine.storage.files import first_line

        first = first_line(path)
        return '"__corpus__"' in first or '"turns"' in first
    return False


# -- files ---------------------------------------------------------------------------------
def _is_transcript_table(path: Path, mapping: dict[str, str]) -> bool:
    from engine.importers.transcripts import REQUIRED_COLUMNS, read_records

    records = read_records(path)
    columns = {mapping.get(name, name) for record in records[:1000] for name in record.values}
    return set(REQUIRED_COLUMNS) <= columns


def load_corpus(path: str | Path, mapping: dict[str, str] | None = None) -> Corpus:
    """A corpus from .jsonl/.parquet, or a transcript .csv/.tsv/.jsonl (renamed by
    ``mapping``, as ``--map``) read on the fly."""
    from engine.corpus import Corpus

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson") and path.exists() and not _is_corpus(path):
        from engine.importers.transcripts import read_transcripts

        return read_transcripts(path, mapping)
    if mapping and suffix not in (".csv", ".tsv"):
        raise InputError("--map renames the columns of a transcript file (.csv/.tsv/.jsonl), "
                         "not of a corpus", path=str(path), field="--map")
    if suffix == ".jsonl":
        return Corpus.from_jsonl(path)
    if suffix == ".parquet":
        if not path.exists():
            raise InputError("no such file", path=str(path))
        return Corpus.from_parquet(path)
    if suffix in (".csv", ".tsv"):
        from engine.importers.transcripts import read_transcripts

        return read_transcripts(path, mapping)
    raise InputError(f"expected a corpus .jsonl/.parquet or a transcript .csv, got {suffix!r}",
                     path=str(path))


def write_corpus(corpus: Corpus, output: str | Path, fmt: str | None = None) -> Path:
    output = Path(output)
    fmt = fmt or output.suffix.lower().lstrip(".")
    if fmt == "jsonl":
        return corpus.to_jsonl(output)
    if fmt == "parquet":
        return corpus.to_parquet(output)
    raise InputError("a corpus is written as .jsonl or .parquet", path=str(output))


def table_format(output: str | Path | None, fmt: str | None) -> str:
    if fmt:
        return fmt
    if output is None:
        return "csv"
    suffix = Path(output).suffix.lower().lstrip(".")
    if suffix not in TABLE_FORMATS:
        raise InputError(f"unknown table extension {Path(output).suffix!r}; use .csv, .json or "
                         ".parquet (or --format)", path=str(output))
    return suffix


def write_table(table: pd.DataFrame, output: str | Path, fmt: str) -> Path:
    """Write a table atomically as CSV, JSON records or Parquet."""
    from engine.corpus import atomic_write_bytes, atomic_write_text

    if fmt == "csv":  # cells a spreadsheet would evaluate are escaped (engine.storage.csv_cells)
        from engine.storage.csv_cells import safe_csv

        return atomic_write_text(output, safe_csv(table))
    if fmt == "json":
        records = json.loads(table.to_json(orient="records", force_ascii=False, double_precision=15))
        return atomic_write_text(output, json.dumps(records, indent=1, ensure_ascii=False) + "\n")
    if fmt == "parquet":
        buffer = io.BytesIO()
        table.to_parquet(buffer, index=False)
        return atomic_write_bytes(output, buffer.getvalue())
    raise InputError(f"unknown table format {fmt!r}", field="--format")


def emit_table(table: pd.DataFrame, output: str | None, fmt: str | None) -> None:
    """Write to ``output`` (format from --format or its extension) or print CSV/JSON."""
    fmt = table_format(output, fmt)
    if output is None:
        if fmt == "parquet":
            raise InputError("parquet needs an output file (-o)", field="--format")
        if fmt == "json":
            print(table.to_json(orient="records", indent=1, double_precision=15))
        else:
            from engine.storage.csv_cells import safe_csv

            sys.stdout.write(safe_csv(table))
        return
    write_table(table, output, fmt)
    print(f"wrote {len(table)} rows -> {output}", file=sys.stderr)
