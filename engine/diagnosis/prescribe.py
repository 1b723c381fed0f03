"""Prescribe and verify: a budgeted pilot on a new model, a diagnosis, a prediction from the
paper release, and a check of that prediction on fresh sessions.

Paper A (Discussion) proposes a diagnostic heuristic: "compute trajectory features from a
small set of pilot conversations to diagnose a new model's default semantic behavior, and
then select the discussion structure that corrects its geometric deficits". This module
runs that loop and then tests it:

1. **Pilot** (``<out>/pilot``, a resumable ``run_grid`` folder): the budget's designs (by
   default paper A's open and iterative structures plus paper B's Creative-MAD) on its
   tasks, ``replicates`` each.
2. **Diagnosis** (``engine.diagnosis.diagnose``): the baseline design's features against the paper
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
   measured standardised shift (Hedges' g, design minus baseline) with a 95% interval from
   the noncentral t of Welch's statistic, and a verdict (``verdict``): held / did not hold
   only with at least 5 sessions per design (``engine.stats.guards.MIN_SESSIONS_TO_VERIFY``),
   after Holm's adjustment over the target features (``MULTIPLICITY``); otherwise
   inconclusive with the reason and the N per design that 80% power at alpha .05 would need
   for the predicted shift.

The diagnosis follows ``engine.diagnosis.diagnose``'s guards: with fewer than 5 successful baseline
sessions it shows the raw numbers and flags nothing, and the targets are then the five
Table 23 features (said in ``targets_from``).

Every stage is cached in ``<out>``: the run folders resume like ``engine run``; features
(``features_<stage>.csv``) and the prediction (``prediction.json``) are recomputed only when
their inputs changed. ``report.json`` and ``report.html`` (one file, every text escaped)
hold the whole report. Paper A's designs run with ``fidelity="release"`` (``PILOT_FIDELITY``),
as the release's conversations were made, and the plan lists each design with its fidelity.
Features are computed with all-MiniLM-L6-v2 (the release used Qwen3-Embedding-0.6B), so the
diagnosis against the release shows the values side by side as not comparable and flags
nothing (``engine.diagnosis.diagnose``); the targets are then the five Table 23 features, and
predicted and measured shifts are both standardised effects, each in its own embedding's SD:
the verification compares the user's designs with each other under one embedder.
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

from engine.diagnosis.diagnose import CREATIVITY_DIRECTION, diagnose, too_few_sessions_text
from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.stats.guards import MIN_SESSIONS_TO_DIAGNOSE

VERDICTS = ("held", "did not hold", "inconclusive")
POWER_Z = 1.959964 + 0.841621  # two-sided alpha .05, power .80
REFERENCE_STRUCTURES = ("instructed", "open", "iterative")  # paper A's trajectory sample
PILOT_FIDELITY = "release"  # paper A's designs as the reference (the release's code) made them


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
    baseline_replicates: int | None = None  # the baseline's pilot sessions (default: replicates)

    def pilot_replicates(self, design: str, baseline: str) -> int:
        if design == baseline and self.baseline_replicates:
            return max(self.baseline_replicates, self.replicates)
        return self.replicates


BUDGETS = {
    # runs in minutes on the local SmolLM2-135M (1-2 s a call on a free CPU): one task,
    # short turns and replies; the baseline gets the 5 sessions a diagnosis needs and the
    # verification 5 sessions per design, the least a verdict needs (engine.stats.guards);
    # the other pilot designs 2 each (descriptive only)
    "small": Budget("small", ("plastic_waste",), 2, 5,
                    {"temperature": 1.0, "max_tokens": 40, "idea_words": "20-30"},
                    {"open": {"method": "open", "agents": 3, "turn_limit": 4, "fidelity": PILOT_FIDELITY},
                     "iterative": {"method": "iterative", "agents": 2, "turn_limit": 3,
                                   "initial_generation": False, "fidelity": PILOT_FIDELITY},
                     "instructed": {"method": "instructed", "agents": 3, "turn_limit": 5,
                                    "initial_generation": False, "fidelity": PILOT_FIDELITY},
                     "creative_mad": {"method": "creative_mad", "agents": 3, "rounds": 1, "k": 1}},
                    baseline_replicates=5),
    # paper A's six tasks, 2 replicates each (the design the paper's heuristic suggests)
    "standard": Budget("standard", "all", 2, 6,
                       {"temperature": 1.0, "max_tokens": 256, "idea_words": "80-100"},
                       {"open": {"method": "open", "agents": 3, "turn_limit": 12, "fidelity": PILOT_FIDELITY},
                        "iterative": {"method": "iterative", "agents": 3, "turn_limit": 6,
                                      "fidelity": PILOT_FIDELITY},
                        "instructed": {"method": "instructed", "agents": 3, "turn_limit": 12,
                                       "fidelity": PILOT_FIDELITY},
                        "creative_mad": {"method": "creative_mad", "agents": 5, "rounds": 2}}),
}


# -- the plan ---------------------------------------------------------------------------------
def stage_grid(budget: Budget, designs: Sequence[str], *, model: str, seed: int, replicates: int | dict,
               name: str, base_url=None, api_key_env: str | None = None) -> dict:
    """The grid dict of one stage (a run folder of ``engine.runs.runner.run_grid``); ``replicates``
    is one number for every design or ``{design: number}``."""
    unknown = [d for d in designs if d not in budget.designs]
    if unknown:
        raise InputError(f"unknown design {unknown[0]!r}; this budget has {', '.join(budget.designs)}",
                         field="designs")
    grid = {"name": name, "model": model, "seed": seed, "concurrency": 2,
            "tasks": budget.tasks if budget.tasks == "all" else list(budget.tasks),
            "defaults": dict(budget.defaults),
            "conditions": [{**budget.designs[d], "replicates": replicates[d] if isinstance(replicates, dict)
                            else replicates} for d in designs]}
    if base_url is not None:  # "" is refused by the grid, never read as "no URL"
        grid["base_url"] = base_url
    if api_key_env:
        grid["api_key_env"] = api_key_env
    return grid


def plan_text(grid: dict, label: str) -> tuple[str, dict]:
    """One line: sessions, calls, tokens and cost of a stage (``engine.runs.runner.estimate``)."""
    from engine.llm.pricing import cost_of, format_cost
    from engine.llm.providers import endpoint_price
    from engine.runs.grid import load_grid, model_endpoint, plan
    from engine.runs.runner import estimate

    spec = load_grid(grid)
    budget = estimate(plan(spec))
    cost = cost_of(endpoint_price(model_endpoint(spec)), budget["prompt_tokens"],
                   budget["completion_tokens"])
    budget["cost_usd"] = cost
    return (f"{label}: {budget['sessions']} sessions, at most {budget['calls']:,} chat calls, about "
            f"{budget['prompt_tokens']:,} prompt + {budget['completion_tokens']:,} completion tokens, "
            f"{format_cost(cost)}"), budget


# -- features of a stage ----------------------------------------------------------------------
def stage_features(run_dir: Path, embedder_factory: Callable[[], Any], cache: Path) -> pd.DataFrame:
    """Table 19 features of every finished session of a run folder, one row each, with its
    ``design`` (the protocol) and task; cached in ``cache`` keyed by the sessions' ids."""
    from engine.datasets import dataset_from_corpus
    from engine.runs.run_folder import read_run_corpus

    corpus = read_run_corpus(run_dir).filter(lambda c: c.status == "ok")
    ids = sorted(c.conversation_id for c in corpus)
    key = hashlib.sha256("\n".join(["with n_turns", *ids]).encode()).hexdigest()[:16]
    if cache.exists() or cache.is_symlink():
        table = _cached_features(cache, key, ids)
        if table is not None:
            return table
    if not ids:
        raise InputError("no finished session to measure", path=str(run_dir))
    dataset = dataset_from_corpus(corpus, embedder_factory(), name=run_dir.name)
    table = dataset.conversations
    keep = ["conversation_id", "task", "discussion", "n_turns", "fidelity", "generator", "prompts_revision",
            *PAPER_A_FEATURES]
    table = table[[c for c in keep if c in table.columns]].rename(columns={"discussion": "design"})
    table["cache_key"] = key
    table["embedding_model"] = dataset.manifest.get("embedding_model")
    _atomic_write_text(cache, table.to_csv(index=False))
    return table


def _cached_features(cache: Path, key: str, ids: list[str]) -> pd.DataFrame | None:
    """The cached feature table when it is whole and for exactly these sessions; None to
    recompute. A damaged cache (cut short, empty, not a table, rows missing) is said in one
    line and recomputed: it holds nothing the run folder does not."""
    import sys

    try:
        table = pd.read_csv(cache)
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError) as error:
        print(f"note: file {cache}: damaged feature cache ({type(error).__name__}); computed again",
              file=sys.stderr)
        return None
    if "cache_key" in table.columns and len(table) and table["cache_key"].iloc[0] != key:
        return None  # made for other sessions: not damaged, just old
    columns = {"conversation_id", "design", "cache_key", *PAPER_A_FEATURES}
    if (not len(table) or not columns <= set(table.columns) or (table["cache_key"] != key).any()
            or sorted(table["conversation_id"].astype(str)) != ids):
        print(f"note: file {cache}: damaged feature cache (rows or columns missing); computed again",
              file=sys.stderr)
        return None
    return table


def _cached_prediction(path: Path, key: dict) -> pd.DataFrame | None:
    """The cached prediction when it is whole and made for ``key``; a damaged one (cut
    short, empty, without ``rows``) is said in one line and computed again."""
    import sys

    try:
        cached = json.loads(path.read_bytes().decode("utf-8"))
        if not isinstance(cached, dict):
            raise ValueError("not a JSON object")
        if cached.get("key") != key:
            return None
        rows = cached["rows"]
        if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
            raise ValueError("no rows")
        frame = pd.DataFrame(rows)
        if not {"design", "feature", "predicted"} <= set(frame.columns):
            raise ValueError("columns missing")
        return frame
    except (OSError, ValueError, KeyError, UnicodeDecodeError, RecursionError) as error:
        print(f"note: file {path}: damaged prediction cache ({type(error).__name__}: {error}); "
              f"computed again", file=sys.stderr)
        return None


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
MULTIPLICITY = ("With several target features each verdict is taken after Holm's step-down adjustment over "
                "them (family-wise alpha .05): the prediction held overall only if every feature held, and did "
                "not hold if any feature did not hold after the adjustment; with one feature this is its own "
                "95% interval.")
INTERVAL = ("measured shift: Hedges' g of the design minus the baseline (pooled SD, small-sample corrected) with "
            "a 95% interval from the noncentral t of Welch's statistic; no bootstrap")


def standardised_shift(baseline: np.ndarray, design: np.ndarray) -> float:
    """(mean design - mean baseline) / pooled SD."""
    pooled = math.sqrt(((len(baseline) - 1) * baseline.var(ddof=1) + (len(design) - 1) * design.var(ddof=1))
                       / (len(baseline) + len(design) - 2))
    return float((design.mean() - baseline.mean()) / pooled) if pooled > 0 else float("nan")


def needed_n(predicted_sd_units: float, observed_sd: float) -> int | None:
    """Sessions per design for 80% power (two-sided alpha .05) to detect the predicted shift,
    given the observed SD: n = 2 (z_.975 + z_.80)^2 SD^2 / shift^2, shift = predicted x SD, so
    the SD cancels: n = 2 (z_.975 + z_.80)^2 / predicted^2 (None for a zero or unknown shift)."""
    if not math.isfinite(predicted_sd_units) or predicted_sd_units == 0:
        return None
    return int(math.ceil(2 * POWER_Z ** 2 / predicted_sd_units ** 2))


def verdict(predicted: float, ci_low: float, ci_high: float) -> str:
    """One feature's rule on its 95% interval. held: the CI excludes 0 on the predicted side.
    did not hold: the CI lies wholly below half the predicted shift (which includes excluding 0
    on the other side). Else inconclusive."""
    if not all(math.isfinite(v) for v in (predicted, ci_low, ci_high)) or predicted == 0:
        return "inconclusive"
    sign = 1.0 if predicted > 0 else -1.0
    low, high = sorted((sign * ci_low, sign * ci_high))  # oriented: the prediction is positive
    if low > 0:
        return "held"
    if high < abs(predicted) / 2:
        return "did not hold"
    return "inconclusive"


def _one_sided(baseline: np.ndarray, design: np.ndarray, predicted: float) -> tuple[float, float]:
    """Two-sided-equivalent p-values (2 x one-sided, capped at 1) of the two claims a verdict
    makes, from Welch's statistic oriented so the prediction is positive: *held* (shift > 0) and
    *did not hold* (shift < half the prediction, in the g units of ``hedges_g``: noncentrality
    |predicted| / 2 x pooled SD / (J x SE)). Each is < .05 exactly when the 95% interval of g
    excludes 0 on the predicted side / lies below half the prediction."""
    from scipy import stats as scipy_stats

    from engine.stats.guards import hedges_j, welch

    test = welch(design, baseline)
    if not math.isfinite(test["t"]) or not math.isfinite(predicted) or predicted == 0:
        return float("nan"), float("nan")
    sign = 1.0 if predicted > 0 else -1.0
    t, df = sign * test["t"], test["df"]
    n1, n2 = len(design), len(baseline)
    pooled = math.sqrt(((n1 - 1) * design.var(ddof=1) + (n2 - 1) * baseline.var(ddof=1)) / (n1 + n2 - 2))
    ncp = abs(predicted) / 2 * pooled / (hedges_j(n1 + n2 - 2) * test["se"])
    held = min(1.0, 2 * float(scipy_stats.t.sf(t, df)))
    not_held = min(1.0, 2 * float(scipy_stats.nct.cdf(t, df, ncp)))
    return held, not_held


def verify(features: pd.DataFrame, baseline: str, design: str, prediction: pd.DataFrame,
           targets: Sequence[str], *, seed: int = 0) -> pd.DataFrame:
    """Measured shift of each target feature, its interval, verdict, reason and needed N.

    A feature gets **held** / **did not hold** only with ``MIN_SESSIONS_TO_VERIFY`` (5) or more
    sessions of each design (``engine.stats.guards``); otherwise **inconclusive** with the
    reason. Shift: Hedges' g (design - baseline) with its 95% CI from Welch's statistic
    (``INTERVAL``; shown from 3 sessions a side). Several features: Holm's adjustment
    (``MULTIPLICITY``), columns ``p_held_holm`` and ``p_not_held_holm``. ``seed`` is kept for
    the signature (no resampling is done).
    """
    from engine.stats.guards import (MIN_GROUPS_FOR_INTERVAL, MIN_SESSIONS_TO_VERIFY, VERIFY_ALPHA, hedges_g,
                                     holm)

    rows = []
    for feature in targets:
        a = features.loc[features["design"] == baseline, feature].dropna().to_numpy(float)
        b = features.loc[features["design"] == design, feature].dropna().to_numpy(float)
        predicted_row = prediction[(prediction["design"] == design) & (prediction["feature"] == feature)]
        predicted = float(predicted_row["predicted"].iloc[0]) if len(predicted_row) else float("nan")
        pooled = float(np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)) if len(a) > 1 and len(b) > 1 else float("nan")
        shown = min(len(a), len(b)) >= MIN_GROUPS_FOR_INTERVAL
        g = hedges_g(b, a) if shown else {"g": float("nan"), "g_low": float("nan"), "g_high": float("nan"),
                                          "p": float("nan")}
        enough = min(len(a), len(b)) >= MIN_SESSIONS_TO_VERIFY
        p_held, p_not = _one_sided(a, b, predicted) if enough else (float("nan"), float("nan"))
        rows.append({"feature": feature, "n_baseline": len(a), "n_design": len(b),
                     "baseline_mean": float(a.mean()) if len(a) else np.nan,
                     "design_mean": float(b.mean()) if len(b) else np.nan, "observed_sd": pooled,
                     "predicted": predicted, "measured": g["g"], "ci_low": g["g_low"], "ci_high": g["g_high"],
                     "p": g["p"], "p_held": p_held, "p_not_held": p_not, "enough": enough})
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table["p_held_holm"] = holm(table["p_held"])
    table["p_not_held_holm"] = holm(table["p_not_held"])
    verdicts, reasons, needed = [], [], []
    m = int(table["p_held"].notna().sum())
    for row in table.itertuples():
        n_for_power = needed_n(row.predicted, row.observed_sd)
        if not row.enough:
            outcome = "inconclusive"
            reason = (f"too few sessions: {row.n_baseline} and {row.n_design}; at least {MIN_SESSIONS_TO_VERIFY} "
                      "per design are needed for a verdict")
            if n_for_power:
                reason += f", about {n_for_power} per design for 80% power"
        elif not math.isfinite(row.predicted) or row.predicted == 0:
            outcome, reason = "inconclusive", "no predicted shift to check"
        elif row.p_held_holm < VERIFY_ALPHA:
            outcome = "held"
            reason = "the 95% interval excludes 0 on the predicted side" + (
                f" (Holm-adjusted over {m} features: p = {row.p_held_holm:.3g})" if m > 1 else "")
        elif row.p_not_held_holm < VERIFY_ALPHA:
            outcome = "did not hold"
            reason = "the 95% interval lies below half the predicted shift" + (
                f" (Holm-adjusted over {m} features: p = {row.p_not_held_holm:.3g})" if m > 1 else "")
        else:
            outcome = "inconclusive"
            alone = verdict(row.predicted, row.ci_low, row.ci_high)
            if alone != "inconclusive" and m > 1:
                reason = (f"alone its interval says {alone}, but not after Holm's adjustment over {m} features "
                          f"(adjusted p = {min(row.p_held_holm, row.p_not_held_holm):.3g})")
            else:
                reason = "the 95% interval spans 0 and half the predicted shift"
            if n_for_power:
                reason += f"; about {n_for_power} sessions per design would be needed"
        verdicts.append(outcome)
        reasons.append(reason)
        needed.append(n_for_power if outcome == "inconclusive" else None)
    table["verdict"] = verdicts
    table["reason"] = reasons
    table["n_needed_per_design"] = pd.Series(needed, dtype=object)
    return table.drop(columns=["enough"])


def overall_verdict(table: pd.DataFrame) -> str:
    """held if every target feature held; did not hold if any did not (each after Holm's
    adjustment, ``MULTIPLICITY``); else inconclusive."""
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


def prescribe_and_verify(out: str | Path, *, model: str = "local", budget: str = "small",
                    baseline: str = "open", seed: int = 0, base_url=None, api_key_env: str | None = None,
                    dry_run: bool = False, backend=None, embedder=None, reference: pd.DataFrame | None = None,
                    progress: bool = True, say: Callable[[str], None] = print) -> PilotStudy:
    """Run (or resume) the four stages; ``dry_run`` only prints the plan.

    ``backend`` / ``embedder`` replace the model's backend and the MiniLM embedder (tests);
    ``reference`` replaces the paper release's trajectory sample.
    """
    if budget not in BUDGETS:
        raise InputError(f"unknown budget {budget!r}; choose {', '.join(BUDGETS)}", field="budget")
    spec = BUDGETS[budget]
    if baseline not in spec.designs:
        raise InputError(f"unknown baseline {baseline!r}; choose {', '.join(spec.designs)}", field="baseline")
    predictable = (REFERENCE_STRUCTURES if reference is None
                   else tuple(sorted(set(reference["discussion"].dropna().astype(str)))))
    if baseline not in predictable:  # refused before any call, not after the pilot stage
        raise InputError(f"baseline {baseline!r} is not in the paper release ({', '.join(predictable)}): no "
                         f"shift can be predicted against it; choose one of those", field="baseline")
    out = Path(out)
    started = time.monotonic()
    pilot_designs = [baseline] + [d for d in spec.pilot_designs if d != baseline]
    pilot_grid = stage_grid(spec, pilot_designs, model=model, seed=seed,
                            replicates={d: spec.pilot_replicates(d, baseline) for d in pilot_designs},
                            name="pilot", base_url=base_url, api_key_env=api_key_env)
    candidates = [d for d in spec.designs if d != baseline]
    pilot_line, pilot_budget = plan_text(pilot_grid, "1. pilot")
    worst = max(candidates, key=lambda d: plan_text(stage_grid(
        spec, [baseline, d], model=model, seed=seed + 1, replicates=spec.verify_replicates,
        name="verify"), "")[1]["calls"])
    verify_line, verify_budget = plan_text(stage_grid(spec, [baseline, worst], model=model, seed=seed + 1,
                                                      replicates=spec.verify_replicates, name="verify"),
                                           f"4. verification (at most; {baseline} vs {worst})")
    designs = design_list(spec, pilot_designs + [d for d in candidates if d not in pilot_designs])
    say("Plan (nothing has run yet):")
    say("  designs: " + "; ".join(f"{d['design']} ({d['how']})" for d in designs))
    say("  " + pilot_line)
    say("  2. diagnosis and 3. prediction: no model calls (embeddings + the paper release)")
    say("  " + verify_line)
    report: dict[str, Any] = {"model": model, "budget": budget, "baseline": baseline, "seed": seed,
                              "plan": {"pilot": pilot_budget, "verification_at_most": verify_budget,
                                       "lines": [pilot_line, verify_line], "designs": designs}}
    if dry_run:
        _refuse_other_settings(out, _settings(model, base_url, budget, baseline, seed))
        return PilotStudy(out, report)
    from engine.storage.folder_lock import FolderLock

    with FolderLock(out, "pilot"):  # one writer per pilot folder
        settings = _settings(model, base_url, budget, baseline, seed)
        _refuse_other_settings(out, settings)
        _atomic_write_text(out / SETTINGS_FILE, json.dumps(settings, indent=1) + "\n")
        return _run_stages(out, spec, report, model=model, budget=budget, baseline=baseline, seed=seed,
                           base_url=base_url, api_key_env=api_key_env, backend=backend, embedder=embedder,
                           reference=reference, progress=progress, started=started,
                           pilot_grid=pilot_grid, candidates=candidates)


def design_list(spec: Budget, designs: Sequence[str]) -> list[dict[str, Any]]:
    """Each design with its method, its fidelity (paper A's structures) and how it was made."""
    from engine.protocols.registry import method as described

    rows = []
    for name in designs:
        condition = spec.designs[name]
        fidelity = condition.get("fidelity")
        paper = described(condition["method"]).paper
        how = (f"paper {paper}, fidelity {fidelity}: as the paper release's code ran it" if fidelity == "release"
               else f"paper {paper}, fidelity {fidelity}" if fidelity else f"paper {paper}; no fidelity modes")
        rows.append({"design": name, "method": condition["method"], "fidelity": fidelity, "how": how})
    return rows


SETTINGS_FILE = "pilot_settings.json"
SETTINGS_KEYS = ("model", "base_url", "budget", "baseline", "seed")


def _settings(model: str, base_url, budget: str, baseline: str, seed: int) -> dict[str, Any]:
    from engine.llm.replicas import redact_urls

    return {"model": model, "base_url": redact_urls(base_url), "budget": budget, "baseline": baseline,
            "seed": seed}


def _refuse_other_settings(out: Path, settings: dict[str, Any]) -> None:
    """A pilot folder keeps one model, server, budget, baseline and seed: its stages' sessions,
    features and prediction belong to them. Another value is refused, never written over
    (``pilot_settings.json``; a folder of an older version: its ``report.json``)."""
    from engine.runs.run_folder import read_manifest

    recorded = read_manifest(out / SETTINGS_FILE) or read_manifest(out / "report.json")
    for name in SETTINGS_KEYS:
        if name not in recorded or recorded[name] == settings[name]:
            continue
        flag = "--" + name.replace("_", "-")
        raise InputError(f"this pilot folder was made with {name} {recorded[name]!r}, not {settings[name]!r}: "
                         f"its sessions and stages belong to that; use another --out, or {flag} "
                         f"{recorded[name]} to resume", path=str(out))


def _run_stages(out: Path, spec: Budget, report: dict, *, model, budget, baseline, seed, base_url,
                api_key_env, backend, embedder, reference, progress, started, pilot_grid,
                candidates) -> "PilotStudy":
    """Stages 1 to 4 (see the module docstring), in a folder this process holds."""
    from engine.runs.runner import run_grid

    def embedder_factory():
        if embedder is not None:
            return embedder
        from engine.embedding.embedder import Embedder

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
    targets_from = ("flagged deficits" if _deficits(diagnosis) else
                    "no deficit flagged: the five Table 23 features" if diagnosis.diagnosed else
                    "not comparable with the reference (" + "; ".join(diagnosis.not_comparable)
                    + "): the five Table 23 features" if not diagnosis.comparable else
                    f"{too_few_sessions_text(diagnosis.n_pilot)}: the five Table 23 features")
    report["diagnosis"] = {"text": diagnosis.to_text(), "flags": diagnosis.flags, "n": diagnosis.n_pilot,
                           "diagnosed": diagnosis.diagnosed, "caution": diagnosis.caution,
                           "length_note": diagnosis.length_note, "evidence": _records(diagnosis.evidence),
                           "comparable": diagnosis.comparable, "not_comparable": diagnosis.not_comparable,
                           "routes": diagnosis.routes,
                           "targets": needs, "targets_from": targets_from}

    # 3. prediction (cached: depends only on the reference, the baseline and the targets)
    prediction_file = out / "prediction.json"
    key = {"baseline": baseline, "targets": sorted(needs), "candidates": candidates, "n_reference": len(reference)}
    prediction = None
    if prediction_file.exists() or prediction_file.is_symlink():
        prediction = _cached_prediction(prediction_file, key)
    if prediction is None:
        prediction = predict_shifts(reference, baseline, candidates, list(needs))
        _atomic_write_text(prediction_file, json.dumps({"key": key, "rows": _records(prediction)}))
    recommended, scores = recommend(prediction, needs)
    withheld = None
    # no recommendation below the sessions a diagnosis needs; the best candidate is still checked.
    # A diagnosis that does not compare with the release (another embedder) flags nothing; the
    # targets are then the five Table 23 features, and the recommendation rests on the release's
    # standardised design effects, verified under one embedder on fresh sessions
    if diagnosis.n_pilot < MIN_SESSIONS_TO_DIAGNOSE:
        withheld, recommended = recommended, None
    observed = []
    for design in candidates:
        if (pilot["design"] == design).any():
            for feature in needs:
                a = pilot.loc[pilot["design"] == baseline, feature].dropna().to_numpy(float)
                b = pilot.loc[pilot["design"] == design, feature].dropna().to_numpy(float)
                shift = standardised_shift(a, b) if min(len(a), len(b)) >= 2 else float("nan")
                observed.append({"design": design, "feature": feature, "pilot_shift": shift,
                                 "n_baseline": len(a), "n_design": len(b)})
    report["prediction"] = {"rows": _records(prediction), "scores": scores, "recommended": recommended,
                            "withheld": withheld, "pilot_observed": observed}
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
                                  "rows": _records(table), "interval": INTERVAL, "multiplicity": MULTIPLICITY}
        report["verdict"] = overall_verdict(table)
        if recommended:
            why = ""
        elif diagnosis.n_pilot < MIN_SESSIONS_TO_DIAGNOSE:
            why = (f"No recommendation: {too_few_sessions_text(diagnosis.n_pilot)}. Checked instead: the "
                   f"prediction for {checked}, the best-scoring candidate on the five Table 23 features. ")
        else:
            why = (f"No candidate is predicted to move the targets the needed way: keep {baseline}. Checked "
                   f"instead: the prediction for {checked}, the best-scoring candidate. ")
        report["verdict_text"] = why + verdict_text(report["verdict"], checked, baseline, table)
    timings["total_s"] = round(time.monotonic() - started, 1)
    report["timings"] = timings
    _atomic_write_text(out / "report.json", json.dumps(report, indent=1, default=_plain))
    _atomic_write_text(out / "report.html", report_html(report))
    return PilotStudy(out, report)


def recommended_text(report: dict) -> str:
    """The "Recommended:" line of the CLI and the report."""
    prediction, diagnosis = report["prediction"], report["diagnosis"]
    if prediction.get("recommended"):
        return str(prediction["recommended"])
    if diagnosis.get("n", MIN_SESSIONS_TO_DIAGNOSE) < MIN_SESSIONS_TO_DIAGNOSE:
        return f"none ({too_few_sessions_text(diagnosis['n'])})"
    return f"keep {report['baseline']}"


def verdict_text(overall: str, design: str, baseline: str, table: pd.DataFrame) -> str:
    parts = []
    for row in table.itertuples():
        measured = ("no interval" if not math.isfinite(row.measured) else
                    f"measured {row.measured:+.2f} SD" + (f" [{row.ci_low:+.2f}, {row.ci_high:+.2f}]"
                                                          if math.isfinite(row.ci_low) else ""))
        parts.append(f"{row.feature}: predicted {row.predicted:+.2f} SD, {measured} on {row.n_baseline} + "
                     f"{row.n_design} sessions: {row.verdict} ({row.reason})")
    head = {"held": "The prediction held", "did not hold": "The prediction did not hold",
            "inconclusive": "Inconclusive at this N"}[overall]
    many = f" {MULTIPLICITY}" if len(table) > 1 else ""
    return f"{head} ({design} vs {baseline}). " + " | ".join(parts) + many


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
             f"<p>Recommended: {e(recommended_text(report))}; "
             f"verified: {e(str(report['prediction'].get('checked')))}; scores "
             f"{e(json.dumps(report['prediction']['scores']))}</p>",
             "<h3>Shifts seen in the pilot itself (descriptive, small N: no interval, no verdict)</h3>",
             _table_html(report["prediction"]["pilot_observed"],
                         ["design", "feature", "pilot_shift", "n_baseline", "n_design"])]
    if report.get("verification"):
        parts += ["<h2>Verification on fresh sessions</h2>",
                  f"<p>{e(INTERVAL)}. {e(MULTIPLICITY)}</p>",
                  _table_html(report["verification"]["rows"],
                              ["feature", "n_baseline", "n_design", "baseline_mean", "design_mean", "predicted",
                               "measured", "ci_low", "ci_high", "p_held_holm", "p_not_held_holm", "verdict",
                               "reason", "n_needed_per_design"])]
    parts.append(f"<h2>Verdict: {e(report['verdict'])}</h2><p>{e(report['verdict_text'])}</p>")
    parts.append(f"<p>Timings (s): {e(json.dumps(report.get('timings', {})))}</p>")
    style = "table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px;font:13px sans-serif}"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Pilot report</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>")
