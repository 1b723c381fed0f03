"""An ``ideas_with_ratings_clean.csv``-shaped file for tests, built like the authors' one.

The authors' idea-level file is not available here, so tests build one with the columns of
its DATA_DICTIONARY.md: every conversation of the released metrics file (its real
``file_id``/``question_id``, so the join is exercised on the real keys), plus ideas that have
no conversation metrics in the release: the none (interactive and nominal generation) and
progressive structures, single-agent baselines and human ideas without a transcript.
Ratings are SYNTHETIC (five raters' novelty/usefulness, seeded): only the machinery is
tested with them, never a finding.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

RELEASE = Path(__file__).resolve().parents[3] / "shared/data/paper_release/comprehensive_trajectory_metrics.csv"
TASKS = ("education_inequality", "employee_attrition", "plastic_waste", "singing_shower",
         "sorry_pandemic", "supply_chain")
MIXED_RAW = "deepseek-ai/DeepSeek-R1, gemini-2.5-pro, o3"
FILE_ID = re.compile(
    r"^(?P<models>gpt-4\.1|o3-high|o3-low|deepseek-R1_gemini-2\.5-pro_o3)_(?P<run>\d+)_(?P<agents>\d+)"
    r"_(?P<persona>none|same|different)_(?P<phases>direct_discussion|three_stage)"
    r"_(?P<generation>Direct|dependent|independent)_(?P<discussion>\w+?)_(?P<order>fixed|random|hand_raising)"
    r"_pool_(?P<pool>\d+)_(?P<length>\d+)_(?P<min_rounds>None|\d+)(?:_v\w+)?$")
UNIFIED = {"all_at_once": "instructed", "iterative_refinement": "iterative", "open": "open",
           "none": "none", "creative": "creative"}
ORDER_PLAN = {"fixed": "fix", "random": "random", "hand_raising": "raise"}
RATERS = (2, 4, 5, 7, 9)
# extra rows: (label, count) -- what the test expects to find without metrics
EXTRA = {"none_interactive": 48, "none_nominal": 24, "progressive": 48, "baseline": 24,
         "human_only": 12}


def _condition_code(g: dict) -> str:
    persona = {"none": "N", "same": "S", "different": "D"}[g["persona"]]
    phases = {"three_stage": "3S", "direct_discussion": "DD"}[g["phases"]]
    discussion = {"none": "N", "all_at_once": "AO", "iterative_refinement": "IR", "creative": "CR",
                  "open": "OP"}[g["discussion"]]
    order = {"fixed": "F", "random": "R", "hand_raising": "H"}[g["order"]]
    code = f"{g['agents']}A_{persona}_{phases}_{discussion}_{order}_P{g['pool']}_R{g['length']}"
    return code + (f"_M{g['min_rounds']}" if g["min_rounds"] != "None" else "")


def _llm_row(file_id: str, task: str) -> dict:
    g = FILE_ID.match(file_id).groupdict()
    models = MIXED_RAW if g["models"].startswith("deepseek") else g["models"]
    generation = {"dependent": "interactive", "independent": "nominal", "Direct": None}[g["generation"]]
    return {"file_id": file_id, "question_id": task, "data_type": "experiment",
            "source": "last_agent_response", "discussion": UNIFIED[g["discussion"]],
            "discussion_method": g["discussion"],
            "discussion_order_plan": "not_applicable" if g["discussion"] == "none" else ORDER_PLAN[g["order"]],
            "discussion_order_method": g["order"], "idea_generation_plan": generation,
            "generation_method": None if g["generation"] == "Direct" else g["generation"],
            "number_of_agents": int(g["agents"]), "llm_count": int(g["agents"]), "models": models,
            "persona": "no" if g["persona"] == "none" else g["persona"], "run_num": int(g["run"]),
            "replacement_pool_size": int(g["pool"]), "phases": g["phases"],
            "condition_code": _condition_code(g)}


def _extra_llm(kind: str, k: int) -> tuple[str, dict]:
    models = ("gpt-4.1", "o3-high", "o3-low", "deepseek-R1_gemini-2.5-pro_o3")[k % 4]
    task = TASKS[(k // 4) % 6]
    run = k // 24 + 1
    if kind == "baseline":
        file_id = f"single_{models}_{run}"
        row = {"file_id": file_id, "question_id": task, "data_type": "baseline", "source": "single_agent",
               "discussion": "none", "discussion_method": "none", "number_of_agents": 1, "llm_count": 1,
               "models": MIXED_RAW if models.startswith("deepseek") else models, "persona": "no",
               "run_num": run, "condition_code": "1A_N_1L_N_F_P0_R60"}
        return file_id, row
    discussion, generation, order = {"none_interactive": ("none", "dependent", "fixed"),
                                     "none_nominal": ("none", "independent", "fixed"),
                                     "progressive": ("creative", "dependent", "random")}[kind]
    file_id = (f"{models}_{run}_3_different_three_stage_{generation}_{discussion}_{order}"
               f"_pool_0_30_None")
    return file_id, _llm_row(file_id, task)


def build_ideas(seed: int = 11) -> pd.DataFrame:
    """The ideas table in the release's column names (one row per idea)."""
    metrics = pd.read_csv(RELEASE, usecols=["file_id", "question_id"])
    rng = np.random.default_rng(seed)
    rows = []
    human_size = {}
    for file_id, task in zip(metrics["file_id"], metrics["question_id"]):
        if file_id.startswith("i"):
            team = file_id.split("_")[0]
            size = human_size.setdefault(team, int(rng.choice([3, 6], p=[0.65, 0.35])))
            rows.append({"file_id": file_id, "question_id": task, "data_type": "human",
                         "source": "human_data", "number_of_agents": size, "llm_count": size})
        else:
            rows.append(_llm_row(file_id, task))
    for kind, count in EXTRA.items():
        for k in range(count):
            if kind == "human_only":
                rows.append({"file_id": f"i{90000 + k // 3}_{k % 3 + 1}", "question_id": TASKS[k % 6],
                             "data_type": "human", "source": "human_data", "number_of_agents": 3,
                             "llm_count": 3})
            else:
                rows.append(_extra_llm(kind, k)[1])
    frame = pd.DataFrame(rows)
    # the two human-identification rules of the dictionary, each alone on one row
    human_rows = np.flatnonzero(frame["source"].eq("human_data").to_numpy())
    frame.loc[human_rows[0], "data_type"] = None                  # source == human_data only
    frame.loc[human_rows[1], "source"] = "transcript"             # data_type == human only
    n = len(frame)
    # five raters, 1-10 scale; LLM ideas a little more novel (so the tests have an effect)
    llm = ~frame["data_type"].eq("human") & ~frame["source"].eq("human_data")
    for rater in RATERS:
        frame[f"N{rater}"] = np.clip(np.round(rng.normal(5 + 1.5 * llm, 1.6, n)), 1, 10)
        frame[f"U{rater}"] = np.clip(np.round(rng.normal(6, 1.6, n)), 1, 10)
    novelty = frame[[f"N{r}" for r in RATERS]].mean(axis=1)
    usefulness = frame[[f"U{r}" for r in RATERS]].mean(axis=1)

    def scaled(values):
        grouped = values.groupby(frame["question_id"])
        return (values - grouped.transform("min")) / (grouped.transform("max") - grouped.transform("min"))

    frame["avg_novelty_rating"] = scaled(novelty).round(6)
    frame["avg_usefulness_rating"] = scaled(usefulness).round(6)
    frame["avg_creativity_rating"] = (frame["avg_novelty_rating"] * frame["avg_usefulness_rating"]).round(6)
    frame["grand_total_tokens"] = np.where(llm, rng.integers(5_000, 60_000, n), np.nan)
    frame["final_idea"] = [f"idea number {i}, with a comma" for i in range(n)]
    frame.insert(2, "row_ID", np.arange(n))
    return frame


def write_ideas(path: Path, seed: int = 11) -> pd.DataFrame:
    frame = build_ideas(seed)
    frame.to_csv(path, index=False)
    return frame
