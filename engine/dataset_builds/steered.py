"""Build the Steering page's dataset: the steered discussion's run against its baselines.

``python -m engine dataset build RUN_DIR --kind steered [--grid cached_runs/grids/steered.yaml]``
turns the run of ``cached_runs/grids/steered.yaml`` into a dataset (through
``engine.dataset_builds.run_folder.build``: judge ratings scaled within task, MiniLM turn
embeddings, the nine trajectory features of paper A, Table 19), plus the MiniLM embeddings of
every session's final idea (``final_embeddings.npy``, rows in ``final_ids.json`` order) for
paper B's diversity (section 6) and the moderator's interventions (``interventions.parquet``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

DATASET_NAME = "local_smollm2_steered"
METHODS = ("steered", "open", "instructed", "iterative", "creative_mad")
FINAL_EMBEDDINGS = "final_embeddings.npy"
FINAL_IDS = "final_ids.json"
INTERVENTIONS = "interventions.parquet"
DESCRIPTION = ("The trajectory-steered discussion (engine/protocols/steered.py) against paper A's open, "
               "instructed and iterative structures and paper B's Creative-MAD, 10 runs each on "
               "plastic_waste, at nearly equal call budgets (6-8 chat calls per session, Creative-MAD's judge re-asking unreadable "
               "picks; grid "
               "cached_runs/grids/steered.yaml), on the local SmolLM2-135M-Instruct (Q4_1, llama.cpp, CPU), "
               "rated by the same model as judge (rubric score of each final idea; novelty and usefulness of the "
               "final ideas rated together). Turn and final-idea "
               "embeddings: all-MiniLM-L6-v2.")
CAN_SHOW = [
    "that the steered protocol runs end to end on a real model within its stated call budget",
    "what the moderator measured and which rule fired, turn by turn (phase 'moderator' turns)",
    "whether the interventions move the trajectory features of this model's discussions, with CIs",
]
CANNOT_SHOW = [
    "whether steering makes ideas more creative: the judge is the same 135M model, and 10 runs of one task "
    "give wide intervals",
    "anything about strong models or about paper A's 30-60-turn discussions: these sessions have 5 "
    "discussion turns (iterative 3 proposals), so the moderator checks twice, after turns 3 and 4",
    "creativity by paper A's consensual assessment: the 135M judge rating the final ideas together gave no "
    "readable verdict (see judge_summary); quality rests on the rubric score, asked one idea at a time",
    "paper A's absolute feature values: the release used Qwen3-Embedding-0.6B, this dataset MiniLM",
]


def intervention_records(corpus) -> pd.DataFrame:
    """Every moderator intervention of the steered sessions of a (full, not trajectory-view)
    Corpus: session, the discussion turns it saw (``n_turns``: it fired after trajectory turn
    ``n_turns - 1``, 0-based), rule, reason, agent and the running features it measured."""
    records = []
    for conversation in corpus:
        for turn in conversation.turns:
            if turn.phase != "moderator":
                continue
            meta = turn.meta
            records.append({"conversation_id": conversation.conversation_id, "n_turns": meta.get("n_turns"),
                            "rule": meta.get("rule"), "reason": meta.get("reason"), "agent": meta.get("agent"),
                            "lens": meta.get("lens"), "text": turn.text,
                            **{f"measured_{k}": v for k, v in (meta.get("measured") or {}).items()}})
    return pd.DataFrame(records, columns=None if records else ["conversation_id", "n_turns", "rule", "reason"])


def planned_run(run_dir: Path, grid: Path, into: Path) -> tuple[Path, int]:
    """A copy of the run folder holding only the sessions the grid file plans now (a run
    folder also keeps sessions of earlier versions of the grid); returns it and the number
    of sessions left out."""
    import shutil

    from engine.runs.grid import load_grid, plan
    from engine.storage import durable
    from engine.storage.jsonl import to_json_line
    from engine.runs.run_folder import read_run_corpus

    wanted = {spec.conversation_id for spec in plan(load_grid(grid))}
    corpus = read_run_corpus(run_dir)
    kept = corpus.filter(lambda c: c.conversation_id in wanted)
    into.mkdir(parents=True, exist_ok=True)
    kept.to_jsonl(into / "corpus.jsonl")
    shutil.copy(run_dir / "manifest.json", into / "manifest.json")
    for name in ("failed.jsonl", "quality.jsonl"):  # failed sessions; judge quality records
        if (run_dir / name).exists():
            lines = [to_json_line(record) + "\n" for _, record in durable.read_records(run_dir / name)
                     if record.get("conversation_id") in wanted]
            (into / name).write_text("".join(lines), encoding="utf-8")
    return into, len(corpus) - len(kept)


def build(run_dir: Path, out_dir: Path, grid: Path | None = None) -> Path:
    import tempfile

    from engine.corpus import atomic_write_bytes
    from engine.dataset_builds.run_folder import build as build_dataset
    from engine.datasets import Dataset
    from engine.embedding.embedder import Embedder

    from engine.runs.run_folder import read_manifest

    from engine.dataset_builds.run_folder import check_finished, is_local_smollm_run
    from engine.runs.run_folder import read_run_corpus

    run_manifest = read_manifest(run_dir / "manifest.json")
    extra = {"judge_summary": run_manifest.get("judge_summary")}
    if is_local_smollm_run(run_manifest):  # what the 135M runs can and cannot show
        extra = {"can_show": CAN_SHOW, "cannot_show": CANNOT_SHOW, **extra}
    source = run_dir
    with tempfile.TemporaryDirectory() as scratch:
        if grid is not None:
            source, left_out = planned_run(run_dir, grid, Path(scratch) / run_dir.name)
            extra["sessions_of_earlier_grid_versions_left_out"] = left_out
        sessions = read_run_corpus(source)
        steered = sessions.filter(lambda c: c.status == "ok" and c.protocol == "steered")
        check_finished(steered, run_dir, " of the steered discussion"
                       + (f" that {grid} plans" if grid is not None else "")
                       + f" ({len(sessions)} finished session(s) of other methods)")
        folder = build_dataset(source, out_dir, description=DESCRIPTION,
                               made_by=f"python -m engine dataset build {run_dir.name} --kind steered",
                               regenerate="nice -n 10 python -m engine run --grid cached_runs/grids/steered.yaml "
                                          "--out runs/steered && nice -n 10 python -m engine judge quality "
                                          "runs/steered --judge-model local && python -m engine dataset build "
                                          "runs/steered --kind steered",
                               extra_manifest=extra)
    run_dir = source if grid is None else run_dir
    dataset = Dataset.load(folder, with_corpus=False)
    ok = dataset.conversations[dataset.conversations["status"] == "ok"]
    ids = ok["conversation_id"].tolist()
    vectors = Embedder().encode(ok["final_idea"].astype(str).tolist())
    import io

    buffer = io.BytesIO()
    np.save(buffer, np.asarray(vectors, dtype=np.float32))
    atomic_write_bytes(folder / FINAL_EMBEDDINGS, buffer.getvalue())
    atomic_write_bytes(folder / FINAL_IDS, json.dumps(ids).encode("utf-8"))
    ok_ids = set(ids)

    records = intervention_records(read_run_corpus(run_dir).filter(
        lambda c: c.status == "ok" and c.conversation_id in ok_ids))
    buffer = io.BytesIO()
    records.to_parquet(buffer, index=False)
    atomic_write_bytes(folder / INTERVENTIONS, buffer.getvalue())
    return folder
