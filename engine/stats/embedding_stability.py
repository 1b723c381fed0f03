"""How stable paper A's features are across embedding models, measured on the release itself.

The paper release holds the nine Table 19 features of the same conversations twice: from
Qwen3-Embedding-0.6B (the paper's features) and from Qwen3-Embedding-4B (its robustness
check, Table 26). For each feature this module gives the rank correlation between the two
(Spearman's rho over the conversations with both values) and how often a conversation in
one model's outer 10% (at or below the 10th, at or above the 90th percentile) is in the same
outer 10% under the other model.

This is the only cross-model evidence the release offers, and it is between two models of
one family. It does not calibrate a third model (all-MiniLM-L6-v2) against either: the
diagnosis does not rank across models, and shows these numbers to say why.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

from engine.measures.trajectory import PAPER_A_FEATURES


def stability(first: pd.DataFrame, second: pd.DataFrame, on: str = "conversation_id") -> pd.DataFrame:
    """Per feature: N, Spearman's rho, and the share of each outer 10% kept (low, high)."""
    both = first[[on, *PAPER_A_FEATURES]].merge(second[[on, *PAPER_A_FEATURES]], on=on, suffixes=("", "_other"))
    rows = []
    for name in PAPER_A_FEATURES:
        pair = both[[name, f"{name}_other"]].dropna()
        x, y = pair[name], pair[f"{name}_other"]
        if len(pair) < 20:
            continue
        low, low_other = x <= x.quantile(0.1), y <= y.quantile(0.1)
        high, high_other = x >= x.quantile(0.9), y >= y.quantile(0.9)
        rows.append({"feature": name, "n": len(pair), "spearman_rho": float(x.rank().corr(y.rank())),
                     "low_10_kept": float((low & low_other).sum() / low.sum()),
                     "high_10_kept": float((high & high_other).sum() / high.sum())})
    return pd.DataFrame(rows)


@lru_cache(maxsize=2)
def release_stability(folder: str | None = None) -> pd.DataFrame | None:
    """``stability`` of the release's 0.6B and 4B files (None when they are not here)."""
    from engine.stats.reference import RELEASE_FILE, RELEASE_FILE_4B, default_release_path, load_reference

    base = Path(folder) if folder else default_release_path().parent
    small, large = base / RELEASE_FILE, base / RELEASE_FILE_4B
    if not (small.exists() and large.exists()):
        return None
    return stability(load_reference(small), load_reference(large))


def stability_sentence(table: pd.DataFrame | None) -> str:
    """One sentence for a diagnosis that does not rank across models (empty without the files)."""
    if table is None or table.empty:
        return ""
    kept = pd.concat([table["low_10_kept"], table["high_10_kept"]])
    worst = table.loc[table[["low_10_kept", "high_10_kept"]].min(axis=1).idxmin()]
    side = "low" if worst["low_10_kept"] <= worst["high_10_kept"] else "high"
    return (f"Even between Qwen3-Embedding-0.6B and -4B on the same {int(table['n'].max()):,} release "
            f"conversations, a conversation in one model's outer 10% of a feature is in the same 10% under the "
            f"other {100 * kept.min():.0f}-{100 * kept.max():.0f}% of the time ({worst['feature']} {side}: "
            f"{100 * min(worst['low_10_kept'], worst['high_10_kept']):.0f}%; Spearman's rho "
            f"{table['spearman_rho'].min():.2f}-{table['spearman_rho'].max():.2f}); no calibration to another "
            "model family exists, so none is assumed.")

