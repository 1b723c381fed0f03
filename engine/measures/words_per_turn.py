"""Mean words per turn: how long a conversation's turns are, in words.

Not a measure of either paper: a covariate. Paper A's path length and max distance (Table 19)
grow with the number of turns, and people's typed turns are short while a model's are long, so
a comparison across kinds of team needs how much each turn says beside how many turns there
were. A turn's words are its whitespace-separated pieces (Python's ``str.split()``: any run of
spaces, tabs or newlines separates; an empty turn has 0 words); the feature is their mean over
the conversation's turns (the turns that were embedded, as for the nine). Undefined (NaN) with
no turn.
"""

from __future__ import annotations

import numpy as np

from engine.measures.feature import Chunk, Feature


def mean_words_per_turn(chunk: Chunk) -> np.ndarray:
    """Mean over each conversation's turns of ``len(text.split())``, (batch,)."""
    out = np.empty(chunk.batch)
    for b, texts in enumerate(chunk.texts):
        if len(texts) != chunk.n:
            raise ValueError(f"{len(texts)} turn texts for a conversation of {chunk.n} turns")
        out[b] = sum(len(str(text).split()) for text in texts) / chunk.n
    return out


MEAN_WORDS_PER_TURN = Feature(
    "mean_words_per_turn", "Mean words per turn", mean_words_per_turn,
    "this project: a length covariate (whitespace-separated words, Python's str.split)",
    min_turns=1, needs=("text",),
    description="mean over the conversation's turns of the number of whitespace-separated words")
