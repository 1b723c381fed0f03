"""Cluster labels for an embedding map: k-means clusters named by their c-TF-IDF keywords.

The labelling follows BERTopic's class-based TF-IDF (Grootendorst, "BERTopic: Neural topic
modeling with a class-based TF-IDF procedure", 2022, eq. 1): all texts of a cluster are
joined into one document; a term's weight in cluster c is

    W(t, c) = tf(t, c) * log(1 + A / f(t))

with tf(t, c) the term's count in c divided by the number of words in c, f(t) the term's
count over all clusters and A the average number of words per cluster. A cluster's keywords
are its terms of highest weight. Clusters come from k-means on the vectors given (the turn
embeddings, or a 2-D projection of them), seeded so a map is reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.errors import InputError


@dataclass
class Clusters:
    """``labels[i]`` is text i's cluster; ``table`` has one row per cluster: ``cluster, size,
    keywords`` (a comma-separated string) and ``label`` ("3: river, water, fish")."""

    labels: np.ndarray
    table: pd.DataFrame


def ctfidf(texts, labels, *, stop_words="english") -> tuple[np.ndarray, list[str], list]:
    """Class-based TF-IDF: (weights of shape clusters x terms, the terms, the cluster ids)."""
    from sklearn.feature_extraction.text import CountVectorizer

    labels = np.asarray(labels)
    classes = sorted(set(labels.tolist()))
    joined = [" ".join(str(t) for t, lab in zip(texts, labels) if lab == c) for c in classes]
    vectorizer = CountVectorizer(stop_words=stop_words, token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z]+\b")
    try:
        counts = vectorizer.fit_transform(joined).toarray().astype(float)
    except ValueError:  # no term at all (empty or stop words only)
        return np.zeros((len(classes), 0)), [], classes
    words_per_class = counts.sum(axis=1, keepdims=True)
    tf = np.divide(counts, words_per_class, out=np.zeros_like(counts), where=words_per_class > 0)
    average_words = counts.sum() / len(classes)
    idf = np.log(1.0 + average_words / counts.sum(axis=0))
    return tf * idf, list(vectorizer.get_feature_names_out()), classes


def cluster_turns(texts, vectors, k: int = 8, *, n_words: int = 4, seed: int = 42) -> Clusters:
    """k-means clusters of ``vectors`` (one per text) named by their top c-TF-IDF keywords."""
    from sklearn.cluster import KMeans

    vectors = np.asarray(vectors, dtype=float)
    texts = list(texts)
    if len(texts) != len(vectors):
        raise InputError(f"{len(texts)} texts but {len(vectors)} vectors")
    if not 2 <= k <= len(texts):
        raise InputError(f"k must be between 2 and the number of texts ({len(texts)}), got {k}", field="k")
    labels = KMeans(n_clusters=k, n_init=4, random_state=seed).fit_predict(vectors)
    weights, terms, classes = ctfidf(texts, labels)
    rows = []
    for i, cluster in enumerate(classes):
        order = np.argsort(-weights[i], kind="stable")[:n_words] if terms else []
        keywords = ", ".join(terms[j] for j in order if weights[i, j] > 0)
        rows.append({"cluster": int(cluster), "size": int((labels == cluster).sum()), "keywords": keywords,
                     "label": f"{cluster}: {keywords}" if keywords else str(cluster)})
    return Clusters(labels=labels, table=pd.DataFrame(rows))
