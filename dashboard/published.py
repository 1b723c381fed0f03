"""Published numbers of the two papers, shown beside our own and always labelled "published".

Transcribed from the paper texts in ``shared/seeds/`` (paper A: "Multi-agent AI systems
outperform human teams in creativity"; paper B: Creative-MAD). Nothing here is computed:
these tables are what the authors printed, for side-by-side comparison only.
"""

from __future__ import annotations

import pandas as pd

from engine.importers.paper_release import published_reference

FEATURE_LABELS = {
    "local_coherence": "Local Coherence", "global_coherence": "Global Coherence",
    "path_length": "Path Length", "convergence_ratio": "Convergence Ratio",
    "max_distance": "Max Distance", "trajectory_curvature": "Trajectory Curvature",
    "topic_switching_rate": "Topic Switching Rate", "revisit_score": "Revisit Score",
    "semantic_spread": "Semantic Spread",
}
MANIPULABILITY_COLUMNS = ("task", "task+discussion", "task+model", "additive", "interaction")


def table5() -> pd.DataFrame:
    """Paper A, Table 5: creativity ratings by task and group, mean (SD), min-max scaled."""
    rows = [
        ("Overall", "Human", 341, 0.15, 0.09, 0.31, 0.21, 0.57, 0.21),
        ("Overall", "LLM", 4720, 0.30, 0.10, 0.53, 0.17, 0.59, 0.16),
        ("education_inequality", "Human", 65, 0.18, 0.09, 0.32, 0.17, 0.62, 0.20),
        ("education_inequality", "LLM", 788, 0.34, 0.08, 0.52, 0.14, 0.68, 0.14),
        ("employee_attrition", "Human", 65, 0.18, 0.11, 0.36, 0.20, 0.53, 0.19),
        ("employee_attrition", "LLM", 787, 0.28, 0.10, 0.49, 0.13, 0.56, 0.10),
        ("plastic_waste", "Human", 49, 0.13, 0.09, 0.31, 0.25, 0.56, 0.26),
        ("plastic_waste", "LLM", 790, 0.32, 0.13, 0.54, 0.20, 0.60, 0.13),
        ("singing_shower", "Human", 64, 0.12, 0.08, 0.21, 0.13, 0.57, 0.16),
        ("singing_shower", "LLM", 784, 0.24, 0.08, 0.54, 0.18, 0.47, 0.16),
        ("sorry_pandemic", "Human", 49, 0.16, 0.08, 0.39, 0.25, 0.56, 0.27),
        ("sorry_pandemic", "LLM", 781, 0.28, 0.07, 0.55, 0.18, 0.56, 0.19),
        ("supply_chain", "Human", 49, 0.13, 0.07, 0.27, 0.24, 0.59, 0.21),
        ("supply_chain", "LLM", 790, 0.33, 0.08, 0.52, 0.17, 0.66, 0.15),
    ]
    return pd.DataFrame(rows, columns=["task", "group", "N", "creativity_mean", "creativity_sd",
                                       "novelty_mean", "novelty_sd", "usefulness_mean",
                                       "usefulness_sd"])


def table23() -> pd.DataFrame:
    """Paper A, Table 23: standardized creativity coefficients (trajectory + task, OLS HC3)."""
    rows = [
        ("local_coherence", -0.0527, 0.0451, "", 0.2329, 0.0692, "***"),
        ("global_coherence", -0.4001, 0.0399, "***", -0.4631, 0.1023, "***"),
        ("path_length", -0.1216, 0.0207, "***", -0.0270, 0.0617, ""),
        ("convergence_ratio", -0.0226, 0.0173, "", 0.0127, 0.0385, ""),
        ("max_distance", -0.2758, 0.0278, "***", -0.0304, 0.0756, ""),
        ("trajectory_curvature", -0.0394, 0.0232, "", 0.2065, 0.0511, "***"),
        ("topic_switching_rate", 0.0951, 0.0287, "***", 0.1095, 0.0469, "*"),
        ("revisit_score", 0.0086, 0.0196, "", -0.0576, 0.0479, ""),
        ("semantic_spread", 0.2269, 0.0231, "***", 0.0443, 0.0493, ""),
    ]
    return pd.DataFrame(rows, columns=["feature", "llm_beta", "llm_se", "llm_sig",
                                       "human_beta", "human_se", "human_sig"])


def table1() -> pd.DataFrame:
    """Paper A, Table 1: R² ladder for creativity (percent; None = not applicable)."""
    rows = [
        ("Trajectory features only", 8.6, 11.6),
        ("Trajectory + Task", 17.6, 15.3),
        ("Trajectory + Task + Model", 22.3, None),
        ("Trajectory + Task + Model + Discussion", 24.4, None),
        ("Mixed Effects (conditional R²)", 32.6, 17.0),
    ]
    return pd.DataFrame(rows, columns=["specification", "LLM", "Human"])


def table24() -> pd.DataFrame:
    """Paper A, Table 24: R² (percent) of each feature by design choices, N = 3,574."""
    reference = published_reference()
    return pd.DataFrame(reference["table24"], index=list(reference["columns"])).T


def table26() -> pd.DataFrame:
    """Paper A, Table 26: coefficients with Qwen3-Embedding-0.6B vs -4B features."""
    rows = [
        ("global_coherence", -0.400, -0.211, -0.463, -0.495),
        ("semantic_spread", 0.227, 0.131, 0.044, 0.006),
        ("path_length", -0.122, -0.114, -0.027, 0.053),
        ("local_coherence", -0.053, -0.077, 0.233, 0.296),
        ("trajectory_curvature", -0.039, -0.034, 0.206, 0.174),
        ("max_distance", -0.276, -0.182, -0.030, -0.113),
        ("topic_switching_rate", 0.095, 0.089, 0.110, 0.076),
        ("convergence_ratio", -0.023, -0.032, 0.013, 0.042),
        ("revisit_score", 0.009, 0.057, -0.058, -0.012),
    ]
    return pd.DataFrame(rows, columns=["feature", "llm_0.6b", "llm_4b", "human_0.6b", "human_4b"])


def paper_b_gains() -> pd.DataFrame:
    """Paper B, section 6: Creative-MAD's diversity gains over Homo MAD (percent)."""
    return pd.DataFrame([("Qwen3-8B", 26.2, 24.0), ("Gemma-3-12B-Instruct", 23.3, 24.0)],
                        columns=["model", "semantic (Vendi) gain %", "lexical (Div-BLEU) gain %"])
