"""Paper B's inter-session diversity (section 3.2) per full condition and task of a table of
sessions: the sessions of one condition (``engine.protocols.conditions``) and task are split
into groups of G runs (15 runs -> 3 groups of 5), and Vendi Score and Div-BLEU
(``engine.measures.diversity``) are computed in each group and averaged. Runs that differ in
any factor are never pooled.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from engine.measures.diversity import inter_session_diversity
from engine.protocols.conditions import add_condition

INTER_COLUMNS = ["method", "condition", "ablation", "k", "task", "n_runs", "n_groups", "vendi", "vendi_sd",
                 "div_bleu", "div_bleu_sd", "vendi_per_group", "div_bleu_per_group", "warning"]


def diversity_by_condition(frame, embed: Callable[[list[str]], np.ndarray], group_size: int = 5):
    """Paper B's inter-session diversity of the final outputs, one row per full condition and task.

    ``frame``: one row per session with ``final_idea``, ``task`` and the method
    (``discussion``/``protocol``/``method``) plus whatever run options it has
    (``engine.protocols.conditions``), in run order. Sessions that differ in any factor are never pooled.
    Each (condition, task) cell is split into groups of ``group_size`` (paper B: 15 runs -> 3
    groups of 5); a cell with fewer runs gets no value and a ``warning``, as does a partial
    last group (left out).
    """
    rows = []
    data = add_condition(frame)
    keys = ["condition", "task"]
    for (condition, task), part in data.groupby(keys, sort=True, dropna=False):
        texts = part["final_idea"].astype(str).tolist()
        base = {"method": part["method"].iat[0], "condition": condition,
                "ablation": part["ablation"].iat[0], "k": part["cond_k"].iat[0], "task": task,
                "n_runs": len(texts)}
        if len(texts) < group_size:
            rows.append({**base, "n_groups": 0, "vendi": np.nan, "vendi_sd": np.nan, "div_bleu": np.nan,
                         "div_bleu_sd": np.nan, "vendi_per_group": [], "div_bleu_per_group": [],
                         "warning": (f"{len(texts)} run(s): fewer than one group of {group_size}"
                                     if len(texts) >= 2 else f"{len(texts)} text: diversity undefined")})
            continue
        result = inter_session_diversity(texts, embed(texts), group_size=group_size)
        dropped = result["n_runs"] - result["n_groups"] * group_size
        rows.append({**base, "n_groups": result["n_groups"], "vendi": result["vendi"],
                     "vendi_sd": float(np.std(result["vendi_per_group"])),
                     "div_bleu": result["div_bleu"],
                     "div_bleu_sd": float(np.std(result["div_bleu_per_group"])),
                     "vendi_per_group": list(result["vendi_per_group"]),
                     "div_bleu_per_group": list(result["div_bleu_per_group"]),
                     "warning": f"last {dropped} run(s) left out (not a full group)" if dropped else ""})
    return pd.DataFrame(rows, columns=INTER_COLUMNS)
