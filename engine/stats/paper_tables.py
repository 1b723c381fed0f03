"""Every table of paper A that data allow, computed on the paper's own sample.

``build(key, df)`` returns a :class:`PaperTable`: our numbers (one or more tables), the
sample (``engine.samples``) and its N, the published table (``engine.stats.published_a``)
and notes. Keys are the paper's numbers (``"1"``, ``"4"``, ... ``"29"``) and ``"fig1"``.
Which data a table needs is declared in :data:`TABLES`: ``ratings`` (the authors'
``ideas_with_ratings_clean.csv``: ``creativity, novelty, usefulness``), ``features`` (the
metrics file), ``raters`` (the ``N*``/``U*`` columns), ``tokens``, ``features_4b``. A
missing need is an :class:`~engine.errors.InputError` that names the file to bring.

Significance stars: ``stars="paper"`` uses the levels the paper's printed stars follow
(Tables 7, 15, 20, 21: .10/.05/.01, which Table 7's own numbers show although its caption
says .05/.01/.001; the others .05/.01/.001); ``"conventional"`` is .05/.01/.001; or give
three decreasing p values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from engine import samples
from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES
from engine.stats import published_a
from engine.stats.compare import compare_results
from engine.stats.effects import simple_effects
from engine.stats.groups import group_comparison, top_within_groups
from engine.stats.manipulability import interaction_share, manipulability
from engine.stats.ratings import icc3k
from engine.stats.regression import fit, stars as star_text
from engine.stats.spec import (RegressionSpec, discussion_specs, hierarchical_specs, parse_star_levels,
                               token_control_spec)

CONVENTIONAL = published_a.STARS_CONVENTIONAL
TENTHS = published_a.STARS_TABLES_20_21
IDEAS_FILE = "ideas_with_ratings_clean.csv"
MEASURES = ("creativity", "novelty", "usefulness")


@dataclass
class PaperTable:
    """Our reproduction of one table: ``parts`` (title -> table), sample, N, published, notes."""

    key: str
    title: str
    sample: str
    n: int
    parts: dict[str, pd.DataFrame]
    published: pd.DataFrame | None
    star_levels: tuple[float, float, float]
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        name = "Figure 1" if self.key == "fig1" else f"Table {self.key}"
        return f"Paper A, {name}: {self.title}"


@dataclass(frozen=True)
class TableDef:
    key: str
    title: str
    sample: str
    needs: tuple[str, ...]
    paper_stars: tuple[float, float, float]
    build: Callable
    published: Callable | None


NEED_TEXT = {
    "ratings": f"the ideas file ({IDEAS_FILE}) for its creativity, novelty and usefulness ratings",
    "features": "the trajectory features (the metrics file comprehensive_trajectory_metrics.csv)",
    "raters": f"the ideas file ({IDEAS_FILE}) for its five raters' N*/U* columns",
    "tokens": f"token counts (grand_total_tokens of {IDEAS_FILE}, or our runs' usage)",
    "features_4b": "the Qwen3-Embedding-4B features (comprehensive_trajectory_metrics_4b.csv)",
}


def has_need(df: pd.DataFrame, need: str) -> bool:
    def present(column):
        return column in df.columns and df[column].notna().any()
    if need == "ratings":
        return all(present(c) for c in MEASURES)
    if need == "features":
        return all(present(f) for f in PAPER_A_FEATURES)
    if need == "raters":
        return any(str(c)[:1] == "N" and str(c)[1:].isdigit() for c in df.columns)
    if need == "tokens":
        return present("tokens")
    if need == "features_4b":
        return all(present(f + "_4b") for f in PAPER_A_FEATURES)
    raise ValueError(need)


SHORT_NEED = {"ratings": "the authors' ideas file", "raters": "the authors' ideas file",
              "tokens": "token counts", "features": "trajectory features", "features_4b": "the 4B features"}


def picker_label(key: str, df: pd.DataFrame) -> str:
    """The table's name as a picker shows it, saying before it is chosen what ``df`` lacks for it:
    "Table 7: creativity on discussion structure (models 1-4) [needs the authors' ideas file:
    published only]"."""
    definition = table_def(key)
    name = f"{'Figure 1' if definition.key == 'fig1' else 'Table ' + definition.key}: {definition.title}"
    lacking = []
    for need in definition.needs:
        if not has_need(df, need) and SHORT_NEED[need] not in lacking:
            lacking.append(SHORT_NEED[need])
    if lacking:
        name += f" [needs {' and '.join(lacking)}: published only]"
    return name


def missing_needs(key: str, df: pd.DataFrame) -> list[str]:
    """What table ``key`` needs that ``df`` lacks, as sentences (empty when it can run)."""
    return [NEED_TEXT[n] for n in table_def(key).needs if not has_need(df, n)]


def star_levels(choice, key: str) -> tuple[float, float, float]:
    """``paper`` (the table's own levels), or anything ``parse_star_levels`` reads."""
    if choice in (None, "paper"):
        return table_def(key).paper_stars
    return parse_star_levels(choice)


def build(key: str, df: pd.DataFrame, stars="paper", sample: str | None = None) -> PaperTable:
    """Table ``key`` of paper A on ``df`` (every row): on the paper's sample for that table, or
    on ``sample`` (an ``engine.samples`` name) when given."""
    spec = table_def(key)
    key = spec.key
    lacking = missing_needs(key, df)
    if lacking:
        raise InputError(f"{'Figure 1' if key == 'fig1' else 'Table ' + key} needs " + "; and ".join(lacking))
    levels = star_levels(stars, key)
    sample = sample or spec.sample
    rows = samples.select(df, sample)
    if rows.empty:
        raise InputError(f"the {samples.sample(sample).title} ({sample}) has no rows in this data")
    parts, notes = spec.build(rows, levels)
    published = spec.published() if spec.published else None
    return PaperTable(key=key, title=spec.title, sample=sample, n=len(rows), parts=parts,
                      published=published, star_levels=levels, notes=notes)


def table_def(key: str) -> TableDef:
    key = str(key).lower().removeprefix("table").strip()
    if key in ("figure1", "fig 1", "1a", "1b", "1c", "1d"):
        key = "fig1"
    if key not in TABLES:
        raise InputError(f"no table {key!r}; paper A's tables here: {', '.join(TABLES)}", field="table")
    return TABLES[key]


# ------------------------------------------------------------------------------ helpers
def _mean_se(rows: pd.DataFrame, by: list[str], measures=MEASURES) -> pd.DataFrame:
    """N, mean and standard error (SD / sqrt(n), ddof 1) of each measure per group."""
    grouped = rows.groupby(by, sort=True, dropna=False)
    out = grouped.size().rename("N").to_frame()
    for measure in measures:
        values = grouped[measure]
        out[f"{measure}_mean"] = values.mean()
        out[f"{measure}_se"] = values.sem(ddof=1)
    return out.reset_index()


def _coefficients(result, levels, label: str) -> pd.DataFrame:
    table = result.table[["term", "coef", "se", "p"]].copy()
    table["stars"] = [star_text(p, levels) for p in table["p"]]
    table.insert(0, "model", label)
    return table


def _fit_summary(result, label: str) -> dict:
    s = result.summary
    return {"model": label, "n": s["n"], "k": s.get("k"), "n_minus_k": s.get("df_resid"),
            "small_sample": s.get("small_sample"), "r2": s["r2"], "adj_r2": s["adj_r2"],
            "marginal_r2": s.get("marginal_r2"), "conditional_r2": s.get("conditional_r2"),
            "converged": s.get("converged", True)}


def _with_levels(spec: RegressionSpec, levels) -> RegressionSpec:
    spec.star_levels = tuple(levels)
    return spec


MIN_ROWS = 10  # fewer conversations than this: no regression is fitted, a note says so
FACTOR_BLOCKS = ("task", "model", "discussion", "persona", "team_size")


def constant_factors(frame: pd.DataFrame, factors=FACTOR_BLOCKS) -> dict[str, str]:
    """``{factor: its one level}`` for each factor column with a single non-missing level."""
    out = {}
    for factor in factors:
        if factor in frame.columns:
            levels = frame[factor].dropna().unique()
            if len(levels) == 1:
                out[factor] = str(levels[0])
    return out


def drop_constant_blocks(spec: RegressionSpec, rows: pd.DataFrame) -> tuple[RegressionSpec, dict[str, str]]:
    """The spec without the factor blocks that have one level in ``rows`` (a constant factor
    explains nothing, so the model without it is the same model), and which were dropped.
    The mixed model's group is reported too (its random intercepts need 2+ groups)."""
    import dataclasses

    constant = constant_factors(rows)
    dropped = {b: constant[b] for b in spec.blocks if b in constant}
    if spec.estimator == "mixedlm" and spec.group in constant:
        dropped[spec.group] = constant[spec.group]
    if not dropped:
        return spec, {}
    return dataclasses.replace(spec, blocks=[b for b in spec.blocks if b not in dropped]), dropped


def _fits(specs, rows, levels, notes) -> tuple[list, list[str]]:
    results, labels = [], []
    for spec in specs:
        spec, dropped = drop_constant_blocks(spec, rows)
        for factor, level in dropped.items():
            notes.append(f"{spec.name}: factor {factor} dropped: 1 level ({level})")
        if spec.estimator == "mixedlm" and spec.group in dropped:
            notes.append(f"{spec.name}: not fitted, random {spec.group} intercepts need 2 or more levels")
            continue
        label = spec.name + "".join(f" ({factor} dropped)" for factor in dropped)
        try:
            results.append(fit(_with_levels(spec, levels), rows, allow_nonconvergence=True))
            labels.append(label)
        except InputError as error:
            notes.append(f"{label}: {error}")
    for result in results:
        notes += [f"{result.spec.name}: {w}" for w in result.summary.get("warnings", [])]
    return results, labels


def _wide(results, labels) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Coefficients (term x model, 'coef (se) stars' kept numeric in long form) and fit rows."""
    long = pd.concat([_coefficients(r, r.spec.star_levels, label) for r, label in zip(results, labels)],
                     ignore_index=True)
    summary = pd.DataFrame([_fit_summary(r, label) for r, label in zip(results, labels)])
    return long, summary


# ------------------------------------------------------------------------------ tables
def ladder(rows: pd.DataFrame, levels=CONVENTIONAL, *, sources=("llm", "human"), outcome: str = "creativity"):
    """Tables 1, 20, 21: the hierarchical specifications of each source on ``rows`` (already the
    trajectory sample). Parts: ``R² (%)`` (OLS R², conditional R² for the mixed model; beside
    each source its adjusted R², ``<source> adj.``) and, per source, ``coefficients`` and ``fit``
    (N, k, N − k, small_sample, R², adjusted, marginal / conditional R²); and notes. A rung with
    N − k < 5 is refused (``engine.stats.guards``): no row, a note says why."""
    notes: list[str] = []
    r2 = {}
    parts = {}
    for source in sources:
        part = rows[rows["source"] == source]
        if part.empty:
            notes.append(f"{source}: no {'LLM' if source == 'llm' else 'human'} rows in this sample; not fitted")
            continue
        if len(part) < MIN_ROWS:
            notes.append(f"{source}: every specification: {len(part)} conversation(s), fewer than the "
                         f"{MIN_ROWS} a regression needs here; not fitted")
            continue
        results, labels = _fits(hierarchical_specs(outcome, source), part, levels, notes)
        if not results:
            continue
        coefficients, summary = _wide(results, [l.split(": ", 1)[1] for l in labels])
        parts[f"{source} coefficients"] = coefficients
        parts[f"{source} fit"] = summary
        indexed = summary.set_index("model")
        r2[source] = indexed.apply(lambda s: 100 * (s["r2"] if pd.notna(s["r2"]) else s["conditional_r2"]), axis=1)
        r2[f"{source} adj."] = 100 * pd.to_numeric(indexed["adj_r2"], errors="coerce")
    names = {"llm": "LLM", "human": "Human", "llm adj.": "LLM adj.", "human adj.": "Human adj."}
    table = pd.DataFrame({names[s]: v for s, v in r2.items()})
    table.index.name = "specification"
    return {"R² (%)": table.reset_index(), **parts}, notes


def _table1(rows, levels):
    parts, notes = ladder(rows, levels)
    return {"R² (%)": parts["R² (%)"], **{k: v for k, v in parts.items() if k.endswith("fit")}}, notes


def _table20(rows, levels):
    parts, notes = ladder(rows, levels, sources=("llm",))
    return {k: v for k, v in parts.items() if k != "R² (%)"}, notes


def _table21(rows, levels):
    parts, notes = ladder(rows, levels, sources=("human",))
    return {k: v for k, v in parts.items() if k != "R² (%)"}, notes


def _table4(rows, levels):
    """ICC(3,k) of the raters' novelty (N*) and usefulness (U*) scores per task."""
    notes = []
    out = []
    for dimension, prefix in (("novelty", "N"), ("usefulness", "U")):
        raters = [c for c in rows.columns if str(c).startswith(prefix) and str(c)[1:].isdigit()]
        for task, part in rows.groupby("task", sort=True):
            complete = part[raters].dropna()
            try:
                icc, low, high = icc3k(complete)
            except InputError as error:
                notes.append(f"{task} / {dimension}: {error}")
                continue
            out.append({"task": task, "dimension": dimension, "N": len(complete), "raters": len(raters),
                        "icc": icc, "ci_low": low, "ci_high": high})
    columns = ["task", "dimension", "N", "raters", "icc", "ci_low", "ci_high"]
    table = pd.DataFrame(out, columns=columns).sort_values(["task", "dimension"]).reset_index(drop=True)
    return {"ICC(3,k)": table}, notes


def _table5(rows, levels):
    """Mean (SD) by task and group; LLM includes the single-agent baselines as in the paper."""
    frame = rows.assign(group=np.where(rows["source"] == "human", "Human", "LLM"))
    parts = []
    for task, part in [("Overall", frame)] + list(frame.groupby("task", sort=True)):
        grouped = part.groupby("group", sort=True)
        block = grouped.size().rename("N").to_frame()
        for measure in MEASURES:
            block[f"{measure}_mean"] = grouped[measure].mean()
            block[f"{measure}_sd"] = grouped[measure].std(ddof=1)
        parts.append(block.reset_index().assign(task=task))
    table = pd.concat(parts, ignore_index=True)
    return {"mean (SD)": table[["task", "group", *[c for c in table.columns if c not in ("task", "group")]]]}, []


def _table7(rows, levels):
    notes: list[str] = []
    results, labels = _fits(discussion_specs("creativity"), rows, levels, notes)
    if not results:
        return {}, notes
    coefficients, summary = _wide(results, [l.split(": ", 1)[1] for l in labels])
    return {"coefficients (HC3)": coefficients, "fit": summary}, notes


def _model4(rows, levels, outcome="creativity"):
    spec = discussion_specs(outcome)[-1]
    spec.name = f"model 4: {outcome}"
    return fit(_with_levels(spec, levels), rows, allow_nonconvergence=True)


def _table8(rows, levels):
    result = _model4(rows, levels)
    effects = simple_effects(result, "discussion", "model")
    effects["stars"] = [star_text(p, levels) for p in effects["p"]]
    return {"effect vs none, within model": effects}, list(result.summary.get("warnings", []))


def _order_fit(rows, levels, blocks, name):
    """Tables 9-11 use classical OLS standard errors (the authors' notebook)."""
    reference = {"order": "random"}
    if "Mixed" in set(rows["model"]):
        reference["model"] = "Mixed"
    spec = RegressionSpec(name=name, outcome="creativity", blocks=blocks, zscore=False, estimator="ols",
                          reference=reference, star_levels=levels)
    return fit(spec, rows, allow_nonconvergence=True)


def _table9(rows, levels):
    notes = []
    out = []
    for label, part, blocks in (("all discussion", rows, ["order", "discussion", "model", "task"]),
                                ("instructed only", rows[rows["discussion"] == "instructed"],
                                 ["order", "model", "task"])):
        try:
            result = _order_fit(part, levels, blocks, label)
        except InputError as error:
            notes.append(f"{label}: {error}")
            continue
        table = _coefficients(result, levels, label)
        out.append(table[table["term"].str.startswith("C(order)")].assign(n=result.summary["n"],
                                                                          r2=result.summary["r2"]))
    return {"order vs random": pd.concat(out, ignore_index=True) if out else pd.DataFrame()}, notes


def _table10(rows, levels):
    """Discussion length: OLS with and without the length factor; likelihood-ratio test."""
    frame = rows.assign(rounds=samples.round_condition(rows))
    controls = ["discussion", "model", "persona", "team_size", "task"]
    controls = [c for c in controls if frame[c].nunique(dropna=True) > 1]
    full = RegressionSpec(name="with length", outcome="creativity", blocks=["rounds", *controls], zscore=False,
                          estimator="ols", reference={"rounds": "30"}, star_levels=levels)
    reduced = RegressionSpec(name="without length", outcome="creativity", blocks=controls, zscore=False,
                             estimator="ols", star_levels=levels)
    used = frame.dropna(subset=["creativity", "rounds", *controls])
    with_length, without_length = fit(full, used), fit(reduced, used)
    lr = 2 * (with_length.model.llf - without_length.model.llf)
    df_diff = int(with_length.model.df_model - without_length.model.df_model)
    table = _coefficients(with_length, levels, "with length")
    table = table[table["term"].str.startswith("C(rounds)")]
    f_value, f_p, _ = with_length.model.compare_f_test(without_length.model)
    tests = pd.DataFrame([{"test": "likelihood ratio", "statistic": lr, "df": df_diff,
                           "p": float(scipy_stats.chi2.sf(lr, df_diff))},
                          {"test": "F (nested OLS)", "statistic": float(f_value), "df": df_diff, "p": float(f_p)},
                          {"test": "R² with length", "statistic": with_length.summary["r2"], "df": None, "p": None},
                          {"test": "ΔR² (vs no length)", "statistic": with_length.summary["r2"] - without_length.summary["r2"],
                           "df": None, "p": None}])
    notes = [f"controls: {', '.join(controls)}; N = {with_length.summary['n']:,}"]
    return {"length vs 30 rounds": table, "omnibus tests": tests}, notes


def _table11(rows, levels):
    spec = RegressionSpec(name="generation", outcome="creativity", blocks=["generation", "model", "task"],
                          zscore=False, estimator="ols", reference={"generation": "interactive"},
                          star_levels=levels)
    result = fit(spec, rows, allow_nonconvergence=True)
    table = _coefficients(result, levels, "generation")
    return {"nominal vs interactive": table[table["term"].str.startswith("C(generation)")]
            .assign(n=result.summary["n"], r2=result.summary["r2"])}, []


def _table12(rows, levels):
    return {"mean (SE)": _mean_se(rows, ["model", "discussion"])}, []


def _table13(rows, levels):
    out = []
    for task, part in rows.groupby("task", sort=True):
        row = {"task": task}
        for measure in MEASURES:
            top = part.dropna(subset=[measure]).sort_values(measure, ascending=False, kind="stable").head(10)
            row[f"{measure}_human"] = int((top["source"] == "human").sum())
            row[f"{measure}_llm"] = int((top["source"] == "llm").sum())
        out.append(row)
    table = pd.DataFrame(out)
    total = {"task": "Total", **{c: int(table[c].sum()) for c in table.columns if c != "task"}}
    return {"top 10 per task": pd.concat([table, pd.DataFrame([total])], ignore_index=True)}, []


def _table14(rows, levels):
    """The five most creative ideas of each task; the text shown is the blinded paraphrase the
    raters saw (``paraphrased_idea``) when the file has it, else ``final_idea``."""
    text = "paraphrased_idea" if "paraphrased_idea" in rows.columns and rows["paraphrased_idea"].notna().any() \
        else "final_idea"
    out = []
    for task, part in rows[rows["source"] == "llm"].groupby("task", sort=True):
        top = part.dropna(subset=["creativity"]).sort_values("creativity", ascending=False, kind="stable").head(5)
        for rank, (_, idea) in enumerate(top.iterrows(), start=1):
            out.append({"task": task, "rank": rank, "creativity": idea["creativity"], "model": idea["model"],
                        "discussion": idea["discussion"], "idea": idea.get(text)})
    return {"top 5 per task": pd.DataFrame(out)}, [f"idea text from the {text!r} column"]


def _table2(rows, levels):
    table = manipulability(rows[rows["source"] == "llm"])
    means = (100 * table).mean()
    return {"mean R² (%)": pd.DataFrame({"model": list(means.index), "mean R² (%)": means.to_numpy()})}, \
        [f"N = {table.attrs['n']:,}"]


def _table15(rows, levels):
    """Model 4 on creativity, novelty and usefulness, with the order and generation-plan terms
    the paper's Table 15 adds (reference: not applicable / none), when they vary here. In the
    paper's design those terms are collinear with the structures (order "not applicable" is
    exactly the none structure; statsmodels' pseudo-inverse fitted them anyway): such a
    singular design is refused and model 4 is fitted without them, with a note."""
    notes = []
    out = []
    frame = rows.assign(order_plan=rows["order"].fillna("not_applicable") if "order" in rows else None,
                        generation_plan=rows["generation"].fillna("none") if "generation" in rows else None)
    extra = [c for c in ("order_plan", "generation_plan") if frame[c].nunique(dropna=True) > 1]
    for outcome in MEASURES:
        spec = discussion_specs(outcome)[-1]
        spec.name = f"model 4: {outcome}"
        spec.blocks = [*spec.blocks, *extra]
        spec.reference = {**spec.reference, "order_plan": "not_applicable", "generation_plan": "none"}
        try:
            result = fit(_with_levels(spec, levels), frame, allow_nonconvergence=True)
        except InputError as error:  # e.g. the plans coincide with the structures in this data
            notes.append(f"{outcome}: with order/generation terms: {error}; fitted without them")
            result = _model4(rows, levels, outcome)
        out.append(_coefficients(result, levels, outcome).assign(r2=result.summary["r2"], n=result.summary["n"]))
        notes += result.summary.get("warnings", [])
    if not extra:
        notes.append("order and generation plans do not vary here: model 4 of Table 7 on each outcome")
    return {"coefficients (HC3)": pd.concat(out, ignore_index=True)}, notes


def _table16(rows, levels):
    table = _mean_se(rows, ["persona"])
    tests = []
    for measure in MEASURES:
        groups = [g[measure].dropna().to_numpy() for _, g in rows.groupby("persona", sort=True)]
        anova = scipy_stats.f_oneway(*groups)
        tests.append({"measure": measure, "test": "one-way ANOVA", "statistic": float(anova.statistic),
                      "df": f"{len(groups) - 1}, {sum(map(len, groups)) - len(groups)}", "p": float(anova.pvalue)})
        reference = rows.loc[rows["persona"] == "none", measure].dropna()
        for persona in ("same", "different"):
            other = rows.loc[rows["persona"] == persona, measure].dropna()
            if len(other) > 1 and len(reference) > 1:
                test = scipy_stats.ttest_ind(reference, other)
                tests.append({"measure": measure, "test": f"t: none vs {persona}", "statistic": float(test.statistic),
                              "df": str(len(reference) + len(other) - 2), "p": float(test.pvalue)})
    return {"mean (SE)": table, "tests": pd.DataFrame(tests)}, []


def _table17(rows, levels):
    frame = rows.assign(group=np.where(rows["source"] == "human", "human", rows["model"]))
    table = _mean_se(frame, ["group", "team_size"])
    tests = []
    for group, part in frame.groupby("group", sort=True):
        for measure in MEASURES:
            three = part.loc[part["team_size"] == 3, measure].dropna()
            six = part.loc[part["team_size"] == 6, measure].dropna()
            if len(three) > 1 and len(six) > 1:
                test = scipy_stats.ttest_ind(three, six)
                tests.append({"group": group, "measure": measure, "t (3 - 6)": float(test.statistic),
                              "df": len(three) + len(six) - 2, "p": float(test.pvalue)})
    return {"mean (SE)": table, "3 vs 6 agents": pd.DataFrame(tests)}, []


def _table18(rows, levels):
    frame = rows.assign(pool_label=np.where(rows["pool"] == 5, "pool", "no pool"))
    table = pd.concat([_mean_se(frame, ["model", "pool_label"]),
                       _mean_se(frame.assign(model="Overall"), ["model", "pool_label"])], ignore_index=True)
    with_pool = frame.loc[frame["pool_label"] == "pool", "creativity"].dropna()
    without = frame.loc[frame["pool_label"] == "no pool", "creativity"].dropna()
    comparison = group_comparison(frame.assign(g=frame["pool_label"]), "creativity", "g", ("pool", "no pool"))
    overall = comparison.iloc[-1]
    test = pd.DataFrame([{"cohens_d": overall["cohens_d"], "welch_p": overall["welch_p"],
                          "n_pool": len(with_pool), "n_no_pool": len(without)}])
    return {"mean (SE)": table, "pool vs none (creativity)": test}, []


def _table22(rows, levels):
    notes: list[str] = []
    out = []
    for model, part in rows[rows["source"] == "llm"].groupby("model", sort=True):
        row = {"model": model}
        specs = [("trajectory only", RegressionSpec(name=f"{model}: trajectory", outcome="creativity",
                                                    blocks=["trajectory"])),
                 ("+task", RegressionSpec(name=f"{model}: +task", outcome="creativity", blocks=["trajectory", "task"])),
                 ("mixed effects", RegressionSpec(name=f"{model}: mixed", outcome="creativity", blocks=["trajectory"],
                                                  estimator="mixedlm", group="task"))]
        for label, spec in specs:
            try:
                s = fit(spec, part, allow_nonconvergence=True).summary
            except InputError as error:
                notes.append(f"{model} / {label}: {error}")
                continue
            row[label] = 100 * (s["r2"] if s["r2"] is not None else s["conditional_r2"])
            row["n"] = s["n"]
        out.append(row)
    return {"R² (%)": pd.DataFrame(out)}, notes


def _trajectory_task(part, levels, outcome="creativity", name="trajectory + task"):
    spec = RegressionSpec(name=name, outcome=outcome, blocks=["trajectory", "task"], star_levels=levels)
    return fit(spec, part)


def _table23(rows, levels):
    llm = _trajectory_task(rows[rows["source"] == "llm"], levels)
    human = _trajectory_task(rows[rows["source"] == "human"], levels)
    table = compare_results(llm, human, labels=("llm", "human"), terms=list(PAPER_A_FEATURES))
    return {"trajectory + task, standardized": table}, [f"N: LLM {llm.summary['n']:,}, human {human.summary['n']:,}"]


def _swap_4b(part):
    swapped = {f"{f}_4b": f for f in PAPER_A_FEATURES}
    return part.drop(columns=list(PAPER_A_FEATURES)).rename(columns=swapped)


def _robust_columns(rows, levels, variants):
    """Tables 26 and 28: trajectory + task coefficients of each source under two variants."""
    table = pd.DataFrame({"feature": list(PAPER_A_FEATURES)})
    fits = []
    for source in ("llm", "human"):
        part = rows[rows["source"] == source]
        for label, (frame, outcome) in variants(part).items():
            result = _trajectory_task(frame, levels, outcome)
            coefficients = result.table.set_index("term").loc[list(PAPER_A_FEATURES)]
            table[f"{source}_{label}"] = coefficients["coef"].to_numpy()
            table[f"{source}_{label}_stars"] = coefficients["stars"].to_numpy()
            fits.append({"model": f"{source}_{label}", "n": result.summary["n"], "r2": result.summary["r2"]})
    return {"standardized coefficients": table, "fit": pd.DataFrame(fits)}, []


def _table26(rows, levels):
    return _robust_columns(rows, levels, lambda part: {"0.6b": (part, "creativity"),
                                                       "4b": (_swap_4b(part), "creativity")})


def _table28(rows, levels):
    def variants(part):
        additive = part.assign(creativity_additive=part["novelty"] + part["usefulness"])
        return {"product": (part, "creativity"), "sum": (additive, "creativity_additive")}
    return _robust_columns(rows, levels, variants)


def _table24(rows, levels):
    table = 100 * manipulability(rows[rows["source"] == "llm"])
    return {"R² (%)": table.reset_index()}, [f"N = {table.attrs['n']:,} LLM conversations "
                                            f"({table.attrs['n_dropped']} rows missing a feature dropped)"]


def _table25(rows, levels):
    table = manipulability(rows[rows["source"] == "llm"])
    share = interaction_share(table)
    out = share.assign(**{c: 100 * share[c] for c in ("additive", "interaction_increment", "full",
                                                      "share_from_interaction")})
    return {"R² (%) and % from interaction": out.reset_index()}, [f"N = {table.attrs['n']:,} LLM conversations"]


def _table29(rows, levels):
    spec = _with_levels(token_control_spec("creativity"), levels)
    result = fit(spec, rows, allow_nonconvergence=True)
    without = fit(RegressionSpec(name="no tokens", outcome="creativity", blocks=["discussion", "model", "task"],
                                 zscore=False, reference={"discussion": "progressive"}),
                  rows.dropna(subset=["tokens"]))
    table = _coefficients(result, levels, "token control")
    table = table[table["term"].str.startswith("C(discussion)") | (table["term"] == "tokens")]
    return {"coefficients (HC3)": table,
            "fit": pd.DataFrame([{"n": result.summary["n"], "r2": result.summary["r2"],
                                  "delta_r2_tokens": result.summary["r2"] - without.summary["r2"]}])}, []


def _figure1(rows, levels):
    """Panels a-b: LLM vs human means, t and d; c: 95th percentiles; d: top 5% within each group."""
    comparison = []
    for measure in MEASURES:
        row = group_comparison(rows, measure).iloc[-1]
        comparison.append({"measure": measure, **{k: row[k] for k in (
            "llm_n", "llm_mean", "llm_ci_low", "llm_ci_high", "human_n", "human_mean", "human_ci_low",
            "human_ci_high", "student_t", "student_df", "student_p", "cohens_d", "d_ci_low", "d_ci_high")}})
    tails = top_within_groups(rows, "creativity", 0.05)
    tops = {source: part["creativity"].dropna().nlargest(int(part["creativity"].notna().sum() * 0.05)).to_numpy()
            for source, part in rows.groupby("source", sort=True)}
    notes = []
    if all(len(tops.get(s, [])) > 1 for s in ("llm", "human")):
        test = scipy_stats.ttest_ind(tops["llm"], tops["human"])
        notes.append(f"panel d: top 5% LLM vs human t = {test.statistic:.2f}, p = {test.pvalue:.3g}")
    return {"a-b: LLM vs human": pd.DataFrame(comparison), "c-d: upper tail (creativity)": tails}, notes


TABLES: dict[str, TableDef] = {t.key: t for t in (
    TableDef("1", "R² ladder of creativity (LLM and human)", "trajectory", ("ratings", "features"), CONVENTIONAL,
             _table1, published_a.table1),
    TableDef("2", "mean R² of the features by design choices", "trajectory", ("features",), CONVENTIONAL,
             _table2, published_a.table2),
    TableDef("4", "inter-rater reliability ICC(3,k) by task", "all", ("raters",), CONVENTIONAL, _table4,
             published_a.table4),
    TableDef("5", "ratings by task and group, mean (SD)", "ideas_and_baselines", ("ratings",), CONVENTIONAL,
             _table5, published_a.table5),
    TableDef("7", "creativity on discussion structure (models 1-4)", "design", ("ratings",), TENTHS, _table7,
             published_a.table7),
    TableDef("8", "structure effects within each model (from model 4)", "design", ("ratings",), CONVENTIONAL,
             _table8, published_a.table8),
    TableDef("9", "discussion order vs random", "order", ("ratings",), CONVENTIONAL, _table9, published_a.table9),
    TableDef("10", "discussion length, likelihood-ratio test", "rounds", ("ratings",), CONVENTIONAL, _table10,
             published_a.table10),
    TableDef("11", "nominal vs interactive generation", "generation", ("ratings",), CONVENTIONAL, _table11,
             published_a.table11),
    TableDef("12", "mean (SE) by model and structure", "design", ("ratings",), CONVENTIONAL, _table12,
             published_a.table12),
    TableDef("13", "top-10 ideas per task by source", "ideas", ("ratings",), CONVENTIONAL, _table13,
             published_a.table13),
    TableDef("14", "top 5 ideas per task (text as rated)", "ideas", ("ratings",), CONVENTIONAL, _table14,
             published_a.table14),
    TableDef("15", "novelty-usefulness decomposition of model 4", "design", ("ratings",), TENTHS, _table15,
             published_a.table15),
    TableDef("16", "persona (GPT-4.1 matched), one-way ANOVA", "persona_gpt41", ("ratings",), CONVENTIONAL,
             _table16, published_a.table16),
    TableDef("17", "team size, GPT-4.1 matched and human teams", "team_size_gpt41", ("ratings",), CONVENTIONAL,
             _table17, published_a.table17),
    TableDef("18", "replacement pool", "pool", ("ratings",), CONVENTIONAL, _table18, published_a.table18),
    TableDef("20", "LLM creativity ladder, coefficients", "trajectory", ("ratings", "features"), TENTHS, _table20,
             published_a.table20),
    TableDef("21", "human creativity ladder, coefficients", "trajectory", ("ratings", "features"), TENTHS,
             _table21, published_a.table21),
    TableDef("22", "variance explained within each model", "trajectory", ("ratings", "features"), CONVENTIONAL,
             _table22, published_a.table22),
    TableDef("23", "LLM vs human coefficients (trajectory + task)", "trajectory", ("ratings", "features"),
             CONVENTIONAL, _table23, published_a.table23),
    TableDef("24", "manipulability of the features (R² %)", "trajectory", ("features",), CONVENTIONAL, _table24,
             published_a.table24),
    TableDef("25", "interaction share of manipulability", "trajectory", ("features",), CONVENTIONAL, _table25,
             published_a.table25),
    TableDef("26", "0.6B vs 4B embedding features", "trajectory", ("ratings", "features", "features_4b"),
             CONVENTIONAL, _table26, published_a.table26),
    TableDef("28", "creativity as product vs sum", "trajectory", ("ratings", "features"), CONVENTIONAL, _table28,
             published_a.table28),
    TableDef("29", "structure effects with a token-count control", "discussion", ("ratings", "tokens"),
             CONVENTIONAL, _table29, published_a.table29),
    TableDef("fig1", "LLM vs human ideas (panels a-d)", "ideas", ("ratings",), CONVENTIONAL, _figure1,
             published_a.figure1),
)}
