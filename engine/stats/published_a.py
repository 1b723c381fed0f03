"""Paper A's published numbers, transcribed from the paper text (``shared/seeds/``).

"Multi-agent AI systems outperform human teams in creativity": nothing here is computed;
every table is what the authors printed, for showing beside our own numbers and always
labelled "published". Functions are named after the paper's table (``table7``) or figure
(``figure1``); percentages stay percentages, coefficients as printed (stars in ``*_sig``).
"""

from __future__ import annotations

import pandas as pd


TASK_LABELS = {"Education Inequality": "education_inequality", "Employee Attrition": "employee_attrition",
               "Plastic Waste": "plastic_waste", "Singing in Shower": "singing_shower",
               "Sorry Pandemic": "sorry_pandemic", "Supply Chain": "supply_chain"}
# the paper's star levels per table (p thresholds for *, **, ***)
STARS_CONVENTIONAL = (0.05, 0.01, 0.001)
STARS_TABLES_20_21 = (0.10, 0.05, 0.01)
# the nine trajectory features as the paper names them (Table 19) and the columns of Table 24
FEATURE_LABELS = {
    "local_coherence": "Local Coherence", "global_coherence": "Global Coherence",
    "path_length": "Path Length", "convergence_ratio": "Convergence Ratio",
    "max_distance": "Max Distance", "trajectory_curvature": "Trajectory Curvature",
    "topic_switching_rate": "Topic Switching Rate", "revisit_score": "Revisit Score",
    "semantic_spread": "Semantic Spread",
}
MANIPULABILITY_COLUMNS = ("task", "task+discussion", "task+model", "additive", "interaction")
# who made paper A's LLM conversations, for the line that sets a published headline apart from ours
MODELS = "GPT-4.1, o3 (high and low reasoning effort) and mixed teams, N = 3,574 LLM conversations"
# Table 24's column headings as the paper prints them
TABLE24_HEADINGS = {"task": "Task", "task+discussion": "+Discussion", "task+model": "+Model", "additive": "Additive",
                    "interaction": "Interaction"}


def published_reference() -> dict:
    """Paper A's published numbers this release reproduces (Tables 2 and 24), in percent."""
    return {
        "table24": {
            "global_coherence": (5.9, 27.0, 28.8, 47.5, 52.6),
            "max_distance": (6.4, 47.0, 9.1, 48.9, 51.7),
            "local_coherence": (0.5, 11.9, 31.9, 41.5, 43.4),
            "semantic_spread": (0.4, 9.3, 2.7, 11.2, 24.8),
            "topic_switching_rate": (0.3, 6.9, 13.1, 20.2, 24.0),
            "path_length": (0.1, 2.1, 9.0, 10.8, 14.0),
            "revisit_score": (1.4, 7.0, 5.3, 11.2, 12.9),
            "trajectory_curvature": (0.4, 2.5, 5.4, 7.3, 9.6),
            "convergence_ratio": (0.5, 5.7, 1.0, 6.2, 7.9),
        },
        "table2_mean": (1.8, 13.3, 11.8, 22.8, 26.8),
        "columns": ("task", "task+discussion", "task+model", "additive", "interaction"),
    }


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
    """Paper A, Table 26: coefficients with Qwen3-Embedding-0.6B vs -4B features, and the
    models' R² (percent, the table's last row)."""
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
        ("R² (%)", 17.6, 14.7, 15.3, 13.7),
    ]
    return pd.DataFrame(rows, columns=["feature", "llm_0.6b", "llm_4b", "human_0.6b", "human_4b"])




def table4() -> pd.DataFrame:
    """Table 4: ICC(3,5) of the five raters by task and dimension, with 95% CI."""
    rows = [
        ("education_inequality", "novelty", 855, 0.87, 0.86, 0.88), ("education_inequality", "usefulness", 855, 0.80, 0.78, 0.82),
        ("employee_attrition", "novelty", 855, 0.73, 0.70, 0.75), ("employee_attrition", "usefulness", 855, 0.74, 0.71, 0.77),
        ("plastic_waste", "novelty", 839, 0.78, 0.76, 0.80), ("plastic_waste", "usefulness", 839, 0.70, 0.67, 0.73),
        ("singing_shower", "novelty", 855, 0.83, 0.81, 0.85), ("singing_shower", "usefulness", 855, 0.73, 0.70, 0.75),
        ("sorry_pandemic", "novelty", 839, 0.89, 0.88, 0.90), ("sorry_pandemic", "usefulness", 839, 0.79, 0.77, 0.82),
        ("supply_chain", "novelty", 839, 0.90, 0.89, 0.91), ("supply_chain", "usefulness", 839, 0.76, 0.73, 0.79),
    ]
    return pd.DataFrame(rows, columns=["task", "dimension", "N", "icc", "ci_low", "ci_high"])


def table7() -> pd.DataFrame:
    """Table 7: creativity on discussion structure (models 1-4), HC3 SEs; terms as printed."""
    rows = [  # term, model, coef, se, stars
        ("progressive", 1, 0.0207, 0.0097, "**"), ("progressive", 2, 0.0206, 0.0094, "**"),
        ("progressive", 3, 0.0205, 0.0087, "**"), ("progressive", 4, -0.0047, 0.0172, ""),
        ("progressive x gpt-4.1", 4, 0.0884, 0.0226, "***"), ("progressive x o3-high", 4, 0.0071, 0.0250, ""),
        ("progressive x o3-low", 4, 0.0053, 0.0249, ""),
        ("instructed", 1, 0.0202, 0.0075, "***"), ("instructed", 2, 0.0202, 0.0070, "***"),
        ("instructed", 3, 0.0200, 0.0067, "***"), ("instructed", 4, -0.0192, 0.0132, ""),
        ("instructed x gpt-4.1", 4, 0.0845, 0.0170, "***"), ("instructed x o3-high", 4, 0.0427, 0.0194, "**"),
        ("instructed x o3-low", 4, 0.0296, 0.0189, ""),
        ("iterative", 1, 0.0318, 0.0083, "***"), ("iterative", 2, 0.0318, 0.0079, "***"),
        ("iterative", 3, 0.0317, 0.0075, "***"), ("iterative", 4, -0.0049, 0.0146, ""),
        ("iterative x gpt-4.1", 4, 0.1015, 0.0195, "***"), ("iterative x o3-high", 4, 0.0261, 0.0214, ""),
        ("iterative x o3-low", 4, 0.0187, 0.0212, ""),
        ("open", 1, -0.0083, 0.0082, ""), ("open", 2, -0.0083, 0.0076, ""), ("open", 3, -0.0083, 0.0074, ""),
        ("open", 4, -0.0301, 0.0142, "**"), ("open x gpt-4.1", 4, 0.0429, 0.0186, "**"),
        ("open x o3-high", 4, 0.0380, 0.0215, "*"), ("open x o3-low", 4, 0.0063, 0.0209, ""),
        ("gpt-4.1", 2, -0.0272, 0.0046, "***"), ("gpt-4.1", 3, -0.0267, 0.0045, "***"), ("gpt-4.1", 4, -0.1015, 0.0159, "***"),
        ("o3-high", 2, 0.0417, 0.0050, "***"), ("o3-high", 3, 0.0422, 0.0046, "***"), ("o3-high", 4, 0.0086, 0.0184, ""),
        ("o3-low", 2, 0.0378, 0.0049, "***"), ("o3-low", 3, 0.0384, 0.0046, "***"), ("o3-low", 4, 0.0180, 0.0179, ""),
        ("Intercept", 1, 0.2943, 0.0071, "***"), ("Intercept", 2, 0.2812, 0.0073, "***"),
        ("Intercept", 3, 0.3237, 0.0076, "***"), ("Intercept", 4, 0.3559, 0.0129, "***"),
    ]
    table = pd.DataFrame(rows, columns=["term", "model", "coef", "se", "stars"])
    fit = pd.DataFrame({"model": [1, 2, 3, 4], "r2": [0.015, 0.096, 0.227, 0.241],
                        "adj_r2": [0.014, 0.094, 0.224, 0.235], "n": [3223] * 4})
    table.attrs["fit"] = fit
    return table


def table8() -> pd.DataFrame:
    """Table 8: effect of each structure vs none within each model (from Table 7, model 4)."""
    rows = [
        ("progressive", -0.0047, "", 0.0838, "***", 0.0024, "", 0.0006, ""),
        ("instructed", -0.0192, "", 0.0653, "***", 0.0234, "*", 0.0104, ""),
        ("iterative", -0.0049, "", 0.0966, "***", 0.0212, "", 0.0138, ""),
        ("open", -0.0301, "*", 0.0128, "*", 0.0079, "", -0.0238, ""),
    ]
    return pd.DataFrame(rows, columns=["discussion", "Mixed", "Mixed_sig", "gpt-4.1", "gpt-4.1_sig",
                                       "o3-high", "o3-high_sig", "o3-low", "o3-low_sig"])


def table9() -> pd.DataFrame:
    """Table 9: discussion order vs random (all discussion, N = 2,983; instructed only, N = 1,785)."""
    return pd.DataFrame([("fixed vs random", -0.0030, 0.0035, 0.404, -0.0007, 0.0050, 0.894),
                         ("raise vs random", -0.0148, 0.0049, 0.003, -0.0137, 0.0052, 0.009),
                         ("R²", 0.230, None, None, 0.254, None, None)],
                        columns=["term", "all_coef", "all_se", "all_p", "instructed_coef",
                                 "instructed_se", "instructed_p"])


def table10() -> pd.DataFrame:
    """Table 10: discussion length vs 30 rounds (N = 3,702); omnibus test p = 0.719."""
    return pd.DataFrame([("60 vs 30", -0.0056, 0.0065, 0.392), ("60_min30 vs 30", 0.0002, 0.0036, 0.958),
                         ("omnibus test (LR) p", 0.719, None, None), ("R²", 0.240, None, None),
                         ("ΔR² (vs no rounds)", 0.000, None, None)],
                        columns=["term", "coef", "se", "p"])


def table11() -> pd.DataFrame:
    """Table 11: nominal vs interactive generation without discussion (N = 240)."""
    return pd.DataFrame([("nominal vs interactive", -0.0327, 0.0123, 0.008), ("R²", 0.301, None, None)],
                        columns=["term", "coef", "se", "p"])


def table12() -> pd.DataFrame:
    """Table 12: mean (SE) by model and structure, conditions common to all models."""
    rows = [
        ("gpt-4.1", "none", 60, 0.212, 0.011, 0.313, 0.014, 0.674, 0.020),
        ("gpt-4.1", "progressive", 59, 0.296, 0.012, 0.483, 0.016, 0.620, 0.020),
        ("gpt-4.1", "instructed", 450, 0.277, 0.004, 0.486, 0.007, 0.586, 0.007),
        ("gpt-4.1", "iterative", 120, 0.308, 0.008, 0.613, 0.015, 0.528, 0.015),
        ("gpt-4.1", "open", 120, 0.224, 0.007, 0.342, 0.009, 0.658, 0.013),
        ("o3-high", "none", 60, 0.322, 0.014, 0.506, 0.017, 0.646, 0.020),
        ("o3-high", "progressive", 60, 0.324, 0.013, 0.673, 0.016, 0.491, 0.019),
        ("o3-high", "instructed", 450, 0.345, 0.005, 0.654, 0.007, 0.544, 0.007),
        ("o3-high", "iterative", 120, 0.343, 0.009, 0.577, 0.013, 0.605, 0.012),
        ("o3-high", "open", 120, 0.329, 0.008, 0.465, 0.010, 0.711, 0.011),
        ("o3-low", "none", 60, 0.331, 0.013, 0.525, 0.018, 0.644, 0.020),
        ("o3-low", "progressive", 60, 0.332, 0.014, 0.663, 0.022, 0.514, 0.020),
        ("o3-low", "instructed", 448, 0.341, 0.005, 0.640, 0.007, 0.547, 0.007),
        ("o3-low", "iterative", 120, 0.345, 0.009, 0.596, 0.013, 0.598, 0.015),
        ("o3-low", "open", 120, 0.307, 0.008, 0.452, 0.011, 0.687, 0.012),
        ("Mixed", "none", 60, 0.313, 0.013, 0.442, 0.014, 0.713, 0.019),
        ("Mixed", "progressive", 60, 0.308, 0.013, 0.555, 0.022, 0.572, 0.019),
        ("Mixed", "instructed", 438, 0.295, 0.005, 0.516, 0.007, 0.584, 0.008),
        ("Mixed", "iterative", 119, 0.309, 0.008, 0.533, 0.013, 0.603, 0.016),
        ("Mixed", "open", 120, 0.283, 0.007, 0.421, 0.009, 0.675, 0.011),
    ]
    return pd.DataFrame(rows, columns=["model", "discussion", "N", "creativity_mean", "creativity_se",
                                       "novelty_mean", "novelty_se", "usefulness_mean", "usefulness_se"])


def table13() -> pd.DataFrame:
    """Table 13: of each task's top 10 ideas by creativity / novelty / usefulness, how many are human / LLM."""
    rows = [("education_inequality", 0, 10, 1, 9, 3, 7), ("sorry_pandemic", 0, 10, 3, 7, 4, 6),
            ("supply_chain", 0, 10, 3, 7, 2, 8), ("employee_attrition", 0, 10, 4, 6, 2, 8),
            ("singing_shower", 0, 10, 0, 10, 3, 7), ("plastic_waste", 0, 10, 1, 9, 1, 9),
            ("Total", 0, 60, 12, 48, 15, 45)]
    return pd.DataFrame(rows, columns=["task", "creativity_human", "creativity_llm", "novelty_human",
                                       "novelty_llm", "usefulness_human", "usefulness_llm"])


def table14() -> pd.DataFrame:
    """Table 14: creativity of the top 5 ideas of each task (all LLM-team ideas; texts not copied)."""
    scores = {"education_inequality": (0.62, 0.62, 0.62, 0.62, 0.60),
              "sorry_pandemic": (0.62, 0.57, 0.53, 0.50, 0.50),
              "supply_chain": (0.58, 0.55, 0.53, 0.53, 0.53),
              "employee_attrition": (0.65, 0.58, 0.58, 0.57, 0.57),
              "singing_shower": (0.77, 0.56, 0.55, 0.53, 0.52),
              "plastic_waste": (0.74, 0.64, 0.64, 0.64, 0.64)}
    return pd.DataFrame([(task, rank, value) for task, values in scores.items()
                         for rank, value in enumerate(values, start=1)], columns=["task", "rank", "creativity"])


def table2() -> pd.DataFrame:
    """Table 2: mean R² (%) across the nine features of each Table 24 model (N = 3,574)."""
    reference = published_reference()
    return pd.DataFrame({"model": list(reference["columns"]), "mean R² (%)": list(reference["table2_mean"])})


def table15() -> pd.DataFrame:
    """Table 15: model 4 on creativity, novelty and usefulness (discussion terms, R², N)."""
    rows = [
        ("progressive", -0.0061, "", 0.0644, "***", -0.0843, "***"),
        ("progressive x gpt-4.1", 0.0885, "***", 0.0572, "*", 0.0858, "**"),
        ("instructed", -0.0159, "**", 0.0266, "**", -0.0661, "***"),
        ("instructed x gpt-4.1", 0.0847, "***", 0.0984, "***", 0.0425, "*"),
        ("iterative", -0.0058, "", 0.0436, "***", -0.0531, "***"),
        ("iterative x gpt-4.1", 0.1015, "***", 0.2082, "***", -0.0359, ""),
        ("open", -0.0305, "***", -0.0684, "***", 0.0208, ""),
        ("open x gpt-4.1", 0.0429, "**", 0.0498, "**", 0.0214, ""),
        ("R²", 0.245, "", 0.321, "", 0.304, ""), ("N", 3223, "", 3223, "", 3223, ""),
    ]
    return pd.DataFrame(rows, columns=["term", "creativity", "creativity_sig", "novelty", "novelty_sig",
                                       "usefulness", "usefulness_sig"])


def table16() -> pd.DataFrame:
    """Table 16: GPT-4.1 persona-matched mean (SE); one-way ANOVA on creativity F = 2.09, p = 0.124."""
    rows = [("same", 478, 0.258, 0.004, 0.461, 0.007, 0.587, 0.007),
            ("different", 480, 0.267, 0.004, 0.480, 0.008, 0.585, 0.007),
            ("none", 480, 0.269, 0.004, 0.541, 0.008, 0.534, 0.008)]
    table = pd.DataFrame(rows, columns=["persona", "N", "creativity_mean", "creativity_se", "novelty_mean",
                                        "novelty_se", "usefulness_mean", "usefulness_se"])
    table.attrs["anova_creativity"] = {"F": 2.09, "p": 0.124}
    return table


def table17() -> pd.DataFrame:
    """Table 17: team size mean (SE), GPT-4.1 matched conditions and human teams."""
    rows = [("gpt-4.1", 3, 359, 0.280, 0.005, 0.479, 0.008, 0.606, 0.008),
            ("gpt-4.1", 6, 359, 0.271, 0.005, 0.511, 0.009, 0.558, 0.009),
            ("human", 3, 224, 0.155, 0.006, 0.320, 0.014, 0.553, 0.014),
            ("human", 6, 117, 0.142, 0.008, 0.287, 0.019, 0.600, 0.020)]
    return pd.DataFrame(rows, columns=["group", "team_size", "N", "creativity_mean", "creativity_se",
                                       "novelty_mean", "novelty_se", "usefulness_mean", "usefulness_se"])


def table18() -> pd.DataFrame:
    """Table 18: replacement pool vs none, mean (SE); overall d = -0.03 on creativity."""
    rows = [("gpt-4.1", "pool", 150, 0.275, 0.007), ("gpt-4.1", "no pool", 149, 0.275, 0.006),
            ("o3-high", "pool", 90, 0.351, 0.011), ("o3-high", "no pool", 90, 0.345, 0.011),
            ("o3-low", "pool", 90, 0.343, 0.011), ("o3-low", "no pool", 90, 0.346, 0.009),
            ("Mixed", "pool", 90, 0.287, 0.011), ("Mixed", "no pool", 88, 0.302, 0.011),
            ("Overall", "pool", 420, 0.308, 0.005), ("Overall", "no pool", 417, 0.311, 0.005)]
    return pd.DataFrame(rows, columns=["model", "pool", "N", "creativity_mean", "creativity_se"])


def table20() -> pd.DataFrame:
    """Table 20: LLM creativity ladder, standardized feature coefficients (stars .10/.05/.01)."""
    features = ["convergence_ratio", "global_coherence", "local_coherence", "max_distance", "path_length",
                "revisit_score", "semantic_spread", "topic_switching_rate", "trajectory_curvature"]
    coefs = [  # models 1..5
        (0.0104, -0.0226, -0.0240, -0.0040, -0.0036), (-0.5148, -0.4001, -0.1408, -0.1202, -0.1219),
        (-0.0164, -0.0527, 0.1021, 0.0186, 0.0182), (-0.2698, -0.2758, -0.0792, -0.0493, -0.0492),
        (-0.1217, -0.1216, -0.0697, -0.0789, -0.0791), (-0.0026, 0.0086, 0.0089, 0.0171, 0.0169),
        (0.2843, 0.2269, 0.0806, 0.0290, 0.0298), (0.0996, 0.0951, 0.1424, 0.0390, 0.0388),
        (-0.0564, -0.0394, -0.0192, -0.0027, -0.0030)]
    table = pd.DataFrame(coefs, index=features, columns=[f"model {i}" for i in range(1, 6)])
    table.index.name = "term"
    table.attrs["fit"] = {"r2": (0.086, 0.176, 0.223, 0.238, None), "adj_r2": (0.084, 0.173, 0.219, 0.234, None),
                          "conditional_r2": (None,) * 4 + (0.325,), "marginal_r2": (None,) * 4 + (0.208,),
                          "n": (3574,) * 5}
    return table.reset_index()


def table21() -> pd.DataFrame:
    """Table 21: human creativity ladder, standardized feature coefficients (stars .10/.05/.01)."""
    features = ["convergence_ratio", "global_coherence", "local_coherence", "max_distance", "path_length",
                "revisit_score", "semantic_spread", "topic_switching_rate", "trajectory_curvature"]
    coefs = [(0.0153, 0.0127, 0.0131), (-0.5108, -0.4631, -0.4729), (0.2726, 0.2329, 0.2412),
             (0.0098, -0.0304, -0.0224), (-0.0511, -0.0270, -0.0322), (-0.0926, -0.0576, -0.0643),
             (0.0270, 0.0443, 0.0410), (0.1385, 0.1095, 0.1152), (0.2234, 0.2065, 0.2101)]
    table = pd.DataFrame(coefs, index=features, columns=["model 1", "model 2", "model 3"])
    table.index.name = "term"
    table.attrs["fit"] = {"r2": (0.116, 0.153, None), "adj_r2": (0.103, 0.133, None),
                          "conditional_r2": (None, None, 0.170), "marginal_r2": (None, None, 0.134),
                          "n": (308,) * 3}
    return table.reset_index()


def table22() -> pd.DataFrame:
    """Table 22: variance explained (%) by trajectory features within each model."""
    return pd.DataFrame([("Mixed", 5.6, 12.4, 19.1), ("gpt-4.1", 6.4, 17.8, 27.9),
                         ("o3-high", 10.3, 30.7, 46.4), ("o3-low", 7.8, 23.0, 36.1)],
                        columns=["model", "trajectory only", "+task", "mixed effects"])


def table25() -> pd.DataFrame:
    """Table 25: additive vs interaction R² (%) of each feature, share from the interaction."""
    rows = [("semantic_spread", 11.2, 13.6, 24.8, 55), ("global_coherence", 47.5, 5.1, 52.6, 10),
            ("topic_switching_rate", 20.2, 3.7, 24.0, 16), ("path_length", 10.8, 3.3, 14.0, 23),
            ("max_distance", 48.9, 2.8, 51.7, 5), ("trajectory_curvature", 7.3, 2.2, 9.6, 23),
            ("local_coherence", 41.5, 1.9, 43.4, 4), ("revisit_score", 11.2, 1.7, 12.9, 14),
            ("convergence_ratio", 6.2, 1.7, 7.9, 22)]
    return pd.DataFrame(rows, columns=["feature", "additive", "interaction_increment", "full",
                                       "share_from_interaction"])


def table28() -> pd.DataFrame:
    """Table 28: trajectory + task coefficients, creativity as product vs sum (standardized)."""
    rows = [("global_coherence", -0.400, -0.434, -0.463, -0.407), ("semantic_spread", 0.227, 0.219, 0.044, 0.005),
            ("path_length", -0.122, -0.117, -0.027, -0.049), ("local_coherence", -0.053, -0.005, 0.233, 0.272),
            ("trajectory_curvature", -0.039, -0.025, 0.206, 0.206), ("max_distance", -0.276, -0.291, -0.030, 0.045),
            ("topic_switching_rate", 0.095, 0.091, 0.110, 0.085), ("convergence_ratio", -0.023, -0.011, 0.013, 0.025),
            ("revisit_score", 0.009, 0.038, -0.058, -0.043), ("R² (%)", 17.6, 19.0, 15.3, 15.0)]
    return pd.DataFrame(rows, columns=["feature", "llm_product", "llm_sum", "human_product", "human_sum"])


def table29() -> pd.DataFrame:
    """Table 29: structure effects vs progressive with a token-count control (N = 4,120)."""
    return pd.DataFrame([("instructed (vs progressive)", 0.002, ""), ("iterative (vs progressive)", 0.016, "**"),
                         ("open (vs progressive)", -0.030, "***"), ("tokens", 0.0, "n.s. (≈0)")],
                        columns=["term", "coef", "stars"])


def figure1() -> pd.DataFrame:
    """Figure 1 and its text: LLM (N = 4,541) vs human (N = 341) ideas."""
    rows = [("creativity", 0.297, 0.295, 0.300, 0.151, 0.141, 0.160, -26.73, 4880, 1.50),
            ("novelty", 0.532, 0.527, 0.537, 0.309, 0.286, 0.331, -22.97, 4880, 1.29),
            ("usefulness", 0.583, 0.578, 0.587, 0.569, 0.546, 0.592, -1.47, 4880, 0.08)]
    table = pd.DataFrame(rows, columns=["measure", "llm_mean", "llm_ci_low", "llm_ci_high", "human_mean",
                                        "human_ci_low", "human_ci_high", "t (human - llm)", "df", "cohens_d"])
    table.attrs["panel_c"] = {"llm_p95": 0.47, "human_p95": 0.31, "llm_max": 0.77, "human_max": 0.48}
    table.attrs["panel_d"] = {"llm_top5_mean": 0.53, "llm_top5_sd": 0.05, "human_top5_mean": 0.37,
                              "human_top5_sd": 0.06}
    return table


# The N each table of the paper states it was fitted or computed on, as printed (text, since
# some tables give one N per sample); tables that give an N per row say so.
PRINTED_N = {
    "1": "LLM 3,574; human 308", "2": "3,574", "4": "per row (N column)", "5": "per row (N column)",
    "7": "3,223", "8": "3,223", "9": "all discussion 2,983; instructed only 1,785", "10": "3,702", "11": "240",
    "12": "per row (N column)", "15": "3,223", "16": "per row (N column)", "17": "per row (N column)",
    "18": "per row (N column)", "20": "3,574", "21": "308", "23": "LLM 3,574; human 308", "24": "3,574",
    "25": "3,574", "26": "LLM 3,574; human 308", "28": "LLM 3,574; human 308", "29": "4,120",
    "fig1": "LLM 4,541; human 341",
}


def printed_n(key: str) -> str | None:
    """The N paper A prints for table ``key`` (``"24"``, ``"fig1"``), or None when it prints none."""
    return PRINTED_N.get(str(key))
