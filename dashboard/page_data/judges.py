"""The Judges page's numbers: a measure checked against people (``engine.judging.validate``).

Sources: the validation reports saved under ``cached_runs/human_ratings/*/reports/`` (made by
``python -m engine judge validate ... --out``), a report file given by the user, or a file of
rated items (the shipped OCSAI file, a rating page export, an upload) scored here with semantic
distance by the page's embedder. ``judges_page_data(report)`` turns a report into the page's
tables; ``published`` (``engine.stats.published_judges``) is kept apart, labelled published.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from engine.errors import InputError
from engine.judging.people_check import REPORTS_GLOB
from engine.stats.published_judges import anchors

RATED_FILES_GLOB = "human_ratings/*/ratings.csv"
REPORT_KEYS = ("measure", "source", "n", "pearson", "spearman")  # "scores" (the scatter) may be absent


def saved_reports(root: str | Path) -> dict[str, Path]:
    """``{label: path}`` of the validation reports under a cached-runs folder."""
    root = Path(root)
    return {f"{p.parent.parent.name} / {p.stem}": p for p in sorted(root.glob(REPORTS_GLOB))}


def rated_files(root: str | Path) -> dict[str, Path]:
    root = Path(root)
    return {p.parent.name: p for p in sorted(root.glob(RATED_FILES_GLOB))}


def read_report(data: bytes | str, name: str) -> dict:
    """A validation report from JSON; anything else is an InputError naming the file."""
    try:
        report = json.loads(data)
    except ValueError as error:
        raise InputError(f"not JSON ({error})", path=name) from None
    missing = [k for k in REPORT_KEYS if not isinstance(report, dict) or k not in report]
    if missing:
        raise InputError(f"not a judge validation report: missing {missing}", path=name, field=missing[0])
    return report


def semdis_report(path: str | Path, encode: Callable, model_name: str, scale: str | None = None) -> dict:
    """The report of semantic distance (1 - cos(prompt, response)) on a rated file, embedded by ``encode``."""
    from engine.importers.human_scores import read_human_scores
    from engine.judging.item_scores import semantic_distance, semantic_distance_info
    from engine.judging.validate import validation_report

    class Encoder:
        def __init__(self):
            self.encode = encode

    frame = read_human_scores(path, scale=scale)
    values = semantic_distance(list(frame["prompt"]), list(frame["response"]), Encoder())
    return validation_report(frame, values, measure_info=semantic_distance_info(model_name))


@dataclass(frozen=True)
class JudgesData:
    report: dict
    provenance: str  # where the numbers come from: the measure, the file, N
    summary: pd.DataFrame  # the measure against the people's mean
    people: pd.DataFrame  # the people's own agreement (ICCs, alpha), or why none
    beside: pd.DataFrame  # the measure set beside the raters
    panel: str  # the judge panel's own agreement, in words
    per_prompt: pd.DataFrame
    disagreements: pd.DataFrame
    calibration: pd.DataFrame
    scores: pd.DataFrame
    published: pd.DataFrame
    measure_label: str
    human_label: str


def _interval(found: dict | None) -> tuple:
    if not found or found.get("ci") is None:
        return None, None
    return tuple(found["ci"])


def judges_page_data(report: dict) -> JudgesData:
    measure, source = report["measure"], report.get("source", {})
    rows = []
    for key, name in (("pearson", "Pearson r"), ("spearman", "Spearman rho")):
        found = report.get(key) or {}
        low, high = _interval(found)
        rows.append({"statistic": f"{name} with the people's mean", "value": found.get("value"), "95% low": low,
                     "95% high": high, "N": found.get("n"), "note": found.get("note") or ""})
    inside = report.get("within_prompt") or {}
    if inside:
        low, high = _interval(inside)
        rows.append({"statistic": "Pearson r within prompts (each side centred on its prompt's mean)",
                     "value": inside.get("value"), "95% low": low, "95% high": high, "N": inside.get("n"),
                     "note": inside.get("note") or f"{inside.get('prompts')} prompts"})
    kappa = report.get("weighted_kappa")
    rows.append({"statistic": "weighted kappa (quadratic)", "value": (kappa or {}).get("value"), "95% low": None,
                 "95% high": None, "N": (kappa or {}).get("n"),
                 "note": (kappa or {}).get("note") or "not on the people's scale: does not apply"})
    order = (report.get("beside_people") or {}).get("order_measure_vs_people") or {}
    rows.append({"statistic": "share of item pairs ordered as the people's mean", "value": order.get("share"),
                 "95% low": None, "95% high": None, "N": order.get("pairs"), "note": "ties left out"})
    summary = pd.DataFrame(rows)
    people_rows = []
    icc = report.get("icc")
    if icc:
        for kind in ("ICC(2,1)", "ICC(2,k)", "ICC(3,k)"):
            people_rows.append({"statistic": icc[kind]["label"], "value": icc[kind]["value"],
                                "95% low": icc[kind]["ci"][0], "95% high": icc[kind]["ci"][1],
                                "N items": icc["n"], "raters": icc["k"]})
    alpha = report.get("krippendorff_alpha")
    if alpha:
        people_rows.append({"statistic": "Krippendorff's alpha (interval)", "value": alpha["value"], "95% low": None,
                            "95% high": None, "N items": alpha["items"], "raters": None})
    people = pd.DataFrame(people_rows, columns=["statistic", "value", "95% low", "95% high", "N items", "raters"])
    beside_info = report.get("beside_people") or {}
    beside = pd.DataFrame(beside_info.get("per_rater") or [],
                          columns=["rater", "person_vs_rest", "measure_vs_rest", "person_n", "measure_n", "note"])
    raters = beside_info.get("order_rater_vs_rater")
    panel = (report.get("judge_panel") or {}).get("text") or (
        "one rating per item from the judge: its raters' agreement cannot be computed"
        if measure.get("kind") == "judge" else "semantic distance has no raters")
    per_prompt = pd.DataFrame([{
        "prompt": p["prompt"], "N": p["n"], "unreadable": p["unreadable"], "people's mean": p["human_mean"],
        "measure mean": p["measure_mean"],
        "Pearson r": (p["pearson"] or {}).get("value"), "Spearman rho": (p["spearman"] or {}).get("value"),
        "Spearman 95% low": ((p["spearman"] or {}).get("ci") or [None, None])[0],
        "Spearman 95% high": ((p["spearman"] or {}).get("ci") or [None, None])[1], "note": p["note"]}
        for p in report.get("per_prompt", [])])
    disagreements = pd.DataFrame(report.get("disagreements", []),
                                 columns=["item", "row", "prompt", "response", "human", "measure", "human_percentile",
                                          "measure_percentile", "gap"])
    calibration = pd.DataFrame(report.get("calibration", []))
    if not calibration.empty:
        cis = calibration["human_ci"].apply(lambda v: v if isinstance(v, list) else [None, None])
        calibration = calibration.drop(columns=["human_ci"]).assign(
            human_ci_low=[c[0] for c in cis], human_ci_high=[c[1] for c in cis])
    scores = pd.DataFrame(report.get("scores", []), columns=["item", "prompt", "human", "measure"])
    scores[["human", "measure"]] = scores[["human", "measure"]].apply(pd.to_numeric, errors="coerce")
    name = measure.get("name") or measure.get("kind", "measure")
    raters_text = f", {len(source.get('raters', []))} rating column(s)"
    limit = f", {measure['limit']}" if measure.get("limit") else ""
    provenance = (f"{name} against people's ratings in {source.get('path', '?')} ({report.get('items', 0):,} items"
                  f"{raters_text}{limit}; N = {report.get('n', 0):,} with both, {report.get('unreadable', 0):,} "
                  "unreadable, left out)")
    if raters and raters.get("share") is not None:
        provenance += f"; two raters order a pair alike {100 * raters['share']:.1f}% of the time"
    human_label = f"people's mean {source.get('scale') or 'rating'}"
    return JudgesData(report, provenance, summary, people, beside, panel, per_prompt, disagreements, calibration,
                      scores, anchors(), name, human_label)
