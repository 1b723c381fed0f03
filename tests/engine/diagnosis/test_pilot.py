"""Prescribe and verify (engine.diagnosis.prescribe): each verdict branch from constructed feature shifts,
the needed N and the predicted shift worked out by hand, and a whole study on a scripted
backend that resumes without a call."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pandas as pd
import pytest

from engine.measures.trajectory import PAPER_A_FEATURES
from engine.llm import ScriptedBackend
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from engine.diagnosis.prescribe import (BUDGETS, needed_n, overall_verdict, predict_shifts, prescribe_and_verify, verdict,
                          verify)


def test_verdict_rule_by_hand():
    assert verdict(0.5, 0.1, 0.9) == "held"
    assert verdict(-0.5, -0.9, -0.1) == "held"            # predicted down, measured down
    assert verdict(0.5, -0.9, -0.1) == "did not hold"     # significant the other way
    assert verdict(0.8, -0.1, 0.3) == "did not hold"      # the whole CI below half the prediction
    assert verdict(0.5, -0.3, 0.9) == "inconclusive"
    assert verdict(float("nan"), 0.1, 0.9) == "inconclusive"


def test_needed_n_by_hand():
    # shift = 0.5 SD x 2 = 1; n = 2 x (1.959964 + 0.841621)^2 x 2^2 / 1^2 = 62.79 -> 63
    assert needed_n(0.5, 2.0) == 63
    assert needed_n(0.0, 1.0) is None


def constructed(shift, n, seed=1):
    rng = np.random.default_rng(seed)
    base = rng.normal(0.0, 1.0, n)
    design = rng.normal(0.0, 1.0, n) + shift
    return pd.DataFrame({"design": ["open"] * n + ["iterative"] * n,
                         "global_coherence": np.concatenate([base, design])})


PREDICTION = pd.DataFrame([{"design": "iterative", "feature": "global_coherence", "predicted": -0.6}])


@pytest.mark.parametrize("shift, n, expected", [
    (-2.0, 30, "held"),            # predicted down, went down by 2 SD
    (+2.0, 30, "did not hold"),    # went up instead
    (0.0, 400, "did not hold"),    # CI tight around 0: under half the predicted 0.6
    (-0.3, 4, "inconclusive"),     # four sessions each: the CI spans both
])
def test_each_verdict_from_constructed_shifts(shift, n, expected):
    table = verify(constructed(shift, n), "open", "iterative", PREDICTION, ["global_coherence"])
    row = table.iloc[0]
    assert row["verdict"] == expected and overall_verdict(table) == expected
    assert (row["n_baseline"], row["n_design"]) == (n, n)
    if expected == "inconclusive":
        d = constructed(shift, n)
        sd = math.sqrt((d[d.design == "open"].global_coherence.var() + d[d.design == "iterative"].global_coherence.var()) / 2)
        assert row["observed_sd"] == pytest.approx(sd)
        assert row["n_needed_per_design"] == math.ceil(2 * (1.959964 + 0.841621) ** 2 / 0.6 ** 2)
    else:
        assert row["n_needed_per_design"] is None or np.isnan(row["n_needed_per_design"])


def exact(n, mean, seed):
    """n values with exactly this mean and SD 1."""
    x = np.random.default_rng(seed).normal(0, 1, n)
    return mean + (x - x.mean()) / x.std(ddof=1)


def separated(n, shift=-5.0, features=("global_coherence",)):
    """Baseline at 0 and design at ``shift`` SD, each with SD 1, for every feature."""
    frame = pd.DataFrame({"design": ["open"] * n + ["iterative"] * n})
    for position, feature in enumerate(features):
        frame[feature] = np.concatenate([exact(n, 0.0, 10 + position), exact(n, shift, 20 + position)])
    return frame


@pytest.mark.parametrize("n", [2, 3, 4])
def test_clear_separation_on_too_few_sessions_is_inconclusive(n):
    # 5 SD apart: the old bootstrap said "held" from 2 and from 3 sessions per design
    row = verify(separated(n), "open", "iterative", PREDICTION, ["global_coherence"]).iloc[0]
    assert row["verdict"] == "inconclusive"
    assert row["reason"].startswith(f"too few sessions: {n} and {n}; at least 5 per design are needed")
    assert f"about {math.ceil(2 * (1.959964 + 0.841621) ** 2 / 0.6 ** 2)} per design" in row["reason"]
    if n < 3:  # no interval at all below 3 sessions a side
        assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])


@pytest.mark.parametrize("n", [5, 12])
def test_clearly_separated_sessions_hold_from_five_per_design(n):
    table = verify(separated(n), "open", "iterative", PREDICTION, ["global_coherence"])
    row = table.iloc[0]
    assert row["verdict"] == "held" and overall_verdict(table) == "held"
    # Hedges' g and Welch's p checked independently
    j = math.exp(math.lgamma((2 * n - 2) / 2) - math.lgamma((2 * n - 3) / 2)) / math.sqrt((2 * n - 2) / 2)
    assert row["measured"] == pytest.approx(j * -5.0)
    welch = scipy_stats.ttest_ind(exact(n, -5.0, 20), exact(n, 0.0, 10), equal_var=False)
    assert row["p"] == pytest.approx(welch.pvalue) and row["ci_high"] < 0


def test_several_features_are_judged_after_holms_adjustment():
    # three features, each 12 vs 12 with SD 1 and a shift whose two-sided Welch p is 0.03:
    # alone each interval excludes 0 (held); Holm over three: 3 x 0.03 = 0.09 -> inconclusive
    n, features = 12, ("global_coherence", "semantic_spread", "path_length")
    shift = -scipy_stats.t.ppf(1 - 0.03 / 2, 2 * n - 2) * math.sqrt(2 / n)
    data = separated(n, shift, features)
    prediction = pd.DataFrame([{"design": "iterative", "feature": f, "predicted": -0.6} for f in features])
    one = verify(data, "open", "iterative", prediction, features[:1]).iloc[0]
    assert one["p"] == pytest.approx(0.03) and one["verdict"] == "held"
    table = verify(data, "open", "iterative", prediction, list(features))
    p_one_sided = [scipy_stats.ttest_ind(data.loc[data.design == "iterative", f], data.loc[data.design == "open", f],
                                         equal_var=False, alternative="less").pvalue for f in features]
    expected = multipletests(np.minimum(1, 2 * np.array(p_one_sided)), method="holm")[1]
    assert table["p_held_holm"].to_numpy() == pytest.approx(expected) and expected == pytest.approx([0.09] * 3)
    assert set(table["verdict"]) == {"inconclusive"} and overall_verdict(table) == "inconclusive"
    assert all("not after Holm's adjustment over 3 features" in r for r in table["reason"])


def synthetic_reference(n_per_cell=12, seed=0):
    """Nine features; global coherence = +1.0 in iterative, -0.5 in instructed vs open."""
    rng = np.random.default_rng(seed)
    rows = []
    for task, model, discussion in itertools.product(["t1", "t2"], ["m1", "m2"],
                                                     ["open", "iterative", "instructed"]):
        for _ in range(n_per_cell):
            row = {name: rng.normal() for name in PAPER_A_FEATURES}
            row["global_coherence"] += {"open": 0.0, "iterative": 1.0, "instructed": -0.5}[discussion]
            row["global_coherence"] += 0.3 * (model == "m2") + 0.2 * (task == "t2")
            rows.append({"task": task, "model": model, "discussion": discussion, **row})
    return pd.DataFrame(rows)


def test_predicted_shift_is_the_additive_discussion_coefficient_in_sd_units():
    reference = synthetic_reference()
    table = predict_shifts(reference, "open", ["iterative", "instructed", "creative_mad"], ["global_coherence"])
    # independent least squares on the z-scored outcome with treatment dummies
    y = reference["global_coherence"]
    y = (y - y.mean()) / y.std(ddof=0)  # engine.stats.design z-scores with the population SD
    X = np.column_stack([np.ones(len(reference)), reference.task == "t2", reference.model == "m2",
                         reference.discussion == "instructed", reference.discussion == "iterative"]).astype(float)
    beta = np.linalg.lstsq(X, y.to_numpy(), rcond=None)[0]
    by = table.set_index("design")
    assert by.loc["iterative", "predicted"] == pytest.approx(beta[4])
    assert by.loc["instructed", "predicted"] == pytest.approx(beta[3])
    assert by.loc["iterative", "ci_low"] < beta[4] < by.loc["iterative", "ci_high"]
    assert by.loc["iterative", "n_models"] == 2
    assert np.isnan(by.loc["creative_mad", "predicted"]) and "not in the paper release" in by.loc["creative_mad", "note"]


def fake_embed(texts):
    """Deterministic bag-of-words hashing into 16 dimensions (plus a constant)."""
    out = np.zeros((len(texts), 16))
    for i, text in enumerate(texts):
        for word in re.findall(r"\w+", text.lower()):
            out[i, sum(map(ord, word)) % 15] += 1.0
        out[i, 15] = 1.0
    return out


class FakeEmbedder:
    model_name = "fake-bag-of-words-16"

    def encode(self, texts, progress=False):
        return fake_embed(texts)


def scripted_backend():
    counter = itertools.count()
    words = ["river", "solar", "market", "poem", "robot", "garden", "music", "bridge", "salt", "cloud"]

    def reply(messages):
        prompt = messages[-1]["content"]
        if "'Idea N: score'" in prompt:
            return "\n".join(f"Idea {n}: 7" for n in re.findall(r"^Idea (\d+):", prompt, re.M))
        if "Response N" in prompt:
            return "Response 1"
        k = next(counter)
        return " ".join(words[(k * j) % len(words)] for j in range(1, 6))
    return ScriptedBackend(responder=reply)


@pytest.mark.slow
def test_whole_study_on_a_scripted_backend_resumes_without_calls(tmp_path, monkeypatch):
    monkeypatch.setitem(BUDGETS, "tiny", BUDGETS["small"].__class__(
        "tiny", ("plastic_waste",), 2, 3, dict(BUDGETS["small"].defaults), BUDGETS["small"].designs))
    from engine.protocols.implementation import PAPER_RELEASE

    reference = synthetic_reference()
    # measured and made as the pilot will be: the diagnosis is held back by N alone
    reference.attrs.update(embedding_model=FakeEmbedder.model_name, implementation=PAPER_RELEASE)
    lines = []
    backend = scripted_backend()
    study = prescribe_and_verify(tmp_path, budget="tiny", backend=backend, embedder=FakeEmbedder(), reference=reference,
                            progress=False, say=lines.append)
    report = study.report
    assert lines[0].startswith("Plan") and "chat calls" in lines[2]
    # every design with its fidelity: paper A's as the release ran them
    assert lines[1] == ("  designs: open (paper A, fidelity release: as the paper release's code ran it); "
                        "iterative (paper A, fidelity release: as the paper release's code ran it); "
                        "creative_mad (paper B; no fidelity modes); "
                        "instructed (paper A, fidelity release: as the paper release's code ran it)")
    assert [d["fidelity"] for d in report["plan"]["designs"]] == ["release", "release", None, "release"]
    assert report["pilot"]["by_design"] == {"creative_mad": 2, "iterative": 2, "open": 2}
    # the sessions record it: the run folder's corpus says release for paper A's designs
    from engine.runs.run_folder import read_run_corpus

    made = {(c.protocol, c.meta.get("fidelity"), c.meta.get("prompts_revision"))
            for c in read_run_corpus(tmp_path / "pilot")}
    assert made == {("open", "release", 3), ("iterative", "release", 3), ("creative_mad", None, 3)}
    # 2 baseline sessions: no diagnosis, so no recommendation; the best candidate is still checked
    assert report["diagnosis"]["diagnosed"] is False and report["diagnosis"]["flags"] == []
    assert report["diagnosis"]["targets_from"].startswith("too few sessions to diagnose (2 of 5)")
    assert report["prediction"]["recommended"] is None
    assert report["prediction"]["withheld"] in ("iterative", "instructed")
    assert report["prediction"]["checked"] == report["prediction"]["withheld"]
    rows = report["verification"]["rows"]
    assert all(r["n_baseline"] == 3 and r["n_design"] == 3 for r in rows)
    assert report["verdict"] == "inconclusive"  # 3 + 3 fresh sessions: below the 5 a verdict needs
    assert all(r["reason"].startswith("too few sessions: 3 and 3") for r in rows)
    assert report["verdict_text"].startswith("No recommendation: too few sessions to diagnose (2 of 5)")
    page = (tmp_path / "report.html").read_text()
    assert "<h2>Verdict:" in page and "<script" not in page
    calls = len(backend.history)
    again = prescribe_and_verify(tmp_path, budget="tiny", backend=ScriptedBackend([]), embedder=FakeEmbedder(),
                            reference=reference, progress=False, say=lines.append)
    assert again.report["verification"] == report["verification"] and calls > 0


def test_recommend_scores_by_hand_and_keeps_the_baseline_when_nothing_helps():
    from engine.diagnosis.prescribe import recommend

    prediction = pd.DataFrame([
        {"design": "iterative", "feature": "global_coherence", "predicted": 1.1},
        {"design": "iterative", "feature": "semantic_spread", "predicted": 0.9},
        {"design": "instructed", "feature": "global_coherence", "predicted": 0.2},
        {"design": "instructed", "feature": "semantic_spread", "predicted": 0.6},
        {"design": "creative_mad", "feature": "global_coherence", "predicted": np.nan}])
    # needs: coherence down (-1), spread up (+1): iterative -1.1 + 0.9 = -0.2, instructed -0.2 + 0.6 = 0.4
    best, scores = recommend(prediction, {"global_coherence": -1, "semantic_spread": +1})
    assert best == "instructed" and scores == pytest.approx({"iterative": -0.2, "instructed": 0.4})
    best, scores = recommend(prediction, {"global_coherence": -1})
    assert best is None and max(scores, key=scores.get) == "instructed"  # checked instead of none
