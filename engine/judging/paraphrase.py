"""Paper A's harmonisation: every idea paraphrased before the raters read it.

Paper A (Methods; appendix A.2) had GPT-4.1 (temperature 0) rewrite all human and LLM ideas
in one style (third person, active voice, plain words, about 100 words) before the five
judges rated them; the release does it in ``preprocessing/paraphrase_ideas_csv.py`` with
``azure_paraphrase_service.py`` (200 tokens, a filtered or failed idea left without a
paraphrase). ``aparaphrase`` does the same with any chat model and our own wording of those
rules (``engine.prompts.paraphrase_idea``). An idea whose paraphrase fails or comes back
empty keeps its own text, and is counted (``failed``), never silently rated as if rewritten.
"""

from __future__ import annotations

import asyncio
from typing import Sequence

from engine import prompts
from engine.llm.base import Backend

PARAPHRASE_SEED = 4321


async def aparaphrase(ideas: Sequence[str], backend: Backend, *, max_words: int = 100,
                      max_tokens: int = 200, temperature: float = 0.0) -> tuple[list[str], list[bool], dict]:
    """``(texts, paraphrased, counts)``: each idea's paraphrase (or the idea itself where it
    failed), whether it was paraphrased, and ``{"model", "ideas", "failed"}``."""
    async def one(idea: str) -> str | None:
        if not isinstance(idea, str) or not idea.strip():
            return None
        try:
            result = await backend.achat(prompts.paraphrase_idea(idea, max_words), temperature=temperature,
                                         max_tokens=max_tokens, seed=PARAPHRASE_SEED)
        except Exception:  # a refused or failed call: the idea keeps its text, counted below
            return None
        return result.text.strip() or None

    rewritten = await asyncio.gather(*(one(idea) for idea in ideas))
    texts = [new if new is not None else idea for idea, new in zip(ideas, rewritten)]
    done = [new is not None for new in rewritten]
    return texts, done, {"model": backend.model, "ideas": len(ideas), "failed": done.count(False)}
