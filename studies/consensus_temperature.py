"""Does the consensus judge's temperature move paper B's diversity? A paired measurement.

Paper B's judge-based consensus picks one final answer per session; our judge is the debating
model sampling, by default, at the session's temperature (1.0). This study holds the debates
fixed and redoes only the pick: for every finished Voting and Homo MAD session of the cached
local datasets (real SmolLM2-135M sessions: ``cached_runs/local_smollm2`` for Voting,
``cached_runs/local_smollm2_paper_b`` for Homo MAD), the judge is asked again, with the same
prompt and retry rule as ``engine.protocols.debate``, once at T = 0 and once at T = 1 (seeded),
and the picked answers are scored as paper B scores diversity: Vendi (all-MiniLM-L6-v2
embeddings, cosine kernel) and Div-BLEU in groups of 5 sessions of one method and task.

Unreadable picks (asked again up to twice at T = max(T, 0.7), then a seeded random pick, as
in a run) are counted per arm and shown, never hidden.

    python -m studies.consensus_temperature --out cached_runs/studies/consensus_temperature.json

On the local model it makes about 2 calls per session and arm (about 5 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from pathlib import Path

import numpy as np

from engine import prompts
from engine.datasets import Dataset
from engine.measures.diversity import inter_session_diversity
from engine.protocols.parsing import parse_choice

SOURCES = {"voting": "cached_runs/local_smollm2", "homo_mad": "cached_runs/local_smollm2_paper_b"}
ARMS = (0.0, 1.0)
RETRIES, RETRY_TEMPERATURE = 2, 0.7  # engine.protocols.debate's consensus rule


def final_answers(conversation) -> list[str]:
    """The answers the consensus chose among: the last round's (Voting: the only round)."""
    last = max(t.round for t in conversation.turns if t.phase in ("initial", "debate"))
    return [t.text for t in conversation.turns if t.phase in ("initial", "debate") and t.round == last]


async def pick(backend, task_prompt: str, answers: list[str], temperature: float, seed: int) -> tuple[int, str]:
    """The judge's pick at ``temperature`` (index, how it was resolved)."""
    messages = prompts.consensus_select(task_prompt, answers)
    for attempt in range(RETRIES + 1):
        heat = temperature if attempt == 0 else max(temperature, RETRY_TEMPERATURE)
        reply = await backend.achat(messages, temperature=heat, max_tokens=16, seed=seed + attempt)
        choice = parse_choice(reply.text, len(answers))
        if choice is not None:
            return choice, "judge" if attempt == 0 else "judge_retry"
    return random.Random(f"{seed}:consensus").randrange(len(answers)), "random_fallback"


async def measure(backend, sessions) -> list[dict]:
    rows = []
    for method, conversation in sessions:
        answers = final_answers(conversation)
        seed = int(conversation.meta.get("seed") or 0) % (2 ** 31)
        for temperature in ARMS:
            choice, how = await pick(backend, conversation.meta.get("task_prompt") or conversation.task,
                                     answers, temperature, seed)
            rows.append({"method": method, "task": conversation.task, "session": conversation.conversation_id,
                         "temperature": temperature, "choice": choice, "resolution": how,
                         "answer": answers[choice]})
    return rows


def summarise(rows: list[dict], embed) -> dict:
    out = {}
    for method in SOURCES:
        for temperature in ARMS:
            part = [r for r in rows if r["method"] == method and r["temperature"] == temperature]
            vendi, bleu = [], []
            for task in sorted({r["task"] for r in part}):
                texts = [r["answer"] for r in part if r["task"] == task]
                if len(texts) >= 5:
                    found = inter_session_diversity(texts, embed(texts), group_size=5)
                    vendi += list(found["vendi_per_group"])
                    bleu += list(found["div_bleu_per_group"])
            counts = {k: sum(r["resolution"] == k for r in part) for k in ("judge", "judge_retry", "random_fallback")}
            out[f"{method} T={temperature:g}"] = {
                "sessions": len(part), "groups_of_5": len(vendi),
                "vendi_mean": float(np.mean(vendi)) if vendi else None,
                "vendi_sd_over_groups": float(np.std(vendi, ddof=1)) if len(vendi) > 1 else None,
                "div_bleu_mean": float(np.mean(bleu)) if bleu else None,
                "div_bleu_sd_over_groups": float(np.std(bleu, ddof=1)) if len(bleu) > 1 else None,
                "resolution": counts}
        by_session = {}
        for r in rows:
            if r["method"] == method:
                by_session.setdefault(r["session"], {})[r["temperature"]] = r["choice"]
        differ = sum(len(set(v.values())) > 1 for v in by_session.values())
        out[f"{method} picks that differ between T=0 and T=1"] = {"sessions": len(by_session), "differ": differ}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="cached_runs/studies/consensus_temperature.json")
    args = parser.parse_args(argv)
    from engine import llm
    from engine.embedding.embedder import Embedder

    sessions = []
    for method, folder in SOURCES.items():
        corpus = Dataset.load(folder).corpus
        sessions += [(method, c) for c in corpus if c.protocol == method and c.status == "ok"]
    backend = llm.make_backend(llm.Endpoint(provider="local", model="local"))

    async def run():
        try:
            return await measure(backend, sessions)
        finally:
            await backend.aclose()

    rows = asyncio.run(run())
    embedder = Embedder()
    summary = summarise(rows, embedder.encode)
    result = {"what": "the consensus pick redone on fixed debates at T = 0 and T = 1 (studies/consensus_temperature.py)",
              "model": "local SmolLM2-135M-Instruct (Q4_1, llama.cpp), judging its own debates",
              "embedding_model": embedder.model_name, "summary": summary, "picks": rows}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
