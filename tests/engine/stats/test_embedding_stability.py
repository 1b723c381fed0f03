"""engine.stats.embedding_stability: rank correlation and outer-10% agreement between two
embedding models' features of the same conversations, by hand and on the release's two files."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from engine.measures.trajectory import PAPER_A_FEATURES
from engine.stats.embedding_stability import release_stability, stability, stability_sentence

RELEASE = Path(__file__).resolve().parents[4] / "shared/data/paper_release"


def test_by_hand_on_twenty_conversations():
    ids = [f"c{i}" for i in range(20)]
    first = pd.DataFrame({"conversation_id": ids, **{f: np.arange(20.0) for f in PAPER_A_FEATURES}})
    # the second model swaps the lowest two with the top two for every feature
    order = np.arange(20.0)
    order[[0, 1, 18, 19]] = [18, 19, 0, 1]
    second = pd.DataFrame({"conversation_id": ids, **{f: order for f in PAPER_A_FEATURES}})
    table = stability(first, second).set_index("feature")
    row = table.loc["global_coherence"]
    assert row["n"] == 20
    assert row["spearman_rho"] == pytest.approx(scipy_stats.spearmanr(np.arange(20.0), order).statistic)
    # outer 10% of 20 = the 2 lowest (<= 10th pct = 1.9) and the 2 highest (>= 90th = 17.1)
    assert row["low_10_kept"] == 0.0 and row["high_10_kept"] == 0.0
    assert stability(first, first)["low_10_kept"].eq(1.0).all()


@pytest.mark.skipif(not (RELEASE / "comprehensive_trajectory_metrics_4b.csv").exists(), reason="release not here")
def test_the_release_files_qwen3_small_and_large():
    from engine.stats.reference import load_reference

    table = release_stability(str(RELEASE)).set_index("feature")
    small = load_reference(RELEASE / "comprehensive_trajectory_metrics.csv")
    large = load_reference(RELEASE / "comprehensive_trajectory_metrics_4b.csv")
    both = small.merge(large, on="conversation_id", suffixes=("", "_4b"))
    pair = both[["global_coherence", "global_coherence_4b"]].dropna()
    rho = scipy_stats.spearmanr(pair.iloc[:, 0], pair.iloc[:, 1]).statistic
    assert table.loc["global_coherence", "spearman_rho"] == pytest.approx(rho)
    assert table.loc["global_coherence", "n"] == len(pair)
    text = stability_sentence(release_stability(str(RELEASE)))
    assert text.startswith("Even between Qwen3-Embedding-0.6B and -4B") and "no calibration" in text
