"""The numbers behind the analysis pages: thin wrappers over ``engine.stats`` and friends.

Plain functions (``feature_comparison``, ``manipulability_percent``, ``regression_ladder``,
``conversation_map``...), testable without Streamlit; ``dashboard.widgets.cached`` keeps
their results so a page re-render with the same selection costs nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine import stats
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.stats.feature_effects import feature_effects
from engine.stats.paper_tables import MIN_ROWS, constant_factors  # noqa: F401  (used by the pages)


EFFECT_NOTE = ("LLM − human. Difference of means with Welch's 95% interval; Welch's t-test p; Hedges' g "
               "(pooled SD, small-sample correction) with a 95% CI from the noncentral t of Welch's "
               "statistic, so the p-value and both intervals agree (p < .05 exactly when they exclude 0).")


def feature_comparison(frame: pd.DataFrame, columns: list[str], groups=("llm", "human")) -> pd.DataFrame:
    """``groups[0]`` minus ``groups[1]`` on each column: means, the Welch difference interval,
    Welch p, and Hedges' g (``g``) with its CI (``ci_low``, ``ci_high``) from Welch's statistic
    (``engine.stats.feature_effects``; ``EFFECT_NOTE`` says so on the page and in exports)."""
    return feature_effects(frame, list(columns), group="source", groups=tuple(groups))


def manipulability_percent(frame: pd.DataFrame, suffix: str = "", sample: str = "trajectory") -> pd.DataFrame:
    """Table 24 on the LLM rows of ``sample`` (``engine.samples``; the paper's: trajectory), in
    percent; ``attrs['n']`` kept. ``suffix='_4b'`` uses the release's Qwen3-Embedding-4B features."""
    from engine import samples

    features = [f + suffix for f in PAPER_A_FEATURES]
    rows = samples.select(frame, sample, source="llm")
    table = stats.manipulability(rows, features=features, drop_constant=True)
    out = table * 100
    out.index = [str(i)[: len(str(i)) - len(suffix)] if suffix else str(i) for i in table.index]
    out.attrs.update(table.attrs)
    out.attrs["percent"] = True
    return out


def regression_ladder(frame: pd.DataFrame, outcome: str, samples=("llm", "human"),
                      allow_nonconvergence: bool = True) -> tuple[pd.DataFrame, list[str], pd.DataFrame]:
    """Table 1: R² of the hierarchical specifications per source (percent; ``<Source> adj.``
    beside each: adjusted R²), notes, and per fit N, k, N − k and whether the sample is small
    (N < 10·k, ``engine.stats.guards``); ``engine.stats.paper_tables.ladder``. A rung with
    N − k < 5 is refused: it has no row and a note says why.

    ``frame`` should already be the paper's sample (``engine.samples``: trajectory). A factor
    with one level (one model, say) is dropped from the specifications that name it, which
    still run; the same note on several specifications is given once, naming them all."""
    from engine.stats.paper_tables import ladder

    parts, notes = ladder(frame, sources=samples, outcome=outcome)
    counts = {}
    for source in samples:
        fits = parts.get(f"{source} fit")
        if fits is not None:
            name = source.upper() if source == "llm" else source.capitalize()
            indexed = fits.set_index("model")
            counts[f"{name} N"] = indexed["n"]
            counts[f"{name} k"] = indexed["k"]
            counts[f"{name} N − k"] = indexed["n_minus_k"]
            counts[f"{name} small sample"] = indexed["small_sample"].astype(bool)
            notes += [f"{source} / {label}: did not converge"
                      for label, ok in indexed["converged"].items() if not ok]
    n = pd.DataFrame(counts)
    n.index.name = "specification"
    return parts["R² (%)"], group_notes(notes), n.reset_index()


def ladder_warnings(fits: pd.DataFrame) -> list[str]:
    """One ``warning:`` line per source naming the rungs whose N < 10·k (from the fit table of
    ``regression_ladder``)."""
    from engine.stats.guards import ROWS_PER_COEFFICIENT

    lines = []
    for column in [c for c in fits.columns if c.endswith(" small sample")]:
        source = column[: -len(" small sample")]
        small = fits[fits[column].fillna(False).astype(bool)]
        if len(small):
            rungs = "; ".join(f"{row['specification']}: N = {int(row[f'{source} N'])}, k = {int(row[f'{source} k'])}"
                              for _, row in small.iterrows())
            lines.append(f"warning: {source}: fewer than {ROWS_PER_COEFFICIENT} rows per estimated coefficient "
                         f"({rungs}); R² overstates these fits, adjusted R² is the headline")
    return lines


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


def small_model(frame: pd.DataFrame) -> str | None:
    """"SmolLM2-135M" when the rows were made by a small or local model (``engine.stats.guards``),
    for the headline sentence of any finding computed from them; None otherwise."""
    from engine.stats.guards import small_model_label

    if "model" not in frame.columns:
        return None
    return small_model_label(frame["model"].dropna().astype(str).unique())


def fit_spec(frame: pd.DataFrame, outcome: str, blocks: list[str], estimator: str,
             name: str, star_levels=(0.05, 0.01, 0.001)) -> stats.RegressionResult:
    spec = stats.RegressionSpec(name=name, outcome=outcome, blocks=blocks, estimator=estimator,
                                group="task", star_levels=tuple(star_levels))
    return stats.fit(spec, frame, allow_nonconvergence=True)


def conversation_map(frame: pd.DataFrame, columns=PAPER_A_FEATURES) -> pd.DataFrame:
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
