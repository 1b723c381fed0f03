"""A stand-in for the sentence embedder in upload tests: deterministic unit vectors of 16
numbers seeded by a text's characters, so a test can work the expected features out by hand."""

from __future__ import annotations

import numpy as np


class HashEmbedder:
    """Deterministic unit vectors from a text's characters (test double for the embedder)."""

    model_name = "hash-test"

    def encode(self, texts, progress=False):
        out = []
        for text in texts:
            rng = np.random.default_rng(sum(ord(c) * (i + 1) for i, c in enumerate(text)) % (2 ** 32))
            vector = rng.normal(size=16)
            out.append(vector / np.linalg.norm(vector))
        return np.asarray(out)
