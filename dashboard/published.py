"""Published numbers of the two papers, shown beside our own and always labelled "published".

Transcribed from the paper texts in ``shared/seeds/`` (paper A: "Multi-agent AI systems
outperform human teams in creativity"; paper B: Creative-MAD). Nothing here is computed:
these tables are what the authors printed, for side-by-side comparison only.
"""

from __future__ import annotations

import pandas as pd

from engine.stats.published_a import table1, table5, table23, table24, table26  # noqa: F401  (re-exported)

FEATURE_LABELS = {
    "local_coherence": "Local Coherence", "global_coherence": "Global Coherence",
    "path_length": "Path Length", "convergence_ratio": "Convergence Ratio",
    "max_distance": "Max Distance", "trajectory_curvature": "Trajectory Curvature",
    "topic_switching_rate": "Topic Switching Rate", "revisit_score": "Revisit Score",
    "semantic_spread": "Semantic Spread",
}
MANIPULABILITY_COLUMNS = ("task", "task+discussion", "task+model", "additive", "interaction")


def paper_b_gains() -> pd.DataFrame:
    """Paper B, section 6: Creative-MAD's diversity gains over Homo MAD (percent)."""
    return pd.DataFrame([("Qwen3-8B", 26.2, 24.0), ("Gemma-3-12B-Instruct", 23.3, 24.0)],
                        columns=["model", "semantic (Vendi) gain %", "lexical (Div-BLEU) gain %"])
