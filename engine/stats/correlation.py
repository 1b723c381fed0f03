"""A correlation with its 95% interval, or the reason it has none.

* Pearson's r with the Fisher-z interval: tanh(atanh(r) +- z_{.975} / sqrt(n - 3)).
* Spearman's rho (Pearson's r of the average ranks) with the Fisher-z interval whose standard
  error is sqrt(1.06 / (n - 3)) (Fieller, Hartley & Pearson 1957, the usual choice for
  rank correlations; Bonett & Wright 2000 compare it with alternatives).

A coefficient needs at least ``MIN_PAIRS`` complete pairs and variation on both sides: a
constant measure (a judge that gives every item the same score) has no correlation, and the
result says so (``value`` None, ``note`` the reason) rather than NaN or 0. Pairs with a missing
value on either side are left out and counted (``dropped``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as scipy_stats

MIN_PAIRS = 4  # the Fisher interval needs n - 3 > 0
SPEARMAN_SE_FACTOR = 1.06  # Fieller, Hartley & Pearson (1957)


def _pairs(x, y) -> tuple[np.ndarray, np.ndarray, int]:
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"x and y differ in length: {x.shape} vs {y.shape}")
    keep = np.isfinite(x) & np.isfinite(y)
    return x[keep], y[keep], int((~keep).sum())


def undefined_reason(x: np.ndarray, y: np.ndarray, names: tuple[str, str] = ("the measure", "the people")) -> str:
    """Why no correlation can be computed on these complete pairs ("" when one can)."""
    if len(x) < MIN_PAIRS:
        return f"{len(x)} complete pairs: a correlation with an interval needs at least {MIN_PAIRS}"
    for values, name in ((x, names[0]), (y, names[1])):
        if np.ptp(values) == 0:
            return (f"{name} gave every item the same value ({values[0]:g}): with no variation the "
                    "correlation is undefined")
    return ""


def correlation(x, y, method: str = "pearson", *, level: float = 0.95,
                names: tuple[str, str] = ("the measure", "the people")) -> dict:
    """``{"method", "value", "ci": [low, high], "p", "n", "dropped", "note"}`` of ``x`` against ``y``.

    ``value``, ``ci`` and ``p`` are None when ``undefined_reason`` gives a reason (then in ``note``).
    """
    if method not in ("pearson", "spearman"):
        raise ValueError(f"method must be 'pearson' or 'spearman', got {method!r}")
    x, y, dropped = _pairs(x, y)
    out = {"method": method, "value": None, "ci": None, "p": None, "n": int(len(x)), "dropped": dropped,
           "note": undefined_reason(x, y, names)}
    if out["note"]:
        return out
    if method == "pearson":
        r, p = scipy_stats.pearsonr(x, y)
        se = 1 / math.sqrt(len(x) - 3)
    else:
        r, p = scipy_stats.spearmanr(x, y)
        se = math.sqrt(SPEARMAN_SE_FACTOR / (len(x) - 3))
    r, p = float(r), float(p)
    z = scipy_stats.norm.ppf(0.5 + level / 2)
    centre = math.atanh(min(max(r, -1 + 1e-15), 1 - 1e-15))
    out.update(value=r, p=p, ci=[math.tanh(centre - z * se), math.tanh(centre + z * se)])
    return out


def text(result: dict, *, digits: int = 3, with_n: bool = True) -> str:
    """"Pearson r = 0.110 [0.070, 0.150], N = 3,030" or "Spearman rho: undefined (reason), N = 12";
    ``with_n=False`` leaves the N off (a sentence that gives it once for two coefficients)."""
    name = "Pearson r" if result["method"] == "pearson" else "Spearman rho"
    n = f", N = {result['n']:,}" if with_n else ""
    if result["value"] is None:
        return f"{name}: undefined ({result.get('note', '')}){n}"
    low, high = result["ci"]
    return f"{name} = {result['value']:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]{n}"
