"""Prescribe and verify: a budgeted pilot on a new model, a diagnosis, a prediction from the
paper release, and a check of that prediction on fresh sessions.

Paper A (Discussion) proposes a diagnostic heuristic: "compute trajectory features from a
small set of pilot conversations to diagnose a new model's default semantic behavior, and
then select the discussion structure that corrects its geometric deficits". This module
runs that loop and then tests it:

1. **Pilot** (``<out>/pilot``, a resumable ``run_grid`` folder): the budget's designs (by
   default paper A's open and iterative structures plus paper B's Creative-MAD) on its
   tasks, ``replicates`` each.
2. **Diagnosis** (``engine.diagnose``): the baseline design's features against the paper
   release's trajectory sample: which features sit in which tail, on how many sessions.
3. **Prediction**: for each candidate design, the expected shift of each target feature
   (the flagged deficits; without any, the five features with a significant Table 23 LLM
   coefficient) against the baseline, in SD units of the release: the discussion
   coefficient of ``feature ~ task + model + discussion`` (OLS, HC3, z-scored outcome: the
   additive design model of Table 24) with its 95% CI, and the range of the per-model simple
   effects of the model x discussion fit (Tables 8 and 25: the shift differs by model, and
   a new model may behave like any of them). Designs absent from the release (Creative-MAD,
   steered) get no prediction. The recommended design is the candidate whose predicted
   shifts move the target features most in their Table 23 direction.
4. **Verification** (``<out>/verify``, a second run folder with another seed: fresh
   sessions): the recommended design against the baseline; per target feature the
   measured standardised shift (difference of means over the pooled SD) with a bootstrap
   95% CI, and a verdict (``verdict``): held / did not hold / inconclusive at this N, with
   the N per design that 80% power at alpha .05 would need for the predicted shift.

Every stage is cached in ``<out>``: the run folders resume like ``engine run``; features
(``features_<stage>.csv``) and the prediction (``prediction.json``) are recomputed only when
their inputs changed. ``report.json`` and ``report.html`` (one file, every text escaped)
hold the whole report. Features are computed with all-MiniLM-L6-v2 (the release used
Qwen3-Embedding-0.6B), so the diagnosis compares percentile ranks and predicted and measured
shifts are both standardised effects, each in its own embedding's SD.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from engine.diagnose import CREATIVITY_DIRECTION, diagnose
from engine.errors import InputError
from engine.features import FEATURE_NAMES

VERDICTS = ("held", "did not hold", "inconclusive")
POWER_Z = 1.959964 + 0.841621  # two-sided alpha .05, power .80
BOOTSTRAP = 2000
REFERENCE_STRUCTURES = ("instructed", "open", "iterative")  # paper A's trajectory sample


@dataclass(frozen=True)
class Budget:
    """Designs, tasks and replicates of one pilot size."""

    name: str
    tasks: tuple[str, ...] | str
    replicates: int
    verify_replicates: int
    defaults: dict[str, Any]
    designs: dict[str, dict[str, Any]]  # design name -> grid condition (without replicates)
    pilot_designs: tuple[str, ...] = ("open", "iterative", "creative_mad")


BUDGETS = {
    # runs in minutes on the local SmolLM2-135M (1-2 s a call on a free CPU): one task,
    # short turns and replies; about 40 calls for the pilot and 40 for the verification
    "small": Budget("small", ("plastic_waste",), 2, 3,
                    {"temperature": 1.0, "max_tokens": 40, "idea_words": "20-30"},
                    {"open": {"method": "open", "agents": 3, "turn_limit": 4},
                     "iterative": {"method": "iterative", "agents": 2, "turn_limit": 3,
                                   "initial_generation": False},
                     "instructed": {"method": "instructed", "agents": 3, "turn_limit": 5,
                                    "initial_generation": False},
                     "creative_mad": {"method": "creative_mad", "agents": 3, "rounds": 1, "k": 1}}),
    # paper A's six tasks, 2 replicates each (the design the paper's heuristic suggests)
    "standard": Budget("standard", "all", 2, 6,
                       {"temperature": 1.0, "max_tokens": 256, "idea_words": "80-100"},
                       {"open": {"method": "open", "agents": 3, "turn_limit": 12},
                        "iterative": {"method": "iterative", "agents": 3, "turn_limit": 6},
                        "instructed": {"method": "instructed", "agents": 3, "turn_limit": 12},
                        "creative_mad": {"method": "creative_mad", "agents": 5, "rounds": 2}}),
}


# -- the plan ---------------------------------------------------------------------------------
def stage_grid(budget: Budget, designs: Sequence[str], *, model: str, seed: int, replicates: int,
               name: str, base_url=None, api_key_env: str | None = None) -> dict:
    """The grid dict of one stage (a run folder of ``engine.runner.run_grid``)."""
    unknown = [d for d in designs if d not in budget.designs]
    if unknown:
        raise InputError(f"unknown design {unknown[0]!r}; this budget has {', '.join(budget.designs)}",
                         field="designs")
    grid = {"name": name, "model": model, "seed": seed, "concurrency": 2,
            "tasks": budget.tasks if budget.tasks == "all" else list(budget.tasks),
            "defaults": dict(budget.defaults),
            "conditions": [{**budget.designs[d], "replicates": replicates} for d in designs]}
    if base_url is not None:  # "" is refused by the grid, never read as "no URL"
        grid["base_url"] = base_url
    if api_key_env:
        grid["api_key_env"] = api_key_env
    return grid


def plan_text(grid: dict, label: str) -> tuple[str, dict]:
    """One line: sessions, calls, tokens and cost of a stage (``engine.runner.estimate``)."""
    from engine.grid import load_grid, plan
    from engine.llm.pricing import cost_usd, format_cost
    from engine.runner import estimate

    spec = load_grid(grid)
    budget = estimate(plan(spec))
    cost = cost_usd("local" if spec.model == "local" else "openai", spec.model,
                    budget["prompt_tokens"], budget["completion_tokens"], spec.prices)
    budget["cost_usd"] = cost
    return (f"{label}: {budget['sessions']} sessions, at most {budget['calls']:,} chat calls, about "
            f"{budget['prompt_tokens']:,} prompt + {budget['completion_tokens']:,} completion tokens, "
            f"{format_cost(cost)}"), budget


# -- features of a stage ----------------------------------------------------------------------
def stage_features(run_dir: Path, embedder_factory: Callable[[], Any], cache: Path) -> pd.DataFrame:
    """Table 19 features of every finished session of a run folder, one row each, with its
    ``design`` (the protocol) and task; cached in ``cache`` keyed by the sessions' ids."""
    from engine.corpus import Corpus
    from engine.datasets import dataset_from_corpus
    from engine.run_store import CORPUS_FILE

    corpus = Corpus.from_jsonl(run_dir / CORPUS_FILE).filter(lambda c: c.status == "ok")
    ids = sorted(c.conversation_id for c in corpus)
    key = hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]
    if cache.exists():
        table = pd.read_csv(cache)
        if "cache_key" in table.columns and len(table) and table["cache_key"].iloc[0] == key:
            return table
    if not ids:
        raise InputError("no finished session to measure", path=str(run_dir))
    dataset = dataset_from_corpus(corpus, embedder_factory(), name=run_dir.name)
    table = dataset.conversations
    keep = ["conversation_id", "task", "discussion", *FEATURE_NAMES]
    table = table[[c for c in keep if c in table.columns]].rename(columns={"discussion": "design"})
    table["cache_key"] = key
    table["embedding_model"] = dataset.manifest.get("embedding_model")
    _atomic_write_text(cache, table.to_csv(index=False))
    return table


# -- prediction from the paper release --------------------------------------------------------
def predict_shifts(reference: pd.DataFrame, baseline: str, candidates: Sequence[str],
                   features: Sequence[str]) -> pd.DataFrame:
    """Expected shift (release SD units) of each feature for each candidate vs ``baseline``.

    Columns: design, feature, predicted (additive-model coefficient), ci_low, ci_high (its
    95% CI, HC3), model_low, model_high (range of per-model simple effects), n_models, n.
    Candidates not in the reference get a row with NaN and ``note``.
    """
    from engine.stats.effects import simple_effects
    from engine.stats.regression import fit
    from engine.stats.spec import RegressionSpec

    rows = []
    present = set(reference["discussion"].unique())
    if baseline not in present:
        raise InputError(f"the baseline design {baseline!r} is not in the reference "
                         f"({', '.join(sorted(present))}); no prediction can be made", field="baseline")
    for feature in features:
        data = reference.dropna(subset=[feature])
        additive = fit(RegressionSpec(name=f"{feature}: task + model + discussion", outcome=feature,
                                      blocks=["task", "model", "discussion"],
                                      reference={"discussion": baseline}), data)
        table = additive.table.set_index("term")
        interaction = fit(RegressionSpec(name=f"{feature}: model x discussion", outcome=feature,
                                         blocks=["task", "model", "discussion", "model_x_discussion"],
                                         reference={"discussion": baseline}), data,
                          allow_nonconvergence=True)
        per_model = simple_effects(interaction, "discussion", "model")
        for design in candidates:
            term = f"C(discussion)[T.{design}]"
            if design not in present or term not in table.index:
                rows.append({"design": design, "feature": feature, "predicted": np.nan,
                             "ci_low": np.nan, "ci_high": np.nan, "model_low": np.nan,
                             "model_high": np.nan, "n_models": 0, "n": 0,
                             "note": "not in the paper release: no prediction"})
                continue
            effects = per_model[per_model["factor_level"] == design]["effect"]
            rows.append({"design": design, "feature": feature, "predicted": float(table.loc[term, "coef"]),
                         "ci_low": float(table.loc[term, "ci_low"]), "ci_high": float(table.loc[term, "ci_high"]),
                         "model_low": float(effects.min()), "model_high": float(effects.max()),
                         "n_models": int(len(effects)), "n": int(additive.summary["n"]), "note": ""})
    return pd.DataFrame(rows)


def recommend(prediction: pd.DataFrame, needs: dict[str, int]) -> tuple[str | None, dict[str, float]]:
    """The candidate whose predicted shifts move the target features most the needed way:
    score = sum over features of need x predicted (SD units); None if no score is positive."""
    scores = {}
    for design, part in prediction.dropna(subset=["predicted"]).groupby("design"):
        scores[design] = float(sum(needs[f] * v for f, v in zip(part["feature"], part["predicted"])
                                   if f in needs))
    best = max(scores, key=scores.get) if scores else None
    return (best if best is not None and scores[best] > 0 else None), scores


# -- verification -----------------------------------------------------------------------------
def standardised_shift(baseline: np.ndarray, design: np.ndarray) -> float:
    """(mean design - mean baseline) / pooled SD."""
    pooled = math.sqrt(((len(baseline) - 1) * baseline.var(ddof=1) + (len(design) - 1) * design.var(ddof=1))
                       / (len(baseline) + len(design) - 2))
    return float((design.mean() - baseline.mean()) / pooled) if pooled > 0 else float("nan")


def bootstrap_shift(baseline, design, *, resamples: int = BOOTSTRAP, seed: int = 0) -> tuple[float, float, float]:
    """Standardised shift and its percentile bootstrap 95% CI (each group resampled)."""
    baseline, design = np.asarray(baseline, float), np.asarray(design, float)
    if len(baseline) < 2 or len(design) < 2:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        value = standardised_shift(rng.choice(baseline, len(baseline)), rng.choice(design, len(design)))
        if math.isfinite(value):
            values.append(value)
    if not values:
        return standardised_shift(baseline, design), float("nan"), float("nan")
    low, high = np.percentile(values, [2.5, 97.5])
    return standardised_shift(baseline, design), float(low), float(high)


def needed_n(predicted_sd_units: float, observed_sd: float) -> int | None:
    """Sessions per design for 80% power (two-sided alpha .05) to detect the predicted shift,
    given the observed SD: n = 2 (z_.975 + z_.80)^2 SD^2 / shift^2, shift = predicted x SD."""
    if not (math.isfinite(predicted_sd_units) and math.isfinite(observed_sd)) or predicted_sd_units == 0:
        return None
    shift = predicted_sd_units * observed_sd
    return int(math.ceil(2 * POWER_Z ** 2 * observed_sd ** 2 / shift ** 2))


def verdict(predicted: float, ci_low: float, ci_high: float) -> str:
    """held: the CI excludes 0 on the predicted side. did not hold: the CI excludes 0 on the
    other side, or lies wholly below half the predicted shift. Else inconclusive."""
    if not all(math.isfinite(v) for v in (predicted, ci_low, ci_high)) or predicted == 0:
        return "inconclusive"
    sign = 1.0 if predicted > 0 else -1.0
    low, high = sorted((sign * ci_low, sign * ci_high))  # oriented: the prediction is positive
    if low > 0:
        return "held"
    if high < 0 or high < abs(predicted) / 2:
        return "did not hold"
    return "inconclusive"


def verify(features: pd.DataFrame, baseline: str, design: str, prediction: pd.DataFrame,
           targets: Sequence[str], *, seed: int = 0) -> pd.DataFrame:
    """Measured shift of each target feature, its bootstrap CI, verdict and needed N."""
    rows = []
    for feature in targets:
        a = features.loc[features["design"] == baseline, feature].dropna().to_numpy(float)
        b = features.loc[features["design"] == design, feature].dropna().to_numpy(float)
        predicted_row = prediction[(prediction["design"] == design) & (prediction["feature"] == feature)]
        predicted = float(predicted_row["predicted"].iloc[0]) if len(predicted_row) else float("nan")
        shift, low, high = bootstrap_shift(a, b, seed=seed)
        pooled = float(np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)) if len(a) > 1 and len(b) > 1 else float("nan")
        outcome = verdict(predicted, low, high)
        rows.append({"feature": feature, "n_baseline": len(a), "n_design": len(b),
                     "baseline_mean": float(a.mean()) if len(a) else np.nan,
                     "design_mean": float(b.mean()) if len(b) else np.nan, "observed_sd": pooled,
                     "predicted": predicted, "measured": shift, "ci_low": low, "ci_high": high,
                     "verdict": outcome,
                     "n_needed_per_design": needed_n(predicted, pooled) if outcome == "inconclusive" else None})
    return pd.DataFrame(rows)


def overall_verdict(table: pd.DataFrame) -> str:
    """held if every target feature held; did not hold if any did not; else inconclusive."""
    verdicts = list(table["verdict"])
    if verdicts and all(v == "held" for v in verdicts):
        return "held"
    if "did not hold" in verdicts:
        return "did not hold"
    return "inconclusive"


# -- the whole study --------------------------------------------------------------------------
@dataclass
class PilotStudy:
    out: Path
    report: dict[str, Any] = field(default_factory=dict)


def run_pilot_study(out: str | Path, *, model: str = "local", budget: str = "small",
                    baseline: str = "open", seed: int = 0, base_url=None, api_key_env: str | None = None,
                    dry_run: bool = False, backend=None, embedder=None, reference: pd.DataFrame | None = None,
                    progress: bool = True, say: Callable[[str], None] = print) -> PilotStudy:
    """Run (or resume) the four stages; ``dry_run`` only prints the plan.

    ``backend`` / ``embedder`` replace the model's backend and the MiniLM embedder (tests);
    ``reference`` replaces the paper release's trajectory sample.
    """
    from engine.runner import run_grid

    if budget not in BUDGETS:
        raise InputError(f"unknown budget {budget!r}; choose {', '.join(BUDGETS)}", field="budget")
    spec = BUDGETS[budget]
    if baseline not in spec.designs:
        raise InputError(f"unknown baseline {baseline!r}; choose {', '.join(spec.designs)}", field="baseline")
    out = Path(out)
    started = time.monotonic()
    pilot_designs = [baseline] + [d for d in spec.pilot_designs if d != baseline]
    pilot_grid = stage_grid(spec, pilot_designs, model=model, seed=seed, replicates=spec.replicates,
                            name="pilot", base_url=base_url, api_key_env=api_key_env)
    candidates = [d for d in spec.designs if d != baseline]
    pilot_line, pilot_budget = plan_text(pilot_grid, "1. pilot")
    worst = max(candidates, key=lambda d: plan_text(stage_grid(
        spec, [baseline, d], model=model, seed=seed + 1, replicates=spec.verify_replicates,
        name="verify"), "")[1]["calls"])
    verify_line, verify_budget = plan_text(stage_grid(spec, [baseline, worst], model=model, seed=seed + 1,
                                                      replicates=spec.verify_replicates, name="verify"),
                                           f"4. verification (at most; {baseline} vs {worst})")
    say("Plan (nothing has run yet):")
    say("  " + pilot_line)
    say("  2. diagnosis and 3. prediction: no model calls (embeddings + the paper release)")
    say("  " + verify_line)
    report: dict[str, Any] = {"model": model, "budget": budget, "baseline": baseline, "seed": seed,
                              "plan": {"pilot": pilot_budget, "verification_at_most": verify_budget,
                                       "lines": [pilot_line, verify_line]}}
    if dry_run:
        return PilotStudy(out, report)
    out.mkdir(parents=True, exist_ok=True)

    def embedder_factory():
        if embedder is not None:
            return embedder
        from engine.embed import Embedder

        return Embedder(progress=progress)

    embed_fn = None if embedder is None else (embedder.encode if hasattr(embedder, "encode") else embedder)
    timings = {}
    t0 = time.monotonic()
    pilot_result = run_grid(pilot_grid, out / "pilot", backend=backend, progress=progress,
                            embedder=embed_fn, command="python -m engine pilot (stage 1)")
    timings["pilot_s"] = round(time.monotonic() - t0, 1)
    pilot = stage_features(out / "pilot", embedder_factory, out / "features_pilot.csv")
    report["pilot"] = {"sessions_ok": int(len(pilot)), "failed": int(getattr(pilot_result, "failed", 0)),
                       "by_design": pilot.groupby("design").size().to_dict()}

    # 2. diagnosis of the baseline design against the paper release
    t0 = time.monotonic()
    if reference is None:
        from engine.stats.reference import load_reference

        reference = load_reference()
    base_rows = pilot[pilot["design"] == baseline].rename(columns={"design": "discussion"})
    base_rows.attrs["embedding_model"] = base_rows["embedding_model"].iloc[0] if len(base_rows) else None
    diagnosis = diagnose(base_rows, reference)
    needs = {f: d for f, d in (_deficits(diagnosis) or CREATIVITY_DIRECTION).items()}
    report["diagnosis"] = {"text": diagnosis.to_text(), "flags": diagnosis.flags, "n": diagnosis.n_pilot,
                           "evidence": _records(diagnosis.evidence),
                           "targets": needs, "targets_from": "flagged deficits" if _deficits(diagnosis)
                           else "no deficit flagged: the five Table 23 features"}

    # 3. prediction (cached: depends only on the reference, the baseline and the targets)
    prediction_file = out / "prediction.json"
    key = {"baseline": baseline, "targets": sorted(needs), "candidates": candidates, "n_reference": len(reference)}
    prediction = None
    if prediction_file.exists():
        cached = json.loads(prediction_file.read_text(encoding="utf-8"))
        if cached.get("key") == key:
            prediction = pd.DataFrame(cached["rows"])
    if prediction is None:
        prediction = predict_shifts(reference, baseline, candidates, list(needs))
        _atomic_write_text(prediction_file, json.dumps({"key": key, "rows": _records(prediction)}))
    recommended, scores = recommend(prediction, needs)
    observed = []
    for design in candidates:
        if (pilot["design"] == design).any():
            for feature in needs:
                shift = standardised_shift(pilot.loc[pilot["design"] == baseline, feature].dropna().to_numpy(float),
                                           pilot.loc[pilot["design"] == design, feature].dropna().to_numpy(float))
                observed.append({"design": design, "feature": feature, "pilot_shift": shift})
    report["prediction"] = {"rows": _records(prediction), "scores": scores, "recommended": recommended,
                            "pilot_observed": observed}
    timings["diagnosis_prediction_s"] = round(time.monotonic() - t0, 1)

    # 4. verification on fresh sessions (another seed, another folder): the recommended
    # design; when no candidate is predicted to help (keep the baseline), the prediction for
    # the best-scoring candidate is checked instead, so the prediction is tested either way
    checked = recommended or (max(scores, key=scores.get) if scores else None)
    report["prediction"]["checked"] = checked
    if checked is None:
        report["verification"] = None
        report["verdict"] = "inconclusive"
        report["verdict_text"] = "No candidate design has a prediction from the paper release, so nothing was verified."
    else:
        t0 = time.monotonic()
        verify_grid = stage_grid(spec, [baseline, checked], model=model, seed=seed + 1,
                                 replicates=spec.verify_replicates, name="verify", base_url=base_url,
                                 api_key_env=api_key_env)
        run_grid(verify_grid, out / "verify", backend=backend, progress=progress, embedder=embed_fn,
                 command="python -m engine pilot (stage 4)")
        fresh = stage_features(out / "verify", embedder_factory, out / "features_verify.csv")
        table = verify(fresh, baseline, checked, prediction, list(needs), seed=seed)
        timings["verification_s"] = round(time.monotonic() - t0, 1)
        report["verification"] = {"design": checked, "recommended": recommended is not None,
                                  "rows": _records(table)}
        report["verdict"] = overall_verdict(table)
        why = "" if recommended else (f"No candidate is predicted to move the targets the needed way: keep "
                                      f"{baseline}. Checked instead: the prediction for {checked}, the "
                                      f"best-scoring candidate. ")
        report["verdict_text"] = why + verdict_text(report["verdict"], checked, baseline, table)
    timings["total_s"] = round(time.monotonic() - started, 1)
    report["timings"] = timings
    _atomic_write_text(out / "report.json", json.dumps(report, indent=1, default=_plain))
    _atomic_write_text(out / "report.html", report_html(report))
    return PilotStudy(out, report)


def verdict_text(overall: str, design: str, baseline: str, table: pd.DataFrame) -> str:
    parts = []
    for row in table.itertuples():
        extra = f"; about {row.n_needed_per_design} sessions per design would be needed" \
            if row.verdict == "inconclusive" and row.n_needed_per_design else ""
        parts.append(f"{row.feature}: predicted {row.predicted:+.2f} SD, measured {row.measured:+.2f} SD "
                     f"[{row.ci_low:+.2f}, {row.ci_high:+.2f}] on {row.n_baseline} + {row.n_design} sessions: "
                     f"{row.verdict}{extra}")
    head = {"held": "The prediction held", "did not hold": "The prediction did not hold",
            "inconclusive": "Inconclusive at this N"}[overall]
    return f"{head} ({design} vs {baseline}). " + " | ".join(parts)


def _deficits(diagnosis) -> dict[str, int]:
    return dict(diagnosis.recommendation.get("deficits") or {})


def _records(frame: pd.DataFrame) -> list[dict]:
    return json.loads(frame.to_json(orient="records"))


def _plain(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return str(value)


def _atomic_write_text(path: Path, text: str) -> None:
    from engine.corpus import atomic_write_bytes

    atomic_write_bytes(Path(path), text.encode("utf-8"))


# -- the report as one HTML file --------------------------------------------------------------
def _table_html(rows: list[dict], columns: Sequence[str]) -> str:
    def cell(value):
        if isinstance(value, float):
            return "" if not math.isfinite(value) else f"{value:.3f}"
        return html.escape("" if value is None else str(value))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{cell(r.get(c))}</td>" for c in columns) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def report_html(report: dict) -> str:
    """The whole report as one self-contained HTML page; every text is escaped."""
    e = html.escape
    parts = [f"<h1>Pilot report: {e(str(report['model']))}, budget {e(str(report['budget']))}</h1>",
             "<h2>Plan</h2><ul>" + "".join(f"<li>{e(line)}</li>" for line in report["plan"]["lines"]) + "</ul>",
             f"<h2>Diagnosis (baseline: {e(report['baseline'])})</h2><pre>{e(report['diagnosis']['text'])}</pre>",
             f"<p>Target features ({e(report['diagnosis']['targets_from'])}): "
             f"{e(', '.join(report['diagnosis']['targets']))}</p>",
             "<h2>Prediction from the paper release</h2><p>Shift against the baseline in SD units of the "
             "release (additive task + model + discussion fit, HC3 95% CI; range of per-model simple effects).</p>",
             _table_html(report["prediction"]["rows"], ["design", "feature", "predicted", "ci_low", "ci_high",
                                                        "model_low", "model_high", "n_models", "n", "note"]),
             f"<p>Recommended: {e(str(report['prediction']['recommended'] or 'keep ' + report['baseline']))}; "
             f"verified: {e(str(report['prediction'].get('checked')))}; scores "
             f"{e(json.dumps(report['prediction']['scores']))}</p>",
             "<h3>Shifts seen in the pilot itself (descriptive, small N)</h3>",
             _table_html(report["prediction"]["pilot_observed"], ["design", "feature", "pilot_shift"])]
    if report.get("verification"):
        parts += ["<h2>Verification on fresh sessions</h2>",
                  _table_html(report["verification"]["rows"],
                              ["feature", "n_baseline", "n_design", "baseline_mean", "design_mean", "predicted",
                               "measured", "ci_low", "ci_high", "verdict", "n_needed_per_design"])]
    parts.append(f"<h2>Verdict: {e(report['verdict'])}</h2><p>{e(report['verdict_text'])}</p>")
    parts.append(f"<p>Timings (s): {e(json.dumps(report.get('timings', {})))}</p>")
    style = "table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px;font:13px sans-serif}"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Pilot report</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>")
