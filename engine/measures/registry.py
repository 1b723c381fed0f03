"""Every conversation measure the project computes, shows and writes: one registry.

Built in: paper A's nine trajectory features (Table 19, ``engine.measures.trajectory``),
forward flow (Gray et al. 2019), discursive diversity (Lix et al. 2022) and the mean words
per turn (``engine.measures.words_per_turn``). A researcher's
package adds a ``Feature`` (``engine.measures.feature``) through the entry-point group
``creativity_lab.features`` (``engine.registry``); ``register_feature`` adds one in process.
Tables, the CLI's ``features``, the dashboard's pickers, the notebooks and the Ray path
iterate ``features()``; paper A's regressions and published comparisons keep to
``PAPER_A_FEATURES``.
"""

from __future__ import annotations

from typing import Collection

from engine.errors import InputError
from engine.measures.discursive_diversity import DISCURSIVE_DIVERSITY
from engine.measures.feature import Feature
from engine.measures.forward_flow import FORWARD_FLOW
from engine.measures.trajectory import PAPER_A, PAPER_A_FEATURES
from engine.measures.words_per_turn import MEAN_WORDS_PER_TURN
from engine.registry import GROUPS, Registry, Source

FEATURES: Registry[Feature] = Registry("feature", GROUPS["features"], accepts=Feature)
for _builtin in (*PAPER_A, FORWARD_FLOW, DISCURSIVE_DIVERSITY, MEAN_WORDS_PER_TURN):
    FEATURES.register(_builtin)

__all__ = ["FEATURES", "PAPER_A_FEATURES", "Feature", "feature", "feature_names", "features", "named_features",
           "feature_sources", "register_feature"]


def register_feature(feature: Feature) -> Feature:
    """Add a feature in this process (a plugin's entry point does the same at first read)."""
    return FEATURES.register(feature)


def features(given: Collection[str] | None = None) -> tuple[Feature, ...]:
    """Every registered feature, paper A's nine first; with ``given`` (the turn fields an input
    has beside embeddings), only those whose ``needs`` it holds."""
    return tuple(f for f in FEATURES.values() if given is None or set(f.needs) <= set(given))


def feature_names(given: Collection[str] | None = None) -> tuple[str, ...]:
    return tuple(f.name for f in features(given))


def named_features(option: str, *, field: str = "--features") -> tuple[str, ...]:
    """A comma-separated list of feature names (``--features a,b``), each registered; an
    empty or unknown one is an InputError naming the field and the known features."""
    names = tuple(n.strip() for n in option.split(",") if n.strip())
    unknown = [n for n in names if n not in FEATURES]
    if unknown or not names:
        raise InputError(f"unknown feature(s) {unknown or [option]}; known: {', '.join(feature_names())}",
                         field=field)
    return names


def feature(name: str) -> Feature:
    return FEATURES.get(name)


def feature_sources(names) -> dict[str, dict]:
    """What a manifest records of the features a table holds: plugin name and version of each
    feature a plugin registered (built-ins are left out)."""
    out = {}
    for name in names:
        if name in FEATURES:
            source: Source = FEATURES.source(name)
            if source.plugin is not None:
                out[name] = source.record()
    return out
