"""Cached re-embedding of a 50,000-turn corpus: zero model calls, at most 2 s.

``python -m benchmarks.bench_embed_cache [--turns 50000] [--cache PATH] [--batch-size 64]``

1. builds a corpus of ``--turns`` distinct, varied turns (1,667 conversations of 30 turns
   for 50,000; texts composed from idea-generation vocabulary with a seeded RNG);
2. embeds it once for real with the bundled all-MiniLM-L6-v2 into an empty on-disk cache
   (the uncached reference: model load + every text through the model);
3. embeds it again with a fresh ``Embedder`` on the same cache file (the cached pass: the
   model is never loaded), three times, and reports the median.
It prints both times and their ratio, checks ``model_calls == 0`` and equal vectors, and
says whether the cached pass meets the issue's target (<= 2 s). With ``--cache`` pointing
to an already filled cache, step 2 is itself a cached pass (then the ratio says so).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.corpus import Conversation, Corpus, Turn
from engine.embedding.embedder import Embedder, embed_corpus

TARGET_SECONDS = 2.0
TURNS_PER_CONVERSATION = 30

OPENERS = ("I think", "What if", "Building on that,", "Alternatively,", "To be honest,",
           "Let's consider whether", "A cheaper option:", "My concern is that", "Imagine",
           "We could", "Another angle:", "Combining both ideas,", "From the user's side,")
SUBJECTS = ("the school", "a local council", "our team", "small retailers", "every household",
            "the supply chain", "shower speakers", "the HR department", "volunteers",
            "delivery drivers", "a mobile app", "teachers", "new employees", "the city",
            "a startup", "remote workers", "parents", "the factory", "students", "a charity")
VERBS = ("could recycle", "should redesign", "might share", "can track", "would reward",
         "could crowdsource", "should replace", "might gamify", "can measure", "would rent out",
         "could compost", "should mentor", "might automate", "can upcycle", "would bundle")
OBJECTS = ("plastic packaging", "unused textbooks", "waterproof lyrics cards", "exit interviews",
           "shipping containers", "apology messages", "bottle caps", "tutoring hours",
           "delivery routes", "coffee cups", "song requests", "salary benchmarks",
           "spare parts", "reading lists", "feedback surveys", "food waste", "bike racks")
MODIFIERS = ("with a points system", "through a monthly subscription", "using QR codes",
             "in partnership with NGOs", "at almost no cost", "before the end of the year",
             "with anonymous voting", "via a neighbourhood map", "for low-income families",
             "with solar power", "as a weekend event", "through peer review",
             "with transparent pricing", "using old smartphones", "during lunch breaks")
CLOSERS = ("", "", "That feels novel.", "Is it feasible?", "It scales well.",
           "Costs stay low.", "People would love it.", "The risk is adoption.")


def varied_texts(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct turns of one to three composed sentences each."""
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    while len(seen) < n:
        sentences = []
        for _ in range(rng.randint(1, 3)):
            sentences.append(f"{rng.choice(OPENERS)} {rng.choice(SUBJECTS)} {rng.choice(VERBS)} "
                             f"{rng.choice(OBJECTS)} {rng.choice(MODIFIERS)}.")
        closer = rng.choice(CLOSERS)
        text = " ".join(sentences) + (f" {closer}" if closer else "")
        seen.setdefault(text, None)
    return list(seen)


def build_corpus(n_turns: int, seed: int = 0) -> Corpus:
    texts = varied_texts(n_turns, seed)
    conversations = []
    for start in range(0, n_turns, TURNS_PER_CONVERSATION):
        chunk = texts[start:start + TURNS_PER_CONVERSATION]
        turns = [Turn(speaker=f"agent_{i % 3 + 1}", text=t, round=i // 3 + 1)
                 for i, t in enumerate(chunk)]
        conversations.append(Conversation(conversation_id=f"bench-{start // TURNS_PER_CONVERSATION}",
                                          turns=turns, task="bench"))
    return Corpus(conversations, name="bench_embed_cache")


def stacked(embeddings: dict[str, np.ndarray]) -> np.ndarray:
    return np.concatenate(list(embeddings.values()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50_000, help="corpus size in turns")
    parser.add_argument("--cache", help="cache file (default: a new temporary one)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3, help="cached passes (median reported)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench_embed_cache_") as temp:
        cache_path = Path(args.cache) if args.cache else Path(temp) / "embeddings.sqlite"
        corpus = build_corpus(args.turns)
        n_turns = sum(len(c.turns) for c in corpus)
        print(f"corpus: {len(corpus)} conversations, {n_turns} distinct turns; cache {cache_path}")

        first = Embedder(cache=cache_path, batch_size=args.batch_size)
        started = time.perf_counter()
        reference = stacked(embed_corpus(corpus, first, progress=True))
        uncached = time.perf_counter() - started
        print(f"first pass (reference): {uncached:.2f} s, model calls {first.model_calls}, "
              f"{n_turns / uncached:.0f} turns/s")

        times, calls = [], []
        for _ in range(args.repeats):
            again = Embedder(cache=cache_path, batch_size=args.batch_size)
            started = time.perf_counter()
            vectors = stacked(embed_corpus(corpus, again))
            times.append(time.perf_counter() - started)
            calls.append(again.model_calls)
            if not np.array_equal(vectors, reference):
                raise SystemExit("cached vectors differ from the first pass")
            again.cache.close()
        cached = statistics.median(times)
        print(f"cached pass: median {cached:.3f} s over {args.repeats} "
              f"(all: {', '.join(f'{t:.3f}' for t in times)}), model calls {calls}")
        print(f"ratio first pass / cached pass: {uncached / cached:.1f}x"
              + ("  (the first pass was itself cached: --cache was already filled)"
                 if first.model_calls == 0 else ""))
        ok = all(c == 0 for c in calls) and cached <= TARGET_SECONDS
        print(f"target (0 model calls, <= {TARGET_SECONDS:.0f} s for {n_turns} turns): "
              f"{'met' if ok else 'NOT met'}")
        first.cache.close()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
