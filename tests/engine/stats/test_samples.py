"""Paper A's named samples (engine.samples), each checked against a filter written here."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from engine import samples
from engine.errors import InputError

REPO = Path(__file__).resolve().parents[3]
LOCAL = REPO / "cached_runs" / "local_smollm2" / "conversations.parquet"
RELEASE = REPO / "cached_runs" / "paper_release" / "conversations.parquet"


@pytest.fixture(scope="module")
def local():
    if not LOCAL.exists():
        pytest.skip("cached_runs/local_smollm2 is not built")
    return pd.read_parquet(LOCAL)


@pytest.fixture(scope="module")
def release():
    if not RELEASE.exists():
        pytest.skip("cached_runs/paper_release is not built")
    return pd.read_parquet(RELEASE)


def test_trajectory_sample_leaves_out_debates_and_other_structures(local):
    chosen = samples.select(local, "trajectory")
    expected = local[(local["source"] == "human") |
                     ((local["source"] == "llm") & local["discussion"].isin(["instructed", "open", "iterative"]))]
    assert chosen.index.tolist() == expected.index.tolist()
    assert not chosen["discussion"].isin(["homo_mad", "creative_mad", "direct", "voting"]).any()
    assert len(chosen) < len(local[local["source"] == "llm"])


def test_ideas_sample_is_paper_a_teams_and_humans(local):
    chosen = samples.select(local, "ideas")
    paper_a = local["discussion"].isin(["none", "open", "instructed", "iterative", "progressive"])
    single = pd.to_numeric(local["team_size"], errors="coerce") == 1
    expected = local[(local["source"] == "human") | ((local["source"] == "llm") & paper_a & ~single)]
    assert chosen.index.tolist() == expected.index.tolist()


def test_trajectory_on_the_release_gives_the_papers_n(release):
    from engine.measures.trajectory import PAPER_A_FEATURES

    llm = samples.select(release, "trajectory", source="llm").dropna(subset=list(PAPER_A_FEATURES))
    human = samples.select(release, "trajectory", source="human").dropna(subset=list(PAPER_A_FEATURES))
    assert (len(llm), len(human)) == (3_574, 308)  # Table 1's N


def test_persona_matched_conditions_have_all_three_personas(release):
    chosen = samples.select(release, "persona_gpt41")
    assert set(chosen["model"]) == {"gpt-4.1"} and set(chosen["persona"]) == {"none", "same", "different"}
    codes = samples.condition_codes(chosen)
    twin = codes.str.replace(r"^(\d)A_[NSD]_", r"\1A_?_", regex=True)
    assert (chosen.groupby(twin.to_numpy())["persona"].nunique() == 3).all()


def test_team_size_matched_conditions_come_in_pairs(release):
    chosen = samples.select(release, "team_size_gpt41", source="llm")
    codes = samples.condition_codes(chosen)
    assert set(chosen["team_size"]) == {3, 6} and set(chosen["persona"]) == {"different"}
    pairs = codes.str.replace(r"^[36]A_", "?A_", regex=True)
    assert (chosen.groupby(pairs.to_numpy())["team_size"].nunique() == 2).all()


def test_pool_sample_is_conditions_31_to_45_with_different_personas(release):
    chosen = samples.select(release, "pool")
    codes = set(samples.condition_codes(chosen))
    assert codes == {f"3A_D_3S_AO_{o}_P{p}_R30" for o in "FHR" for p in (0, 5)}


def test_unknown_sample_and_missing_column_are_clear_errors(release):
    with pytest.raises(InputError, match="unknown sample 'everything'"):
        samples.sample("everything")
    with pytest.raises(InputError, match="needs column 'persona'"):
        samples.select(release.drop(columns="persona"), "design")
    assert "trajectory" in samples.available(release) and "baseline" not in samples.available(release)
