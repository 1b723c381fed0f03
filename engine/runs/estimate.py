"""Plan and estimate a grid run before it runs: what sessions are left, how many calls, what cost.

``estimate`` counts the chat calls of sessions (exact for paper B's methods, a maximum for
paper A's structures, whose discussions may stop early), the most that asking again can add
and a rough token budget; ``dry_run_budget`` adds what a folder already holds (refusing it
as the run would), the judge's calls and the cost at the debaters' endpoint's price
(``engine.llm.providers.endpoint_price``: "unknown" when the provider does not know it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from engine.llm.pricing import cost_of, format_cost
from engine.llm.providers import endpoint_price
from engine.protocols import expected_calls
from engine.runs.grid import GridSpec, SessionSpec, model_endpoint
from engine.runs.resume import check_folder
from engine.runs.run_folder import MANIFEST_FILE, read_manifest, session_prompts_in


def estimate(specs: Sequence[SessionSpec]) -> dict[str, Any]:
    """Calls (exact for paper B, maximum for paper A), the most that asking again can add
    (consensus picks, unreadable instructed replies), and a rough token budget."""
    calls = completion = prompt = retries = 0
    for spec in specs:
        n = expected_calls(spec.config)
        retries += expected_calls(spec.config, with_retries=True) - n
        calls += n
        completion += n * spec.config.max_tokens
        context = 300 + len(spec.task.prompt) // 4 + spec.config.max_tokens * min(spec.config.agents, 4)
        prompt += n * context
    return {"sessions": len(specs), "calls": calls, "retry_calls_max": retries,
            "prompt_tokens": prompt, "completion_tokens": completion}


def judge_calls(grid: GridSpec, specs: Sequence[SessionSpec], todo: Sequence[SessionSpec]) -> int:
    """The grid judge's calls: together, a batch per ``batch_size`` ideas of a task per rater
    (every planned session's idea is rated again with the new ones) plus the rubric per new
    session; alone, one rating (and one rubric) per new session."""
    spec = grid.judge
    if spec is None:
        return 0
    if spec.mode == "together":  # batches per task x raters, plus the rubric per session
        per_task: dict[str, int] = {}
        for s in specs:
            per_task[s.task.id] = per_task.get(s.task.id, 0) + 1
        raters = spec.samples * (1 + len(spec.models))
        batches = sum(-(-n // spec.batch_size) for n in per_task.values())
        return batches * raters + len(todo) * int(spec.rubric)
    return len(todo) * (1 + int(spec.rubric))


def dry_run_budget(grid: GridSpec, specs: Sequence[SessionSpec], out: Path) -> dict[str, Any]:
    """What a run of ``specs`` into ``out`` would do: ``estimate`` of the sessions not done
    yet, ``planned``, ``done``, ``cost_usd`` (None: unknown) and ``judge_calls`` (with a judge).
    A folder the run would refuse is refused here too (``engine.runs.resume``)."""
    sessions = session_prompts_in(out)
    check_folder(read_manifest(out / MANIFEST_FILE), sessions, grid, specs, out)
    done = {cid for cid, (_, _, finished) in sessions.items() if finished}
    todo = [s for s in specs if s.conversation_id not in done]
    budget = estimate(todo)
    budget.update(planned=len(specs), done=len(specs) - len(todo))
    budget["cost_usd"] = cost_of(endpoint_price(model_endpoint(grid)), budget["prompt_tokens"],
                                 budget["completion_tokens"])
    if grid.judge:
        budget["judge_calls"] = judge_calls(grid, specs, todo)
    return budget


def budget_text(budget: dict[str, Any], grid: GridSpec, out: "str | Path") -> str:
    """The dry run's one line."""
    judge_note = ""
    if grid.judge:
        judge_note = (f"; the judge adds {budget['judge_calls']} calls "
                      f"(at most {budget['judge_calls'] * (1 + grid.judge.retries)} with retries)")
    retry_note = (f" (+ at most {budget['retry_calls_max']} calls asking again after "
                  f"unreadable replies)" if budget["retry_calls_max"] else "")
    todo = budget["planned"] - budget["done"]
    done_where = (f"{budget['done']} already done in {out}" if Path(out).parent != Path(os.devnull)
                  else "no --out given, so none counts as done")
    return (f"{budget['sessions']} sessions, at most {budget['calls']} chat calls "
            f"(exact for paper B methods){retry_note}, about {budget['prompt_tokens']:,} prompt + "
            f"{budget['completion_tokens']:,} completion tokens at most "
            f"({format_cost(budget['cost_usd'])}){judge_note}; to do: {todo} of {budget['planned']} "
            f"planned sessions ({done_where})")
