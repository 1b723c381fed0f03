"""Turn a Corpus (uploaded transcripts, a pilot run) into a Dataset the pages can show.

Every turn is embedded (``engine.embed``, cached), the nine Table 19 features are computed
per conversation (``engine.features``), and the turn embeddings are kept with their
``turn_index`` so the Trajectories page needs no model call later.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.corpus import Corpus
from engine.datasets import Dataset
from engine.embed import embed_corpus
from engine.features import FEATURE_NAMES, features_for_corpus


def conversation_table(corpus: Corpus, embeddings: dict[str, np.ndarray] | None) -> pd.DataFrame:
    """One row per conversation: design factors (``protocol`` named ``discussion`` as in the
    dataset format), ``n_turns``, outcomes, and the nine features when embeddings are given."""
    table = corpus.conversations_frame()
    if "protocol" in table.columns and "discussion" not in table.columns:
        table = table.rename(columns={"protocol": "discussion"})
    if embeddings is not None and len(table):
        arrays = [embeddings[cid] for cid in table["conversation_id"]]
        dim = next((a.shape[1] for a in arrays if a.ndim == 2 and a.shape[0]), 1)
        arrays = [a if a.ndim == 2 and a.shape[0] else np.zeros((0, dim)) for a in arrays]
        features = features_for_corpus(arrays)
        for name in FEATURE_NAMES:
            table[name] = features[name].to_numpy()
    return table


def dataset_from_corpus(corpus: Corpus, embedder, *, name: str, manifest: dict | None = None) -> Dataset:
    """A Dataset with conversations table, corpus and turn embeddings (no API key inside).

    Only the turns of the discussion count (``Corpus.trajectory_view``): the dataset's
    corpus, embeddings and features leave out ratings, idea lists and consensus picks.
    """
    corpus = corpus.trajectory_view()
    embeddings = embed_corpus(corpus, embedder) if embedder is not None else None
    table = conversation_table(corpus, embeddings)
    turn_embeddings = turn_index = None
    if embeddings:
        rows, blocks = [], []
        for conversation in corpus:
            vectors = embeddings[conversation.conversation_id]
            if len(vectors):
                blocks.append(np.asarray(vectors, dtype=np.float32))
                rows += [(conversation.conversation_id, t) for t in range(len(vectors))]
        if blocks:
            turn_embeddings = np.vstack(blocks)
            turn_index = pd.DataFrame(rows, columns=["conversation_id", "turn"])
    info = dict(manifest or {})
    if embedder is not None:
        info.setdefault("embedding_model", getattr(embedder, "model_name", str(embedder)))
    return Dataset(name=name, conversations=table, manifest=info, corpus=corpus,
                   turn_embeddings=turn_embeddings, turn_index=turn_index)
