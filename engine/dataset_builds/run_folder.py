"""Turn an engine run folder into a dataset (``cached_runs/local_smollm2``,
``cached_runs/local_smollm2_paper_b``).

``python -m engine dataset build RUN_DIR [--out cached_runs/local_smollm2] [--kind run|paper-b]``

Reads the run's Corpus (finished sessions only; failed ones are counted in the
manifest), min-max scales the judge's raw novelty and usefulness within each task
(paper A, Methods) with creativity = novelty x usefulness, embeds every turn with the
bundled all-MiniLM-L6-v2, computes the nine Table 19 features and writes the dataset
(conversation table, corpus, turn embeddings) with a manifest saying how it was made.
The run manifest is copied in; it holds no API key (local model). When the run folder has
a ``quality.jsonl`` (``python -m engine judge quality|pairwise``), it is kept as
``quality.parquet`` and each session's final rubric score joins its row (``rubric_score``);
the manifest reports the consensus bias check (``engine.judging.consensus_check``). ``--paper-b`` writes
the description of the paper-B ablation dataset instead of the all-protocols one. Those fixed
texts (and the note on a 135M model) describe runs on the local SmolLM2-135M only; a run of any
other model is described from its own manifest (``run_description``: models, judge, counts). A run
with no finished session is refused, as is an ``--embedding-model`` that does not load.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from engine.storage import durable
from engine.judging.consensus_check import consensus_summary
from engine.dataset_builds import fidelity_manifest
from engine.corpus import Corpus, atomic_write_bytes
from engine.datasets import dataset_from_corpus
from engine.embedding.embedder import DEFAULT_MODEL, Embedder
from engine.errors import InputError
from engine.judging.judge import attach_ratings, scale_within_task
from engine.judging.quality import QUALITY_FILE, QualityStore
from engine.runs.run_folder import FAILED_FILE, MANIFEST_FILE, read_manifest, read_run_corpus

REGENERATE = "make cached-runs"
QUALITY_TABLE = "quality.parquet"
DESCRIPTIONS = {
    False: ("Real sessions of every discussion structure of paper A and every debate "
            "method of paper B on the six Table 3 tasks, run with this project's engine "
            "on the local SmolLM2-135M-Instruct (Q4_1, llama.cpp, CPU) and rated by the "
            "same model as judge. Turn embeddings: all-MiniLM-L6-v2."),
    True: ("Paper B's ablation design (section 7.4) on the local SmolLM2-135M-Instruct (Q4_1, "
           "llama.cpp, CPU): Homo MAD and CLA + EPS (Creative-MAD) with 15 runs per query (3 "
           "groups of 5) on plastic_waste and singing_shower; Direct, CLA only, EPS only, closest-k "
           "and random-k peers with 10 runs (2 groups of 5) on plastic_waste; 3 agents, 1 debate "
           "round, k = 1. Quality by the same model as judge: rubric scores of every final "
           "output, per-round scores for the first 3 sessions of Homo MAD, Creative-MAD and CLA "
           "only (the judge's time ran out for the other arms on a shared machine), pairwise win "
           "rates (3 matched comparisons per condition pair and task, both orders). Turn "
           "embeddings: all-MiniLM-L6-v2."),
}
NOTE = ("A 135M-parameter model's numbers show the tool working end to end on real output; "
        "they are not a finding about multi-agent debate or about strong models.")


LOCAL_MODEL = "SmolLM2-135M"  # the model the fixed descriptions above were written for


def _is_local_smollm(backend) -> bool:
    return (isinstance(backend, dict) and backend.get("backend") == "local"
            and str(backend.get("model") or "").startswith(LOCAL_MODEL))


def is_local_smollm_run(run_manifest: dict, *, judged_by_same: bool = True) -> bool:
    """Whether the run is one the fixed texts describe: sessions on the local SmolLM2-135M
    and (``judged_by_same``) its judge, when it had one, the same model."""
    judge = run_manifest.get("judge")
    return _is_local_smollm(run_manifest.get("backend")) and (
        judge is None or _is_local_smollm(judge) or not judged_by_same)


def _model_text(backend) -> str:
    if not isinstance(backend, dict):
        return "not recorded"
    parts = [str(backend.get(key)) for key in ("backend", "model") if backend.get(key)]
    return " ".join(dict.fromkeys(parts)) or "not recorded"


def run_description(run_manifest: dict, corpus: Corpus, failed: int, embedding_model: str) -> str:
    """What the run was, read from its manifest and its sessions (a run the fixed texts do
    not describe): the sessions' model(s), the judge, the counts, the embedding model."""
    models = sorted({str(c.model) for c in corpus if getattr(c, "model", None)})
    judge = run_manifest.get("judge")
    protocols = sorted({c.protocol for c in corpus if c.protocol})
    tasks = sorted({c.task for c in corpus if c.task})
    return (f"{len(corpus)} finished session(s) ({failed} failed, left out) of "
            f"{', '.join(protocols) or 'no protocol'} on {', '.join(tasks) or 'no task'}, run with this "
            f"project's engine; sessions' model(s): {', '.join(models) or 'not recorded'} (backend: "
            f"{_model_text(run_manifest.get('backend'))}); judge: "
            f"{'none' if judge is None else _model_text(judge)}. Turn embeddings: {embedding_model}. "
            f"Read from the run's manifest.json (command: {run_manifest.get('command') or 'not recorded'}).")


def check_finished(corpus: Corpus, run_dir: Path, detail: str) -> None:
    """A dataset of no conversation is refused, naming the run (``detail``: what else it holds)."""
    if len(corpus) == 0:
        raise InputError(f"0 finished sessions{detail}: nothing to build a dataset from",
                         path=str(run_dir))


def check_embedding_model(embedder: Embedder, name: str) -> None:
    """Load a model other than the bundled one before anything is built, so a bad
    ``--embedding-model`` is one line."""
    import logging

    if name in (DEFAULT_MODEL, "default", "all-MiniLM-L6-v2", "minilm"):
        return
    if name.startswith(("/", ".", "~")) and not Path(name).expanduser().is_dir():
        raise InputError(f"--embedding-model {name!r}: no such folder (a local sentence-transformers "
                         f"model folder, or leave it out for the bundled all-MiniLM-L6-v2)",
                         field="--embedding-model")
    loggers = [logging.getLogger(n) for n in ("sentence_transformers", "transformers", "huggingface_hub")]
    levels = [logger.level for logger in loggers]
    try:
        for logger in loggers:  # their warnings while failing would add lines to the one refusal
            logger.setLevel(logging.ERROR)
        embedder.model
    except (RuntimeError, OSError, ValueError) as error:
        raise InputError(f"--embedding-model {name!r}: cannot load it ({type(error).__name__}); "
                         f"give a local sentence-transformers folder or leave it out for the "
                         f"bundled all-MiniLM-L6-v2", field="--embedding-model") from None
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def rated_sessions(corpus: Corpus) -> Corpus:
    """Finished sessions with judge ratings scaled within task over the whole run."""
    finished = corpus.filter(lambda c: c.status == "ok")
    raw = pd.DataFrame([{"task": c.task, "novelty_raw": c.outcomes.get("novelty_raw"),
                         "usefulness_raw": c.outcomes.get("usefulness_raw"),
                         "irrelevant": c.outcomes.get("irrelevant")} for c in finished])  # the panel's majority
    if len(raw):
        rater = next((c.outcomes.get("rater") for c in finished if c.outcomes.get("rater")), "judge")
        attach_ratings(list(finished), scale_within_task(raw), rater=rater)
    return finished


def build(run_dir: Path, out_dir: Path, *, embedding_model: str = DEFAULT_MODEL,
          paper_b: bool = False, regenerate: str = REGENERATE, description: str | None = None,
          made_by: str | None = None, extra_manifest: dict | None = None) -> Path:
    """Write the dataset; ``description`` / ``made_by`` / ``extra_manifest`` describe a
    dataset other than the two above (e.g. ``engine.dataset_builds.steered``)."""
    run_manifest = read_manifest(run_dir / MANIFEST_FILE)
    embedder = Embedder(embedding_model)
    check_embedding_model(embedder, embedding_model)
    corpus = rated_sessions(read_run_corpus(run_dir))
    quality = QualityStore(run_dir) if (run_dir / QUALITY_FILE).exists() else None
    if quality is not None:
        rubric = quality.frame("rubric")
        if not rubric.empty:
            final = rubric[rubric["round"].isna()].drop_duplicates("conversation_id", keep="last")
            scores = dict(zip(final["conversation_id"], final["score"]))
            for conversation in corpus:
                if conversation.conversation_id in scores:
                    value = scores[conversation.conversation_id]
                    conversation.outcomes["rubric_score"] = None if pd.isna(value) else float(value)
    failed_records = []
    if (run_dir / FAILED_FILE).exists():
        failed_records = durable.read_records(run_dir / FAILED_FILE)
    failed = len(failed_records)
    check_finished(corpus, run_dir, f" ({failed} failed)")
    local = is_local_smollm_run(run_manifest, judged_by_same=not paper_b)
    fidelity = description is None and not paper_b and fidelity_manifest.is_fidelity_run(corpus)
    if fidelity:
        model = (fidelity_manifest.LOCAL if local else
                 f"{_model_text(run_manifest.get('backend'))} (the run's manifest.json)")
        parts = fidelity_manifest.manifest_parts(run_dir, corpus, [record for _, record in failed_records],
                                                 model=model)
        description, made_by, regenerate = parts["description"], parts["made_by"], parts["regenerate"]
        extra_manifest = {**parts["extra"], **(extra_manifest or {})}
    if not local:  # the fixed texts are of the local SmolLM2 runs: say what this run was instead
        if not fidelity:
            description = run_description(run_manifest, corpus, failed, embedding_model)
        regenerate = (f"{run_manifest.get('command') or 'python -m engine run ...'} && python -m engine "
                      f"dataset build {run_dir.name} --out {out_dir.name}")
    corpus.name = out_dir.name
    protocols = sorted({c.protocol for c in corpus if c.protocol})
    manifest = {
        "description": description or DESCRIPTIONS[paper_b],
        **({"note": NOTE} if local else {}),
        "made_by": made_by or (f"python -m engine dataset build {run_dir.name}"
                               + (" --kind paper-b" if paper_b else "")),
        "regenerate": regenerate,
        "source": "generated by this project's engine (no external data)",
        "n_conversations": len(corpus),
        "n_failed_sessions": failed,
        "protocols": protocols,
        "tasks": sorted({c.task for c in corpus if c.task}),
        "embedding_model": embedding_model,
        "has": {"turns": True, "turn_embeddings": True,
                "ratings": any(c.outcomes.get("creativity") is not None for c in corpus),
                "quality": quality is not None},
        "consensus": consensus_summary(corpus),
        "run": {key: run_manifest.get(key) for key in
                ("command", "created", "updated", "config", "backend", "judge", "judge_summary", "versions",
                 "seed", "sessions", "usage") if key in run_manifest},
        **(extra_manifest or {}),
    }
    dataset = dataset_from_corpus(corpus, embedder, name=out_dir.name, manifest=manifest)
    folder = dataset.save(out_dir)
    if quality is not None:
        import io

        records = pd.DataFrame(list(quality.records.values()))
        for column in ("x_first", "y_first", "speaker"):
            if column in records:
                records[column] = records[column].astype(object).where(records[column].notna(), None)
        buffer = io.BytesIO()
        records.to_parquet(buffer, index=False)
        atomic_write_bytes(folder / QUALITY_TABLE, buffer.getvalue())
    return folder
