"""engine.diagnose: evidence numbers by hand, flags, recommendation from the reference."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from engine.diagnose import diagnose
from engine.errors import InputError
from engine.features import FEATURE_NAMES
from engine.stats.reference import load_reference

RELEASE = Path(__file__).resolve().parents[2] / "shared/data/paper_release/comprehensive_trajectory_metrics.csv"


@pytest.fixture(scope="module")
def reference():
    if not RELEASE.exists():
        pytest.skip(f"paper release not at {RELEASE}")
    return load_reference(RELEASE).dropna(subset=list(FEATURE_NAMES))


@pytest.fixture(scope="module")
def narrow_pilot(reference):
    """Real release conversations that are narrow and coherent (a stand-in for a pilot)."""
    chosen = reference[(reference.global_coherence > reference.global_coherence.quantile(0.8))
                       & (reference.max_distance < reference.max_distance.quantile(0.2))]
    return chosen.head(6)[list(FEATURE_NAMES)].reset_index(drop=True)


def test_evidence_numbers_by_hand(reference, narrow_pilot):
    result = diagnose(narrow_pilot, reference)
    assert result.n_pilot == 6
    row = result.evidence.set_index("feature").loc["global_coherence"]
    values, ref = narrow_pilot.global_coherence, reference.global_coherence
    assert row["pilot_mean"] == pytest.approx(values.mean())
    assert row["reference_p50"] == pytest.approx(ref.median())
    expected = np.mean([scipy_stats.percentileofscore(ref, v, kind="mean") for v in values])
    assert row["percentile"] == pytest.approx(expected)
    assert row["z"] == pytest.approx((values.mean() - ref.mean()) / ref.std())


def test_narrow_coherent_pilot_is_flagged_and_pointed_to_open(reference, narrow_pilot):
    result = diagnose(narrow_pilot, reference)
    assert "narrow_coherent" in result.flags
    assert result.recommendation["deficits"] == {"global_coherence": -1}
    # By hand: within each model, open's mean global coherence minus the mean of the three
    # structure means, in reference SDs, averaged over models; it must be the most negative.
    sd = reference.global_coherence.std()
    per_model = reference.groupby(["model", "discussion"]).global_coherence.mean().unstack()
    effects = per_model.sub(per_model.mean(axis=1), axis=0).div(sd).mean()
    assert effects.idxmin() == "open"
    assert result.recommendation["structure"] == "open"
    assert result.recommendation["scores"]["open"] == pytest.approx(-effects["open"])
    text = result.to_text()
    assert "based on 6 pilot conversations" in text
    assert "try open discussion" in text and "4 of 4 models" in text


def test_typical_pilot_needs_no_change(reference):
    pilot = reference.sample(40, random_state=0)[list(FEATURE_NAMES)]
    result = diagnose(pilot, reference)
    assert result.recommendation["deficits"] == {}
    assert "no change indicated" in result.to_text()


def test_pilot_structure_selects_reference_rows(reference, narrow_pilot):
    result = diagnose(narrow_pilot.assign(discussion="iterative"), reference)
    n_iterative = int((reference.discussion == "iterative").sum())
    assert result.reference_description == f"{n_iterative:,} reference conversations (discussion = iterative)"


def test_different_embedding_uses_percentiles_and_says_so(reference, narrow_pilot):
    result = diagnose(narrow_pilot.head(2), reference, same_embedding=False)
    assert result.evidence["z"].isna().all()
    text = result.to_text()
    assert "different embedding model" in text and "percentile ranks" in text
    assert "based on 2 pilot conversations" in text and "very small pilot" in text


def test_bad_input(reference):
    with pytest.raises(InputError, match="lacks feature column 'semantic_spread'"):
        diagnose(pd.DataFrame({f: [0.5] for f in FEATURE_NAMES if f != "semantic_spread"}), reference)
    with pytest.raises(InputError, match="no conversation with a computed feature"):
        diagnose(pd.DataFrame({f: [np.nan] for f in FEATURE_NAMES}), reference)
    with pytest.raises(InputError, match="at least 20"):
        diagnose(reference.head(3), reference.head(5))


def test_nearest_condition_of_a_cell_is_itself(reference):
    """Pilot = 30 real conversations of one reference cell: that cell should be nearest."""
    cell = reference[(reference.model == "o3-high") & (reference.discussion == "open")]
    result = diagnose(cell.sample(30, random_state=1)[list(FEATURE_NAMES)], reference)
    nearest = result.nearest_conditions.iloc[0]
    assert (nearest["model"], nearest["discussion"]) == ("o3-high", "open")
    # distance by hand for that cell: RMS over features of (pilot mean rank - cell mean rank)
    pilot = cell.sample(30, random_state=1)
    gaps = []
    for name in FEATURE_NAMES:
        ranks = lambda v: np.array([scipy_stats.percentileofscore(reference[name], x, kind="mean") for x in v])
        gaps.append(ranks(pilot[name]).mean() - ranks(cell[name]).mean())
    assert nearest["distance"] == pytest.approx(np.sqrt(np.mean(np.square(gaps))), rel=1e-9)
    assert "Closest reference conditions" in result.to_text()


def test_verdict_is_refused_when_the_evidence_does_not_support_it():
    """Two models: in A, open discussion lowers global coherence a lot; in B it raises it a
    little. The average effect favours open, but only 1 of 2 models agrees, so the verdict
    must not say "try/keep open" beside "the needed way in 1 of 2 models"."""
    rng = np.random.default_rng(0)
    rows = []
    means = {("A", "instructed"): 0.5, ("A", "open"): 0.1, ("A", "iterative"): 0.5,
             ("B", "instructed"): 0.5, ("B", "open"): 0.55, ("B", "iterative"): 0.5}
    for (model, discussion), mean in means.items():
        for _ in range(20):
            row = {f: rng.normal(0.5, 0.1) for f in FEATURE_NAMES}
            row.update(global_coherence=rng.normal(mean, 0.02), model=model, discussion=discussion)
            rows.append(row)
    reference = pd.DataFrame(rows)
    pilot = pd.DataFrame([{**reference[list(FEATURE_NAMES)].median().to_dict(), "global_coherence": 0.9}] * 3)
    result = diagnose(pilot, reference)
    recommendation = result.recommendation
    assert recommendation["deficits"] == {"global_coherence": -1}
    assert max(recommendation["scores"], key=recommendation["scores"].get) == "open"
    assert recommendation["structure"] is None
    assert recommendation["summary"].startswith("no structure change is supported")
    assert any("1 of 2 models" in reason for reason in recommendation["reasons"])
