"""Our numbers beside the published ones, row by row, for every table of paper A
(``engine.stats.paper_tables``) and the Design levers heatmaps (Table 24).

``beside(result)`` turns a :class:`~engine.stats.paper_tables.PaperTable` into one or more
:class:`Beside` tables. Each keeps the *paper's* rows in the paper's order and with the paper's
labels; for every number the paper prints, three columns follow: ours, published and
ours − published, ours rounded to the decimals the paper prints in that column. Rows we compute
that the paper does not print (task dummies, a model the paper pooled) come after, marked;
rows the paper prints that we could not compute stay, empty on our side. Each table carries
the N our numbers were actually fitted on (rows with every value present, not the sample's
size) and the N the paper prints (``engine.stats.published_a.printed_n``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.stats import published_a
from engine.stats.published_a import FEATURE_LABELS

OURS, PUBLISHED, DIFF = "ours", "published", "ours − published"
NOT_IN_PAPER = "(not in the paper)"
SIG_SUFFIXES = ("_sig", "_stars", "stars")


@dataclass
class Beside:
    """One table: ``keys`` (row labels, the paper's), then per value ``v`` the columns
    ``v · ours``, ``v · published`` and, for numbers, ``v · ours − published``."""

    title: str
    table: pd.DataFrame
    keys: list[str]
    values: list[str]
    decimals: dict[str, int]
    n_ours: str
    n_published: str | None
    extra_rows: int = 0
    missing_rows: int = 0
    notes: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)

    def formatted(self) -> pd.DataFrame:
        """The table as text: every number with the decimals the paper prints, "–" for none;
        features and column headings named as the paper prints them."""
        out = self.table.copy()
        for key in self.keys:
            out[key] = out[key].map(lambda v: _paper_label(v, self.labels))
        for value in self.values:
            digits = self.decimals.get(value)
            for column in (f"{value} · {OURS}", f"{value} · {PUBLISHED}", f"{value} · {DIFF}"):
                if column not in out:
                    continue
                if digits is None:
                    out[column] = out[column].map(lambda v: "" if v is None or v != v else str(v))
                else:
                    sign = "+" if column.endswith(DIFF) else ""
                    out[column] = out[column].map(lambda v, d=digits, s=sign: _number(v, d, s))
        if self.labels:
            out.columns = [_relabel(c, self.labels) for c in out.columns]
        return out

    @property
    def caption(self) -> str:
        """N ours and published, and what the rows are."""
        parts = [f"N fitted here: {self.n_ours}", f"N in the paper: {self.n_published or 'not printed'}"]
        if self.extra_rows:
            parts.append(f"{self.extra_rows} row(s) of ours the paper does not print, at the end")
        if self.missing_rows:
            parts.append(f"{self.missing_rows} published row(s) not computed here")
        return "; ".join(parts)


def _paper_label(value, labels: dict[str, str] | None = None) -> str:
    """A feature or heading as the paper prints it (``global_coherence`` -> ``Global Coherence``)."""
    text = str(value)
    base, marker = (text[: -len(NOT_IN_PAPER) - 1], " " + NOT_IN_PAPER) if text.endswith(NOT_IN_PAPER) else (text, "")
    return (labels or {}).get(base) or FEATURE_LABELS.get(base, base) + marker


def _relabel(column: str, labels: dict[str, str]) -> str:
    value, sep, side = str(column).partition(" · ")
    return f"{labels.get(value, value)}{sep}{side}"


def _number(value, digits: int, sign: str = "") -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "–"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not np.isfinite(number):
        return "–"
    return f"{number:{sign},.{digits}f}"


def decimals_of(values) -> int | None:
    """How many decimals a printed column uses (the most any of its numbers has); None for text."""
    numbers = [v for v in values if v is not None and not (isinstance(v, float) and np.isnan(v))]
    if not numbers:
        return 0
    if not all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in numbers):
        return None
    most = 0
    for v in numbers:
        text = f"{float(v):.6f}".rstrip("0")
        most = max(most, len(text.split(".")[1]) if "." in text else 0)
    return min(most, 4)


def pair(title: str, ours: pd.DataFrame, published: pd.DataFrame, keys: list[str], values: list[str], *,
         n_ours: str, n_published: str | None, notes=()) -> Beside:
    """Merge on ``keys``: the paper's rows in its order, then ours it lacks. Ours are rounded
    to each column's printed decimals before the difference is taken."""
    published = published.reset_index(drop=True)
    ours = ours.reset_index(drop=True)
    for frame in (ours, published):
        for key in keys:
            frame[key] = frame[key].map(_key_text)
    decimals = {v: decimals_of(published[v]) if v in published else decimals_of(ours.get(v, [])) for v in values}
    merged = published[keys].copy()
    extra = ours[~ours.set_index(keys).index.isin(published.set_index(keys).index)][keys]
    rows = pd.concat([merged, extra], ignore_index=True)
    ours_by_key = ours.drop_duplicates(keys).set_index(keys)
    published_by_key = published.drop_duplicates(keys).set_index(keys)
    index = pd.MultiIndex.from_frame(rows) if len(keys) > 1 else pd.Index(rows[keys[0]])
    table = rows.copy()
    for value in values:
        mine = ours_by_key[value].reindex(index) if value in ours_by_key else pd.Series(np.nan, index=index)
        theirs = published_by_key[value].reindex(index) if value in published_by_key else \
            pd.Series(np.nan, index=index)
        digits = decimals[value]
        if digits is None:  # stars and other text
            table[f"{value} · {OURS}"] = mine.to_numpy()
            table[f"{value} · {PUBLISHED}"] = theirs.to_numpy()
            continue
        mine = pd.to_numeric(mine, errors="coerce").round(digits)
        theirs = pd.to_numeric(theirs, errors="coerce")
        table[f"{value} · {OURS}"] = mine.to_numpy()
        table[f"{value} · {PUBLISHED}"] = theirs.to_numpy()
        table[f"{value} · {DIFF}"] = (mine - theirs).round(digits).to_numpy()
    if len(extra):
        first = keys[0]
        table.loc[len(merged):, first] = table.loc[len(merged):, first].astype(str) + f" {NOT_IN_PAPER}"
    missing = sum(1 for key in published_by_key.index if key not in ours_by_key.index)
    return Beside(title=title, table=table, keys=list(keys), values=list(values), decimals=decimals,
                  n_ours=n_ours, n_published=n_published, extra_rows=len(extra), missing_rows=missing,
                  notes=list(notes))


def _key_text(value) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


# ------------------------------------------------------------------------------ terms
_LEVEL = re.compile(r"^C\((?P<factor>[^,)]+)(?:,.*)?\)\[(?:T\.)?(?P<level>.*)\]$")


def level_term(term) -> str:
    """A model term as the paper prints it: ``C(discussion)[T.open]`` -> ``open``, an
    interaction ``a:b`` -> ``open x gpt-4.1``; task dummies keep their factor (``task:
    plastic_waste``) as the paper does not print them."""
    text = str(term)
    parts = re.split(r":(?![^\[]*\])", text)
    if len(parts) > 1:
        return " x ".join(level_term(p) for p in parts)
    match = _LEVEL.match(text)
    if not match:
        return text
    if match["factor"].strip() == "task":
        return f"task: {match['level']}"
    return match["level"]


def _fitted(result, part: str = "fit") -> str:
    """The N of a table's fits: one number, or one per source / model when they differ."""
    fits = result.parts.get(part)
    if fits is not None and "n" in fits and len(fits):
        values = pd.to_numeric(fits["n"], errors="coerce").dropna().astype(int)
        if values.nunique() == 1:
            return f"{int(values.iloc[0]):,}"
        labels = fits["model"] if "model" in fits else fits.index
        return "; ".join(f"{label} {int(n):,}" for label, n in zip(labels, fits["n"]) if n == n)
    for note in result.notes:
        found = re.search(r"N = ([\d,]+)", note)
        if found:
            return found.group(1)
    return f"{result.n:,} rows of the sample (no fit)"


def _sources_fitted(result) -> str:
    parts = []
    for source, label in (("llm", "LLM"), ("human", "human")):
        fits = result.parts.get(f"{source} fit")
        if fits is not None and len(fits):
            values = pd.to_numeric(fits["n"], errors="coerce").dropna().astype(int).unique()
            parts.append(f"{label} {', '.join(f'{v:,}' for v in values)}")
    return "; ".join(parts) or _fitted(result)


def _per_row(result, part: str, column: str = "N") -> str:
    table = result.parts[part]
    if column in table:
        return f"per row (N column; {int(pd.to_numeric(table[column], errors='coerce').sum()):,} in all)"
    return f"{result.n:,}"


# ------------------------------------------------------------------------------ tables
def _by_model_order(long: pd.DataFrame, prefix: str = "") -> pd.DataFrame:
    """Our long coefficient table with its models numbered 1, 2... in the order fitted."""
    order = {label: i + 1 for i, label in enumerate(dict.fromkeys(long["model"]))}
    return long.assign(model=long["model"].map(lambda m: f"{prefix}{order[m]}"))


def _long_published(published: pd.DataFrame, key: str, columns: list[str], name: str) -> pd.DataFrame:
    return published.melt(id_vars=[key], value_vars=columns, var_name=name, value_name="value")


def _t1(result):
    ours = result.parts["R² (%)"].copy()
    names = dict(zip(("trajectory", "+task", "+model", "+discussion", "mixed effects"),
                     published_a.table1()["specification"]))
    ours["specification"] = ours["specification"].map(lambda s: names.get(s, s))
    return [("R² (%) of each specification", ours, result.published, ["specification"], ["LLM", "Human"],
             _sources_fitted(result))]


def _same_shape(part: str, keys: list[str], n=None):
    def build(result):
        published = result.published
        values = [c for c in published.columns if c not in keys]
        return [(part, result.parts[part], published, keys, values, n(result) if n else _fitted(result))]
    return build


def _t7(result):
    long = _by_model_order(result.parts["coefficients (HC3)"])
    long = long.assign(term=long["term"].map(level_term))
    published = result.published.assign(model=result.published["model"].astype(str))
    return [("coefficients (HC3), models 1–4", long, published, ["term", "model"], ["coef", "se", "stars"],
             _fitted(result))]


def _t8(result):
    ours = result.parts["effect vs none, within model"].rename(
        columns={"factor_level": "discussion", "by_level": "model", "effect": "effect", "stars": "stars"})
    published = result.published
    models = [c for c in published.columns if c != "discussion" and not c.endswith("_sig")]
    effects = _long_published(published, "discussion", models, "model")
    stars = published.melt(id_vars=["discussion"], value_vars=[f"{m}_sig" for m in models], var_name="model",
                           value_name="stars")
    stars["model"] = stars["model"].str.removesuffix("_sig")
    long = effects.rename(columns={"value": "effect"}).merge(stars, on=["discussion", "model"])
    return [("effect of each structure vs none, within model", ours, long, ["discussion", "model"],
             ["effect", "stars"], _model_n(result))]


def _model_n(result) -> str:
    """The sample's rows, for tables computed on every row of it (no rows dropped by a fit)."""
    return f"{result.n:,} (every row of the sample)"


def _wide_terms(long: pd.DataFrame, names: dict[str, str], samples: dict[str, str], extra=()) -> pd.DataFrame:
    """Our coefficients of several samples (``model`` column) as the paper's wide table."""
    rows = {}
    for _, row in long.iterrows():
        term = names.get(level_term(row["term"]), level_term(row["term"]))
        prefix = samples.get(row["model"], row["model"])
        entry = rows.setdefault(term, {"term": term})
        entry[f"{prefix}_coef"], entry[f"{prefix}_se"], entry[f"{prefix}_p"] = row["coef"], row["se"], row["p"]
    table = pd.DataFrame(list(rows.values()))
    return pd.concat([table, pd.DataFrame(list(extra))], ignore_index=True) if extra else table


def _t9(result):
    long = result.parts["order vs random"]
    samples = {"all discussion": "all", "instructed only": "instructed"}
    r2 = {"term": "R²", **{f"{samples[m]}_coef": part["r2"].iloc[0] for m, part in long.groupby("model")}}
    ours = _wide_terms(long, {"fixed": "fixed vs random", "raise": "raise vs random"}, samples, [r2])
    values = [c for c in result.published.columns if c != "term"]
    n = "; ".join(f"{m} {int(part['n'].iloc[0]):,}" for m, part in long.groupby("model", sort=False))
    return [("order vs random", ours, result.published, ["term"], values, n)]


def _t10(result):
    coefficients = result.parts["length vs 30 rounds"]
    tests = result.parts["omnibus tests"].set_index("test")["statistic"]
    lr_p = result.parts["omnibus tests"].set_index("test").loc["likelihood ratio", "p"]
    ours = pd.DataFrame([{"term": f"{level_term(t)} vs 30", "coef": c, "se": s, "p": p}
                         for t, c, s, p in coefficients[["term", "coef", "se", "p"]].itertuples(index=False)]
                        + [{"term": "omnibus test (LR) p", "coef": lr_p},
                           {"term": "R²", "coef": tests.get("R² with length")},
                           {"term": "ΔR² (vs no rounds)", "coef": tests.get("ΔR² (vs no length)")}])
    return [("length vs 30 rounds", ours, result.published, ["term"], ["coef", "se", "p"], _fitted(result))]


def _t11(result):
    part = result.parts["nominal vs interactive"]
    ours = pd.DataFrame([{"term": "nominal vs interactive", "coef": part["coef"].iloc[0], "se": part["se"].iloc[0],
                          "p": part["p"].iloc[0]}, {"term": "R²", "coef": part["r2"].iloc[0]}])
    return [("nominal vs interactive", ours, result.published, ["term"], ["coef", "se", "p"],
             f"{int(part['n'].iloc[0]):,}")]


def _t15(result):
    long = result.parts["coefficients (HC3)"]
    rows = {}
    for _, row in long.iterrows():
        term = level_term(row["term"])
        entry = rows.setdefault(term, {"term": term})
        entry[row["model"]], entry[f"{row['model']}_sig"] = row["coef"], row["stars"]
    for measure, part in long.groupby("model"):
        rows.setdefault("R²", {"term": "R²"})[measure] = part["r2"].iloc[0]
        rows.setdefault("N", {"term": "N"})[measure] = part["n"].iloc[0]
    ours = pd.DataFrame(list(rows.values()))
    values = [c for c in result.published.columns if c != "term"]
    n = "; ".join(f"{m} {int(part['n'].iloc[0]):,}" for m, part in long.groupby("model", sort=False))
    return [("model 4 on each outcome", ours, result.published, ["term"], values, n)]


def _ladder_coefficients(source: str, label: str):
    def build(result):
        long = _by_model_order(result.parts[f"{source} coefficients"], "model ")
        wide = long.assign(term=long["term"].map(level_term)).pivot_table(index="term", columns="model",
                                                                          values="coef", aggfunc="first")
        ours = wide.reset_index()
        published = result.published
        values = [c for c in published.columns if c != "term"]
        fits = result.parts.get(f"{source} fit")
        n = ", ".join(sorted({f"{int(v):,}" for v in fits["n"]})) if fits is not None else _model_n(result)
        return [(f"{label} coefficients by model", ours, published, ["term"], values, n)]
    return build


def _t18(result):
    ours = result.parts["mean (SE)"].rename(columns={"pool_label": "pool"})
    values = [c for c in result.published.columns if c not in ("model", "pool")]
    return [("mean (SE)", ours, result.published, ["model", "pool"], values, _per_row(result, "mean (SE)"))]


def _t17(result):
    ours = result.parts["mean (SE)"]
    values = [c for c in result.published.columns if c not in ("group", "team_size")]
    return [("mean (SE)", ours, result.published, ["group", "team_size"], values, _per_row(result, "mean (SE)"))]


def _t22(result):
    ours = result.parts["R² (%)"]
    n = "; ".join(f"{m} {int(v):,}" for m, v in zip(ours["model"], ours["n"])) if "n" in ours else _model_n(result)
    values = [c for c in result.published.columns if c != "model"]
    return [("R² (%) within each model", ours, result.published, ["model"], values, n)]


def _t23(result):
    ours = result.parts["trajectory + task, standardized"].rename(columns={
        "term": "feature", "llm_coef": "llm_beta", "llm_stars": "llm_sig", "human_coef": "human_beta",
        "human_stars": "human_sig"})
    values = [c for c in result.published.columns if c != "feature"]
    n = next((note.split("N: ", 1)[1] for note in result.notes if note.startswith("N: ")), _model_n(result))
    return [("standardized coefficients, trajectory + task", ours, result.published, ["feature"], values,
             n.replace(",", ",").replace("LLM", "LLM").replace(", human", "; human"))]


def _t24(result):
    ours = result.parts["R² (%)"]
    ours = ours.rename(columns={ours.columns[0]: "feature"})
    published = result.published.rename_axis("feature").reset_index()
    return [("R² (%) of each feature", ours, published, ["feature"],
             [c for c in published.columns if c != "feature"], _fitted(result))]


def _t25(result):
    ours = result.parts["R² (%) and % from interaction"]
    ours = ours.rename(columns={ours.columns[0]: "feature"})
    return [("additive vs interaction", ours, result.published, ["feature"],
             [c for c in result.published.columns if c != "feature"], _fitted(result))]


def _robust(result):
    ours = result.parts["standardized coefficients"]
    fits = result.parts["fit"]
    published = result.published
    values = [c for c in published.columns if c != "feature"]
    if (published["feature"] == "R² (%)").any():
        r2 = {"feature": "R² (%)", **{m: 100 * r for m, r in zip(fits["model"], fits["r2"])}}
        ours = pd.concat([ours, pd.DataFrame([r2])], ignore_index=True)
    n = "; ".join(f"{m} {int(v):,}" for m, v in zip(fits["model"], fits["n"]))
    return [("standardized coefficients", ours, published, ["feature"], values, n)]


def _t29(result):
    long = result.parts["coefficients (HC3)"]
    ours = pd.DataFrame([{"term": (f"{level_term(t)} (vs progressive)" if t != "tokens" else "tokens"),
                          "coef": c, "stars": s} for t, c, s in long[["term", "coef", "stars"]].itertuples(index=False)])
    return [("structure effects with a token-count control", ours, result.published, ["term"], ["coef", "stars"],
             _fitted(result))]


def _fig1(result):
    ours = result.parts["a-b: LLM vs human"].copy()
    ours["t (human - llm)"] = -ours["student_t"]
    ours["df"] = ours["student_df"]
    values = [c for c in result.published.columns if c != "measure"]
    n = f"LLM {int(ours['llm_n'].iloc[0]):,}; human {int(ours['human_n'].iloc[0]):,}"
    return [("panels a-b: LLM vs human", ours, result.published, ["measure"], values, n)]


def _t14(result):
    ours = result.parts["top 5 per task"]
    return [("top 5 ideas per task", ours, result.published, ["task", "rank"], ["creativity"],
             _model_n(result))]


def _t13(result):
    published = result.published
    return [("top 10 per task", result.parts["top 10 per task"], published, ["task"],
             [c for c in published.columns if c != "task"], _model_n(result))]


PAIRINGS = {
    "1": _t1, "2": _same_shape("mean R² (%)", ["model"]), "4": _same_shape("ICC(3,k)", ["task", "dimension"],
                                                                       lambda r: _per_row(r, "ICC(3,k)")),
    "5": _same_shape("mean (SD)", ["task", "group"], lambda r: _per_row(r, "mean (SD)")),
    "7": _t7, "8": _t8, "9": _t9, "10": _t10, "11": _t11,
    "12": _same_shape("mean (SE)", ["model", "discussion"], lambda r: _per_row(r, "mean (SE)")),
    "13": _t13, "14": _t14, "15": _t15,
    "16": _same_shape("mean (SE)", ["persona"], lambda r: _per_row(r, "mean (SE)")),
    "17": _t17, "18": _t18, "20": _ladder_coefficients("llm", "LLM"),
    "21": _ladder_coefficients("human", "human"), "22": _t22, "23": _t23, "24": _t24, "25": _t25,
    "26": _robust, "28": _robust, "29": _t29, "fig1": _fig1,
}


# what each table of paper A is about (its outcome), for the stamp on its exports
OUTCOMES = {"1": "R² (%) of creativity", "2": "mean R² (%) of the nine features on the design factors",
            "4": "inter-rater reliability ICC(3,k) of novelty and usefulness",
            "5": "creativity, novelty and usefulness (0–1)", "12": "creativity, novelty and usefulness (0–1)",
            "13": "top-10 ideas by creativity, novelty, usefulness", "14": "creativity (0–1)",
            "15": "creativity, novelty and usefulness (model 4 coefficients)",
            "16": "creativity, novelty and usefulness (0–1)", "17": "creativity, novelty and usefulness (0–1)",
            "18": "creativity (0–1)", "22": "R² (%) of creativity within each model",
            "24": "R² (%) of each trajectory feature on the design factors",
            "25": "R² (%) of each trajectory feature, additive vs interaction",
            "fig1": "creativity, novelty and usefulness (0–1)"}


def outcome_of(key: str) -> str:
    """The outcome of paper A's table ``key`` (creativity unless it says otherwise)."""
    return OUTCOMES.get(str(key), "creativity")


def beside(result) -> list[Beside]:
    """Every table of ``result`` (a ``PaperTable``) beside the paper's, row by row."""
    if result.published is None or result.key not in PAIRINGS:
        return []
    out = []
    for title, ours, published, keys, values, n_ours in PAIRINGS[result.key](result):
        table = pair(title, ours, published.copy(), keys, values, n_ours=str(n_ours),
                     n_published=published_a.printed_n(result.key))
        if result.key in ("2", "24"):
            table.labels = dict(published_a.TABLE24_HEADINGS)
        out.append(table)
    return out


def manipulability_beside(ours: pd.DataFrame) -> Beside:
    """The Design levers table (ours: features × Table 24's columns, in percent, ``attrs['n']``)
    beside the published Table 24, in the paper's row order."""
    published = published_a.table24().rename_axis("feature").reset_index()
    mine = ours.rename_axis("feature").reset_index()
    out = pair("R² (%) of each feature", mine, published, ["feature"],
               [c for c in published.columns if c != "feature"], n_ours=f"{int(ours.attrs.get('n', 0)):,}",
               n_published=published_a.printed_n("24"))
    out.labels = dict(published_a.TABLE24_HEADINGS)
    return out


def values_of(table: Beside, which: str) -> pd.DataFrame:
    """``features × columns`` of one side (``OURS``, ``PUBLISHED`` or ``DIFF``), in the table's
    row order, rows labelled by the first key (for the heatmaps)."""
    key = table.keys[0]
    frame = table.table.set_index(key)
    columns = {f"{v} · {which}": v for v in table.values if f"{v} · {which}" in frame}
    return frame[list(columns)].rename(columns=columns).astype(float)
