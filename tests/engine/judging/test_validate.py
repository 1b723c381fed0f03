"""Checking a measure against people: correlations with intervals, weighted kappa, the people's
ICCs and alpha, the measure beside the raters, the pieces of the report, and the reader."""

import math
from fractions import Fraction
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from engine.errors import InputError
from engine.importers.human_scores import read_human_scores
from engine.importers.ocsai import read_ocsai_jsonl
from engine.judging.item_scores import score_parser
from engine.judging.validate import calibration, disagreements, order_agreement, validation_report
from engine.stats.agreement import weighted_kappa
from engine.stats.correlation import correlation

# Shrout & Fleiss (1979), Table 2: six targets rated by four judges.
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]


def test_pearson_and_spearman_with_fisher_intervals_against_scipy_by_hand():
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    y = 0.5 * x + rng.normal(size=40)
    y[5] = np.nan  # left out and counted
    keep = ~np.isnan(y)
    for method, reference, se in (("pearson", stats.pearsonr, 1 / math.sqrt(39 - 3)),
                                  ("spearman", stats.spearmanr, math.sqrt(1.06 / (39 - 3)))):
        found = correlation(x, y, method)
        r = reference(x[keep], y[keep])[0]
        assert found["value"] == pytest.approx(r, abs=1e-12)
        assert found["n"] == 39 and found["dropped"] == 1
        assert found["ci"] == pytest.approx([math.tanh(math.atanh(r) - 1.959963984540054 * se),
                                             math.tanh(math.atanh(r) + 1.959963984540054 * se)], abs=1e-12)


def test_a_constant_measure_has_no_correlation_and_says_why():
    found = correlation([3, 3, 3, 3, 3], [1, 2, 3, 4, 5], "spearman")
    assert found["value"] is None and found["ci"] is None
    assert "the measure gave every item the same value (3)" in found["note"] and "undefined" in found["note"]
    assert correlation([1, 2, 3], [1, 2, 4])["note"].startswith("3 complete pairs")


def test_weighted_kappa_worked_by_hand_and_against_scikit_learn():
    a, b = [1, 1, 2, 2, 3, 3], [1, 2, 2, 3, 3, 3]
    # quadratic weights (i-j)^2/4: observed (0 + 1/4 + 0 + 1/4 + 0 + 0)/6 = 1/12; margins a = 1/3 each,
    # b = 1/6, 1/3, 1/2: expected = 7/36 + 2/36 + 3/36 = 1/3 -> kappa = 1 - (1/12)/(1/3) = 3/4
    found = weighted_kappa(a, b, range(1, 4))
    assert found.kappa == pytest.approx(0.75, abs=1e-12)
    assert (found.observed, found.expected) == pytest.approx((1 / 12, 1 / 3))
    # linear weights |i-j|/2: observed 1/6, expected 4/9 -> kappa = 1 - 9/24 = 5/8
    assert weighted_kappa(a, b, range(1, 4), weights="linear").kappa == pytest.approx(0.625, abs=1e-12)
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    x = rng.integers(1, 6, size=200)
    y = np.clip(x + rng.integers(-1, 2, size=200), 1, 5)
    for weights in ("quadratic", "linear"):
        assert weighted_kappa(x, y, range(1, 6), weights).kappa == pytest.approx(
            cohen_kappa_score(x, y, weights=weights, labels=list(range(1, 6))), abs=1e-9)


def test_weighted_kappa_refuses_ratings_off_the_scale_naming_the_row():
    with pytest.raises(InputError) as error:
        weighted_kappa([1, 2, 7], [1, 2, 3], range(1, 6))
    assert error.value.row == 3 and "7" in error.value.reason
    with pytest.raises(InputError, match="single category"):
        weighted_kappa([2, 2, 2], [2, 2, 2], range(1, 6))


def _shrout_fleiss_exact() -> dict:
    """ICC(2,1), ICC(2,4), ICC(3,4) of Shrout & Fleiss's table from its mean squares, in fractions."""
    x = [[Fraction(v) for v in row] for row in SHROUT_FLEISS]
    n, k = len(x), len(x[0])
    grand = sum(sum(row) for row in x) / (n * k)
    rows = [sum(row) / k for row in x]
    cols = [sum(x[i][j] for i in range(n)) / n for j in range(k)]
    ss_rows = k * sum((m - grand) ** 2 for m in rows)
    ss_cols = n * sum((m - grand) ** 2 for m in cols)
    ss_total = sum((v - grand) ** 2 for row in x for v in row)
    bms, jms = ss_rows / (n - 1), ss_cols / (k - 1)
    ems = (ss_total - ss_rows - ss_cols) / ((n - 1) * (k - 1))
    return {"ICC(2,1)": (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n),
            "ICC(2,k)": (bms - ems) / (bms + (jms - ems) / n),
            "ICC(3,k)": (bms - ems) / bms}


def _items(matrix, measure=None) -> pd.DataFrame:
    matrix = np.asarray(matrix, dtype=float)
    frame = pd.DataFrame({"item": [str(i + 1) for i in range(len(matrix))], "group": "p", "prompt": "p",
                          "response": [f"idea {i}" for i in range(len(matrix))], "row": range(1, len(matrix) + 1)})
    for r in range(matrix.shape[1]):
        frame[f"human_{r + 1}"] = matrix[:, r]
    frame["human"] = np.nanmean(matrix, axis=1)
    frame.attrs["human_scores"] = {"path": "x.csv", "raters": [f"human_{r + 1}" for r in range(matrix.shape[1])]}
    return frame


def test_the_report_gives_the_peoples_iccs_as_shrout_and_fleiss_and_alpha_by_hand():
    frame = _items(SHROUT_FLEISS)
    measure = np.array([8.0, 2.0, 7.0, 4.0, 9.0, 5.0])
    report = validation_report(frame, measure, measure_info={"kind": "test", "name": "m"})
    exact = _shrout_fleiss_exact()
    for kind, value in exact.items():
        assert report["icc"][kind]["value"] == pytest.approx(float(value), abs=1e-6)
    assert round(report["icc"]["ICC(2,1)"]["value"], 2) == 0.29  # their Table 4
    assert round(report["icc"]["ICC(2,k)"]["value"], 2) == 0.62
    assert round(report["icc"]["ICC(3,k)"]["value"], 2) == 0.91
    assert report["icc"]["ICC(3,k)"]["label"] == "ICC(3,4)"
    # interval alpha by its definition: D_o over within-item pairs, D_e over all pairs of the 24 values
    values = np.asarray(SHROUT_FLEISS, dtype=float)
    d_o = sum(sum((a - b) ** 2 for a, b in combinations(row, 2)) * 2 / (len(row) - 1) for row in values) / values.size
    every = values.ravel()
    d_e = sum((a - b) ** 2 for a, b in combinations(every, 2)) * 2 / (every.size * (every.size - 1))
    assert report["krippendorff_alpha"]["value"] == pytest.approx(1 - d_o / d_e, abs=1e-9)
    assert report["weighted_kappa"] is None  # a continuous measure: not on the people's scale


def test_the_measure_is_set_beside_the_raters_against_the_same_others():
    values = np.asarray(SHROUT_FLEISS, dtype=float)
    measure = np.array([8.0, 2.0, 7.0, 4.0, 9.0, 5.0])
    report = validation_report(_items(values), measure, measure_info={"kind": "test"})
    beside = report["beside_people"]
    for r in range(4):
        rest = np.delete(values, r, axis=1).mean(axis=1)
        row = beside["per_rater"][r]
        assert row["person_vs_rest"] == pytest.approx(stats.spearmanr(values[:, r], rest)[0], abs=1e-12)
        assert row["measure_vs_rest"] == pytest.approx(stats.spearmanr(measure, rest)[0], abs=1e-12)
    # pairs ordered alike, by brute force over the 15 item pairs
    human = values.mean(axis=1)
    agree = [np.sign(measure[i] - measure[j]) == np.sign(human[i] - human[j])
             for i, j in combinations(range(6), 2) if measure[i] != measure[j] and human[i] != human[j]]
    assert beside["order_measure_vs_people"]["share"] == pytest.approx(np.mean(agree))
    shares = []
    for r, s in combinations(range(4), 2):
        pairs = [np.sign(values[i, r] - values[j, r]) == np.sign(values[i, s] - values[j, s])
                 for i, j in combinations(range(6), 2) if values[i, r] != values[j, r] and values[i, s] != values[j, s]]
        shares.append(np.mean(pairs))
    assert beside["order_rater_vs_rater"]["share"] == pytest.approx(np.mean(shares))


def test_order_agreement_leaves_ties_and_missing_out():
    found = order_agreement([1, 2, 3, np.nan, 3], [1, 3, 2, 5, 4])
    # items 0,1,2,4: pairs (0,1)+ (0,2)+ (0,4)+ (1,2)- (1,4)+ (2,4) tie on a -> 4 of 5
    assert found == {"share": 0.8, "pairs": 5, "items": 4, "sampled_from": None}


def test_one_rating_column_gives_no_people_agreement_and_says_so():
    frame = _items([[1], [2], [3], [4], [5]])
    frame = frame.drop(columns=["human_1"])
    report = validation_report(frame, np.array([1.0, 3, 2, 5, 4]), measure_info={"kind": "test"})
    assert report["icc"] is None and report["krippendorff_alpha"] is None
    assert "one rating column" in report["people_note"]
    assert report["spearman"]["value"] == pytest.approx(0.8)


def test_unreadable_items_are_counted_and_left_out_never_filled():
    frame = _items([[1, 2], [2, 2], [3, 4], [4, 4], [5, 5], [2, 3]])
    measure = np.array([1.0, np.nan, 3, 4, np.nan, 2])
    report = validation_report(frame, measure, measure_info={"kind": "judge"}, scale=(1, 5))
    assert report["unreadable"] == 2 and report["n"] == 4
    keep = ~np.isnan(measure)
    assert report["pearson"]["value"] == pytest.approx(stats.pearsonr(measure[keep], frame["human"][keep])[0])
    assert any("2 items had no readable score" in line for line in report["text"])
    assert report["weighted_kappa"]["n"] == 4


def test_disagreements_rank_by_percentile_gap_with_both_texts():
    frame = _items([[1], [2], [3], [4], [5]]).drop(columns=["human_1"])
    measure = np.array([5.0, 2, 3, 4, 1])  # items 1 and 5 swapped
    found = disagreements(frame, measure, top=2)
    assert {d["item"] for d in found} == {"1", "5"}
    assert found[0]["gap"] == pytest.approx(0.8) or found[0]["gap"] == pytest.approx(-0.8)
    assert found[0]["response"].startswith("idea ")


def test_calibration_bins_the_measure_and_gives_intervals_from_three_items():
    measure = np.array([1, 1, 1, 2, 2, 3], dtype=float)
    human = np.array([1.0, 2.0, 3.0, 2.0, 4.0, 5.0])
    rows = calibration(measure, human, whole_numbers=True)
    assert [(r["bin"], r["n"], r["human_mean"]) for r in rows] == [(1.0, 3, 2.0), (2.0, 2, 3.0), (3.0, 1, 5.0)]
    half = stats.t.ppf(0.975, 2) * 1.0 / math.sqrt(3)
    assert rows[0]["human_ci"] == pytest.approx([2 - half, 2 + half])
    assert rows[1]["human_ci"] is None and rows[2]["human_sd"] is None


def test_score_parser_reads_what_a_small_judge_writes():
    parse = score_parser(1, 5)
    assert parse("Score: 4") == 4 and parse("The response is 1 out of 5.") == 1 and parse("3/5") == 3
    assert parse("It is a 7.") is None and parse("2 out of 5, or 3 out of 5") is None
    assert parse("Prompt: box\n\nThe response is a perfect example") is None


def test_reader_takes_items_with_raters_and_refuses_bad_cells(tmp_path):
    good = tmp_path / "items.csv"
    good.write_text("prompt,response,human_1,human_2\nbrick,doorstop,1,2\nbrick,a tiny house,4,\n")
    frame = read_human_scores(good)
    assert list(frame["human"]) == [1.5, 4.0] and frame.attrs["human_scores"]["missing_ratings"] == 1
    for body, field, row in (("prompt,response,human\nbrick,doorstop,1_000\n", "human", 1),
                             ("prompt,response,human\nbrick,,2\n", "response", 1),
                             ("prompt,response,human\nbrick,x,2\nbrick,y,\n", "human", 2),
                             ("prompt,response,human\nbrick,x,inf\n", "human", 1)):
        bad = tmp_path / "bad.csv"
        bad.write_text(body)
        with pytest.raises(InputError) as error:
            read_human_scores(bad)
        assert (error.value.field, error.value.row, error.value.path) == (field, row, str(bad))
    with pytest.raises(InputError, match="missing column"):
        (tmp_path / "none.csv").write_text("prompt,idea,human\nbrick,x,2\n")
        read_human_scores(tmp_path / "none.csv")


def test_reader_takes_paper_a_idea_files_one_scale_at_a_time(tmp_path):
    path = tmp_path / "ideas.csv"
    path.write_text("file_id,question_id,final_idea,source,N1,N2,U1,U2\n"
                    "a,plastic_waste,refill shops,human_data,7,5,8,6\nb,own_task,deposit scheme,llm,3,,4,4\n")
    novelty = read_human_scores(path, scale="novelty")
    assert list(novelty["human"]) == [6.0, 3.0] and list(novelty["group"]) == ["plastic_waste", "own_task"]
    assert novelty["prompt"][0].startswith("Plastic waste") and novelty["prompt"][1] == "own_task"
    assert list(read_human_scores(path, scale="usefulness")["human"]) == [7.0, 4.0]
    with pytest.raises(InputError, match="choose one of"):
        read_human_scores(path)


def test_ocsai_lines_are_read_as_object_response_and_score_over_ten(tmp_path):
    path = tmp_path / "ocsai.jsonl"
    path.write_text('{"prompt":"AUT Prompt:brick\\nResponse:build a tiny wall\\nScore:\\n","completion":"27"}\n'
                    '{"prompt":"AUT Prompt:box\\nResponse:a hat\\nScore:\\n","completion":"9"}\n')
    with pytest.raises(InputError) as error:
        read_ocsai_jsonl(path)
    assert (error.value.row, error.value.field) == (2, "completion")  # 0.9 is off the 1-5 scale
    path.write_text('{"prompt":"AUT Prompt:brick\\nResponse:build a tiny wall\\nScore:\\n","completion":"27"}\n')
    frame = read_ocsai_jsonl(path)
    assert frame.iloc[0][["prompt", "response", "human"]].tolist() == ["brick", "build a tiny wall", 2.7]


def test_within_prompt_correlation_centres_each_prompt_by_hand():
    # prompt a: measure 1, 2, 3 / people 1, 3, 2; prompt b: measure 10, 11 / people 5, 6; prompt c: one item (drops)
    frame = pd.DataFrame({"item": list("123456"), "group": list("aaabbc"), "prompt": list("aaabbc"),
                          "response": list("uvwxyz"), "row": range(1, 7),
                          "human": [1.0, 3.0, 2.0, 5.0, 6.0, 4.0]})
    measure = np.array([1.0, 2.0, 3.0, 10.0, 11.0, 7.0])
    from engine.judging.validate import within_prompt

    found = within_prompt(frame, measure)
    # centred: measure -1, 0, 1, -.5, .5; people -1, 1, 0, -.5, .5
    # sum(m h) = 1 + 0 + 0 + .25 + .25 = 1.5; sum m^2 = 2.5 = sum h^2 -> r = 0.6
    assert found["value"] == pytest.approx(0.6) and (found["n"], found["prompts"]) == (5, 2)
    assert found["ci"] is None or found["ci"][0] < 0.6 < found["ci"][1]


def test_order_agreement_samples_items_past_its_limit(monkeypatch):
    import engine.judging.validate as validate

    monkeypatch.setattr(validate, "MAX_ORDER_ITEMS", 50)
    x = np.arange(200, dtype=float)
    found = validate.order_agreement(x, x)
    assert found["items"] == 50 and found["sampled_from"] == 200 and found["share"] == 1.0
    assert found["pairs"] == 50 * 49 // 2
