"""The end of a grid run: the judge's ratings of the finished sessions.

``finish_judging``: with the judge's mode ``together`` (paper A's consensual assessment),
every finished session's final idea rated again with the others of its task by the grid's
panel of raters (``judge.samples`` x judge models; by default five, as paper A's five raters)
(``judge_together``); with ``alone``, each session was rated once as it finished and the raw
scores are scaled within task here (``rescale``, paper A). Either way the manifest's
``judge_summary`` says which judge, how many ratings per idea, the irrelevant ideas by the
majority rule and the raters' agreement (one rating per idea: "agreement cannot be computed").
"""

from __future__ import annotations

from pathlib import Path

from engine.errors import WriteError
from engine.stats.agreement import ONE_RATING
from engine.judging.judge import arate_together, attach_ratings, judge_summary, scale_within_task
from engine.judging.paraphrase import aparaphrase
from engine.llm.base import Backend, run_sync
from engine.llm.secrets import scrub
from engine.runs.grid import GridSpec
from engine.runs.run_backends import paraphraser
from engine.runs.run_folder import RunStore


def finish_judging(store: RunStore, grid: GridSpec, judges: list[Backend], tasks: dict, *,
                   new_sessions: int, cache: str | Path | None = None, replay: bool = False,
                   rewriter: Backend | None = None) -> None:
    """Rate the folder's finished sessions as the grid's judge mode says (nothing without a judge)."""
    if not judges:
        return
    if grid.judge is not None and grid.judge.mode == "together":
        judge_together(store, judges, grid, tasks, cache=cache, replay=replay, rewriter=rewriter)
    elif new_sessions:
        rescale(store)


def judge_together(store: RunStore, judges: list[Backend], grid: GridSpec, tasks: dict, *,
                   cache: str | Path | None = None, replay: bool = False,
                   rewriter: Backend | None = None) -> None:
    """Paper A's consensual assessment of every finished session's final idea, task by task
    (``engine.judging.judge.arate_together``); the corpus is rewritten with the scaled ratings and
    the manifest gets the raters, counts and ICC. With ``judge.paraphrase`` every idea is
    first paraphrased by that model (paper A's harmonisation; ``outcomes["paraphrased_idea"]``,
    failures counted in the summary). Re-run after new sessions (the response
    cache answers the batches already asked). A judge failure is recorded, not raised:
    the sessions are kept and the next run judges again."""
    import pandas as pd

    corpus = store.read_corpus()
    rated = [c for c in corpus if c.status == "ok" and c.final_idea]
    if not rated:
        return
    spec = grid.judge
    frame = pd.DataFrame({"idea": [c.final_idea for c in rated], "task": [c.task for c in rated]})
    if rewriter is None:
        rewriter = paraphraser(grid, cache=cache, replay=replay)
    paraphrased: dict = {}

    async def judge_all():
        try:
            if rewriter is not None:  # paper A's raters read paraphrases (engine.judging.paraphrase)
                texts, done, counts = await aparaphrase(list(frame["idea"]), rewriter,
                                                        max_tokens=spec.paraphrase_max_tokens)
                frame["idea"] = texts
                paraphrased.update(done=done, counts=counts)
            return await arate_together(frame, tasks, judges, samples=spec.samples,
                                        batch_size=spec.batch_size, retries=spec.retries,
                                        max_tokens=spec.max_tokens,
                                        temperature=spec.temperature if spec.samples == 1 else None,
                                        seed=grid.seed, order=spec.order)
        finally:
            for each in [*judges, *([rewriter] if rewriter else [])]:
                await each.aclose()

    manifest = store.read_manifest()
    try:
        result = run_sync(judge_all())
    except WriteError:
        raise
    except Exception as error:  # kept for the next run; the sessions are safe on disk
        store.write_manifest({**manifest, "judge_summary": {
            "status": "failed", "error": scrub(f"{type(error).__name__}: {error}")}})
        return
    attach_ratings(rated, result, "llm:" + "+".join(dict.fromkeys(j.model for j in judges)))
    summary = {"status": "ok", "mode": "together", **judge_summary(result)}
    if paraphrased:
        for conversation, text, done in zip(rated, frame["idea"], paraphrased["done"]):
            conversation.outcomes["paraphrased_idea"] = text if done else None
        summary["paraphrase"] = paraphrased["counts"]
    store.rewrite_corpus(corpus)
    store.write_manifest({**manifest, "judge_summary": summary})


def rescale(store: RunStore) -> None:
    """Scale every session's raw judge scores within its task (paper A) and rewrite the corpus."""
    import pandas as pd

    corpus = store.read_corpus()
    rated = [c for c in corpus if "novelty_raw" in c.outcomes]
    if not rated:
        return
    frame = pd.DataFrame({"task": [c.task for c in rated],
                          "novelty_raw": [c.outcomes.get("novelty_raw") for c in rated],
                          "usefulness_raw": [c.outcomes.get("usefulness_raw") for c in rated]},
                         dtype=object)
    frame["novelty_raw"] = pd.to_numeric(frame["novelty_raw"])
    frame["usefulness_raw"] = pd.to_numeric(frame["usefulness_raw"])
    scaled = scale_within_task(frame)
    for conversation, (_, row) in zip(rated, scaled.iterrows()):
        for column in ("novelty", "usefulness", "creativity"):
            value = row[column]
            conversation.outcomes[column] = None if pd.isna(value) else float(value)
        conversation.outcomes["irrelevant"] = bool(row["irrelevant"])  # rated 0: not scaled
    store.rewrite_corpus(corpus)
    judges = sorted({str(c.outcomes.get("rater")).removeprefix("llm:") for c in rated if c.outcomes.get("rater")})
    read = int(frame[["novelty_raw", "usefulness_raw"]].notna().all(axis=1).sum())
    store.write_manifest({**store.read_manifest(), "judge_summary": {
        "status": "ok", "mode": "alone", "judge": "+".join(judges), "raters": judges, "samples": 1,
        "ideas": len(rated), "ratings_per_item": {"min": 1, "max": 1}, "unreadable_verdicts": len(rated) - read,
        "irrelevant": int(scaled["irrelevant"].sum()), "irrelevant_rule": "irrelevant: rated 0 by its one rater",
        "agreement": ONE_RATING}})
