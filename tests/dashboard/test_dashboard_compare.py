"""Compare runs page (AppTest): two cached datasets side by side, numbers from the Parquet files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from engine.datasets import Dataset

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
RELEASE = REPO / "cached_runs" / "paper_release"
LOCAL = REPO / "cached_runs" / "local_smollm2"
pytestmark = pytest.mark.skipif(not ((RELEASE / "manifest.json").exists() and (LOCAL / "manifest.json").exists()),
                                reason="cached runs not built")


def test_two_datasets_side_by_side(cached_runs_of):
    cached_runs_of(RELEASE.name, LOCAL.name)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/compare.py").run()
    at.multiselect(key="compare_datasets").set_value(["local_smollm2", "paper_release"]).run()
    assert not at.exception, [e.value for e in at.exception]
    release, local = (pd.read_parquet(p / "conversations.parquet") for p in (RELEASE, LOCAL))
    overview = next(d.value for d in at.dataframe if "embedding model" in d.value.columns).set_index("dataset")
    assert overview.loc["paper_release", "conversations"] == len(release)
    assert overview.loc["local_smollm2", "conversations"] == len(local)
    assert any("different embedding models" in w.value for w in at.warning)
    features = next(d.value for d in at.dataframe if "paper_release mean" in d.value.columns
                    and "global_coherence" in d.value.index)
    assert features.loc["global_coherence", "paper_release mean"] == pytest.approx(
        release["global_coherence"].mean(), abs=1e-4)
    assert features.loc["global_coherence", "local_smollm2 N"] == local["global_coherence"].notna().sum()
    diversity = next(d.value for d in at.dataframe if "vendi" in d.value.columns).set_index("dataset")
    assert diversity.loc["paper_release", "groups"] == 0  # the release has no final outputs
    ok = local[(local["final_idea"].fillna("").str.strip() != "") & (local["status"].fillna("ok") == "ok")]
    sizes = ok.groupby(["discussion", "task"]).size()
    assert diversity.loc["local_smollm2", "cells"] == (sizes >= 5).sum()
    assert diversity.loc["local_smollm2", "groups"] == (sizes[sizes >= 5] // 5).sum()
    # MiniLM and Qwen3 features: no standardised difference across them, ranks and shapes instead
    assert not any("g_low" in d.value.columns and "global_coherence" in set(d.value.get("column", []))
                   for d in at.dataframe)
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert not any(c["layout"]["title"]["text"].startswith("Features: run −") for c in charts)
    assert any(c["layout"]["title"]["text"].replace("<br>", " ").startswith("Features by dataset as z-scores within each run")
               for c in charts)
    ranks = next(d.value for d in at.dataframe if "local_smollm2 rank" in d.value.columns)
    means = local.groupby("discussion")["global_coherence"].mean().dropna()
    expected = means.rank(ascending=False, method="min")
    got = ranks.xs("global_coherence", level="column")["local_smollm2 rank"].dropna()
    assert got.to_dict() == {k: int(v) for k, v in expected.items()}
    # what the exports and the report carry: the compared runs, and the warning
    shown = at.session_state["shown_items"]
    kept = shown["compare_feature_table"][3]
    assert kept["selection"].startswith("runs compared, each whole: local_smollm2 (228 conversations")
    assert "paper_release" in kept["selection"] and not kept["selection"].startswith("dataset ")
    assert any("different embedding models" in c for c in kept["caveats"])


STEERED = REPO / "cached_runs" / "local_smollm2_steered"


@pytest.mark.skipif(not (STEERED / "manifest.json").exists(), reason="steered cached runs not built")
def test_runs_compared_as_a_run_tracker_does(cached_runs_of):
    """Distinct colours per run, differences from the reference run with Welch's interval,
    Holm's p and Hedges' g (recomputed here with scipy/statsmodels), and the settings that
    differ between the runs' manifests."""
    import math

    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    cached_runs_of(LOCAL.name, STEERED.name)
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    at.switch_page("views/compare.py").run()
    at.multiselect(key="compare_datasets").set_value(["local_smollm2", "local_smollm2_steered"]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="compare_reference").value == "local_smollm2"
    # the tables as the dashboard reads them (registered features a build lacks computed at read)
    local, steered = (Dataset.load(p, with_corpus=False).conversations for p in (LOCAL, STEERED))

    # one colour per run, the same run the same colour in every chart
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    boxes = next(c for c in charts if c["layout"]["title"]["text"].startswith("Features by dataset"))
    colour_of = {t["name"]: t["marker"]["color"] for t in boxes["data"]}
    assert set(colour_of) == {"local_smollm2", "local_smollm2_steered"}
    assert colour_of["local_smollm2"] != colour_of["local_smollm2_steered"]
    forest = next(c for c in charts if c["layout"]["title"]["text"].startswith("Features: run − local_smollm2"))
    assert [t["marker"]["color"] for t in forest["data"]] == [colour_of["local_smollm2_steered"]]

    # differences of the nine features, steered minus local
    table = next(d.value for d in at.dataframe if "g_low" in d.value.columns and "N reference" in d.value.columns)
    table = table.set_index("column")
    features = [c for c in table.index]
    pvalues = []
    for feature in features:
        a, b = local[feature].dropna().to_numpy(), steered[feature].dropna().to_numpy()
        va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
        df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
        diff, half = b.mean() - a.mean(), stats.t.ppf(0.975, df) * math.sqrt(va + vb)
        p = stats.ttest_ind(b, a, equal_var=False).pvalue
        pvalues.append(p)
        pooled = math.sqrt(((len(a) - 1) * a.var(ddof=1) + (len(b) - 1) * b.var(ddof=1)) / (len(a) + len(b) - 2))
        nu = len(a) + len(b) - 2
        j = math.exp(math.lgamma(nu / 2) - math.lgamma((nu - 1) / 2)) / math.sqrt(nu / 2)
        row = table.loc[feature]
        assert (row["N reference"], row["N run"]) == (len(a), len(b))
        assert row["difference"] == pytest.approx(diff, abs=1e-4)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((diff - half, diff + half), abs=1e-4)
        assert row["p"] == pytest.approx(p, abs=1e-4)
        assert row["g"] == pytest.approx(j * diff / pooled, abs=1e-4)
        assert row["g_low"] < row["g"] < row["g_high"]
    holm = multipletests(pvalues, method="holm")[1]
    assert table["p (Holm)"].tolist() == pytest.approx(list(holm), abs=1e-4)

    # what differs in the manifests: shown, and identical settings left out by default
    manifests = {p.name: json.loads((p / "manifest.json").read_text()) for p in (LOCAL, STEERED)}
    config = next(d.value for d in at.dataframe if "differs" in d.value.columns)
    assert config.loc["n_conversations", "local_smollm2"] == str(manifests["local_smollm2"]["n_conversations"])
    assert config.loc["n_conversations", "local_smollm2_steered"] == str(
        manifests["local_smollm2_steered"]["n_conversations"])
    assert manifests["local_smollm2"]["embedding_model"] == manifests["local_smollm2_steered"]["embedding_model"]
    assert "embedding_model" not in config.index and config["differs"].all()
    assert config.loc["run.config.name", "kind"] == "configuration"
    at.toggle(key="compare_config_all").set_value(True).run()
    config = next(d.value for d in at.dataframe if "differs" in d.value.columns)
    assert not config.loc["embedding_model", "differs"]

    # diversity: the interval of each run's mean over its groups, and the difference over groups
    diversity = next(d.value for d in at.dataframe if "vendi 95% CI" in d.value.columns).set_index("dataset")
    ok = steered[(steered["final_idea"].fillna("").str.strip() != "") & (steered["status"].fillna("ok") == "ok")]
    sizes = ok.groupby(["discussion", "task"]).size()
    assert diversity.loc["local_smollm2_steered", "groups"] == (sizes // 5).sum()
    assert "[" in diversity.loc["local_smollm2_steered", "vendi 95% CI"]
