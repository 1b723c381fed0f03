"""Whether a judge has been checked against people, from the validation reports on disk.

``python -m engine judge validate ... --out REPORT.json`` writes a report
(``engine.judging.validate``); the shipped ones live in ``cached_runs/human_ratings/<set>/reports/``.
``people_check(judge)`` finds the reports whose judge is that model (a panel name "m x5", a record
"llm:m" or "m#3" all name model m) and says in one sentence what they found, where, on which
data and N, or "not checked against people". A check on other items (Alternate Uses
originality) is not a check on these tasks, and the sentence says so.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from engine.stats import correlation

REPORTS_GLOB = "human_ratings/*/reports/*.json"
NOT_CHECKED = "not checked against people"


def model_of(judge: str) -> str:
    """The model a judge's name names: "llm:m x5" -> "m", "m#2" -> "m"; a panel "a+b" stays."""
    name = str(judge or "").strip().removeprefix("llm:")
    name = re.sub(r"\s+x\d+$", "", name)
    return re.sub(r"#\d+$", "", name)


@dataclass(frozen=True)
class Check:
    path: Path
    report: dict

    @property
    def sentence(self) -> str:
        r, m = self.report, self.report.get("measure", {})
        source = r.get("source", {})
        pearson, spearman = (correlation.text({"method": key, "value": None, **(r.get(key) or {})}, digits=2,
                                              with_n=False) for key in ("pearson", "spearman"))
        where = Path(source.get("path", "?")).parent.name or source.get("path", "?")
        subset = f", {m['limit']}" if m.get("limit") else ""
        return (f"checked against people on {where} ({r.get('items', 0):,} items rated by people{subset}, "
                f"{m.get('criterion', 'their scale')} {m.get('scale', ['?', '?'])[0]}-{m.get('scale', ['?', '?'])[1]}; "
                f"other items than these): judge {m.get('judge')} ({m.get('samples', 1)} rating(s) per item), "
                f"{pearson}, {spearman}, N = {r.get('n', 0):,}, "
                f"{r.get('unreadable', 0):,} unreadable; report {self.path.name}")


@functools.lru_cache(maxsize=64)
def _read(path: Path, mtime_ns: int, size: int) -> dict | None:
    """A report parsed once per version of its file (pages ask on every rerun; a report holds
    every item's scores)."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return report if isinstance(report, dict) and isinstance(report.get("measure"), dict) else None


def reports(root: str | Path) -> list[Check]:
    """Every judge validation report under ``root`` (a cached-runs folder); unreadable files skipped."""
    found = []
    for path in sorted(Path(root).glob(REPORTS_GLOB)):
        try:
            stat = path.stat()
        except OSError:
            continue
        report = _read(path, stat.st_mtime_ns, stat.st_size)
        if report is not None:
            found.append(Check(path, report))
    return found


def people_check(judge: str, root: str | Path) -> str:
    """One sentence: the judge's checks against people under ``root``, or ``NOT_CHECKED`` and how."""
    wanted = model_of(judge)
    mine = [c for c in reports(root) if c.report["measure"].get("kind") == "judge"
            and model_of(c.report["measure"].get("judge", "")) == wanted]
    if not mine:
        return (f"{NOT_CHECKED}: no validation report of judge {wanted} (make one with `python -m engine judge "
                f"validate FILE --measure judge --judge-model ...`)")
    return "; ".join(c.sentence for c in mine)
