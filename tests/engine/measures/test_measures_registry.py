"""The feature registry: what every registered feature must have, and how features are chosen.

Each feature's values are checked in its own module (``test_<module>.py``: hand-worked
examples, an implementation written there from the definition, its facts); here one test
checks that every registered feature has that module, a row in docs/reference/features.md
and its length flag stated there, so registering a built-in edits no test but its own.
Paper A's nine are checked bit for bit against the values the code before the registry
computed (``tests/data/nine_features_before_registry.parquet``, made from the cached
datasets' turn embeddings by that code).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.measures.compute import features_for_corpus
from engine.measures.feature import Feature
from engine.measures.registry import FEATURES, feature_names, features
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.registry import Registry, Source

REPO = Path(__file__).resolve().parents[3]


# ----------------------------------------------------------------------------- every feature
def builtins() -> list[Feature]:
    return [f for f in FEATURES.values() if FEATURES.source(f.name).plugin is None]


def documented_rows() -> dict[str, str]:
    """``{feature: its "grows" cell}`` of docs/reference/features.md's table under "Which
    features grow with the number of turns"."""
    text = (REPO / "docs/reference/features.md").read_text(encoding="utf-8")
    section = text.split("## Which features grow with the number of turns", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 2:
            rows[cells[0].strip("`")] = cells[1]
    return rows


def test_every_registered_feature_has_its_test_module_and_its_documented_row():
    """A built-in's facts live in ``tests/engine/measures/test_<its module>.py`` (which names it)
    and in its row of the docs' table, whose "grows" cell is its ``grows_with_length``."""
    rows = documented_rows()
    for f in builtins():
        module = f.compute.__module__
        assert module.startswith("engine.measures."), f.name
        test = REPO / "tests/engine/measures" / f"test_{module.rsplit('.', 1)[1]}.py"
        assert test.exists() and f.name in test.read_text(encoding="utf-8"), f"{f.name}: no {test.name} naming it"
        assert f.label and f.reference and f.description, f.name
        expected = "yes" if f.grows_with_length else "no"
        assert rows.get(f.name) == expected, f"{f.name}: the docs' row says {rows.get(f.name)!r}, not {expected}"
    assert set(rows) == {f.name for f in builtins()}, "the docs' table names a feature that is not registered"


def test_features_needing_a_turn_field_are_left_out_without_it_and_refused_when_named():
    plain = [f.name for f in features() if not f.needs]
    assert list(features_for_corpus([np.eye(3)]).columns) == plain == list(feature_names(given=()))
    for f in features():
        if f.needs:
            with pytest.raises(ValueError, match=f"{f.name} needs the {f.needs[0]}"):
                features_for_corpus([np.eye(3)], names=[f.name])


def test_a_feature_may_need_only_turn_fields():
    from dataclasses import fields

    from engine.corpus import Turn
    from engine.measures.feature import TURN_FIELDS

    assert TURN_FIELDS == tuple(f.name for f in fields(Turn))
    with pytest.raises(ValueError, match=r"needs \['mood'\], not turn fields"):
        Feature("mood_test", "Mood", lambda chunk: None, "this test", needs=("mood",))
    # the older spelling of a speaker measure is the same declaration
    older = Feature("speaker_test", "S", lambda chunk: None, "this test", needs_speakers=True)
    assert older.needs == ("speaker",) and older.needs_speakers


# ----------------------------------------------------------------------------- paper A's nine
def test_the_nine_equal_the_code_before_the_registry():
    """Bit-identical under the numpy the golden file was made with; another numpy build may
    round a reduction differently in the last bits (seen: 1e-15, convergence ratio 1.4e-12),
    so the check is to 1e-10 relative: any change of the computation is far larger."""
    golden = pd.read_parquet(REPO / "tests/data/nine_features_before_registry.parquet")
    for name, expected in golden.groupby("dataset", sort=False):
        emb = np.load(REPO / "cached_runs" / name / "turn_embeddings.npy")
        index = pd.read_parquet(REPO / "cached_runs" / name / "turn_index.parquet")
        rows = {c: g.sort_values("turn").index.to_numpy() for c, g in index.groupby("conversation_id")}
        arrays = [emb[rows[c]] for c in expected["conversation_id"]]
        table = features_for_corpus(arrays)
        for column in PAPER_A_FEATURES:
            np.testing.assert_allclose(table[column].to_numpy(), expected[column].to_numpy(), rtol=1e-10,
                                       atol=1e-12, equal_nan=True, err_msg=f"{name} {column}")


def test_the_registry_lists_paper_a_first_and_only_the_nine_are_paper_as():
    assert feature_names()[:9] == PAPER_A_FEATURES
    assert [FEATURES.get(n).paper_a for n in feature_names()] == [n in PAPER_A_FEATURES for n in feature_names()]


# ----------------------------------------------------------------------------- the registry
def test_a_feature_registered_in_process_is_computed_and_a_clash_is_refused():
    registry = Registry("feature", "creativity_lab.test-none", accepts=Feature)

    def turn_count(chunk):
        return np.full(chunk.batch, float(chunk.n))

    mine = Feature("turn_count_test", "Turns", turn_count, "this test", min_turns=0)
    registry.register(mine, source=Source("pkg-a", "1.0"))
    assert registry.names() == ("turn_count_test",)
    with pytest.raises(ValueError, match="already registered by pkg-a 1.0"):
        registry.register(mine, source=Source("pkg-b", "2.0"))
    with pytest.raises(TypeError, match="expected a Feature"):
        registry.register("not a feature")
    FEATURES.register(mine)
    try:
        table = features_for_corpus([np.eye(4), np.eye(2), np.eye(1)])
        assert table.columns[-1] == "turn_count_test"
        assert table["turn_count_test"].tolist() == [4.0, 2.0, 1.0]
    finally:
        FEATURES.unregister("turn_count_test")
    assert "turn_count_test" not in feature_names()


