"""Paper A's analysis samples, named once and used by every page, CLI command and report.

Paper A does not fit its models on "every row": each table has its own sample (Methods,
"Trajectory Analysis Scope"; the captions of Tables 1, 5, 7, 9-12, 16-18, 29). A
:class:`Sample` is a name, the tables it serves, a description and a filter function over
a conversation or idea table (``read_metrics``, ``read_ideas`` or a dataset of our own
runs). Rows of paper B's debate methods are never in a paper-A sample.

Matched-condition samples (Tables 16, 17, 18) compare conditions by the authors'
``condition_code`` (``{agents}A_{persona N|S|D}_{phases 3S|DD}_{discussion}_{order}_P{pool}_R{length}[_M{min}]``,
preprocessing/extract_final_ideas_from_task_configs.py of the release); for the metrics file,
whose rows have no such column, the code is rebuilt from the design factors of ``file_id``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from engine.errors import InputError
from engine.names import PAPER_A as PAPER_A_STRUCTURES

TRAJECTORY_STRUCTURES = ("instructed", "open", "iterative")


@dataclass(frozen=True)
class Sample:
    """A named subset of rows: ``select(df)`` returns it (a view, rows in their order)."""

    name: str
    title: str
    tables: str
    description: str
    rule: Callable[[pd.DataFrame], pd.Series]
    needs: tuple[str, ...] = ("source",)

    def select(self, df: pd.DataFrame) -> pd.DataFrame:
        missing = [c for c in self.needs if c not in df.columns]
        if missing:
            raise InputError(f"sample {self.name!r} needs column {missing[0]!r}, which this data "
                             "does not have", field=missing[0])
        mask = self.rule(df)
        return df.loc[np.asarray(mask.fillna(False), dtype=bool)]

    def label(self, df: pd.DataFrame) -> str:
        """``'trajectory sample (Tables 1, 20-24): N = 3,882 (3,574 LLM, 308 human)'``."""
        rows = self.select(df)
        parts = []
        if "source" in rows.columns:
            counts = rows["source"].value_counts()
            parts = [f"{int(counts[s]):,} {s.upper() if s == 'llm' else s}" for s in ("llm", "human")
                     if s in counts]
        detail = f" ({', '.join(parts)})" if len(parts) > 1 else ""
        return f"{self.title} ({self.tables}): N = {len(rows):,}{detail}"


# ------------------------------------------------------------------------------ row rules
def _is(df: pd.DataFrame, column: str, values) -> pd.Series:
    if column not in df.columns:
        return pd.Series(False, index=df.index)
    return df[column].isin(list(values))


def is_human(df: pd.DataFrame) -> pd.Series:
    return df["source"] == "human"


def is_baseline(df: pd.DataFrame) -> pd.Series:
    """Single-agent ideas: ``data_type == baseline`` (ideas file) or one agent."""
    llm = df["source"] == "llm"
    if "data_type" in df.columns:
        return llm & (df["data_type"] == "baseline")
    if "team_size" in df.columns:  # our own runs: one agent in a paper-A structure
        paper_a = _is(df, "discussion", PAPER_A_STRUCTURES) | \
            (df["discussion"].isna() if "discussion" in df.columns else True)
        return llm & (pd.to_numeric(df["team_size"], errors="coerce") == 1) & paper_a
    return pd.Series(False, index=df.index)


def is_llm_team(df: pd.DataFrame) -> pd.Series:
    """LLM teams of paper A's structures (none, open, instructed, iterative, progressive)."""
    return (df["source"] == "llm") & _is(df, "discussion", PAPER_A_STRUCTURES) & ~is_baseline(df)


def _trajectory(df):
    return is_human(df) | ((df["source"] == "llm") & _is(df, "discussion", TRAJECTORY_STRUCTURES)
                           & ~is_baseline(df))


def _design(df):
    """Three agents with "different" personas: the grid every model ran (Tables 7, 8, 12, 15)."""
    return is_llm_team(df) & (pd.to_numeric(df["team_size"], errors="coerce") == 3) & \
        (df["persona"] == "different")


def condition_codes(df: pd.DataFrame) -> pd.Series:
    """The authors' condition code of each LLM row: ``condition_code`` when the data has it,
    else rebuilt from the design factors (metrics file; our runs)."""
    if "condition_code" in df.columns and df["condition_code"].notna().any():
        return df["condition_code"]
    needed = ["team_size", "persona", "discussion", "order", "pool", "turn_limit"]
    if any(c not in df.columns for c in needed):
        return pd.Series(None, index=df.index, dtype=object)
    def whole(column):  # 3 / 3.0 / "3" -> "3"; missing stays missing
        return pd.to_numeric(df[column], errors="coerce").astype("Int64").astype("string")

    persona = df["persona"].map({"none": "N", "same": "S", "different": "D"}).astype("string")
    if "initial_generation" in df.columns:
        phases = df["initial_generation"].map({True: "3S", False: "DD"}).astype("string")
    else:
        phases = pd.Series("3S", index=df.index, dtype="string")
    discussion = df["discussion"].map({"none": "N", "instructed": "AO", "iterative": "IR",
                                       "progressive": "CR", "open": "OP"}).astype("string")
    order = df["order"].map({"fixed": "F", "random": "R", "raise": "H"}).astype("string")
    codes = (whole("team_size") + "A_" + persona + "_" + phases + "_" + discussion + "_" + order
             + "_P" + whole("pool") + "_R" + whole("turn_limit"))
    if "min_rounds" in df.columns:
        minimum = whole("min_rounds")
        codes = codes.where(minimum.isna(), codes + "_M" + minimum)
    return codes.astype(object).where(codes.notna(), None)


def round_condition(df: pd.DataFrame) -> pd.Series:
    """Table 10's discussion length: ``30``, ``60`` or ``60_min30`` (from the condition code)."""
    codes = condition_codes(df).astype("string")
    length = codes.str.extract(r"_R(30|60)(?:_M30)?$")[0]
    return length.where(~codes.str.contains("R60_M30", na=False), "60_min30").astype(object)


def _persona_matched(df):
    """GPT-4.1 teams (3 or 6 agents, no nominal generation) whose condition was also run with
    the other two persona settings: each same-persona code with its none/different twins."""
    base = (df["source"] == "llm") & (df["model"] == "gpt-4.1") & _is(df, "team_size", (3, 6)) & \
        ~_is(df, "generation", ("nominal",)) & is_llm_team(df)
    codes = condition_codes(df).where(base)
    same = set(codes[base & (df["persona"] == "same")].dropna().astype(str))
    wanted = set(same)
    for code in same:
        if "A_S" in code:
            wanted |= {code.replace("A_S", "A_N", 1), code.replace("A_S", "A_D", 1)}
    return base & codes.isin(wanted)


def _team_size_matched(df):
    """GPT-4.1, different personas, conditions run with 6 agents and their 3-agent twins;
    plus human teams of 3 and 6 (Table 17)."""
    base = (df["source"] == "llm") & (df["model"] == "gpt-4.1") & (df["persona"] == "different") & \
        is_llm_team(df)
    codes = condition_codes(df).where(base)
    size = pd.to_numeric(df["team_size"], errors="coerce")
    six = set(codes[base & (size == 6)].dropna().astype(str))
    three = {c.replace("6A", "3A", 1) for c in six}
    llm = base & (((size == 6) & codes.isin(six)) | ((size == 3) & codes.isin(three)))
    return llm | (is_human(df) & size.isin([3, 6]))


def _pool(df):
    """Conditions 31-45 of Table 6 (instructed, 3 agents, different), pool 5 vs none (Table 18)."""
    rule = _design(df) & _is(df, "pool", (0, 5))
    if "condition_number" in df.columns and df["condition_number"].notna().any():
        number = pd.to_numeric(df["condition_number"], errors="coerce")
        return rule & number.between(31, 45)
    # without condition numbers: the same conditions by their code (instructed after a
    # generation phase, 30 turns, no minimum)
    codes = condition_codes(df).astype("string")
    return rule & codes.str.fullmatch(r"3A_D_3S_AO_[FHR]_P[05]_R30").fillna(False).astype(bool)


SAMPLES: dict[str, Sample] = {s.name: s for s in (
    Sample("all", "every row", "no filter", "Every row of the data, whatever made it.",
           lambda df: pd.Series(True, index=df.index), needs=()),
    Sample("ideas", "ideas sample", "Figure 1, Tables 5, 13, 14",
           "All multi-agent LLM-team ideas of paper A's structures and all human-team ideas; "
           "single-agent baselines apart (paper: 4,541 LLM vs 341 human).",
           lambda df: is_human(df) | is_llm_team(df), needs=("source", "discussion")),
    Sample("ideas_and_baselines", "LLM ideas with baselines", "Table 5 (its LLM N)",
           "The ideas sample plus the single-agent baselines (paper: 4,720 LLM ideas).",
           lambda df: is_human(df) | is_llm_team(df) | is_baseline(df), needs=("source", "discussion")),
    Sample("baseline", "single-agent baselines", "Figure 2 (dashed line)",
           "Ideas of one agent alone (paper: 179).", is_baseline, needs=("source",)),
    Sample("trajectory", "trajectory sample", "Tables 1, 20-26, 28",
           "LLM conversations of the turn-by-turn structures (instructed, open, iterative) and "
           "all human teams; rows missing a feature drop out of each fit (paper: 3,574 LLM, 308 human).",
           _trajectory, needs=("source", "discussion")),
    Sample("design", "three agents, different personas", "Tables 7, 8, 12, 15",
           "LLM teams of 3 agents with different personas, every structure, every model "
           "(paper: N = 3,223).", _design, needs=("source", "discussion", "team_size", "persona")),
    Sample("order", "discussion order", "Table 9",
           "The design sample with discussion, order fixed, random or hand-raising (paper: 2,983).",
           lambda df: _design(df) & (df["discussion"] != "none") & _is(df, "order", ("fixed", "random", "raise")),
           needs=("source", "discussion", "team_size", "persona", "order")),
    Sample("rounds", "fixed-round discussions", "Table 10",
           "LLM open, instructed and iterative discussions with a known length condition "
           "(30, 60, 60 with minimum 30; paper: 3,702).",
           lambda df: (df["source"] == "llm") & _is(df, "discussion", TRAJECTORY_STRUCTURES)
           & round_condition(df).notna(), needs=("source", "discussion")),
    Sample("generation", "generation only", "Table 11",
           "The design sample without discussion, interactive or nominal generation (paper: 240).",
           lambda df: _design(df) & (df["discussion"] == "none") & _is(df, "generation", ("interactive", "nominal")),
           needs=("source", "discussion", "team_size", "persona", "generation")),
    Sample("persona_gpt41", "GPT-4.1 persona-matched", "Table 16",
           "GPT-4.1 teams of 3 or 6 in conditions run with same, different and no personas "
           "(paper: 478 / 480 / 480).", _persona_matched,
           needs=("source", "model", "team_size", "persona", "discussion")),
    Sample("team_size_gpt41", "GPT-4.1 team-size-matched + human teams", "Table 17",
           "GPT-4.1 different-persona conditions run with 6 agents and their 3-agent twins, and "
           "human teams of 3 and 6 (paper: 359 + 359 LLM, 224 + 117 human).", _team_size_matched,
           needs=("source", "model", "team_size", "persona", "discussion")),
    Sample("pool", "replacement pool", "Table 18",
           "Instructed conditions 31-45: with a pool of 5 vs without (paper: 420 vs 417).", _pool,
           needs=("source", "discussion", "team_size", "persona", "pool")),
    Sample("discussion", "LLM teams with discussion", "Table 29",
           "LLM team ideas whose structure has a discussion (not none; paper: N = 4,120).",
           lambda df: is_llm_team(df) & (df["discussion"] != "none"), needs=("source", "discussion")),
)}


def sample(name: str) -> Sample:
    """The sample called ``name``, or an InputError listing the known ones."""
    if name not in SAMPLES:
        raise InputError(f"unknown sample {name!r}; known samples: {', '.join(SAMPLES)}", field="sample")
    return SAMPLES[name]


def select(df: pd.DataFrame, name: str, source: str | None = None) -> pd.DataFrame:
    """Rows of sample ``name`` (optionally of one ``source``: llm or human)."""
    rows = sample(name).select(df)
    if source is not None:
        rows = rows[rows["source"] == source]
    return rows


def available(df: pd.DataFrame) -> list[str]:
    """Names of the samples that have rows in ``df`` (those whose columns it has)."""
    names = []
    for item in SAMPLES.values():
        try:
            if len(item.select(df)):
                names.append(item.name)
        except InputError:
            continue
    return names
