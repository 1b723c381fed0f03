"""The steered discussion against its baselines: the dataset and the table of the Steering page.

``python -m dashboard.steering_data RUN_DIR [--out cached_runs/local_smollm2_steered]``
turns the run of ``cached_runs/grids/steered.yaml`` into a dashboard dataset (with
``dashboard.build_local_runs.build``: judge ratings scaled within task, MiniLM turn
embeddings, the nine Table 19 features) plus the MiniLM embeddings of every session's final
idea (``final_embeddings.npy``, rows in ``final_ids.json`` order) for paper B's diversity.

``summary_table`` gives one row per method, all from the dataset's files:

* sessions (finished), mean chat calls per session, moderator interventions per session;
* the five features the moderator tracks (engine.protocols.steered.TRACKED): mean and 95%
  t-interval over sessions, N;
* the judge's rubric score of each final idea (1-10, ``python -m engine judge quality``;
  paper B's quality) and its creativity (novelty x usefulness rated together, min-max scaled
  within task; paper A), each with a 95% t-interval over the sessions it could rate and its
  parse rate (sessions with a readable score / sessions);
* Vendi and Div-BLEU of the final ideas (paper B, section 6): runs in replicate order split
  into groups of 5, mean over groups with a 95% t-interval over groups.

``difference_table`` gives steered minus each baseline (difference of means, Welch 95% CI).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from engine.diversity import div_bleu, split_into_groups, vendi_score
from engine.protocols.steered import TRACKED

DATASET_NAME = "local_smollm2_steered"
METHODS = ("steered", "open", "instructed", "iterative", "creative_mad")
GROUP = 5
FINAL_EMBEDDINGS = "final_embeddings.npy"
FINAL_IDS = "final_ids.json"
INTERVENTIONS = "interventions.parquet"
OUTCOMES = TRACKED + ("rubric_score", "creativity")

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


def mean_ci(values) -> tuple[float, float, float, int]:
    """(mean, low, high, n), Student-t 95% interval; NaN bounds when n < 2."""
    from dashboard.quality_diversity_data import mean_ci as t_interval

    return t_interval(values)


def final_vectors(folder: Path) -> dict[str, np.ndarray]:
    ids = json.loads((folder / FINAL_IDS).read_text(encoding="utf-8"))
    vectors = np.load(folder / FINAL_EMBEDDINGS)
    if len(ids) != len(vectors):
        raise ValueError(f"{FINAL_IDS} names {len(ids)} sessions, {FINAL_EMBEDDINGS} has {len(vectors)} rows")
    return dict(zip(ids, vectors))


def _method_column(frame: pd.DataFrame) -> str:
    return "discussion" if "discussion" in frame.columns else "protocol"


def summary_table(conversations: pd.DataFrame, vectors: dict[str, np.ndarray]) -> pd.DataFrame:
    """One row per method present (see the module docstring)."""
    column = _method_column(conversations)
    rows = []
    for method in [m for m in METHODS if m in set(conversations[column])]:
        part = conversations[(conversations[column] == method) & (conversations["status"] == "ok")]
        part = part.sort_values("replicate", kind="stable")
        row = {"method": method, "sessions": len(part),
               "calls_per_session": float(part["calls"].mean()) if "calls" in part else np.nan}
        row["interventions_per_session"] = (float(part["interventions"].fillna(0).mean())
                                            if "interventions" in part and method == "steered" else np.nan)
        for name in OUTCOMES:
            values = part[name].to_numpy(dtype=float) if name in part else np.array([])
            mean, low, high, n = mean_ci(values)
            row.update({name: mean, f"{name}_lo": low, f"{name}_hi": high, f"{name}_n": n})
        readable = part[["novelty_raw", "usefulness_raw"]].notna().all(axis=1) if \
            {"novelty_raw", "usefulness_raw"} <= set(part.columns) else pd.Series(False, index=part.index)
        row["judge_parsed"] = int(readable.sum())
        row["judge_parse_rate"] = float(readable.mean()) if len(part) else np.nan
        rubric = part["rubric_score"].notna() if "rubric_score" in part else pd.Series(False, index=part.index)
        row["rubric_parse_rate"] = float(rubric.mean()) if len(part) else np.nan
        ids = [cid for cid in part["conversation_id"] if cid in vectors]
        texts = dict(zip(part["conversation_id"], part["final_idea"].astype(str)))
        groups = split_into_groups(ids, GROUP)
        vendi = [vendi_score(np.stack([vectors[i] for i in g])) for g in groups]
        bleu = [div_bleu([texts[i] for i in g]) for g in groups]
        for name, values in (("vendi", vendi), ("div_bleu", bleu)):
            mean, low, high, n = mean_ci(values)
            row.update({name: mean, f"{name}_lo": low, f"{name}_hi": high})
        row["groups"] = len(groups)
        rows.append(row)
    return pd.DataFrame(rows)


def difference_table(conversations: pd.DataFrame, outcomes=OUTCOMES) -> pd.DataFrame:
    """Steered minus each baseline: difference of session means with a Welch 95% interval."""
    column = _method_column(conversations)
    ok = conversations[conversations["status"] == "ok"]
    steered = ok[ok[column] == "steered"]
    rows = []
    for method in [m for m in METHODS[1:] if m in set(ok[column])]:
        other = ok[ok[column] == method]
        for name in outcomes:
            a = steered[name].dropna().to_numpy(float) if name in steered else np.array([])
            b = other[name].dropna().to_numpy(float) if name in other else np.array([])
            if len(a) < 2 or len(b) < 2:
                continue
            va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
            diff, se = a.mean() - b.mean(), np.sqrt(va + vb)
            dof = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1)) if se > 0 else np.nan
            half = stats.t.ppf(0.975, dof) * se if se > 0 else np.nan
            rows.append({"baseline": method, "outcome": name, "steered_minus_baseline": diff,
                         "lo": diff - half, "hi": diff + half, "n_steered": len(a), "n_baseline": len(b)})
    return pd.DataFrame(rows, columns=["baseline", "outcome", "steered_minus_baseline", "lo", "hi",
                                       "n_steered", "n_baseline"])


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


def intervention_counts(records: pd.DataFrame) -> pd.DataFrame:
    """Interventions by rule and reason."""
    if records.empty:
        return pd.DataFrame(columns=["rule", "reason", "interventions"])
    return records.groupby(["rule", "reason"]).size().rename("interventions").reset_index()


def trajectory_with_marks(vectors: np.ndarray, conversation_id: str,
                          records: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A session's trajectory in 2D (PCA of its own turn embeddings, engine.projection) and
    its interventions placed at the turn after which they fired."""
    from engine.projection import project_turns

    index = pd.DataFrame({"conversation_id": conversation_id, "turn": range(len(vectors))})
    points = project_turns(np.asarray(vectors, float), index, method="pca", use_cache=False)
    marks = records[records["conversation_id"] == conversation_id].copy() if not records.empty else records.copy()
    if not marks.empty:
        marks["turn"] = marks["n_turns"].astype(int) - 1
        marks = marks.merge(points, on=["conversation_id", "turn"], how="left")
    return points, marks


def planned_run(run_dir: Path, grid: Path, into: Path) -> tuple[Path, int]:
    """A copy of the run folder holding only the sessions the grid file plans now (a run
    folder also keeps sessions of earlier versions of the grid); returns it and the number
    of sessions left out."""
    import shutil

    from engine.corpus import Corpus
    from engine.grid import load_grid, plan
    from engine.jsonl import iter_json_objects, to_json_line

    wanted = {spec.conversation_id for spec in plan(load_grid(grid))}
    corpus = Corpus.from_jsonl(run_dir / "corpus.jsonl")
    kept = corpus.filter(lambda c: c.conversation_id in wanted)
    into.mkdir(parents=True, exist_ok=True)
    kept.to_jsonl(into / "corpus.jsonl")
    shutil.copy(run_dir / "manifest.json", into / "manifest.json")
    for name in ("failed.jsonl", "quality.jsonl"):  # failed sessions; judge quality records
        if (run_dir / name).exists():
            lines = [to_json_line(record) + "\n" for _, record in iter_json_objects(run_dir / name)
                     if record.get("conversation_id") in wanted]
            (into / name).write_text("".join(lines), encoding="utf-8")
    return into, len(corpus) - len(kept)


def build(run_dir: Path, out_dir: Path, grid: Path | None = None) -> Path:
    import tempfile

    from dashboard.build_local_runs import build as build_dataset
    from engine.corpus import atomic_write_bytes
    from engine.datasets import Dataset
    from engine.embed import Embedder

    run_manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    extra = {"can_show": CAN_SHOW, "cannot_show": CANNOT_SHOW,
             "judge_summary": run_manifest.get("judge_summary")}
    source = run_dir
    with tempfile.TemporaryDirectory() as scratch:
        if grid is not None:
            source, left_out = planned_run(run_dir, grid, Path(scratch) / run_dir.name)
            extra["sessions_of_earlier_grid_versions_left_out"] = left_out
        folder = build_dataset(source, out_dir, description=DESCRIPTION,
                               made_by=f"python -m dashboard.steering_data {run_dir.name}",
                               regenerate="nice -n 10 python -m engine run --grid cached_runs/grids/steered.yaml "
                                          "--out runs/steered && nice -n 10 python -m engine judge quality "
                                          "runs/steered --judge-model local && python -m dashboard.steering_data "
                                          "runs/steered",
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
    from engine.corpus import Corpus

    ok_ids = set(ids)
    records = intervention_records(Corpus.from_jsonl(run_dir / "corpus.jsonl").filter(
        lambda c: c.status == "ok" and c.conversation_id in ok_ids))
    buffer = io.BytesIO()
    records.to_parquet(buffer, index=False)
    atomic_write_bytes(folder / INTERVENTIONS, buffer.getvalue())
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="output folder of the steered grid run")
    repo = Path(__file__).resolve().parents[1]
    parser.add_argument("--out", type=Path, default=repo / "cached_runs" / DATASET_NAME)
    parser.add_argument("--grid", type=Path, default=repo / "cached_runs" / "grids" / "steered.yaml",
                        help="keep only the sessions this grid file plans (default: the steered grid)")
    args = parser.parse_args(argv)
    if not (args.run_dir / "corpus.jsonl").exists():
        print(f"error: {args.run_dir} has no corpus.jsonl: not a run folder", file=sys.stderr)
        return 2
    print(f"wrote {build(args.run_dir, args.out, args.grid)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
