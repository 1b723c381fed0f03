"""How far a measure (an LLM judge, semantic distance) agrees with people, on items people rated.

``validation_report`` takes the rated items (``engine.importers.human_scores``) and one score per
item from the measure, and reports, as plain JSON values:

* ``n``, ``pearson``, ``spearman``: the measure against the people's mean rating, each with its
  95% interval (``engine.stats.correlation``: Fisher z); undefined, with the reason, when either
  side does not vary (a judge that gives every item one score) or fewer than 4 items remain.
* ``weighted_kappa``: where the measure answers on the people's whole-number scale (a judge asked
  for the same scale): Cohen's quadratic weighted kappa between the two, both rounded to the
  scale's whole numbers (``engine.stats.agreement.weighted_kappa``); None for a continuous measure.
* ``icc``, ``krippendorff_alpha``: the people's own agreement where the file has several raters:
  ICC(2,1), ICC(2,k) and ICC(3,k) of Shrout & Fleiss (1979) (paper A's Table 4 reports ICC(3,5) of
  its five raters) and Krippendorff's interval alpha; None with the reason for one rating column.
* ``beside_people`` (the paper B way, appendix G.2: a judge's agreement with people set beside the
  people's agreement with each other): per rater, Spearman of that rater against the mean of the
  others, and of the measure against the same mean (so both face one panel of k - 1); and the
  share of item pairs the measure orders as the people's mean does, beside the share two raters
  order alike.
* ``within_prompt``: the pooled within-prompt Pearson r (measure and people each centred on their
  prompt's mean), for a measure whose level moves with the prompt.
* ``per_prompt``: the correlations within each prompt with at least ``MIN_PER_PROMPT`` items
  (fewer: the counts and means only).
* ``disagreements``: the items whose percentile ranks differ most, with both texts.
* ``calibration``: the people's mean rating in bins of the measure (its whole-number values, or
  deciles of a continuous measure), each with N and, from 3 items, a 95% t-interval.
* ``scores``: every item's id, prompt, people's mean and measure (None where unreadable), for a scatter.
* ``unreadable``: items the measure could not score (a judge's answer unreadable after its
  retries), counted and left out, never filled.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from engine.errors import InputError
from engine.importers.human_scores import rater_matrix
from engine.stats import correlation as corr
from engine.stats.agreement import icc, krippendorff_alpha, panel_agreement, weighted_kappa
from engine.stats.guards import MIN_GROUPS_FOR_INTERVAL

MIN_PER_PROMPT = 10
TOP_DISAGREEMENTS = 20
CALIBRATION_BINS = 10
PAIR_BLOCK = 512
MAX_ORDER_ITEMS = 20_000  # pairs of at most this many items (a seeded sample past it)
ICC_KINDS = ("ICC(2,1)", "ICC(2,k)", "ICC(3,k)")


def _clean(value):
    """JSON-safe: NaN and infinities to None, numpy scalars to Python."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def order_agreement(a, b) -> dict:
    """The share of item pairs that ``a`` and ``b`` order alike, over the pairs both order
    (a tie on either side is left out): concordant / (concordant + discordant), which is
    (1 + Goodman-Kruskal gamma) / 2. Items missing on either side are left out."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    total = len(a)
    if total > MAX_ORDER_ITEMS:  # every pair is n^2 / 2: past this, a seeded sample of the items
        chosen = np.random.default_rng(0).choice(total, MAX_ORDER_ITEMS, replace=False)
        a, b = a[chosen], b[chosen]
    concordant = discordant = 0
    for start in range(0, len(a), PAIR_BLOCK):
        da = np.sign(a[start:start + PAIR_BLOCK, None] - a[None, :])
        db = np.sign(b[start:start + PAIR_BLOCK, None] - b[None, :])
        product = da * db
        concordant += int((product > 0).sum())
        discordant += int((product < 0).sum())
    pairs = (concordant + discordant) // 2  # every pair was counted twice (i, j) and (j, i)
    return {"share": concordant / (concordant + discordant) if pairs else None, "pairs": pairs,
            "items": int(len(a)), "sampled_from": int(total) if total > len(a) else None}


def row_means(values: np.ndarray) -> np.ndarray:
    """Each row's mean over its readable values (NaN for a row with none)."""
    counts = np.isfinite(values).sum(axis=1)
    sums = np.where(np.isfinite(values), values, 0.0).sum(axis=1)
    return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _leave_one_out(raters: np.ndarray, measure: np.ndarray) -> dict:
    """Per rater: Spearman of the rater, and of the measure, against the mean of the other raters."""
    rows = []
    for r in range(raters.shape[1]):
        rest = row_means(np.delete(raters, r, axis=1))
        person = corr.correlation(raters[:, r], rest, "spearman", names=(f"rater {r + 1}", "the other raters"))
        machine = corr.correlation(measure, rest, "spearman", names=("the measure", "the other raters"))
        rows.append({"rater": r + 1, "person_vs_rest": person["value"], "person_n": person["n"],
                     "measure_vs_rest": machine["value"], "measure_n": machine["n"],
                     "note": "; ".join(x for x in (person["note"], machine["note"]) if x)})
    people = [row["person_vs_rest"] for row in rows if row["person_vs_rest"] is not None]
    machines = [row["measure_vs_rest"] for row in rows if row["measure_vs_rest"] is not None]
    return {"per_rater": rows,
            "person_vs_rest_mean": float(np.mean(people)) if people else None,
            "measure_vs_rest_mean": float(np.mean(machines)) if machines else None}


def _rater_pairs_order(raters: np.ndarray) -> dict:
    shares, pairs = [], 0
    k = raters.shape[1]
    for r in range(k):
        for s in range(r + 1, k):
            found = order_agreement(raters[:, r], raters[:, s])
            if found["share"] is not None:
                shares.append(found["share"])
                pairs += found["pairs"]
    return {"share": float(np.mean(shares)) if shares else None, "rater_pairs": len(shares), "item_pairs": pairs}


def people_agreement(raters: np.ndarray | None) -> dict:
    """``{"icc": {...} | None, "krippendorff_alpha": {...} | None, "note"}`` of the raters' matrix."""
    if raters is None:
        return {"icc": None, "krippendorff_alpha": None,
                "note": "one rating column (a mean): the raters' own agreement cannot be computed"}
    notes = []
    out: dict = {"icc": None, "krippendorff_alpha": None}
    try:
        found = icc(raters)
        out["icc"] = {"n": found.n, "k": found.k, "dropped": found.dropped,
                      **{kind: {"label": found.label(kind), "value": found.values[kind],
                                "ci": list(found.intervals[kind])} for kind in ICC_KINDS}}
    except InputError as error:
        notes.append(f"ICC: {error.reason}")
    try:
        alpha = krippendorff_alpha(raters)
        out["krippendorff_alpha"] = {"value": alpha.alpha, "items": alpha.units, "ratings": alpha.values}
    except InputError as error:
        notes.append(f"alpha: {error.reason}")
    out["note"] = "; ".join(notes)
    return out


def _kappa(measure: np.ndarray, human: np.ndarray, scale: tuple[int, int] | None) -> dict | None:
    if scale is None:
        return None
    low, high = scale
    keep = np.isfinite(measure) & np.isfinite(human)

    def whole(values):  # round half up, then onto the scale
        return np.clip(np.floor(values + 0.5), low, high)

    try:
        found = weighted_kappa(whole(measure[keep]), whole(human[keep]), range(low, high + 1))
    except InputError as error:
        return {"value": None, "n": int(keep.sum()), "note": error.reason, "weights": "quadratic"}
    return {"value": found.kappa, "n": found.n, "weights": found.weights, "scale": [low, high],
            "note": f"both rounded to the whole numbers {low}..{high} (half up)"}


def per_prompt(frame: pd.DataFrame, measure: np.ndarray) -> list[dict]:
    rows = []
    data = frame.assign(_measure=measure)
    for group, part in data.groupby("group", sort=False):
        complete = part[np.isfinite(part["_measure"]) & np.isfinite(part["human"])]
        row = {"prompt": group, "n": int(len(complete)), "unreadable": int(len(part) - len(complete)),
               "human_mean": float(complete["human"].mean()) if len(complete) else None,
               "measure_mean": float(complete["_measure"].mean()) if len(complete) else None,
               "pearson": None, "spearman": None, "note": ""}
        if len(complete) >= MIN_PER_PROMPT:
            for method in ("pearson", "spearman"):
                found = corr.correlation(complete["_measure"], complete["human"], method)
                row[method] = {"value": found["value"], "ci": found["ci"]}
                if found["note"]:
                    row["note"] = found["note"]
        else:
            row["note"] = f"N = {len(complete)} < {MIN_PER_PROMPT}: no correlation"
        rows.append(row)
    return sorted(rows, key=lambda r: (-r["n"], str(r["prompt"])))


def within_prompt(frame: pd.DataFrame, measure: np.ndarray) -> dict:
    """The pooled within-prompt correlation: Pearson's r of the measure and the people's mean, each
    centred on its prompt's mean (prompts with one item drop out), so a measure whose level differs
    from prompt to prompt (semantic distance to a different object) is judged within each prompt;
    95% Fisher interval on N - G - 2 degrees of freedom (G prompts)."""
    data = pd.DataFrame({"g": frame["group"].to_numpy(), "m": measure, "h": frame["human"].to_numpy(dtype=float)})
    data = data[np.isfinite(data["m"]) & np.isfinite(data["h"])]
    data = data[data.groupby("g")["m"].transform("size") > 1]
    groups = int(data["g"].nunique())
    out = {"value": None, "ci": None, "n": int(len(data)), "prompts": groups, "note": ""}
    if groups == 0 or len(data) - groups - 2 < 1:
        out["note"] = f"{len(data)} items in {groups} prompts: too few for a within-prompt correlation"
        return out
    m = data["m"] - data.groupby("g")["m"].transform("mean")
    h = data["h"] - data.groupby("g")["h"].transform("mean")
    reason = corr.undefined_reason(m.to_numpy(), h.to_numpy())
    if reason:
        out["note"] = reason
        return out
    r = float(np.corrcoef(m, h)[0, 1])
    half = scipy_stats.norm.ppf(0.975) / math.sqrt(len(data) - groups - 2)
    centre = math.atanh(min(max(r, -1 + 1e-15), 1 - 1e-15))
    out.update(value=r, ci=[math.tanh(centre - half), math.tanh(centre + half)])
    return out


def disagreements(frame: pd.DataFrame, measure: np.ndarray, top: int = TOP_DISAGREEMENTS) -> list[dict]:
    """The items whose percentile ranks (average ranks / N) under the measure and under the
    people's mean differ most; ``gap`` > 0: the measure ranks it higher than the people do."""
    keep = np.isfinite(measure) & np.isfinite(frame["human"].to_numpy(dtype=float))
    part = frame[keep].assign(measure=measure[keep])
    if part.empty:
        return []
    n = len(part)
    part = part.assign(measure_percentile=scipy_stats.rankdata(part["measure"]) / n,
                       human_percentile=scipy_stats.rankdata(part["human"]) / n)
    part = part.assign(gap=part["measure_percentile"] - part["human_percentile"])
    part = part.reindex(part["gap"].abs().sort_values(ascending=False, kind="stable").index).head(top)
    return [{"item": r.item, "row": int(r.row), "prompt": r.prompt, "response": r.response, "human": float(r.human),
             "measure": float(r.measure), "human_percentile": float(r.human_percentile),
             "measure_percentile": float(r.measure_percentile), "gap": float(r.gap)}
            for r in part.itertuples()]


def calibration(measure: np.ndarray, human: np.ndarray, whole_numbers: bool) -> list[dict]:
    """The people's mean in bins of the measure: its whole-number values, or deciles."""
    keep = np.isfinite(measure) & np.isfinite(human)
    m, h = measure[keep], human[keep]
    if not len(m):
        return []
    if whole_numbers:
        labels = np.floor(m + 0.5)
    else:
        bins = min(CALIBRATION_BINS, max(1, len(m) // MIN_GROUPS_FOR_INTERVAL))
        labels = pd.qcut(m, q=bins, labels=False, duplicates="drop")
    rows = []
    for label in sorted(pd.unique(labels)):
        inside = labels == label
        values = h[inside]
        row = {"bin": int(label) if not whole_numbers else float(label), "n": int(inside.sum()),
               "measure_low": float(m[inside].min()), "measure_high": float(m[inside].max()),
               "measure_mean": float(m[inside].mean()), "human_mean": float(values.mean()),
               "human_sd": float(values.std(ddof=1)) if len(values) > 1 else None, "human_ci": None}
        if len(values) >= MIN_GROUPS_FOR_INTERVAL and row["human_sd"] is not None:
            half = scipy_stats.t.ppf(0.975, len(values) - 1) * row["human_sd"] / math.sqrt(len(values))
            row["human_ci"] = [row["human_mean"] - half, row["human_mean"] + half]
        rows.append(row)
    return rows


def validation_report(frame: pd.DataFrame, measure, *, measure_info: dict, scale: tuple[int, int] | None = None,
                      panel_scores: np.ndarray | None = None) -> dict:
    """The report (module docstring) of ``measure`` (one value per row of ``frame``; NaN =
    unreadable) against the people's ratings in ``frame``. ``scale``: the whole-number scale the
    measure answers on, when it is the people's (then the weighted kappa applies and the
    calibration bins are its values). ``panel_scores``: the judge's items x raters matrix, for
    the judge panel's own agreement."""
    measure = np.asarray(measure, dtype=float)
    if len(measure) != len(frame):
        raise ValueError(f"{len(measure)} measure values for {len(frame)} items")
    human = frame["human"].to_numpy(dtype=float)
    raters = rater_matrix(frame)
    rater_values = None if raters is None else raters.to_numpy(dtype=float)
    source = dict(frame.attrs.get("human_scores", {}))
    pearson = corr.correlation(measure, human, "pearson")
    spearman = corr.correlation(measure, human, "spearman")
    people = people_agreement(rater_values)
    beside = {"order_measure_vs_people": order_agreement(measure, human),
              "order_rater_vs_rater": _rater_pairs_order(rater_values) if rater_values is not None else None}
    if rater_values is not None:
        beside.update(_leave_one_out(rater_values, measure))
    report = {
        "source": source,
        "measure": measure_info,
        "n": pearson["n"],
        "items": int(len(frame)),
        "unreadable": int((~np.isfinite(measure)).sum()),
        "pearson": {k: pearson[k] for k in ("value", "ci", "p", "n", "note")},
        "spearman": {k: spearman[k] for k in ("value", "ci", "p", "n", "note")},
        "within_prompt": within_prompt(frame, measure),
        "weighted_kappa": _kappa(measure, human, scale),
        "icc": people["icc"],
        "krippendorff_alpha": people["krippendorff_alpha"],
        "people_note": people["note"],
        "beside_people": beside,
        "judge_panel": (panel_agreement(panel_scores, judge=measure_info.get("judge") or measure_info.get("name", ""))
                        if panel_scores is not None and panel_scores.shape[1] > 1 else None),
        "per_prompt": per_prompt(frame, measure),
        "disagreements": disagreements(frame, measure),
        "calibration": calibration(measure, human, whole_numbers=scale is not None),
        "scores": [{"item": i, "prompt": g, "human": h, "measure": m}
                   for i, g, h, m in zip(frame["item"], frame["group"], human, measure)],
    }
    report["text"] = report_lines(report)
    return _clean(report)


def report_lines(report: dict) -> list[str]:
    """The report in words, one line per finding (what the CLI prints)."""
    source, measure = report["source"], report["measure"]
    lines = [f"{measure.get('name', measure.get('kind'))} against people's ratings in {source.get('path', '?')} "
             f"({report['items']:,} items, {len(source.get('raters', []))} rating column(s))"]
    if report["unreadable"]:
        lines.append(f"unreadable: {report['unreadable']:,} items had no readable score and are left out "
                     "(counted, not filled)")
    for key in ("pearson", "spearman"):
        lines.append(corr.text({"method": key, **report[key]}))
    inside = report["within_prompt"]
    if inside["value"] is not None:
        lines.append(f"within prompts (each side centred on its prompt's mean): Pearson r = {inside['value']:.3f} "
                     f"[{inside['ci'][0]:.3f}, {inside['ci'][1]:.3f}], N = {inside['n']:,} in {inside['prompts']} prompts")
    kappa = report["weighted_kappa"]
    if kappa is not None:
        lines.append(f"weighted kappa (quadratic) = {kappa['value']:.3f}, N = {kappa['n']:,}; {kappa['note']}"
                     if kappa["value"] is not None else f"weighted kappa: not computed ({kappa['note']})")
    if report["icc"]:
        found = report["icc"]
        lines.append("people's agreement: " + ", ".join(
            f"{found[k]['label']} = {found[k]['value']:.3f} [{found[k]['ci'][0]:.3f}, {found[k]['ci'][1]:.3f}]"
            for k in ICC_KINDS) + f" over {found['n']} items x {found['k']} raters")
    if report["krippendorff_alpha"]:
        alpha = report["krippendorff_alpha"]
        lines.append(f"Krippendorff's alpha (interval) = {alpha['value']:.3f} over {alpha['items']} items")
    if report["people_note"]:
        lines.append(f"people's agreement: {report['people_note']}")
    beside = report["beside_people"]
    order = beside["order_measure_vs_people"]
    if order["share"] is not None:
        text = f"pairs ordered as the people's mean orders them: {100 * order['share']:.1f}% of {order['pairs']:,}"
        raters = beside.get("order_rater_vs_rater")
        if raters and raters["share"] is not None:
            text += f"; two raters order a pair alike: {100 * raters['share']:.1f}%"
        lines.append(text)
    if beside.get("person_vs_rest_mean") is not None and beside.get("measure_vs_rest_mean") is not None:
        lines.append(f"against the mean of the other raters (Spearman, mean over raters): a person "
                     f"{beside['person_vs_rest_mean']:.3f}, the measure {beside['measure_vs_rest_mean']:.3f}")
    if report.get("judge_panel"):
        lines.append(f"the judge's raters with each other: {report['judge_panel']['text']}")
    computed = [p for p in report["per_prompt"] if p["spearman"]]
    lines.append(f"per prompt: {len(computed)} of {len(report['per_prompt'])} prompts have N >= {MIN_PER_PROMPT} "
                 "and a correlation")
    return lines
