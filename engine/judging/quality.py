"""Paper B's quality side on a run folder (section 3.2; per round, section 7.1).

* Rubric absolute score (1-10, ``engine.judging.judge``'s rubric prompt, or a benchmark's rubric
  from ``engine.tasks.benchmark_tasks``) of every session's final output; with ``per_round`` also of
  every debater's answer in every round (initial answers = round 0). Each item is scored by a
  panel of raters, as paper A's ideas were by five (``engine.judging.judge.panel_samples``):
  by default five samples (distinct seeds, temperature 0.7) of one judge model, or one score
  (temperature 0) from each of several judge models. An item's score is the mean of its raters'
  readable scores; ``rubric_agreement`` gives the raters' agreement (``engine.stats.agreement``:
  ICC(3,k), ICC(2,1) with N items and k raters), or says that one rating per item leaves none.
* Average pairwise win rate: for each task and each pair of conditions, outputs are
  compared pair by pair (``matched``: replicate i against replicate i; ``all``: every
  pair), each comparison asked twice with the positions swapped; a double win counts 1,
  a double loss 0, a tie or split verdict 1/2 (``engine.judging.judge.combine_swapped``); a verdict
  is read strictly or from one unambiguous sentence (``parse_verdict``). A
  condition's average win rate is the mean of its win rates against each other condition.

Results go to ``RUN_DIR/quality.jsonl``, one judged item per line, appended and fsynced as
they come; the judge's replies go through the run's response cache. Re-running resumes:
items already in the file are skipped, so a finished run costs zero calls. An item whose
verdict stays unreadable after the retries is recorded with a missing score and counted.
"""

from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from engine import prompts

from engine.storage import durable
from engine.protocols.conditions import add_condition
from engine.corpus import Conversation, Corpus
from engine.errors import InputError
from engine.storage.jsonl import to_json_line
from engine.judging.judge import (JUDGE_SEED, PANEL_TEMPERATURE, ask, combine_swapped, panel_name, panel_samples,
                                  parse_ab, parse_score)
from engine.llm.base import Backend
from engine.tasks import Task

QUALITY_FILE = "quality.jsonl"
DEBATE_PHASES = ("initial", "debate")


@dataclass(frozen=True)
class Item:
    """One text to score: a session's final output (round None) or a debater's round answer."""

    conversation_id: str
    task: str
    text: str
    round: int | None = None
    speaker: str | None = None

    @property
    def key(self) -> str:
        return f"rubric|{self.conversation_id}|{'final' if self.round is None else self.round}|{self.speaker or ''}"


def rubric_items(conversations: Iterable[Conversation], *, per_round: bool = False,
                 per_round_limit: int | None = None) -> list[Item]:
    """Final outputs of finished sessions, and with ``per_round`` every debater's answer in
    every round; ``per_round_limit``: round answers only for the first N sessions (by
    replicate) of each condition and task, to bound the judge's calls."""
    _at_least_one(per_round_limit, "per_round_limit")
    conversations = [c for c in conversations if c.status == "ok"]
    round_ids = {c.conversation_id for c in conversations}
    if per_round and per_round_limit and conversations:
        frame = add_condition(Corpus(conversations).conversations_frame().rename(columns={"protocol": "discussion"}))
        frame = frame.sort_values(["replicate", "conversation_id"])
        round_ids = set(frame.groupby(["condition", "task"]).head(per_round_limit)["conversation_id"])
    items = []
    for c in conversations:
        if c.final_idea and c.final_idea.strip():
            items.append(Item(c.conversation_id, c.task, c.final_idea))
        if per_round and c.conversation_id in round_ids:
            for turn in c.turns:
                if turn.phase in DEBATE_PHASES and turn.round is not None and turn.text.strip():
                    items.append(Item(c.conversation_id, c.task, turn.text, turn.round, turn.speaker))
    return items


def _at_least_one(value: int | None, name: str) -> None:
    """A limit is None (no limit) or a whole number of at least 1; 0 or -1 would drop work."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InputError(f"must be a whole number of at least 1, got {value!r}", field=name)


def quality_rubric(task: Task) -> Sequence[str]:
    """The rubric criteria for a task: its benchmark's, or the general one."""
    from engine.tasks.benchmark_tasks import rubric_for

    return rubric_for(task)


# -- the results file --------------------------------------------------------------------------
RECORD_COLUMNS = {
    "rubric": ("kind", "key", "judge", "conversation_id", "task", "round", "speaker", "score"),
    "pairwise": ("kind", "key", "judge", "task", "x", "y", "condition_x", "condition_y", "x_first",
                 "y_first", "score_x"),
}


class QualityStore:
    """``quality.jsonl`` of a run folder: records keyed by item and judge, appended whole.

    Reading leaves out a record cut short (a kill, a full disk) and says so in one line; a
    record of an unknown ``kind``, or whose score or round is not a number, is an InputError
    naming its line. ``writer=True`` (the judge, holding the folder's lock) also sets such
    fragments aside into ``quality.jsonl.torn``, so the file holds whole records only.
    """

    def __init__(self, folder: str | Path, *, writer: bool = False):
        self.path = Path(folder) / QUALITY_FILE
        self.records: dict[tuple[str, str], dict] = {}
        if self.path.exists() or self.path.is_symlink():
            if writer and self.path.is_file():
                durable.repair(self.path)
            for row, record in durable.read_records(self.path):  # split on "\n" only
                _check_record(record, self.path, row)
                self.records[(record["key"], record["judge"])] = record

    def has(self, key: str, judge: str) -> bool:
        return (key, judge) in self.records

    def append(self, record: dict) -> None:
        durable.append_line(self.path, to_json_line(record))  # whole, or the file as it was
        self.records[(record["key"], record["judge"])] = record

    def frame(self, kind: str) -> pd.DataFrame:
        rows = [r for r in self.records.values() if r.get("kind") == kind]
        return pd.DataFrame(rows).reindex(columns=list(dict.fromkeys(
            [*RECORD_COLUMNS[kind], *(c for r in rows for c in r)])))


def _check_record(record: dict, path: Path, row: int) -> None:
    if not isinstance(record.get("key"), str) or not isinstance(record.get("judge"), str):
        raise InputError("missing key or judge", path=str(path), row=row)
    if record.get("kind") not in RECORD_COLUMNS:
        raise InputError(f"expected 'rubric' or 'pairwise', got {record.get('kind')!r}", path=str(path),
                         row=row, field="kind")
    for name in ("score", "score_x"):
        value = record.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value)):
            raise InputError(f"expected a number or null, got {value!r}", path=str(path), row=row, field=name)
    value = record.get("round")
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise InputError(f"expected a round number or null, got {value!r}", path=str(path), row=row,
                         field="round")


# -- judging -------------------------------------------------------------------------------------
async def gather_or_cancel(*awaitables):
    """``asyncio.gather`` that, when one fails (a full disk while storing a score, say), cancels
    the others and waits for them, their own errors read and dropped, before raising the first:
    no call goes on after the command has failed, and no "Task exception was never retrieved"
    or shutdown traceback follows the one error line."""
    tasks = [asyncio.ensure_future(each) for each in awaitables]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)  # every outcome retrieved
        raise


@dataclass(frozen=True)
class Rater:
    """One rater of a panel: a judge model and a sample of it (its own seed)."""

    backend: Backend
    sample: int  # 1-based
    name: str  # what its records say judged them: the model, or "model#s" in a panel of samples
    temperature: float
    seed: int


def rubric_raters(judges: Backend | Sequence[Backend], samples: int | None = None) -> list[Rater]:
    """The panel: each judge model x ``samples`` samples (None: ``panel_samples``). One sample of
    a model is asked at temperature 0 under the model's name (as before panels); several are
    sampled at 0.7, each with its own seed, named ``model#1..#k``."""
    judges = [judges] if isinstance(judges, Backend) else list(judges)
    samples = panel_samples(samples, len(judges))
    return [Rater(judge, s + 1, judge.model if samples == 1 else f"{judge.model}#{s + 1}",
                  0.0 if samples == 1 else PANEL_TEMPERATURE, JUDGE_SEED + 1009 * s)
            for judge in judges for s in range(samples)]


async def _rubric_one(item: Item, task: Task, rater: Rater, *, retries: int, max_tokens: int) -> float | None:
    messages = prompts.judge_rubric(task.prompt, item.text, criteria=quality_rubric(task))
    return await ask(rater.backend, messages, parse_score, retries=retries, max_tokens=max_tokens,
                      temperature=rater.temperature, seed=rater.seed)


def rubric_todo(items: Sequence[Item], raters: Sequence[Rater], store: "QualityStore") -> list[tuple[Item, Rater]]:
    """The (item, rater) scores not yet in the store."""
    return [(item, rater) for item in items for rater in raters if not store.has(item.key, rater.name)]


async def arubric(items: Sequence[Item], tasks: dict[str, Task], judges: Backend | Sequence[Backend],
                  store: QualityStore, *, samples: int | None = None, retries: int = 2, max_tokens: int = 16,
                  on_done=None) -> int:
    """Score the items not yet in the store by every rater of the panel (``rubric_raters``);
    returns how many scores were asked now."""
    raters = rubric_raters(judges, samples)
    panel = panel_name([r.backend.model for r in raters], max(r.sample for r in raters))
    todo = rubric_todo(items, raters, store)

    async def one(item: Item, rater: Rater) -> None:
        score = await _rubric_one(item, tasks[item.task], rater, retries=retries, max_tokens=max_tokens)
        store.append({"kind": "rubric", "key": item.key, "judge": rater.name,
                      "conversation_id": item.conversation_id, "task": item.task,
                      "round": item.round, "speaker": item.speaker, "score": score,
                      "model": rater.backend.model, "sample": rater.sample, "temperature": rater.temperature,
                      "panel": panel})
        if on_done:
            on_done()

    await gather_or_cancel(*(one(item, rater) for item, rater in todo))
    return len(todo)


def pairwise_plan(conversations: Sequence[Conversation], *, pairs: str = "matched",
                  max_per_pair: int | None = None) -> list[tuple[Conversation, Conversation, str, str]]:
    """``(x, y, condition_x, condition_y)`` comparisons: per task, every pair of conditions."""
    _at_least_one(max_per_pair, "max_per_pair")
    ok = [c for c in conversations if c.status == "ok" and c.final_idea]
    if not ok:
        return []
    frame = add_condition(Corpus(ok).conversations_frame().rename(columns={"protocol": "discussion"}))
    by_id = {c.conversation_id: c for c in ok}
    plan = []
    for task, part in frame.groupby("task", sort=True):
        conditions = sorted(part["condition"].unique())
        members = {cond: part[part["condition"] == cond].sort_values(["replicate", "conversation_id"])
                   for cond in conditions}
        for a in range(len(conditions)):
            for b in range(a + 1, len(conditions)):
                xs = members[conditions[a]]["conversation_id"].tolist()
                ys = members[conditions[b]]["conversation_id"].tolist()
                combos = list(zip(xs, ys)) if pairs == "matched" else [(x, y) for x in xs for y in ys]
                if max_per_pair:
                    combos = combos[:max_per_pair]
                plan += [(by_id[x], by_id[y], conditions[a], conditions[b]) for x, y in combos]
    return plan


async def apairwise(plan, tasks: dict[str, Task], judge: Backend, store: QualityStore, *,
                    retries: int = 2, max_tokens: int = 8, on_done=None) -> int:
    todo = [p for p in plan if not store.has(_pair_key(p[0], p[1]), judge.model)]

    async def verdict(task: Task, first: str, second: str):
        return await ask(judge, prompts.judge_pairwise(task.prompt, first, second), parse_verdict,
                          retries=retries, max_tokens=max_tokens, temperature=0.0, seed=JUDGE_SEED)

    async def one(x: Conversation, y: Conversation, cx: str, cy: str) -> None:
        task = tasks[x.task]
        xy, yx = await gather_or_cancel(verdict(task, x.final_idea, y.final_idea),
                                      verdict(task, y.final_idea, x.final_idea))
        store.append({"kind": "pairwise", "key": _pair_key(x, y), "judge": judge.model, "task": x.task,
                      "x": x.conversation_id, "y": y.conversation_id, "condition_x": cx,
                      "condition_y": cy, "x_first": xy, "y_first": yx, "score_x": combine_swapped(xy, yx)})
        if on_done:
            on_done()

    await gather_or_cancel(*(one(*p) for p in todo))
    return len(todo)


_VERDICT = re.compile(r"\b(?:best|better|correct|stronger)\s+(?:response|answer|option|choice)\s+is\s+"
                      r"(?:indeed\s+|clearly\s+)?(?:response\s+)?[\"'*]*([AB])\b", re.IGNORECASE)
_NAMED = re.compile(r"\bresponse\s+([AB])\s+is\s+(?:indeed\s+|clearly\s+)?(?:the\s+)?better\b", re.IGNORECASE)
_ORDINAL = re.compile(r"\bthe\s+(first|second)\s+(?:response|answer|option)\s+is\s+(?:indeed\s+|clearly\s+)?"
                      r"(?:the\s+)?better\b", re.IGNORECASE)


def parse_verdict(text: str) -> str | None:
    """'A', 'B' or 'tie' from a pairwise reply: the strict form (``engine.judging.judge``), a first
    line that is only the letter, or one unambiguous sentence naming the winner ('The best
    response is A', 'Response B is better', 'The first answer is better'); else None."""
    strict = parse_ab(text)
    if strict is not None:
        return strict
    lines = text.strip().splitlines()
    first = lines[0].strip().strip("*'\".:").lower() if lines else ""
    if first in ("a", "b"):
        return first.upper()
    if first == "tie":
        return "tie"
    found = {m.group(1).upper() for pattern in (_VERDICT, _NAMED) for m in pattern.finditer(text)}
    found |= {"A" if m.group(1).lower() == "first" else "B" for m in _ORDINAL.finditer(text)}
    return found.pop() if len(found) == 1 else None


def _pair_key(x: Conversation, y: Conversation) -> str:
    return f"pairwise|{x.conversation_id}|{y.conversation_id}"


# -- summaries ---------------------------------------------------------------------------------------
def win_rates(pairwise: pd.DataFrame) -> pd.DataFrame:
    """Per task and condition: win rate against each other condition, averaged (paper B, 3.2).

    Columns ``task, condition, win_rate, opponents, comparisons, missing``; ties count 1/2.
    """
    columns = ["task", "condition", "win_rate", "opponents", "comparisons", "missing"]
    if pairwise.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    both = pd.concat([
        pairwise.assign(me=pairwise["condition_x"], other=pairwise["condition_y"], score=pairwise["score_x"]),
        pairwise.assign(me=pairwise["condition_y"], other=pairwise["condition_x"],
                        score=pairwise["score_x"].map(lambda s: None if s is None or pd.isna(s) else 1 - s)),
    ])
    both["score"] = pd.to_numeric(both["score"])
    for (task, me), part in both.groupby(["task", "me"], sort=True):
        per_opponent = part.groupby("other")["score"].mean().dropna()
        rows.append({"task": task, "condition": me,
                     "win_rate": float(per_opponent.mean()) if len(per_opponent) else math.nan,
                     "opponents": len(per_opponent), "comparisons": len(part),
                     "missing": int(part["score"].isna().sum())})
    return pd.DataFrame(rows, columns=columns)


def _keyed(rubric: pd.DataFrame) -> pd.DataFrame:
    """The records with numeric scores and a ``key`` (records without one: one item per session,
    round and speaker) and a ``judge`` (records without one: a single unnamed judge)."""
    frame = rubric.assign(score=pd.to_numeric(rubric["score"]))
    if "key" not in frame:
        speakers = frame["speaker"] if "speaker" in frame else [None] * len(frame)
        frame["key"] = [f"{c}|{'final' if pd.isna(r) else int(r)}|{'' if pd.isna(s) else s}"
                        for c, r, s in zip(frame["conversation_id"], frame["round"], speakers)]
    if "judge" not in frame:
        frame["judge"] = "judge"
    return frame


def item_scores(rubric: pd.DataFrame) -> pd.DataFrame:
    """One row per rated item (``key``): the mean of its raters' readable scores (``score``),
    ``ratings`` (readable ones) and ``raters`` (records), with the item's conversation and round."""
    columns = ["key", "conversation_id", "round", "score", "ratings", "raters"]
    if rubric.empty:
        return pd.DataFrame(columns=columns)
    frame = _keyed(rubric)
    grouped = frame.groupby("key", sort=False)
    out = grouped.agg(conversation_id=("conversation_id", "first"), round=("round", "first"),
                      score=("score", "mean"), ratings=("score", "count"),
                      raters=("judge", "nunique"))
    return out.reset_index()[columns]


def rubric_agreement(rubric: pd.DataFrame, *, final_only: bool = True) -> dict:
    """The rubric raters' agreement (``engine.stats.agreement.panel_agreement``) over the items
    x raters table of the records (final outputs only by default); the judge named as the
    records' panel (or their judges joined)."""
    from engine.stats.agreement import panel_agreement

    records = rubric
    if final_only and not rubric.empty:
        records = rubric[rubric["round"].isna()]
    if records.empty:
        return panel_agreement(np.empty((0, 0)), judge="")
    records = _keyed(records)
    panels = records["panel"].dropna().unique() if "panel" in records else []
    judge = " / ".join(map(str, panels)) if len(panels) else "+".join(sorted(map(str, records["judge"].unique())))
    table = records.pivot_table(index="key", columns="judge", values="score", aggfunc="last", dropna=False)
    table = table.reindex(records["key"].unique())  # an item no rater could read stays, all missing
    return panel_agreement(table, judge=judge)


def rubric_table(rubric: pd.DataFrame, conversations: pd.DataFrame) -> pd.DataFrame:
    """Final-output rubric scores joined to the conversations' conditions: one row per session,
    ``rubric_score`` the mean of its raters' readable scores and ``rubric_ratings`` how many.

    Without judge records, a ``rubric_score`` column the table already has (the runner's
    judge, one rating per session) is kept.
    """
    final = rubric[rubric["round"].isna()] if not rubric.empty else rubric
    frame = add_condition(conversations)
    if final.empty:
        if "rubric_score" in frame:
            return frame.assign(rubric_score=pd.to_numeric(frame["rubric_score"], errors="coerce"))
        return frame.assign(rubric_score=np.nan)
    items = item_scores(final).drop_duplicates("conversation_id", keep="last").set_index("conversation_id")
    return frame.assign(rubric_score=pd.to_numeric(frame["conversation_id"].map(items["score"])),
                        rubric_ratings=frame["conversation_id"].map(items["ratings"]).fillna(0).astype(int))


def per_round_table(rubric: pd.DataFrame, conversations: pd.DataFrame) -> pd.DataFrame:
    """Mean rubric score of the debaters' answers per condition and round (section 7.1); each
    answer's score is first the mean of its raters' (``item_scores``); ``n`` answers scored,
    ``missing`` answers no rater could read."""
    columns = ["condition", "method", "round", "score", "n", "missing"]
    if rubric.empty or rubric["round"].notna().sum() == 0:
        return pd.DataFrame(columns=columns)
    rounds = item_scores(rubric[rubric["round"].notna()])
    frame = add_condition(conversations).set_index("conversation_id")
    rounds = rounds[rounds["conversation_id"].isin(frame.index)]
    rounds["condition"] = rounds["conversation_id"].map(frame["condition"])
    rounds["method"] = rounds["conversation_id"].map(frame["method"])
    out = (rounds.groupby(["condition", "method", "round"])["score"]
           .agg(score="mean", n="count", missing=lambda s: int(s.isna().sum())).reset_index())
    out["round"] = out["round"].astype(int)
    return out[columns]


def summary(store: QualityStore) -> dict[str, Any]:
    """What ``quality.jsonl`` holds: items (an item unreadable when no rater could read it), the
    readable ratings, and the rubric raters' agreement on the final outputs (``agreement``:
    judge, ratings per item, ICC(3,k) and ICC(2,1) with N and k, or "one rating per item")."""
    rubric = store.frame("rubric")
    pairwise = store.frame("pairwise")
    out: dict[str, Any] = {"file": str(store.path)}
    if not rubric.empty:
        final = item_scores(rubric[rubric["round"].isna()])
        rounds = item_scores(rubric[rubric["round"].notna()])
        out["rubric_final"] = {"items": len(final), "unreadable": int(final["score"].isna().sum()),
                               "ratings": int(final["ratings"].sum())}
        out["rubric_rounds"] = {"items": len(rounds), "unreadable": int(rounds["score"].isna().sum()),
                                "ratings": int(rounds["ratings"].sum())}
        out["agreement"] = rubric_agreement(rubric)
    if not pairwise.empty:
        out["pairwise"] = {"comparisons": len(pairwise), "unreadable": int(pairwise["score_x"].isna().sum())}
    return out
