"""engine.diagnosis.diagnose: evidence numbers by hand, flags, recommendation from the reference."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from engine.diagnosis.diagnose import diagnose
from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.stats.reference import load_reference

RELEASE = Path(__file__).resolve().parents[4] / "shared/data/paper_release/comprehensive_trajectory_metrics.csv"


@pytest.fixture(scope="module")
def reference():
    if not RELEASE.exists():
        pytest.skip(f"paper release not at {RELEASE}")
    return load_reference(RELEASE).dropna(subset=list(PAPER_A_FEATURES))


@pytest.fixture(scope="module")
def narrow_pilot(reference):
    """Real release conversations that are narrow and coherent (a stand-in for a pilot)."""
    chosen = reference[(reference.global_coherence > reference.global_coherence.quantile(0.8))
                       & (reference.max_distance < reference.max_distance.quantile(0.2))]
    return chosen.head(6)[[*PAPER_A_FEATURES, "n_turns"]].reset_index(drop=True)


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
    pilot = reference.sample(40, random_state=0)[list(PAPER_A_FEATURES)]
    result = diagnose(pilot, reference)
    assert result.recommendation["deficits"] == {}
    assert "no change indicated" in result.to_text()


def test_pilot_structure_selects_reference_rows(reference, narrow_pilot):
    result = diagnose(narrow_pilot.assign(discussion="iterative"), reference)
    n_iterative = int((reference.discussion == "iterative").sum())
    assert result.reference_description == f"{n_iterative:,} reference conversations (discussion = iterative)"


def test_different_embedding_gives_values_side_by_side_and_no_flag(reference, narrow_pilot):
    result = diagnose(narrow_pilot, reference, same_embedding=False)
    assert not result.comparable and not result.diagnosed
    assert result.evidence["percentile"].isna().all() and result.evidence["z"].isna().all()
    assert set(result.evidence["flag"]) == {"not comparable"} and result.flags == []
    assert result.recommendation["structure"] is None
    # the raw values stay, side by side
    row = result.evidence.set_index("feature").loc["global_coherence"]
    assert row["pilot_mean"] == pytest.approx(narrow_pilot.global_coherence.mean())
    assert row["reference_p50"] == pytest.approx(reference.global_coherence.median())
    text = result.to_text()
    assert "Not comparable: the embedding models differ" in text and "as asked" in text
    assert [r["route"] for r in result.routes] == ["a", "b", "c"]
    assert "Qwen/Qwen3-Embedding-0.6B --task embed" in result.routes[0]["how"]


def test_bad_input(reference):
    with pytest.raises(InputError, match="lacks feature column 'semantic_spread'"):
        diagnose(pd.DataFrame({f: [0.5] for f in PAPER_A_FEATURES if f != "semantic_spread"}), reference)
    with pytest.raises(InputError, match="no conversation with a computed feature"):
        diagnose(pd.DataFrame({f: [np.nan] for f in PAPER_A_FEATURES}), reference)
    with pytest.raises(InputError, match="at least 20"):
        diagnose(reference.head(3), reference.head(5))


def test_nearest_condition_of_a_cell_is_itself(reference):
    """Pilot = 30 real conversations of one reference cell: that cell should be nearest."""
    cell = reference[(reference.model == "o3-high") & (reference.discussion == "open")]
    result = diagnose(cell.sample(30, random_state=1)[list(PAPER_A_FEATURES)], reference)
    nearest = result.nearest_conditions.iloc[0]
    assert (nearest["model"], nearest["discussion"]) == ("o3-high", "open")
    # distance by hand for that cell: RMS over features of (pilot mean rank - cell mean rank)
    pilot = cell.sample(30, random_state=1)
    gaps = []
    for name in PAPER_A_FEATURES:
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
            row = {f: rng.normal(0.5, 0.1) for f in PAPER_A_FEATURES}
            row.update(global_coherence=rng.normal(mean, 0.02), model=model, discussion=discussion)
            rows.append(row)
    reference = pd.DataFrame(rows)
    pilot = pd.DataFrame([{**reference[list(PAPER_A_FEATURES)].median().to_dict(), "global_coherence": 0.9}] * 5)
    result = diagnose(pilot, reference, same_embedding=True, same_implementation=True)
    recommendation = result.recommendation
    assert recommendation["deficits"] == {"global_coherence": -1}
    assert max(recommendation["scores"], key=recommendation["scores"].get) == "open"
    assert recommendation["structure"] is None
    assert recommendation["summary"].startswith("no structure change is supported")
    assert any("1 of 2 models" in reason for reason in recommendation["reasons"])


# -- embedding models and flags --------------------------------------------------------------
def synthetic_reference(n=200):
    """n conversations of 30 turns whose every feature takes the values 1..n (each column its own order)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({name: rng.permutation(np.arange(1, n + 1, dtype=float)) for name in PAPER_A_FEATURES})
    return frame.assign(n_turns=30)


def pilot_at(values, n=5, turns=30):
    """``n`` identical pilot conversations of ``turns`` turns at the median (100.5 -> 50th
    percentile) except ``values``."""
    return pd.DataFrame([{**{name: values.get(name, 100.5) for name in PAPER_A_FEATURES}, "n_turns": turns}] * n)


@pytest.mark.parametrize("feature", ["local_coherence", "global_coherence"])
def test_a_feature_at_the_1_5th_percentile_is_flagged(feature):
    # 3.5 among 1..200: 3 values below, none equal -> mid-rank 100 * (3 + 3) / 400 = 1.5.
    # local coherence has no Table 23 coefficient and low global coherence is the favourable
    # side: before, both printed '<- low' beside 'Flags: none'.
    result = diagnose(pilot_at({feature: 3.5}), synthetic_reference(), same_embedding=True, same_implementation=True)
    row = result.evidence.set_index("feature").loc[feature]
    assert row["percentile"] == pytest.approx(1.5) and row["flag"] == "low"
    assert result.flags == [f"low_{feature}"]
    text = result.to_text()
    assert "Flags: none" not in text and f"low_{feature}" in text
    assert f"{feature} at the 1.5th percentile" in text
    assert result.recommendation["deficits"] == {}
    assert "flagged but not a deficit" in result.recommendation["summary"]


def test_flags_follow_the_printed_percentile():
    # 50.5 among 1..200 -> 100 * (50 + 50) / 400 = 25.0 exactly: flagged low (<= 25);
    # 51 -> 100 * (50 + 51) / 400 = 25.25, printed 25.2 (> 25): typical.
    result = diagnose(pilot_at({"trajectory_curvature": 50.5, "revisit_score": 51.0}),
                      synthetic_reference(), same_embedding=True, same_implementation=True)
    flags = result.evidence.set_index("feature")["flag"]
    assert flags["trajectory_curvature"] == "low" and flags["revisit_score"] == "typical"
    assert result.flags == ["low_trajectory_curvature"]
    assert "revisit_score at" not in result.to_text()


def test_different_embedding_models_are_not_ranked_across():
    reference = synthetic_reference()
    reference.attrs["embedding_model"] = "Qwen/Qwen3-Embedding-0.6B"
    # 15.5 -> 100 * 30 / 400 = 7.5th percentile, 40.5 -> 20.0: both low with one model
    pilot = pilot_at({"semantic_spread": 15.5, "path_length": 40.5})
    pilot.attrs["embedding_model"] = "sentence-transformers/all-MiniLM-L6-v2"
    result = diagnose(pilot, reference, same_implementation=True)
    assert result.same_embedding is False and not result.comparable
    assert result.flags == [] and result.evidence["percentile"].isna().all()
    text = result.to_text()
    assert "all-MiniLM-L6-v2" in text and "Qwen3-Embedding-0.6B" in text
    assert "nothing is ranked across them" in text
    # the same model (organisation prefix, case, a server's URL prefix aside): ranked, 25/75 tails
    for name in ("qwen3-embedding-0.6b", "openai:http://127.0.0.1:8000/v1:Qwen/Qwen3-Embedding-0.6B"):
        pilot.attrs["embedding_model"] = name
        same = diagnose(pilot, reference, same_implementation=True)
        assert same.same_embedding is True and np.isfinite(same.evidence["z"]).all()
        assert same.flags == ["low_path_length", "low_semantic_spread"]  # Table 19 order
    # not recorded: not comparable, and the text says the model is not recorded
    unknown = diagnose(pilot_at({}), reference, same_implementation=True)
    assert unknown.same_embedding is False and "pilot not recorded" in unknown.to_text()
    # the override still wins
    assert diagnose(pilot, reference, same_embedding=False, same_implementation=True).same_embedding is False


def test_a_diagnosis_refuses_to_flag_across_fidelities():
    from engine.protocols.implementation import PAPER_RELEASE, implementation_of

    reference = synthetic_reference()
    reference.attrs.update(embedding_model="m", implementation=PAPER_RELEASE)
    pilot = pilot_at({"semantic_spread": 15.5})
    pilot.attrs.update(embedding_model="m", implementation=implementation_of("paper"))
    result = diagnose(pilot, reference)
    assert not result.comparable and result.flags == []
    assert any("fidelity: paper against release" in reason for reason in result.not_comparable)
    assert any(r["title"] == "run the pilot the way the reference was made" for r in result.routes)
    # the same pilot made in release mode (this engine's prompts revision) is diagnosed
    pilot.attrs["implementation"] = implementation_of("release")
    made_alike = diagnose(pilot, reference)
    assert made_alike.comparable and made_alike.flags == ["low_semantic_spread"]
    # an older revision's release mode (team size + brainstorming rules) differs in its system prompt
    pilot.attrs["implementation"] = implementation_of("release", revision=2)
    assert not diagnose(pilot, reference).comparable


def test_a_flag_needs_its_interval_off_the_median():
    """5 pilot conversations at the 1.5th, 1.5th, 1.5th, 1.5th and 90th percentiles: mean 19.2,
    in the low tail, but the 95% t-interval (t_.975,4 = 2.776) reaches the median: unclear."""
    values = [3.5, 3.5, 3.5, 3.5, 180.5]  # mid-ranks 1.5 x 4 and 100 * (180 + 180) / 400 = 90.0
    pilot = pd.DataFrame([{**{f: 100.5 for f in PAPER_A_FEATURES}, "local_coherence": v, "n_turns": 30}
                          for v in values])
    result = diagnose(pilot, synthetic_reference(), same_embedding=True, same_implementation=True)
    row = result.evidence.set_index("feature").loc["local_coherence"]
    ranks = np.array([1.5, 1.5, 1.5, 1.5, 90.0])
    half = scipy_stats.t.ppf(0.975, 4) * ranks.std(ddof=1) / np.sqrt(5)
    assert row["percentile"] == pytest.approx(ranks.mean())
    assert row["percentile_low"] == pytest.approx(max(0.0, ranks.mean() - half))
    assert row["percentile_high"] == pytest.approx(ranks.mean() + half) and row["percentile_high"] > 50
    assert row["flag"] == "unclear" and result.flags == []


def test_release_and_datasets_record_their_embedding_model(reference):
    import json

    from engine.cli.analyze import load_table

    assert reference.attrs["embedding_model"] == "Qwen/Qwen3-Embedding-0.6B"
    robust = RELEASE.with_name("comprehensive_trajectory_metrics_4b.csv")
    assert load_reference(robust).attrs["embedding_model"] == "Qwen/Qwen3-Embedding-4B"
    root = Path(__file__).resolve().parents[3] / "cached_runs"
    release = json.loads((root / "paper_release" / "manifest.json").read_text())
    assert release["embedding_model"] == "Qwen/Qwen3-Embedding-0.6B"
    assert release["embedding_model_4b"] == "Qwen/Qwen3-Embedding-4B"
    table, _ = load_table(dataset=str(root / "local_smollm2"))
    assert table.attrs["embedding_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    # a pilot of the local runs against the release: switched by itself
    llm = table[table["discussion"].isin(["open", "instructed", "iterative"])]
    assert diagnose(llm, reference).same_embedding is False


def test_a_minilm_pilot_is_not_ranked_in_the_release_and_is_diagnosed_against_a_minilm_reference(reference):
    from engine.diagnosis.diagnose import load_reference_for_diagnosis

    root = Path(__file__).resolve().parents[3] / "cached_runs"
    fidelity = load_reference_for_diagnosis(root / "local_smollm2_fidelity")
    pilot = fidelity[(fidelity["discussion"] == "open") & (fidelity["fidelity"] == "release")]
    assert len(pilot) == 5
    against_release = diagnose(pilot, reference)
    assert not against_release.comparable and against_release.flags == []
    assert against_release.recommendation["structure"] is None
    assert against_release.evidence["percentile"].isna().all()
    reasons = " ".join(against_release.not_comparable)
    assert "embedding models differ" in reasons and "system prompt" in reasons
    assert [r["route"] for r in against_release.routes][:2] == ["a", "b"]
    assert "Qwen/Qwen3-Embedding-0.6B" in against_release.routes[0]["title"]
    # the same kind of pilot against a reference made and measured the same way: diagnosed
    local = load_reference_for_diagnosis(root / "local_smollm2")
    assert set(local["discussion"]) == {"open", "instructed", "iterative"}  # the trajectory sample
    own = local[local["discussion"] == "open"]
    alike = diagnose(own, local)
    assert alike.comparable and alike.diagnosed and alike.n_pilot == 12
    assert np.isfinite(alike.evidence["percentile"]).all()
    complete = local.dropna(subset=list(PAPER_A_FEATURES))  # the reference rows with all nine
    expected = np.mean([scipy_stats.percentileofscore(complete.global_coherence, v, kind="mean")
                        for v in own.global_coherence])
    assert alike.evidence.set_index("feature").loc["global_coherence", "percentile"] == pytest.approx(expected)


def test_a_dataset_folder_pilot_brings_its_manifest_embedding_model():
    from engine.diagnosis.diagnose import load_pilot

    folder = Path(__file__).resolve().parents[3] / "cached_runs" / "local_smollm2"
    pilot = load_pilot(folder)
    assert pilot.embedding_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert "all-MiniLM-L6-v2" in pilot.description


# -- what a pilot can carry ------------------------------------------------------------------
def test_too_few_sessions_give_the_raw_numbers_and_no_recommendation():
    # 2 sessions at the 99.75th percentile of global coherence (a deficit with 5 sessions)
    few = diagnose(pilot_at({"global_coherence": 200.0}, n=2), synthetic_reference(), same_embedding=True, same_implementation=True)
    assert few.n_pilot == 2 and not few.diagnosed
    assert few.flags == [] and few.recommendation["structure"] is None
    assert few.recommendation["summary"] == "none: too few sessions to diagnose (2 of 5)"
    assert set(few.evidence["flag"]) == {"not assessed"}
    row = few.evidence.set_index("feature").loc["global_coherence"]
    assert row["pilot_mean"] == 200.0 and row["percentile"] == pytest.approx(99.75)  # raw numbers kept
    text = few.to_text()
    assert "Too few sessions to diagnose (2 of 5)" in text and "Recommendation" not in text
    enough = diagnose(pilot_at({"global_coherence": 200.0}, n=5), synthetic_reference(), same_embedding=True, same_implementation=True)
    assert enough.diagnosed and enough.flags == ["high_global_coherence"]


def test_length_dependent_features_are_compared_with_conversations_of_similar_length():
    # reference: 200 conversations of 30 turns (path length 1..200) and 40 of 3 turns
    # (path length 0.01..0.40); a 3-turn pilot at 0.205 is the median of the short ones
    long = synthetic_reference()
    short = synthetic_reference(40).assign(n_turns=3, path_length=np.arange(1, 41) / 100)
    reference = pd.concat([long, short], ignore_index=True)
    pilot = pilot_at({"path_length": 0.205}, turns=3)
    result = diagnose(pilot, reference, same_embedding=True, same_implementation=True)
    row = result.evidence.set_index("feature").loc["path_length"]
    # 20 of the 40 short ones below 0.205 -> 50th percentile, typical; against all 240 it was 8.3
    assert row["percentile"] == pytest.approx(50.0) and row["flag"] == "typical"
    assert row["compared_with"] == "40 of similar length"
    assert "low_path_length" not in result.flags
    assert "compared with the 40 reference conversations of the compared rows of similar length (2-4 turns" \
        in result.to_text()
    # no reference conversation that short: not compared, never flagged, and said so
    alone = diagnose(pilot, long, same_embedding=True, same_implementation=True)
    row = alone.evidence.set_index("feature").loc["path_length"]
    assert row["flag"] == "not compared" and "low_path_length" not in alone.flags
    assert "fewer than 20 reference conversations have 2-4 turns" in alone.to_text()
    # a feature that does not grow with length is compared with every reference conversation
    assert alone.evidence.set_index("feature").loc["global_coherence", "compared_with"] == \
        "200 reference conversations"
