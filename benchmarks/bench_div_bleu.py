"""Benchmark: Div-BLEU over 2,000 ~100-word texts vs NLTK ``sentence_bleu`` in a loop.

Target: at least 20x faster, equal to 1e-9 on a 200-text subset. NLTK's loop is
timed on ``--reference`` hypotheses (each against all 1,999 other texts) and its
per-text cost scaled to 2,000; both measured in this run.
``python -m benchmarks.bench_div_bleu``
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from engine.measures.diversity import default_tokenize, div_bleu, self_bleu_scores


def synthetic_texts(count: int, words: int = 100, seed: int = 0) -> list[str]:
    """Texts drawn from a Zipf-like vocabulary, so n-grams repeat across texts as in prose."""
    rng = random.Random(seed)
    vocabulary = [f"word{i}" for i in range(2000)] + [",", ".", "the", "a", "of", "and"]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    return [" ".join(rng.choices(vocabulary, weights, k=words + rng.randint(-20, 20)))
            for _ in range(count)]


def nltk_scores(texts: list[str], indices) -> np.ndarray:
    tokens = [default_tokenize(t) for t in texts]
    smooth = SmoothingFunction().method1
    return np.array([sentence_bleu(tokens[:i] + tokens[i + 1:], tokens[i], smoothing_function=smooth)
                     for i in indices])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--reference", type=int, default=40)
    args = parser.parse_args(argv)
    texts = synthetic_texts(args.texts)

    start = time.perf_counter()
    score = div_bleu(texts)
    fast_seconds = time.perf_counter() - start

    start = time.perf_counter()
    nltk_sample = nltk_scores(texts, range(args.reference))
    nltk_seconds = time.perf_counter() - start
    nltk_full_estimate = nltk_seconds / args.reference * args.texts
    ours = self_bleu_scores(texts)[: args.reference]
    sample_difference = float(np.max(np.abs(ours - nltk_sample)))

    subset = texts[:200]
    subset_difference = abs(div_bleu(subset) - (1 - nltk_scores(subset, range(200)).mean()))

    print(f"div_bleu on {args.texts} texts: {score:.6f} in {fast_seconds:.2f} s")
    print(f"NLTK sentence_bleu loop: {args.reference} texts against all others in {nltk_seconds:.2f} s "
          f"-> {nltk_full_estimate:.0f} s estimated for {args.texts}")
    print(f"speed-up: {nltk_full_estimate / fast_seconds:.0f}x  (target >= 20x)")
    print(f"largest per-text difference on the timed texts: {sample_difference:.1e}")
    print(f"200-text subset: |ours - NLTK| = {subset_difference:.1e}  (target <= 1e-9)")


if __name__ == "__main__":
    main()
