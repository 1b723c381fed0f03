"""Set-level diversity of paper B (section 3.2): Vendi Score and Div-BLEU.

* Vendi Score (Friedman & Dieng, 2023; layering of vertaix/Vendi-Score): the exponential
  of the order-q Renyi entropy of the eigenvalues of ``K / n``, with ``K`` the cosine
  similarity matrix of the L2-normalised rows. 1 for identical rows, n for orthogonal
  ones. When n > d the eigenvalues come from the d x d matrix ``X^T X / n`` (same
  non-zero spectrum).
* Div-BLEU = 1 - Self-BLEU: 1 - mean_i BLEU-4(text_i; references = every other text).
* Paper-B protocol helpers: intra-session diversity per debate round and inter-session
  diversity over G independent runs split into groups (15 runs -> 3 groups of 5); that
  measure for every full condition and task of a table of sessions is
  ``engine.stats.condition_diversity``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Callable, Sequence

import numpy as np

TOKEN_PATTERN = re.compile(r"\w+|[^\w\s]")


# -- Vendi Score ---------------------------------------------------------------------------
def vendi_score_from_eigenvalues(eigenvalues: np.ndarray, q: float = 1.0) -> float:
    """exp(Renyi entropy of order q) of a probability vector of eigenvalues.

    q = 1 is Shannon entropy; q = inf gives 1 / max; q = 0 counts non-zero eigenvalues.
    """
    p = np.clip(np.asarray(eigenvalues, dtype=np.float64), 0.0, None)
    total = p.sum()
    if total <= 0:
        raise ValueError("the similarity kernel has no positive eigenvalue")
    p = p / total
    p = p[p > 1e-12]
    if q == 1:
        return float(np.exp(-np.sum(p * np.log(p))))
    if np.isinf(q):
        return float(1.0 / p.max())
    if q == 0:
        return float(len(p))
    return float(np.exp(np.log(np.sum(p ** q)) / (1.0 - q)))


def vendi_score_from_kernel(kernel: np.ndarray, q: float = 1.0) -> float:
    """Vendi Score of an n x n similarity matrix with ones on the diagonal."""
    kernel = np.asarray(kernel, dtype=np.float64)
    n = kernel.shape[0]
    eigenvalues = np.linalg.eigvalsh((kernel + kernel.T) / (2.0 * n))
    return vendi_score_from_eigenvalues(eigenvalues, q)


def vendi_score(embeddings: np.ndarray, q: float = 1.0) -> float:
    """Vendi Score of the rows of ``embeddings`` under the cosine-similarity kernel.

    Rows are L2-normalised first. Uses the n x n kernel when n <= d and the d x d dual
    ``X^T X / n`` when n > d; both have the same non-zero eigenvalues.
    """
    x = np.asarray(embeddings, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"expected a non-empty (n, dim) array, got shape {x.shape}")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("a row has zero length: cosine similarity is undefined")
    x = x / norms
    n, d = x.shape
    if n <= d:
        return vendi_score_from_kernel(x @ x.T, q)
    return vendi_score_from_eigenvalues(np.linalg.eigvalsh(x.T @ x / n), q)


# -- Div-BLEU ------------------------------------------------------------------------------
def default_tokenize(text: str) -> list[str]:
    """Lower-cased words and single punctuation marks: ``\\w+|[^\\w\\s]``."""
    return TOKEN_PATTERN.findall(text.lower())


def div_bleu(texts: Sequence[str], *, max_n: int = 4,
             tokenize: Callable[[str], list[str]] = default_tokenize,
             smoothing: str = "method1", epsilon: float = 0.1) -> float:
    """Div-BLEU = 1 - Self-BLEU (paper B, section 3.2).

    Self-BLEU is the mean over texts of sentence BLEU-``max_n`` of each text against all
    the others as references, with uniform weights and the brevity penalty of the closest
    reference length, as NLTK's ``sentence_bleu``. ``smoothing="method1"`` is Chen & Cherry
    (2014) method 1, NLTK's ``SmoothingFunction().method1``: a zero n-gram match count
    becomes ``epsilon / total``; ``smoothing="none"`` leaves it zero. As in NLTK, a text
    with no unigram match scores 0.

    Fast path: with every text a reference of every other, the clipping count of an
    n-gram for text i is the largest count over the other texts, which is the set's
    largest count, or its second largest when text i holds the largest.
    """
    scores = self_bleu_scores(texts, max_n=max_n, tokenize=tokenize, smoothing=smoothing,
                              epsilon=epsilon)
    return float(1.0 - scores.mean())


def self_bleu_scores(texts: Sequence[str], *, max_n: int = 4,
                     tokenize: Callable[[str], list[str]] = default_tokenize,
                     smoothing: str = "method1", epsilon: float = 0.1) -> np.ndarray:
    """Per-text BLEU of each text against all others (see ``div_bleu``)."""
    if smoothing not in ("method1", "none"):
        raise ValueError(f"smoothing must be 'method1' or 'none', got {smoothing!r}")
    texts = list(texts)
    if len(texts) < 2:
        raise ValueError("Div-BLEU needs at least two texts")
    tokens = [tokenize(t) for t in texts]
    n_texts = len(tokens)
    lengths = np.array([len(t) for t in tokens])
    log_precision_sum = np.zeros(n_texts)
    no_unigram_match = np.zeros(n_texts, dtype=bool)
    for order in range(1, max_n + 1):
        matched, total = _clipped_matches(tokens, order)
        denominator = np.maximum(total, 1)
        if order == 1:
            no_unigram_match = matched == 0
        if smoothing == "method1":
            numerator = np.where(matched == 0, epsilon, matched)
        else:
            numerator = matched.astype(float)
        with np.errstate(divide="ignore"):
            log_precision_sum += np.log(numerator / denominator) / max_n
    bleu = np.exp(log_precision_sum) * _brevity_penalty(lengths)
    bleu[no_unigram_match] = 0.0
    return np.nan_to_num(bleu, nan=0.0)


def _clipped_matches(tokens: list[list[str]], order: int) -> tuple[np.ndarray, np.ndarray]:
    """For each text, sum over its n-grams of min(count, max count in the other texts)."""
    vocabulary: dict[tuple, int] = {}
    doc_ids, gram_ids, counts = [], [], []
    totals = np.zeros(len(tokens), dtype=np.int64)
    for doc, words in enumerate(tokens):
        grams = Counter(tuple(words[i:i + order]) for i in range(len(words) - order + 1))
        totals[doc] = sum(grams.values())
        for gram, count in grams.items():
            doc_ids.append(doc)
            gram_ids.append(vocabulary.setdefault(gram, len(vocabulary)))
            counts.append(count)
    if not counts:
        return np.zeros(len(tokens), dtype=np.int64), totals
    doc_ids, gram_ids, counts = map(np.asarray, (doc_ids, gram_ids, counts))
    order_index = np.lexsort((-counts, gram_ids))
    sorted_grams, sorted_counts = gram_ids[order_index], counts[order_index]
    first = np.r_[True, sorted_grams[1:] != sorted_grams[:-1]]
    starts = np.flatnonzero(first)
    top1 = np.zeros(len(vocabulary), dtype=np.int64)
    top2 = np.zeros(len(vocabulary), dtype=np.int64)
    top1[sorted_grams[starts]] = sorted_counts[starts]
    second = starts + 1
    has_second = (second < len(sorted_grams))
    has_second[has_second] = sorted_grams[second[has_second]] == sorted_grams[starts[has_second]]
    top2[sorted_grams[starts[has_second]]] = sorted_counts[second[has_second]]
    others_max = np.where(counts == top1[gram_ids], top2[gram_ids], top1[gram_ids])
    clipped = np.minimum(counts, others_max)
    return np.bincount(doc_ids, weights=clipped, minlength=len(tokens)).astype(np.int64), totals


def _brevity_penalty(lengths: np.ndarray) -> np.ndarray:
    """NLTK's brevity penalty against the closest other length (ties go to the shorter)."""
    unique, counts = np.unique(lengths, return_counts=True)
    penalties = np.empty(len(lengths))
    for i, c in enumerate(lengths):
        position = int(np.searchsorted(unique, c))
        if counts[position] > 1:  # another text has exactly this length
            r = c
        else:
            below = unique[position - 1] if position > 0 else None
            above = unique[position + 1] if position + 1 < len(unique) else None
            if below is None or (above is not None and above - c < c - below):
                r = above
            else:
                r = below
        if c > r:
            penalties[i] = 1.0
        elif c == 0:
            penalties[i] = 0.0
        else:
            penalties[i] = math.exp(1.0 - r / c)
    return penalties


# -- paper-B protocol ----------------------------------------------------------------------
def split_into_groups(items: Sequence, group_size: int = 5) -> list[list]:
    """Consecutive groups of ``group_size`` (15 runs -> 3 groups of 5); a short tail is dropped."""
    if group_size < 2:
        raise ValueError("a diversity group needs at least 2 runs")
    n_groups = len(items) // group_size
    return [list(items[g * group_size:(g + 1) * group_size]) for g in range(n_groups)]


def inter_session_diversity(texts: Sequence[str], embeddings: np.ndarray,
                            group_size: int = 5) -> dict:
    """Diversity of the final outputs of G independent sessions of one query (paper B).

    Runs are split into groups of ``group_size``; Vendi and Div-BLEU are computed in each
    group and averaged. Returns the means, the per-group values and the group count.
    """
    texts = list(texts)
    embeddings = np.asarray(embeddings)
    if len(texts) != len(embeddings):
        raise ValueError(f"{len(texts)} texts but {len(embeddings)} embeddings")
    indices = split_into_groups(list(range(len(texts))), group_size)
    if not indices:
        raise ValueError(f"need at least {group_size} runs for one group, got {len(texts)}")
    vendi = [vendi_score(embeddings[g]) for g in indices]
    bleu = [div_bleu([texts[i] for i in g]) for g in indices]
    return {"vendi": float(np.mean(vendi)), "div_bleu": float(np.mean(bleu)),
            "vendi_per_group": vendi, "div_bleu_per_group": bleu, "n_groups": len(indices),
            "n_runs": len(texts)}


def intra_session_diversity(rounds: Sequence[int], texts: Sequence[str],
                            embeddings: np.ndarray) -> "pandas.DataFrame":
    """Diversity among the agents' responses within each debate round of one session.

    ``rounds[i]`` is the round of response ``i``; rounds with fewer than two responses are
    skipped. Returns one row per round: ``round, n_responses, vendi, div_bleu``.
    """
    import pandas as pd

    rounds = np.asarray(rounds)
    embeddings = np.asarray(embeddings)
    rows = []
    for value in sorted(set(rounds.tolist())):
        members = np.flatnonzero(rounds == value)
        if len(members) < 2:
            continue
        rows.append({"round": int(value), "n_responses": len(members),
                     "vendi": vendi_score(embeddings[members]),
                     "div_bleu": div_bleu([texts[i] for i in members])})
    return pd.DataFrame(rows, columns=["round", "n_responses", "vendi", "div_bleu"])
