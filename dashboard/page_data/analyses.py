"""The numbers behind the analysis pages: thin wrappers over ``engine.stats`` and friends.

Plain functions (``feature_comparison``, ``manipulability_percent``, ``regression_ladder``,
``conversation_map``...), testable without Streamlit; ``dashboard.widgets.cached`` keeps
their results so a page re-render with the same selection costs nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine import stats
from engine.errors import InputError
from engine.features import FEATURE_NAMES
from engine.stats.paper_tables import MIN_ROWS, constant_factors  # noqa: F401  (used by the pages)


def feature_comparison(frame: pd.DataFrame, columns: list[str], groups=("llm", "human")) -> pd.DataFrame:
    """LLM minus human on each column: means, Welch p and Cohen's d with its 95% CI."""
    rows = []
    for column in columns:
        try:
            result = stats.group_comparison(frame, column, group="source", groups=groups)
        except InputError:
            continue
        overall = result[result["by"] == "overall"].iloc[0]
        rows.append({"feature": column,
                     f"{groups[0]}_n": int(overall[f"{groups[0]}_n"]),
                     f"{groups[0]}_mean": overall[f"{groups[0]}_mean"],
                     f"{groups[1]}_n": int(overall[f"{groups[1]}_n"]),
                     f"{groups[1]}_mean": overall[f"{groups[1]}_mean"],
                     "welch_p": overall["welch_p"], "d": overall["cohens_d"],
                     "ci_low": overall["d_ci_low"], "ci_high": overall["d_ci_high"]})
    return pd.DataFrame(rows)


def manipulability_percent(frame: pd.DataFrame, suffix: str = "", sample: str = "trajectory") -> pd.DataFrame:
    """Table 24 on the LLM rows of ``sample`` (``engine.samples``; the paper's: trajectory), in
    percent; ``attrs['n']`` kept. ``suffix='_4b'`` uses the release's Qwen3-Embedding-4B features."""
    from engine import samples

    features = [f + suffix for f in FEATURE_NAMES]
    rows = samples.select(frame, sample, source="llm")
    table = stats.manipulability(rows, features=features, drop_constant=True)
    out = table * 100
    out.index = [str(i)[: len(str(i)) - len(suffix)] if suffix else str(i) for i in table.index]
    out.attrs.update(table.attrs)
    return out


def regression_ladder(frame: pd.DataFrame, outcome: str, samples=("llm", "human"),
                      allow_nonconvergence: bool = True) -> tuple[pd.DataFrame, list[str], pd.DataFrame]:
    """Table 1: R² of the hierarchical specifications per source (percent), notes, and the N
    of every fit (rows with the outcome and every predictor present); ``engine.stats.paper_tables.ladder``.

    ``frame`` should already be the paper's sample (``engine.samples``: trajectory). A factor
    with one level (one model, say) is dropped from the specifications that name it, which
    still run; the same note on several specifications is given once, naming them all."""
    from engine.stats.paper_tables import ladder

    parts, notes = ladder(frame, sources=samples, outcome=outcome)
    counts = {}
    for source in samples:
        fits = parts.get(f"{source} fit")
        if fits is not None:
            column = f"{source.upper() if source == 'llm' else source.capitalize()} N"
            counts[column] = fits.set_index("model")["n"]
            notes += [f"{source} / {label}: did not converge"
                      for label, ok in fits.set_index("model")["converged"].items() if not ok]
    n = pd.DataFrame(counts)
    n.index.name = "specification"
    return parts["R² (%)"], group_notes(notes), n.reset_index()


def group_notes(notes: list[str]) -> list[str]:
    """``source: specification: text`` notes with the same text on several specifications
    given once: ``source / spec1, spec2: text`` (the page shows each once, not five times)."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for note in notes:
        parts = note.split(": ", 2)
        if len(parts) == 3 and " / " not in parts[0]:
            source, label, text = parts
        else:
            source, label, text = "", "", note
        grouped.setdefault((source, text), []).append(label)
    return [f"{source} / {', '.join(labels)}: {text}" if source else text
            for (source, text), labels in grouped.items()]


def fit_spec(frame: pd.DataFrame, outcome: str, blocks: list[str], estimator: str,
             name: str, star_levels=(0.05, 0.01, 0.001)) -> stats.RegressionResult:
    spec = stats.RegressionSpec(name=name, outcome=outcome, blocks=blocks, estimator=estimator,
                                group="task", star_levels=tuple(star_levels))
    return stats.fit(spec, frame, allow_nonconvergence=True)


def conversation_map(frame: pd.DataFrame, columns=FEATURE_NAMES) -> pd.DataFrame:
    """PCA (2 components) of the z-scored nine features, one point per conversation.

    A fallback map for datasets without turn embeddings (the paper release).
    """
    from sklearn.decomposition import PCA

    columns = [c for c in columns if c in frame.columns]
    data = frame.dropna(subset=columns)
    if len(columns) < 2 or len(data) < 3:
        return pd.DataFrame(columns=["conversation_id", "x", "y"])
    values = data[list(columns)].to_numpy(dtype=float)
    sd = values.std(axis=0)
    values = (values - values.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    points = PCA(n_components=2, random_state=42).fit_transform(values)
    out = data[["conversation_id", "source", "model", "discussion", "task"]].copy() \
        if {"model", "discussion", "task"} <= set(data.columns) else data[["conversation_id", "source"]].copy()
    out["x"], out["y"] = points[:, 0], points[:, 1]
    return out
