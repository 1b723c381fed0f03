"""Vendi Score against its eigenvalue definition; Div-BLEU against NLTK's sentence_bleu."""

import math
import random

import numpy as np
import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from engine.measures.diversity import (default_tokenize, div_bleu, inter_session_diversity,
                              intra_session_diversity, self_bleu_scores, split_into_groups,
                              vendi_score, vendi_score_from_kernel)


def vendi_by_definition(x, q=1.0):
    """exp of the order-q Renyi entropy of eig(K/n), K the cosine kernel, straight from numpy."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    lam = np.linalg.eigvalsh(x @ x.T / len(x))
    lam = lam[lam > 1e-12]
    if q == 1:
        return math.exp(-np.sum(lam * np.log(lam)))
    return float(np.sum(lam ** q) ** (1 / (1 - q)))


def test_vendi_identical_rows_score_one_and_orthogonal_rows_score_n():
    assert vendi_score(np.tile([0.2, 0.5, 0.1], (6, 1))) == pytest.approx(1.0)
    assert vendi_score(np.eye(5)) == pytest.approx(5.0)
    assert vendi_score(np.eye(5) * 3.0) == pytest.approx(5.0)  # scale does not matter


@pytest.mark.parametrize("q,expected", [
    (1.0, math.exp(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))),
    (2.0, 1 / (0.75 ** 2 + 0.25 ** 2)),
    (0.5, (math.sqrt(0.75) + math.sqrt(0.25)) ** 2),
    (math.inf, 1 / 0.75),
    (0.0, 2.0),
])
def test_vendi_order_q_is_honoured(q, expected):
    # three copies of e1 and one e2: eig(K/n) = (3/4, 1/4)
    x = np.array([[1.0, 0], [1, 0], [1, 0], [0, 1]])
    assert vendi_score(x, q=q) == pytest.approx(expected)


@pytest.mark.parametrize("q", [1.0, 2.0, 0.5])
def test_vendi_dual_form_when_n_exceeds_d(q):
    x = np.random.default_rng(0).normal(size=(40, 6))  # n = 40 > d = 6: the d x d dual is used
    assert vendi_score(x, q=q) == pytest.approx(vendi_by_definition(x, q), rel=1e-9)
    y = np.random.default_rng(1).normal(size=(8, 30))  # n <= d: the n x n kernel
    assert vendi_score(y, q=q) == pytest.approx(vendi_by_definition(y, q), rel=1e-9)


def test_vendi_from_kernel_all_ones_and_identity():
    assert vendi_score_from_kernel(np.ones((7, 7))) == pytest.approx(1.0)
    assert vendi_score_from_kernel(np.eye(7)) == pytest.approx(7.0)


def test_vendi_rejects_zero_rows():
    with pytest.raises(ValueError, match="zero length"):
        vendi_score(np.array([[0.0, 0.0], [1.0, 0.0]]))


def nltk_self_bleu(texts):
    tokens = [default_tokenize(t) for t in texts]
    smooth = SmoothingFunction().method1
    scores = [sentence_bleu(tokens[:i] + tokens[i + 1:], tokens[i], smoothing_function=smooth)
              for i in range(len(tokens))]
    return np.array(scores)


def random_texts(seed, count, vocabulary=30, lengths=(1, 40)):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocabulary)] + [",", ".", "!"]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(*lengths))) for _ in range(count)]


@pytest.mark.parametrize("seed", range(4))
def test_div_bleu_equals_nltk(seed):
    texts = random_texts(seed, 25)
    ours = self_bleu_scores(texts)
    np.testing.assert_allclose(ours, nltk_self_bleu(texts), rtol=0, atol=1e-9)
    assert div_bleu(texts) == pytest.approx(1 - nltk_self_bleu(texts).mean(), abs=1e-9)


def test_div_bleu_edge_cases_match_nltk():
    texts = ["The cat sat.", "the cat sat.", "a dog", "", "A completely different sentence here!",
             "cat cat cat cat cat", "sat", "the cat sat on the mat today", "the cat sat on the mat"]
    np.testing.assert_allclose(self_bleu_scores(texts), nltk_self_bleu(texts), atol=1e-9)


def test_div_bleu_identical_texts_have_zero_diversity():
    assert div_bleu(["one two three four five"] * 4) == pytest.approx(0.0)


def test_div_bleu_disjoint_texts_have_full_diversity():
    assert div_bleu(["alpha beta gamma delta", "one two three four", "red green blue yellow"]) == 1.0


def test_div_bleu_options():
    texts = ["a b c d e", "a b c d f", "x y z"]
    unsmoothed = self_bleu_scores(texts, smoothing="none")
    assert unsmoothed[2] == 0.0
    # 4-gram precision of text 0 against text 1 is 1/2, 3-grams 2/3, 2-grams 3/4, 1-grams 4/5
    assert unsmoothed[0] == pytest.approx((4 / 5 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25)
    # the default tokenizer lower-cases, so the two texts match fully; str.split keeps case,
    # so no unigram matches and BLEU is 0 (NLTK's rule)
    assert list(self_bleu_scores(["A B", "a b"], max_n=2)) == [pytest.approx(1.0)] * 2
    assert list(self_bleu_scores(["A B", "a b"], tokenize=str.split, max_n=2)) == [0.0, 0.0]
    with pytest.raises(ValueError):
        div_bleu(["only one"])


def test_split_into_groups_and_inter_session():
    assert split_into_groups(list(range(15)), 5) == [list(range(0, 5)), list(range(5, 10)),
                                                     list(range(10, 15))]
    texts = [f"idea number {i} about topic {i % 3}" for i in range(15)]
    embeddings = np.eye(15)  # all orthogonal: every group of 5 scores 5
    result = inter_session_diversity(texts, embeddings, group_size=5)
    assert result["n_groups"] == 3 and result["vendi"] == pytest.approx(5.0)
    expected_bleu = np.mean([div_bleu(texts[g * 5:(g + 1) * 5]) for g in range(3)])
    assert result["div_bleu"] == pytest.approx(expected_bleu)


def test_intra_session_per_round():
    rounds = [0, 0, 0, 1, 1, 1]
    texts = ["a b c d", "e f g h", "i j k l", "a b c d", "a b c d", "a b c d"]
    embeddings = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0], [1, 0, 0], [1, 0, 0.0]])
    table = intra_session_diversity(rounds, texts, embeddings)
    assert table["vendi"].tolist() == pytest.approx([3.0, 1.0])
    assert table["div_bleu"].tolist() == pytest.approx([1.0, 0.0])
