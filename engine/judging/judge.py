"""LLM-as-judge.

* ``rate_ideas``: paper A's scales (Methods, Creativity Evaluation): novelty and
  usefulness 1-10 (0 if the idea ignores the task), min-max scaled within each task
  (x' = (x - min_T) / (max_T - min_T)), creativity = novelty x usefulness.
* ``rubric_scores``: paper B's rubric-based absolute score, 1-10 (section 3.2).
* ``pairwise_win_rate``: paper B's average pairwise win rate, each pair judged twice with
  the positions swapped; a win counts 1, a tie (or a split verdict) 0.5.
* ``rate_together``: paper A's consensual assessment by LLM raters: the ideas of one task
  rated together in batches (one shuffled order shared by every rater, as the paper's five
  judges, or one each), relative to each other, 0 for irrelevant ideas. A panel of
  ``DEFAULT_RATERS`` (5, paper A's five judges) by default: five samples (distinct seeds) of
  one judge model, or one rating from each judge model when several are given
  (``panel_samples``). An idea is irrelevant when more than half of its raters' readable
  answers give it a 0 (paper A, Data collection: "at least three zero ratings among the five
  judges"); irrelevant ideas are left out of the scaling and counted. The raters' scores are
  averaged, and their agreement (``engine.stats.agreement``: ICC(3,k) as paper A's Table 4,
  ICC(2,1), Krippendorff's alpha) is reported per task and scale. The ideas can first be
  paraphrased (``engine.judging.paraphrase``), as paper A's were.
An unreadable verdict is asked again (``retries`` times) and then recorded as missing (NaN).
"""

from __future__ import annotations

import asyncio
import math
import random
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
DEFAULT_RATERS = 5  # paper A: five human raters per idea (Methods, Creativity evaluation)
PANEL_TEMPERATURE = 0.7  # several samples of one model: sampled, each with its own seed
IRRELEVANT_RULE = ("irrelevant: more than half of an idea's readable ratings are 0 (paper A: at least "
                   "three zero ratings among its five judges); left out of the scaling")


def panel_samples(samples: int | None, models: int) -> int:
    """Samples per judge model: as given, else ``DEFAULT_RATERS`` samples of a single model
    or one rating per model when several judge models are given (paper A's panel of raters)."""
    if samples is None:
        return DEFAULT_RATERS if models <= 1 else 1
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise InputError(f"must be a whole number of at least 1, got {samples!r}", field="samples")
    return samples


def panel_name(models: Sequence[str], samples: int) -> str:
    """The panel as one name: "m" (one rating), "m x5" (five samples), "a+b" (two models)."""
    models = list(dict.fromkeys(models))
    return "+".join(models) + (f" x{samples}" if samples > 1 else "")


async def ask(backend: Backend, messages, parse, *, retries: int, max_tokens: int,
               temperature: float, seed: int):
    """Ask until ``parse`` reads the reply; None after ``retries`` extra attempts.

    Retries sample at temperature >= 0.7 (a greedy judge would repeat the same unreadable reply).
    """
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise InputError(f"must be a whole number of at least 0, got {retries!r}", field="retries")
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
            if isinstance(task, dict):
                raise InputError("a 'task' column is needed with a mapping of tasks", field="task")
            frame["task"] = get_task(task).id if not isinstance(task, Task) else task.id
    else:
        if task is None:
            raise InputError("give task= when rating a list of ideas", field="task")
        frame = pd.DataFrame({"idea": list(ideas), "task": get_task(task).id})
    return frame.reset_index(drop=True)


def _task_prompt(task_id: str, task) -> str:
    """The prompt of ``task_id``: the given Task, a ``{task id: Task}`` mapping, or built-in."""
    if isinstance(task, Task) and task.id == task_id:
        return task.prompt
    if isinstance(task, dict) and isinstance(task.get(task_id), Task):
        return task[task_id].prompt
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
        return await ask(backend, messages, _parse_nu, retries=retries, max_tokens=max_tokens,
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

    Irrelevant ideas (paper A: rated 0) are left out of the range and get no scaled value:
    the ``irrelevant`` column when given (``rate_together`` sets it from its raters by the
    majority rule), else (or where it is missing) a raw 0 on either scale. The range is every
    idea of the task in ``frame``: give it every idea of the dataset being analysed, as paper A
    scaled over every idea of a task (Methods, x' = (x - min_T) / (max_T - min_T)). A task
    whose relevant ideas all got the same raw score has no range: its scaled values are NaN.
    """
    frame = frame.copy()
    raw_zero = (frame["novelty_raw"] == 0) | (frame["usefulness_raw"] == 0)
    if "irrelevant" not in frame.columns:
        frame["irrelevant"] = raw_zero
    else:  # an idea whose panel's verdict was not recorded: its raw score decides
        recorded = frame["irrelevant"]
        frame["irrelevant"] = [bool(zero) if value is None or value != value else bool(value)
                               for value, zero in zip(recorded, raw_zero)]
    irrelevant = frame["irrelevant"].astype(bool)
    for raw, scaled in (("novelty_raw", "novelty"), ("usefulness_raw", "usefulness")):
        values = frame[raw].where(~irrelevant)
        group = values.groupby(frame["task"])
        low, high = group.transform("min"), group.transform("max")
        span = (high - low).where(high > low)
        frame[scaled] = (values - low) / span
    frame["creativity"] = frame["novelty"] * frame["usefulness"]
    return frame


def parse_score(text: str):
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
        value = await ask(backend, prompts.judge_rubric(prompt, idea), parse_score, retries=retries,
                           max_tokens=max_tokens, temperature=temperature, seed=JUDGE_SEED)
        return math.nan if value is None else value

    return list(await asyncio.gather(*(one(idea) for idea in ideas)))


def rubric_scores(ideas: Sequence[str], task, backend: Backend, **options) -> list[float]:
    """Paper B's absolute rubric score (1-10) of each idea; NaN when unreadable."""
    return run_sync_closing(arubric_scores(ideas, task, backend, **options), backend)


_AB = re.compile(r"^(?:response\s+)?(a|b)(?:$|[\s:.)!,])", re.IGNORECASE)


def parse_ab(text: str):
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
        return await ask(backend, prompts.judge_pairwise(prompt, a, b), parse_ab, retries=retries,
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


RATER_SCORE = re.compile(r"^[NU]\d+$")  # rater k's novelty / usefulness, as paper A's release names them


def attach_ratings(conversations: Iterable, frame: pd.DataFrame, rater: str) -> None:
    """Copy judge columns onto each conversation's outcomes (row order = conversation order);
    ``rate_together`` adds whether the idea was judged irrelevant, how many raters read it
    (``raters_read``), the raters asked (``panel_size``) and each rater's scores ``N1..Nk`` /
    ``U1..Uk`` (the release's naming, so a dataset keeps what its agreement is computed from)."""
    extra = [c for c in ("irrelevant", "raters_read") if c in frame.columns]
    per_rater = [c for c in frame.columns if RATER_SCORE.match(str(c))]
    for conversation, (_, row) in zip(conversations, frame.iterrows()):
        for column in ("novelty_raw", "usefulness_raw", "novelty", "usefulness", "creativity", *per_rater):
            value = row.get(column)
            conversation.outcomes[column] = None if pd.isna(value) else float(value)
        for column in extra:
            value = row[column]
            conversation.outcomes[column] = bool(value) if column == "irrelevant" else int(value)
        if per_rater:
            conversation.outcomes["panel_size"] = len(per_rater) // 2  # raters asked (N1..Nk, U1..Uk)
        conversation.outcomes["rater"] = rater


# -- consensual assessment: the ideas of a task rated together -------------------------------
_BATCH_LINE = re.compile(r"idea\s*#?\s*(\d{1,3})\s*[:.)\-\u2013]\s*(.*)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def parse_batch(text: str, n_items: int) -> dict[int, tuple[float, float]]:
    """``{item index (0-based): (novelty, usefulness)}`` from lines 'Idea N: Novelty 7,
    Usefulness 5' (or 'Idea N: 7, 5'); values outside 0-10 and repeated items are not read."""
    verdicts: dict[int, tuple[float, float]] = {}
    for line in text.splitlines():
        match = _BATCH_LINE.search(line)
        if not match:
            continue
        number, rest = int(match.group(1)), match.group(2)
        novelty, usefulness = parse_labelled(rest, "novelty", 0, 10), parse_labelled(rest, "usefulness", 0, 10)
        if novelty is None and usefulness is None and "novelty" not in rest.lower():
            numbers = [float(x) for x in _NUMBER.findall(rest)]
            if len(numbers) == 2 and all(0 <= x <= 10 for x in numbers):
                novelty, usefulness = numbers
        if 1 <= number <= n_items and novelty is not None and usefulness is not None \
                and (number - 1) not in verdicts:
            verdicts[number - 1] = (novelty, usefulness)
    return verdicts


def _batches(indices: list[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """The indices shuffled and cut into ceil(n / batch_size) batches of near-equal size."""
    order = list(indices)
    rng.shuffle(order)
    count = max(1, math.ceil(len(order) / batch_size))
    return [list(chunk) for chunk in np.array_split(np.array(order, dtype=int), count) if len(chunk)]


async def arate_together(ideas, task, judges: Backend | Sequence[Backend], *, samples: int | None = None,
                         batch_size: int = 10, retries: int = 1, max_tokens: int = 24,
                         temperature: float | None = None, seed: int = JUDGE_SEED,
                         order: str = "shared") -> pd.DataFrame:
    """Paper A's Creativity Evaluation with LLM raters (Consensual Assessment Technique).

    Every rater (each judge model x ``samples`` samples of it, like the paper's five human
    raters; ``samples`` None: ``panel_samples``, five samples of one model or one rating per
    model) sees the ideas of one task together: shuffled and cut into batches of at most
    ``batch_size``, each batch rated in one reply. ``order="shared"`` (paper A: "All five
    judges evaluated ideas in the same randomized sequence") shuffles once per task for
    every rater; ``"shuffled"`` gives each rater its own order. Each batch is rated relative
    to the other ideas, novelty and usefulness 1-10, 0 for an idea that ignores the task. ``max_tokens``
    is the budget of one idea's line. A reply with nothing readable is asked again
    (``retries`` times, counted); an idea a rater's reply leaves out stays missing (NaN,
    counted), never filled in. Per idea: ``N1..Nk`` / ``U1..Uk`` (rater k's scores),
    ``novelty_raw`` / ``usefulness_raw`` (mean over the raters that answered), ``irrelevant``
    (more than half of those raters gave 0), then novelty / usefulness min-max scaled within
    task over the relevant ideas only (Methods, eq. for x'), creativity = product.
    ``frame.attrs`` holds the raters, the counts and the raters' agreement per task and scale
    (``rater_icc``: ICC(3,k) as Table 4, ICC(2,1), alpha; "one rating per item" with one rater).
    Temperature defaults to 0 for one sample per model, 0.7 when several are drawn.
    """
    judges = [judges] if isinstance(judges, Backend) else list(judges)
    if not judges:
        raise InputError("give at least one judge backend", field="judges")
    samples = panel_samples(samples, len(judges))
    if batch_size < 2:
        raise InputError("batch_size must be >= 2", field="batch_size")
    if order not in ("shared", "shuffled"):
        raise InputError(f"order must be 'shared' or 'shuffled', got {order!r}", field="order")
    heat = (0.0 if samples == 1 else PANEL_TEMPERATURE) if temperature is None else temperature
    frame = _ideas_frame(ideas, task)
    raters = [(judge, sample) for judge in judges for sample in range(samples)]
    names = [f"{judge.model}#{sample + 1}" for judge, sample in raters]
    scores = np.full((len(raters), len(frame), 2), np.nan)
    counts = {"calls": 0, "unreadable_replies": 0, "retries": 0}
    valid = [i for i in range(len(frame))
             if isinstance(frame.at[i, "idea"], str) and frame.at[i, "idea"].strip()]

    async def one_batch(r: int, task_id: str, batch: list[int]) -> None:
        judge, sample = raters[r]
        messages = prompts.judge_batch(_task_prompt(task_id, task), [frame.at[i, "idea"] for i in batch])
        for attempt in range(retries + 1):
            counts["calls"] += 1
            counts["retries"] += attempt > 0
            result = await judge.achat(messages, temperature=heat if attempt == 0 else max(heat, RETRY_TEMPERATURE),
                                       max_tokens=max_tokens * len(batch) + 16,
                                       seed=seed + 1009 * sample + attempt, replicate=sample * 100 + attempt)
            verdicts = parse_batch(result.text, len(batch))
            if verdicts:
                for position, pair in verdicts.items():
                    scores[r, batch[position]] = pair
                return
            counts["unreadable_replies"] += 1

    jobs = []
    for task_id in dict.fromkeys(frame["task"]):
        members = [i for i in valid if frame.at[i, "task"] == task_id]
        for r in range(len(raters)):
            key = f"{seed}:{task_id}" if order == "shared" else f"{seed}:{task_id}:{names[r]}"
            jobs += [one_batch(r, task_id, batch)
                     for batch in _batches(members, batch_size, random.Random(key))]
    await asyncio.gather(*jobs)
    judge = panel_name([j.model for j in judges], samples)
    frame = _combine_raters(frame, scores, names, valid, counts, batch_size, order, judge)
    frame.attrs.update(samples=samples, temperature=heat)
    return frame


def _combine_raters(frame: pd.DataFrame, scores: np.ndarray, names: list[str], valid: list[int],
                    counts: dict, batch_size: int, order: str, judge: str = "") -> pd.DataFrame:
    for r in range(len(names)):
        frame[f"N{r + 1}"] = scores[r, :, 0]
        frame[f"U{r + 1}"] = scores[r, :, 1]
    read = ~np.isnan(scores[:, :, 0])                                 # raters x ideas
    zero = read & ((scores[:, :, 0] == 0) | (scores[:, :, 1] == 0))
    n_read = read.sum(axis=0)
    frame["raters_read"] = n_read
    frame["irrelevant"] = (2 * zero.sum(axis=0) > n_read) & (n_read > 0)
    frame["novelty_raw"] = pd.DataFrame(scores[:, :, 0].T).mean(axis=1).to_numpy()  # NaN skipped
    frame["usefulness_raw"] = pd.DataFrame(scores[:, :, 1].T).mean(axis=1).to_numpy()
    scaled = scale_within_task(frame)
    for column in ("novelty", "usefulness", "creativity"):
        frame[column] = scaled[column]
    missing = int(len(names) * len(valid) - read[:, valid].sum())
    frame.attrs.update({
        "judge": judge, "raters": names, "batch_size": batch_size, "order": order, "ideas": len(frame),
        "empty_ideas": len(frame) - len(valid), "unreadable_verdicts": missing,
        "irrelevant": int(frame["irrelevant"].sum()), "irrelevant_rule": IRRELEVANT_RULE,
        "never_read": int(((n_read == 0)[valid]).sum()),
        "ratings_per_item": {"min": int(n_read[valid].min()) if valid else 0,
                             "max": int(n_read[valid].max()) if valid else 0},
        **counts, "icc": rater_icc(frame, len(names), judge),
    })
    return frame


def rater_icc(frame: pd.DataFrame, k: int, judge: str = "") -> list[dict]:
    """The raters' agreement (``N1..Nk`` / ``U1..Uk``) per task and scale over the relevant
    ideas (``engine.stats.agreement.panel_agreement``): ``icc`` = ICC(3,k) with its interval
    (paper A, Table 4), ``icc21`` = ICC(2,1), ``alpha`` (interval), ``n_ideas`` the ideas every
    rater read, ``dropped`` those with a rating missing, ``note`` / ``text`` what it says in
    words ("one rating per item: agreement cannot be computed" with one rater)."""
    from engine.stats.agreement import panel_agreement

    rows = []
    for task_id, group in frame[~frame["irrelevant"]].groupby("task", sort=False):
        for scale, prefix in (("novelty", "N"), ("usefulness", "U")):
            found = panel_agreement(group[[f"{prefix}{r + 1}" for r in range(k)]], judge=judge)
            ci = found["icc3k_ci"] or [None, None]
            rows.append({"task": task_id, "scale": scale, "k_raters": k, "n_ideas": found["complete_items"],
                         "dropped": found["dropped_items"],
                         "icc": math.nan if found["icc3k"] is None else found["icc3k"],
                         "ci_low": math.nan if ci[0] is None else ci[0],
                         "ci_high": math.nan if ci[1] is None else ci[1],
                         "icc21": math.nan if found["icc21"] is None else found["icc21"],
                         "alpha": math.nan if found["alpha"] is None else found["alpha"],
                         "note": found["note"], "text": found["text"]})
    return rows


def judge_summary(frame: pd.DataFrame) -> dict:
    """What a run records about its judges (plain JSON values): the panel (``judge``,
    ``raters``, ``samples``, ``ratings_per_item``), the counts (irrelevant by the majority
    rule, unreadable) and the raters' agreement per task and scale (``icc``)."""
    summary = {k: v for k, v in frame.attrs.items() if k != "icc"}
    summary["icc"] = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
                      for row in frame.attrs.get("icc", [])]
    return summary


def rate_together(ideas, task=None, judges: Backend | Sequence[Backend] | None = None,
                  **options) -> pd.DataFrame:
    """Synchronous :func:`arate_together`."""
    if judges is None:
        raise InputError("rate_together needs at least one judge backend", field="judges")
    backends = [judges] if isinstance(judges, Backend) else list(judges)
    return run_sync_closing(arate_together(ideas, task, backends, **options), *backends)
