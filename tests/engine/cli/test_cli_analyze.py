"""python -m engine analyze ...: printed tables, written files, one-line errors (exit 2)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from engine.cli import main
from engine.measures.trajectory import PAPER_A_FEATURES

RELEASE = Path(__file__).resolve().parents[4] / "shared/data/paper_release/comprehensive_trajectory_metrics.csv"
needs_release = pytest.mark.skipif(not RELEASE.exists(), reason=f"paper release not at {RELEASE}")


@pytest.fixture
def table_csv(tmp_path):
    """A small conversation table (test fixture) with features, factors and an outcome."""
    rng = np.random.default_rng(5)
    n = 120
    df = pd.DataFrame({f: rng.normal(size=n) for f in PAPER_A_FEATURES})
    df["task"] = np.resize(["t1", "t2", "t3"], n)
    df["source"] = np.where(np.arange(n) < 80, "llm", "human")
    df["discussion"] = np.where(df.source == "llm", np.resize(["open", "iterative"], n), None)
    df["outcome"] = 0.5 * df.global_coherence + rng.normal(size=n)
    path = tmp_path / "table.csv"
    df.to_csv(path, index=False)
    return path, df


@needs_release
def test_table_command_prints_published_rows_with_their_labels(capsys):
    """The published block names each feature and keeps the paper's one decimal (Table 24:
    global coherence 5.9 / 27.0 / 28.8 / 47.5 / 52.6)."""
    assert main(["analyze", "table", "24", "--metrics", str(RELEASE)]) == 0
    printed = capsys.readouterr().out
    published = printed.split("-- published (paper A, Table 24):")[1].splitlines()
    row = next(line for line in published if line.strip().startswith("global_coherence"))
    assert row.split()[1:] == ["5.9", "27", "28.8", "47.5", "52.6"]


@needs_release
def test_manipulability_prints_table24_with_published_beside(capsys, tmp_path):
    out = tmp_path / "t24.csv"
    assert main(["analyze", "manipulability", "--metrics", str(RELEASE), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "N = 3,574" in printed
    assert "ours [published in paper A, Table 24]" in printed
    assert "5.9 [5.9]" in printed and "52.6 [52.6]" in printed
    mean_line = next(line for line in printed.splitlines() if "mean across features" in line)
    for cell in ("1.8 [1.8]", "13.3 [13.3]", "11.8 [11.8]", "22.8 [22.8]", "26.8 [26.8]"):
        assert cell in mean_line
    assert "All 45 cells and the mean row match" in printed
    written = pd.read_csv(out).set_index("feature")
    assert round(100 * written.loc["semantic_spread", "interaction"], 1) == 24.8


def test_regress_with_yaml_spec_matches_statsmodels(capsys, tmp_path, table_csv):
    path, df = table_csv
    spec = tmp_path / "spec.yaml"
    spec.write_text("specs:\n  - name: fixture\n    outcome: outcome\n    blocks: [trajectory, task]\n    zscore: false\n")
    out = tmp_path / "result.json"
    assert main(["analyze", "regress", "--metrics", str(path), "--sample", "all", "--spec", str(spec),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "== fixture (ols_hc3)" in printed and "N = 120" in printed
    payload = json.loads(out.read_text())
    reference = smf.ols("outcome ~ " + " + ".join(PAPER_A_FEATURES) + " + C(task)", data=df).fit(cov_type="HC3")
    coef = {row["term"]: row["coef"] for row in payload[0]["table"]}
    assert coef["global_coherence"] == pytest.approx(reference.params["global_coherence"])
    assert payload[0]["summary"]["r2"] == pytest.approx(reference.rsquared)


def test_compare_group_means(capsys, table_csv, tmp_path):
    path, df = table_csv
    out = tmp_path / "groups.csv"
    assert main(["analyze", "compare", "--metrics", str(path), "--value", "outcome", "--by", "task",
                 "--out", str(out)]) == 0
    table = pd.read_csv(out).set_index("by")
    assert table.loc["overall", "llm_n"] == 80 and table.loc["overall", "human_n"] == 40
    assert table.loc["overall", "diff"] == pytest.approx(df.outcome[:80].mean() - df.outcome[80:].mean())


def test_compare_coefficients(capsys, table_csv):
    path, _ = table_csv
    assert main(["analyze", "compare", "--metrics", str(path), "--outcome", "outcome",
                 "--blocks", "global_coherence,task"]) == 0
    printed = capsys.readouterr().out
    assert "llm (N = 80) vs human (N = 40)" in printed and "global_coherence" in printed


@pytest.mark.parametrize("argv, message", [
    (["regress", "--blocks", "trajectory"], "give --outcome"),
    (["regress", "--outcome", "outcome", "--blocks", "tokens"], "column 'tokens' is not in the data"),
    (["regress", "--outcome", "outcome", "--blocks", "trajectory,task", "--estimator", "gls"], "estimator 'gls'"),
    (["compare", "--value", "outcome", "--outcome", "outcome"], "exactly one of --outcome"),
])
def test_bad_input_is_one_line_exit_2(capsys, table_csv, argv, message):
    path, _ = table_csv
    code = main(["analyze", *argv[:1], "--metrics", str(path), *argv[1:]])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_missing_metrics_file(capsys, tmp_path):
    assert main(["analyze", "manipulability", "--metrics", str(tmp_path / "none.csv")]) == 2
    assert "no such file" in capsys.readouterr().err


@needs_release
def test_diagnose_writes_json(capsys, tmp_path):
    from engine.stats.reference import load_reference

    reference = load_reference(RELEASE).dropna(subset=list(PAPER_A_FEATURES))
    pilot = tmp_path / "pilot.csv"
    reference.sort_values("global_coherence").tail(5)[list(PAPER_A_FEATURES)].to_csv(pilot, index=False)
    out = tmp_path / "diagnosis.json"
    # a plain CSV records neither its embedding model nor how its conversations were made:
    # values side by side, no flag, and the routes that would compare
    assert main(["analyze", "diagnose", "--pilot", str(pilot), "--reference", str(RELEASE), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    payload = json.loads(out.read_text())
    assert payload["comparable"] is False and payload["flags"] == [] and payload["same_embedding"] is False
    assert "the implementation is not recorded on the first side" in " ".join(payload["not_comparable"])
    assert "Comparable route (a): re-embed the pilot with Qwen/Qwen3-Embedding-0.6B" in printed
    # the user knows both: the same model, made the same way
    sure = ["--same-embedding", "--same-implementation"]
    assert main(["analyze", "diagnose", "--pilot", str(pilot), "--reference", str(RELEASE), "--out", str(out),
                 *sure]) == 0
    printed = capsys.readouterr().out
    assert "based on 5 pilot conversations" in printed and printed.count("as asked") == 2
    payload = json.loads(out.read_text())
    assert payload["n_pilot"] == 5 and "high_global_coherence" in payload["flags"]
    # no lengths in a plain CSV: the length-dependent features are not compared, and it says so
    assert "path length, max distance, topic switching rate, revisit score grow with a conversation's length" \
        in printed and not any(f.endswith("path_length") for f in payload["flags"])
    # four sessions: the raw numbers only, no flag and no recommendation
    reference.sort_values("global_coherence").tail(4)[list(PAPER_A_FEATURES)].to_csv(pilot, index=False)
    assert main(["analyze", "diagnose", "--pilot", str(pilot), "--reference", str(RELEASE), "--out", str(out),
                 *sure]) == 0
    printed = capsys.readouterr().out
    payload = json.loads(out.read_text())
    assert payload["flags"] == [] and payload["diagnosed"] is False
    assert "Too few sessions to diagnose (4 of 5)" in printed and "Recommendation" not in printed


@needs_release
def test_diagnose_does_not_rank_a_minilm_pilot_in_the_release(capsys, tmp_path):
    from engine.stats.reference import load_reference

    reference = load_reference(RELEASE).dropna(subset=list(PAPER_A_FEATURES))
    pilot = tmp_path / "pilot.csv"
    table = reference.sort_values("global_coherence").tail(4)[list(PAPER_A_FEATURES)]
    table.assign(embedding_model="sentence-transformers/all-MiniLM-L6-v2").to_csv(pilot, index=False)
    assert main(["analyze", "diagnose", "--pilot", str(pilot)]) == 0
    printed = capsys.readouterr().out
    assert "pilot sentence-transformers/all-MiniLM-L6-v2, reference Qwen/Qwen3-Embedding-0.6B" in printed
    assert "nothing is ranked across them" in printed and "Flags and recommendation: none (not comparable)" in printed
    table.assign(embedding_model="Qwen/Qwen3-Embedding-0.6B").to_csv(pilot, index=False)
    assert main(["analyze", "diagnose", "--pilot", str(pilot)]) == 0
    assert "(the same model)" in capsys.readouterr().out
    assert main(["analyze", "diagnose", "--pilot", str(pilot), "--different-embedding"]) == 0
    assert "as asked" in capsys.readouterr().out


def test_regress_reads_a_dataset_folder(capsys, tmp_path, table_csv):
    from engine.datasets import Dataset

    _, df = table_csv
    folder = Dataset(name="fixture", conversations=df).save(tmp_path / "ds")
    assert main(["analyze", "regress", "--dataset", str(folder), "--sample", "llm", "--structures", "all",
                 "--outcome", "outcome", "--blocks", "global_coherence,task", "--no-zscore"]) == 0
    printed = capsys.readouterr().out
    llm = df[df.source == "llm"]
    expected = smf.ols("outcome ~ global_coherence + C(task)", data=llm).fit(cov_type="HC3")
    assert "N = 80" in printed
    assert f"{expected.params['global_coherence']:.4f}" in printed
