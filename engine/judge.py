"""LLM-as-judge (issue 4, item 4).

* ``rate_ideas``: paper A's scales (Methods, Creativity Evaluation): novelty and
  usefulness 1-10 (0 if the idea ignores the task), min-max scaled within each task
  (x' = (x - min_T) / (max_T - min_T)), creativity = novelty x usefulness.
* ``rubric_scores``: paper B's rubric-based absolute score, 1-10 (section 3.2).
* ``pairwise_win_rate``: paper B's average pairwise win rate, each pair judged twice with
  the positions swapped; a win counts 1, a tie (or a split verdict) 0.5.
An unreadable verdict is asked again (``retries`` times) and then recorded as missing (NaN).
"""

from __future__ import annotations

import asyncio
import math
import re
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from engine import prompts
from engine.errors import InputError
from engine.llm.base import Backend, run_sync_closing
from engine.protocols.parsing import parse_labelled
from engine.tasks import Task, get_task

JUDGE_SEED = 1234
RETRY_TEMPERATURE = 0.7


async def _ask(backend: Backend, messages, parse, *, retries: int, max_tokens: int,
               temperature: float, seed: int):
    """Ask until ``parse`` reads the reply; None after ``retries`` extra attempts.

    Retries sample at temperature >= 0.7 (a greedy judge would repeat the same unreadable reply).
    """
    for attempt in range(retries + 1):
        heat = temperature if attempt == 0 else max(temperature, RETRY_TEMPERATURE)
        result = await backend.achat(messages, temperature=heat, max_tokens=max_tokens,
                                     seed=seed + attempt, replicate=attempt)
        value = parse(result.text)
        if value is not None:
            return value
    return None


def _parse_nu(text: str):
    novelty = parse_labelled(text, "novelty", 0, 10)
    usefulness = parse_labelled(text, "usefulness", 0, 10)
    return None if novelty is None or usefulness is None else (novelty, usefulness)


def _ideas_frame(ideas, task) -> pd.DataFrame:
    if isinstance(ideas, pd.DataFrame):
        frame = ideas.copy()
        if "idea" not in frame.columns:
            if "final_idea" not in frame.columns:
                raise InputError("the ideas table needs an 'idea' (or 'final_idea') column", field="idea")
            frame["idea"] = frame["final_idea"]
        if "task" not in frame.columns:
            if task is None:
                raise InputError("give task= or a 'task' column", field="task")
            frame["task"] = get_task(task).id if not isinstance(task, Task) else task.id
    else:
        if task is None:
            raise InputError("give task= when rating a list of ideas", field="task")
        frame = pd.DataFrame({"idea": list(ideas), "task": get_task(task).id})
    return frame.reset_index(drop=True)


def _task_prompt(task_id: str, task) -> str:
    if isinstance(task, Task) and task.id == task_id:
        return task.prompt
    return get_task(task_id).prompt


async def arate_ideas(ideas, task, backend: Backend, *, retries: int = 2, max_tokens: int = 24,
                      temperature: float = 0.0) -> pd.DataFrame:
    frame = _ideas_frame(ideas, task)

    async def one(i: int):
        row = frame.iloc[i]
        idea = row["idea"]
        if not isinstance(idea, str) or not idea.strip():
            return None
        messages = prompts.judge_novelty_usefulness(_task_prompt(row["task"], task), idea)
        return await _ask(backend, messages, _parse_nu, retries=retries, max_tokens=max_tokens,
                          temperature=temperature, seed=JUDGE_SEED)

    verdicts = await asyncio.gather(*(one(i) for i in range(len(frame))))
    frame["novelty_raw"] = [v[0] if v else np.nan for v in verdicts]
    frame["usefulness_raw"] = [v[1] if v else np.nan for v in verdicts]
    return scale_within_task(frame)


def rate_ideas(ideas, task=None, backend: Backend | None = None, **options) -> pd.DataFrame:
    """Judge each idea; returns the ideas with novelty_raw, usefulness_raw, novelty, usefulness,
    creativity (scaled within task; NaN where the judge never answered readably)."""
    if backend is None:
        raise InputError("rate_ideas needs a judge backend", field="backend")
    return run_sync_closing(arate_ideas(ideas, task, backend, **options), backend)


def scale_within_task(frame: pd.DataFrame) -> pd.DataFrame:
    """Min-max scale novelty_raw / usefulness_raw within each task; creativity = product.

    A task whose ideas all got the same raw score has no range: its scaled values are NaN.
    """
    frame = frame.copy()
    for raw, scaled in (("novelty_raw", "novelty"), ("usefulness_raw", "usefulness")):
        group = frame.groupby("task")[raw]
        low, high = group.transform("min"), group.transform("max")
        span = (high - low).where(high > low)
        frame[scaled] = (frame[raw] - low) / span
    frame["creativity"] = frame["novelty"] * frame["usefulness"]
    return frame


def _parse_score(text: str):
    """'Score: 7'; or, failing the label, the only number in a short reply ('It is a 7.')."""
    labelled = parse_labelled(text, "score", 1, 10)
    if labelled is not None:
        return labelled
    numbers = re.findall(r"\d+(?:\.\d+)?", text)
    if len(text) <= 80 and len(numbers) == 1 and 1 <= float(numbers[0]) <= 10:
        return float(numbers[0])
    return None


async def arubric_scores(ideas: Sequence[str], task, backend: Backend, *, retries: int = 2,
                         max_tokens: int = 16, temperature: float = 0.0) -> list[float]:
    prompt = get_task(task).prompt

    async def one(idea):
        value = await _ask(backend, prompts.judge_rubric(prompt, idea), _parse_score, retries=retries,
                           max_tokens=max_tokens, temperature=temperature, seed=JUDGE_SEED)
        return math.nan if value is None else value

    return list(await asyncio.gather(*(one(idea) for idea in ideas)))


def rubric_scores(ideas: Sequence[str], task, backend: Backend, **options) -> list[float]:
    """Paper B's absolute rubric score (1-10) of each idea; NaN when unreadable."""
    return run_sync_closing(arubric_scores(ideas, task, backend, **options), backend)


_AB = re.compile(r"^(?:response\s+)?(a|b)(?:$|[\s:.)!,])", re.IGNORECASE)


def _parse_ab(text: str):
    """'A', 'B' or 'tie' from a pairwise verdict (also 'Response A', 'A.', 'Tie'); else None."""
    cleaned = text.strip().strip("*'\" ").lower()
    if re.match(r"^(it'?s a )?tie\b", cleaned):
        return "tie"
    match = _AB.match(cleaned)
    if match and (len(cleaned) <= 12 or cleaned.startswith("response")):
        return match.group(1).upper()
    return None


def combine_swapped(first: str | None, second: str | None) -> float | None:
    """Score of idea X from two verdicts: X shown as A, then X shown as B.

    Both for X: 1; both against: 0; anything else (a tie, a split decision): 0.5.
    A missing verdict makes the comparison missing (None).
    """
    if first is None or second is None:
        return None
    x_votes = (first == "A") + (second == "B")
    y_votes = (first == "B") + (second == "A")
    if x_votes == 2:
        return 1.0
    if y_votes == 2:
        return 0.0
    return 0.5


async def apairwise_win_rate(ideas_x: Sequence[str], ideas_y: Sequence[str], task, backend: Backend, *,
                             retries: int = 2, max_tokens: int = 8, temperature: float = 0.0) -> dict:
    prompt = get_task(task).prompt

    async def verdict(a, b):
        return await _ask(backend, prompts.judge_pairwise(prompt, a, b), _parse_ab, retries=retries,
                          max_tokens=max_tokens, temperature=temperature, seed=JUDGE_SEED)

    pairs = [(x, y) for x in ideas_x for y in ideas_y]
    verdicts = await asyncio.gather(*(asyncio.gather(verdict(x, y), verdict(y, x)) for x, y in pairs))
    scores = [combine_swapped(a, b) for a, b in verdicts]
    read = [s for s in scores if s is not None]
    return {"win_rate": float(np.mean(read)) if read else math.nan, "comparisons": len(pairs),
            "missing": len(scores) - len(read)}


def pairwise_win_rate(ideas_x: Sequence[str], ideas_y: Sequence[str], task, backend: Backend,
                      **options) -> dict:
    """Average win rate of ideas_x against ideas_y (every pair, judged in both positions)."""
    return run_sync_closing(apairwise_win_rate(ideas_x, ideas_y, task, backend, **options), backend)


def attach_ratings(conversations: Iterable, frame: pd.DataFrame, rater: str) -> None:
    """Copy judge columns onto each conversation's outcomes (row order = conversation order)."""
    for conversation, (_, row) in zip(conversations, frame.iterrows()):
        for column in ("novelty_raw", "usefulness_raw", "novelty", "usefulness", "creativity"):
            value = row.get(column)
            conversation.outcomes[column] = None if pd.isna(value) else float(value)
        conversation.outcomes["rater"] = rater
