"""Side-by-side coefficients of one specification on two samples (paper A, Table 23)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from engine.errors import InputError


def compare_results(result_a, result_b, labels: tuple[str, str] = ("LLM", "Human"),
                    terms: list[str] | None = None) -> pd.DataFrame:
    """Coefficient, SE and stars of each shared term in two results, and their difference.

    Table 23 compares the LLM and human "trajectory + task" models: ``diff`` is
    ``coef_a - coef_b``; ``diff_se = sqrt(se_a² + se_b²)`` and ``diff_p`` (two-sided normal)
    treat the two samples as independent. The intercept is left out unless named in
    ``terms``; by default the terms are those present in both results, in ``result_a``'s order.
    """
    if len(labels) != 2 or labels[0] == labels[1]:
        raise InputError(f"labels must be two different names, got {labels!r}")
    a = result_a.table.set_index("term")
    b = result_b.table.set_index("term")
    if terms is None:
        terms = [t for t in a.index if t in b.index and t not in ("Intercept", "Group Var")]
    missing = [t for t in terms if t not in a.index or t not in b.index]
    if missing:
        raise InputError(f"term {missing[0]!r} is not in both results", field=missing[0])
    if not terms:
        raise InputError("the two results share no term to compare")
    first, second = labels
    out = pd.DataFrame({"term": terms})
    for label, table in ((first, a), (second, b)):
        out[f"{label}_coef"] = table.loc[terms, "coef"].to_numpy()
        out[f"{label}_se"] = table.loc[terms, "se"].to_numpy()
        out[f"{label}_p"] = table.loc[terms, "p"].to_numpy()
        out[f"{label}_stars"] = table.loc[terms, "stars"].to_numpy()
    out["diff"] = out[f"{first}_coef"] - out[f"{second}_coef"]
    out["diff_se"] = np.sqrt(out[f"{first}_se"] ** 2 + out[f"{second}_se"] ** 2)
    out["diff_p"] = 2 * scipy_stats.norm.sf(np.abs(out["diff"] / out["diff_se"]))
    return out
