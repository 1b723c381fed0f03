"""The two measures a file of human-rated items can be validated on, one score per item.

* ``semantic_distance``: 1 - cos(e(prompt), e(response)) with the project's embedder (the
  SemDis family of scores: Beaty & Johnson 2021; the baseline Organisciak et al. 2023 compare
  their fine-tuned models against). Vectors come through the embedding cache.
* ``recorded_ratings``: the ratings a dataset's own judge already gave the same ideas (paper A's
  scales, ``<scale>_raw`` and the panel's per-rater ``N1..Nk`` / ``U1..Uk`` where kept), matched
  by idea id: the instrument the dataset's numbers rest on, checked without a call.
* ``ajudge_scores``: an LLM judge asked for one score per item on the people's scale
  (``prompts.judge_item_score``: the criterion, e.g. originality, from ``low`` to ``high``), by a
  panel of raters as ``engine.judging.quality.rubric_raters`` builds it (five samples of one
  model by default, or one score from each of several models). An answer that stays unreadable
  after the retries is NaN and counted (per rater and per item), never filled.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from engine import prompts
from engine.judging.judge import ask, panel_name
from engine.judging.quality import rubric_raters
from engine.llm.base import Backend
from engine.protocols.parsing import parse_labelled

CRITERIA = {
    "originality": "how unusual, clever and surprising the response is, compared with what most people "
                   "would answer",
    "novelty": "how original the idea is compared with the solutions people usually suggest",
    "usefulness": "how practical, feasible and effective the idea would be",
    "creativity": "how novel and useful the idea is at once",
}


def semantic_distance(prompts_: Sequence[str], responses: Sequence[str], embedder) -> np.ndarray:
    """1 - cosine between each prompt's and its response's embeddings (distinct texts embedded once)."""
    texts = list(dict.fromkeys([*prompts_, *responses]))
    vectors = np.asarray(embedder.encode(texts), dtype=float)
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    at = {text: i for i, text in enumerate(texts)}
    a = vectors[[at[p] for p in prompts_]]
    b = vectors[[at[r] for r in responses]]
    return 1.0 - np.einsum("ij,ij->i", a, b)


PAPER_A_SCALE = (0, 10)  # 1-10, 0 for an idea that ignores the task (paper A, Methods)


def recorded_ratings(frame, folder, scale: str):
    """(measure, info, scale, panel) from the dataset at ``folder``: its judge's ``<scale>_raw`` for
    each item whose id is a conversation of the dataset (others NaN, counted as unreadable)."""
    import pandas as pd

    from engine.datasets import Dataset
    from engine.errors import InputError

    dataset = Dataset.load(folder, with_corpus=False)
    conversations = dataset.conversations
    column = f"{scale}_raw"
    if column not in conversations:
        raise InputError(f"the dataset has no {column} column: its judge did not rate {scale}",
                         path=str(folder), field=column)
    rows = conversations.drop_duplicates("conversation_id").set_index("conversation_id")
    found = frame["item"].map(pd.to_numeric(rows[column], errors="coerce")).to_numpy(dtype=float)
    prefix = "N" if scale == "novelty" else "U"
    raters = sorted((c for c in rows.columns if re.fullmatch(rf"{prefix}\d+", str(c))), key=lambda c: int(c[1:]))
    panel = (np.stack([frame["item"].map(pd.to_numeric(rows[c], errors="coerce")).to_numpy(dtype=float)
                       for c in raters], axis=1) if len(raters) > 1 else None)
    judges = sorted(str(r).removeprefix("llm:") for r in rows["rater"].dropna().unique()) if "rater" in rows else []
    matched = int(frame["item"].isin(rows.index).sum())
    info = {"kind": "judge", "recorded": True, "name": f"the recorded judge of {Path(folder).name}",
            "judge": "+".join(judges) or "unknown", "samples": max(1, len(raters)), "raters": raters,
            "criterion": scale, "scale": list(PAPER_A_SCALE), "scale_from": "paper A's scale (1-10, 0 irrelevant)",
            "dataset": str(folder), "matched_items": matched, "items_not_in_dataset": int(len(frame) - matched),
            "model_calls": 0, "score": f"the dataset's {column} (mean of its raters' readable ratings)"}
    return found, info, PAPER_A_SCALE, panel


def semantic_distance_info(model_name: str) -> dict:
    """What a report says of the semantic-distance measure made with ``model_name``."""
    return {"kind": "semdis", "name": f"semantic distance ({model_name})", "embedding_model": model_name,
            "definition": "1 - cosine(embedding of prompt, embedding of response)"}


def score_parser(low: int, high: int) -> Callable[[str], float | None]:
    """'Score: 3', '3 out of 5' / '3/5' (the top being ``high``), or a short reply with one number,
    read as a number from low to high (4.5 is kept: the kappa rounds); anything else is unreadable (None)."""
    out_of = re.compile(rf"(\d+)\s*(?:/|out of)\s*{high}(?!\d)", re.IGNORECASE)

    def parse(text: str) -> float | None:
        value = parse_labelled(text, "score", low, high)
        if value is None:
            fractions = {float(m) for m in out_of.findall(text)}
            numbers = re.findall(r"\d+(?:\.\d+)?", text)
            if len(fractions) == 1:
                value = fractions.pop()
            elif len(text) <= 80 and len(numbers) == 1:
                value = float(numbers[0])
        ok = value is not None and low <= value <= high
        return float(value) if ok else None

    return parse


async def ajudge_scores(prompts_: Sequence[str], responses: Sequence[str], judges: Backend | Sequence[Backend], *,
                        criterion: str, low: int, high: int, samples: int | None = None, retries: int = 2,
                        max_tokens: int = 12, on_done=None) -> dict:
    """``{"scores": items x raters array (NaN = unreadable), "raters": names, "judge": panel name,
    "samples", "temperature", "unreadable_answers", "unread_items"}``."""
    raters = rubric_raters(judges, samples)
    description = CRITERIA.get(criterion, criterion)
    parse = score_parser(low, high)
    scores = np.full((len(prompts_), len(raters)), np.nan)

    async def one(i: int, r: int) -> None:
        rater = raters[r]
        messages = prompts.judge_item_score(prompts_[i], responses[i], criterion, description, low, high)
        value = await ask(rater.backend, messages, parse, retries=retries, max_tokens=max_tokens,
                          temperature=rater.temperature, seed=rater.seed)
        if value is not None:
            scores[i, r] = value
        if on_done:
            on_done()

    await asyncio.gather(*(one(i, r) for i in range(len(prompts_)) for r in range(len(raters))))
    unread = np.isnan(scores)
    return {"scores": scores, "raters": [r.name for r in raters],
            "judge": panel_name([r.backend.model for r in raters], max(r.sample for r in raters)),
            "samples": max(r.sample for r in raters), "temperature": raters[0].temperature,
            "unreadable_answers": int(unread.sum()), "unread_items": int(unread.all(axis=1).sum())}
