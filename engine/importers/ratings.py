"""Join the authors' idea ratings (``ideas_with_ratings_clean.csv``) onto the metrics table.

Paper A's release describes the file in ``data/DATA_DICTIONARY.md`` (pitehu/
llm_multiagent_creativity): one row per final idea, keyed by ``file_id`` and
``question_id``; ``avg_novelty_rating`` and ``avg_usefulness_rating`` are mean ratings
min-max scaled within task, ``avg_creativity_rating`` their product (the paper's primary
outcome, Methods "Creativity evaluation"); ``N2..N9`` / ``U2..U9`` are the anonymised
raters' novelty / usefulness scores. The file itself is not redistributed here.

``join_ratings`` left-joins it onto ``read_metrics`` output: every metrics row stays, and
gains ``novelty``, ``usefulness``, ``creativity`` (from the ``avg_*`` columns), the
per-rater columns present, and ``final_idea`` when the file has it. Counts of rows
that found no partner are in ``df.attrs["ratings_join"]``. It is metrics-centric: ideas
without a conversation (none, progressive, baselines, human ideas without transcript) are
not in its output.

``read_ideas`` reads the file on its own terms (every row, the paper's names) and
``ideas_with_metrics`` fills the nine features onto every idea that has a conversation:
the idea-level tables of paper A (Figure 1, Tables 4, 5, 7-18, 29) start from there.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from engine.errors import InputError
from engine.storage.records import is_blank, number_from_text, read_csv_records, rows_explained

KEY_COLUMNS = ("file_id", "question_id")
AVERAGE_COLUMNS = {"avg_novelty_rating": "novelty", "avg_usefulness_rating": "usefulness",
                   "avg_creativity_rating": "creativity"}
RATER_COLUMN = re.compile(r"^[NU]\d+$")
TEXT_COLUMNS = ("final_idea",)


@rows_explained
def read_ratings(path: str | Path) -> pd.DataFrame:
    """The ratings file as a table keyed by ``file_id, question_id``, numbers checked.

    Columns: the keys, ``novelty, usefulness, creativity``, the per-rater ``N*``/``U*``
    columns present (sorted by rater number) and ``final_idea`` if present.
    """
    path = Path(path)
    header, records = read_csv_records(path)
    missing = [c for c in (*KEY_COLUMNS, *AVERAGE_COLUMNS) if c not in header]
    if missing:
        raise InputError(f"missing column(s) {missing}; a ratings file needs "
                         f"{[*KEY_COLUMNS, *AVERAGE_COLUMNS]}", path=str(path), field=missing[0])
    raters = sorted((c for c in header if RATER_COLUMN.match(c)), key=lambda c: (c[0], int(c[1:])))
    texts = [c for c in TEXT_COLUMNS if c in header]
    rows = []
    first_row: dict[tuple[str, str], int] = {}
    for record in records:
        values, row = record.values, record.row
        key = []
        for name in KEY_COLUMNS:
            value = values[name].strip()
            if not value:
                raise InputError("empty", path=str(path), row=row, field=name)
            key.append(value)
        key = tuple(key)
        if key in first_row:
            raise InputError(f"{key[0]!r} / {key[1]!r} is rated twice (also on row "
                             f"{first_row[key]})", path=str(path), row=row, field="file_id")
        first_row[key] = row
        out = dict(zip(KEY_COLUMNS, key))
        for name in (*AVERAGE_COLUMNS, *raters):
            out[AVERAGE_COLUMNS.get(name, name)] = _number(values[name], path, row, name)
        for name in texts:
            out[name] = None if is_blank(values[name]) else values[name]
        rows.append(out)
    columns = [*KEY_COLUMNS, *AVERAGE_COLUMNS.values(), *raters, *texts]
    return pd.DataFrame(rows, columns=columns)


# What each number of the file may be (DATA_DICTIONARY.md and paper A's Methods): the five
# judges score 0-10 (10-point scale, 0 = irrelevant), the avg_* ratings are min-max scaled
# within task (0-1) and creativity is their product; counts are whole numbers.
RANGES = {"avg_novelty_rating": (0.0, 1.0), "avg_usefulness_rating": (0.0, 1.0),
          "avg_creativity_rating": (0.0, 1.0), "rater": (0.0, 10.0),
          "number_of_agents": (1, 100), "llm_count": (1, 100), "run_num": (0, 1_000_000),
          "replacement_pool_size": (0, 1_000), "condition_number": (0, 1_000_000),
          "grand_total_tokens": (0, 1e12), "total_prompt_tokens": (0, 1e12),
          "total_completion_tokens": (0, 1e12)}
WHOLE = ("number_of_agents", "llm_count", "run_num", "replacement_pool_size", "condition_number")


def _number(text: str, path: Path, row: int, field: str) -> float:
    """A cell as a number within its ``RANGES`` (NaN when blank); out of range or not whole
    where a count is expected -> InputError naming the row and the column."""
    if is_blank(text) or text.strip().lower() in ("nan", "na", "n/a"):
        return np.nan
    shown = text if len(text) <= 40 else text[:37] + "..."
    value = number_from_text(text)  # never "1_000" or "0_5", which Python's float() takes
    if value is None:
        raise InputError(f"expected a number, got {shown!r}", path=str(path), row=row, field=field)
    if not np.isfinite(value):
        raise InputError(f"expected a finite number, got {shown!r}", path=str(path), row=row,
                         field=field)
    low, high = RANGES["rater" if RATER_COLUMN.match(field) else field] \
        if (field in RANGES or RATER_COLUMN.match(field)) else (-np.inf, np.inf)
    if field in WHOLE and not value.is_integer():
        raise InputError(f"expected a whole number, got {shown!r}", path=str(path), row=row, field=field)
    if not low <= value <= high:
        raise InputError(f"{shown} is out of range: expected {low:g} to {high:g}", path=str(path),
                         row=row, field=field)
    return value


def join_ratings(metrics: pd.DataFrame, ratings_path: str | Path) -> pd.DataFrame:
    """Left-join the ratings onto a ``read_metrics`` table on ``file_id`` + ``question_id``.

    ``df.attrs["ratings_join"]`` = ``{"metrics_rows", "ratings_rows", "matched",
    "metrics_without_rating", "ratings_without_metrics", "ratings_path"}``.
    """
    missing = [c for c in KEY_COLUMNS if c not in metrics.columns]
    if missing:
        raise InputError(f"the metrics table has no column {missing[0]!r}; pass the output of "
                         "read_metrics", field=missing[0])
    ratings = read_ratings(ratings_path)
    clashes = [c for c in ratings.columns if c not in KEY_COLUMNS and c in metrics.columns]
    if clashes:
        raise InputError(f"the metrics table already has column(s) {clashes}; join once",
                         field=clashes[0])
    left = metrics.astype({name: str for name in KEY_COLUMNS})
    joined = left.merge(ratings, how="left", on=list(KEY_COLUMNS), indicator=True,
                        validate="many_to_one")
    matched = int((joined["_merge"] == "both").sum())
    joined = joined.drop(columns="_merge")
    metric_keys = set(zip(left["file_id"], left["question_id"]))
    orphans = sum(key not in metric_keys for key in zip(ratings["file_id"], ratings["question_id"]))
    joined.attrs = dict(metrics.attrs)
    joined.attrs["ratings_join"] = {
        "metrics_rows": len(metrics), "ratings_rows": len(ratings), "matched": matched,
        "metrics_without_rating": len(metrics) - matched,
        "ratings_without_metrics": orphans,
        "ratings_path": str(ratings_path),
    }
    return joined.reset_index(drop=True)


# ---------------------------------------------------------------------------------- ideas
# The paper's names for the historical codes of the release (DATA_DICTIONARY.md; Methods).
DISCUSSION_NAMES = {"creative": "progressive", "all_at_once": "instructed",
                    "iterative_refinement": "iterative", "open": "open", "none": "none",
                    "progressive": "progressive", "instructed": "instructed", "iterative": "iterative"}
PERSONA_NAMES = {"no": "none", "none": "none", "same": "same", "different": "different"}
ORDER_NAMES = {"fix": "fixed", "fixed": "fixed", "random": "random", "raise": "raise",
               "hand_raising": "raise"}
GENERATION_NAMES = {"interactive": "interactive", "dependent": "interactive",
                    "nominal": "nominal", "independent": "nominal", "direct": "direct"}
DATA_TYPES = ("human", "baseline", "experiment")
NOT_APPLICABLE = ("", "nan", "na", "n/a", "none", "not_applicable", "-")
HUMAN_SOURCE = "human_data"

# release column -> our column, numbers checked row by row
IDEA_NUMBERS = {"avg_novelty_rating": "novelty", "avg_usefulness_rating": "usefulness",
                "avg_creativity_rating": "creativity", "grand_total_tokens": "tokens",
                "total_prompt_tokens": "prompt_tokens",
                "total_completion_tokens": "completion_tokens",
                "replacement_pool_size": "pool", "run_num": "replicate",
                "condition_number": "condition_number"}
IDEA_COLUMNS = ("conversation_id", "file_id", "task", "question_id", "source", "data_type", "model",
                "discussion", "team_size", "persona", "order", "generation", "pool", "replicate",
                "condition_code", "condition_number", "novelty", "usefulness", "creativity",
                "tokens", "prompt_tokens", "completion_tokens", "final_idea")
# release columns turned into the columns above (the rest are kept under their own names)
CONSUMED = {"file_id", "question_id", "source", "data_type", "models", "discussion",
            "discussion_method", "number_of_agents", "persona", "discussion_order_plan",
            "discussion_order_method", "idea_generation_plan", "generation_method",
            "condition_code", "final_idea", *IDEA_NUMBERS}


@rows_explained
def read_ideas(path: str | Path) -> pd.DataFrame:
    """Every row of an ``ideas_with_ratings_clean.csv``-shaped file, in the paper's vocabulary.

    One row per final idea (paper A: 4,541 multi-agent LLM ideas, 341 human-team ideas and
    179 single-agent baselines). Columns: ``conversation_id`` (``file_id::question_id``, the
    key of the metrics table), ``file_id``, ``task`` (= ``question_id``), ``source``
    (``human`` where ``source == "human_data"`` or ``data_type == "human"``, else ``llm``),
    ``data_type`` (``human | baseline | experiment``; when blank, inferred: human, one
    agent = baseline, else experiment), ``model`` (a comma-separated mixture = ``Mixed``,
    ``human`` for people), ``discussion`` (``creative`` -> ``progressive``, ``all_at_once`` ->
    ``instructed``, ``iterative_refinement`` -> ``iterative``; blank on an LLM row = ``none``;
    missing for people), ``team_size`` (``number_of_agents``), ``persona`` (``no`` ->
    ``none``), ``order`` (fixed/random/raise), ``generation`` (interactive/nominal),
    ``pool``, ``replicate``, ``condition_code``, ``condition_number``, ``novelty,
    usefulness, creativity`` (the ``avg_*`` columns), ``tokens`` (``grand_total_tokens``),
    ``prompt_tokens``, ``completion_tokens``, ``final_idea``, the ``N*``/``U*`` rater
    columns, then every other column of the file unchanged. No row is dropped; what was
    inferred or filled is counted in ``attrs["ideas"]``.
    """
    from engine.importers.kinds import missing_for, table_kind

    path = Path(path)
    header, records = read_csv_records(path)
    if table_kind(header, path=str(path)) != "ideas":
        raise InputError(f"not an ideas file: missing column(s) {missing_for('ideas', header)}",
                         path=str(path), field=missing_for("ideas", header)[0])
    raters = sorted((c for c in header if RATER_COLUMN.match(c)), key=lambda c: (c[0], int(c[1:])))
    numbers = [c for c in IDEA_NUMBERS if c in header]
    passthrough = [c for c in header if c not in CONSUMED and c not in raters]
    counts = {"rows": 0, "data_type_inferred": 0, "discussion_filled_none": 0, "mixed_models": 0,
              "unmapped": {}}
    rows = []
    first_row: dict[tuple[str, str], int] = {}
    for record in records:
        values, row = record.values, record.row
        get = lambda name: values.get(name, "")  # noqa: E731
        file_id, task = get("file_id").strip(), get("question_id").strip()
        for name, value in (("file_id", file_id), ("question_id", task)):
            if not value:
                raise InputError("empty", path=str(path), row=row, field=name)
        if (file_id, task) in first_row:  # one row per final idea (DATA_DICTIONARY.md)
            raise InputError(f"idea {file_id!r} / {task!r} appears twice (also on row "
                             f"{first_row[file_id, task]})", path=str(path), row=row, field="file_id")
        first_row[file_id, task] = row
        out: dict = {"conversation_id": f"{file_id}::{task}", "file_id": file_id, "task": task,
                     "question_id": task}
        for name in numbers:
            out[IDEA_NUMBERS[name]] = _number(values[name], path, row, name)
        for name in raters:
            out[name] = _number(values[name], path, row, name)
        team_size = _optional_int(get("number_of_agents"), path, row, "number_of_agents")
        if team_size is None and "llm_count" in values:
            team_size = _optional_int(values["llm_count"], path, row, "llm_count")
        out["team_size"] = team_size
        human = get("source").strip() == HUMAN_SOURCE or get("data_type").strip().lower() == "human"
        out["source"] = "human" if human else "llm"
        data_type = get("data_type").strip().lower()
        if data_type not in DATA_TYPES:
            if data_type:
                raise InputError(f"data_type must be one of {list(DATA_TYPES)}, got {data_type!r}",
                                 path=str(path), row=row, field="data_type")
            data_type = "human" if human else "baseline" if team_size == 1 else "experiment"
            counts["data_type_inferred"] += 1
        if human and data_type != "human":
            raise InputError(f"a human row (source {get('source')!r}) has data_type {data_type!r}",
                             path=str(path), row=row, field="data_type")
        out["data_type"] = data_type
        out["model"] = "human" if human else _model(get("models"), counts)
        out["discussion"] = None if human else _discussion(values, counts, path, row)
        out["persona"] = None if human else _mapped(get("persona"), PERSONA_NAMES, path, row, "persona", counts)
        out["order"] = _mapped(get("discussion_order_plan") or get("discussion_order_method"),
                               ORDER_NAMES, path, row,
                               "discussion_order_plan" if get("discussion_order_plan") else "discussion_order_method",
                               counts)
        out["generation"] = _mapped(get("idea_generation_plan") or get("generation_method"),
                                    GENERATION_NAMES, path, row,
                                    "idea_generation_plan" if get("idea_generation_plan") else "generation_method",
                                    counts)
        condition_code = get("condition_code").strip()
        out["condition_code"] = condition_code or None
        text = values.get("final_idea")
        out["final_idea"] = None if text is None or is_blank(text) else text
        for name in passthrough:
            out[name] = None if is_blank(values[name]) else values[name]
        rows.append(out)
    counts["rows"] = len(rows)
    columns = [*IDEA_COLUMNS, *raters, *passthrough]
    frame = pd.DataFrame(rows).reindex(columns=columns)
    for column in ("team_size", "pool", "replicate", "condition_number"):
        frame[column] = pd.to_numeric(frame[column]).round().astype("Int64")
    for column in ("novelty", "usefulness", "creativity", "tokens", "prompt_tokens", "completion_tokens", *raters):
        frame[column] = pd.to_numeric(frame[column]).astype(float)
    for column in passthrough:  # columns we do not rename: numbers when every value is one
        converted = pd.to_numeric(frame[column], errors="coerce")
        if frame[column].notna().any() and converted.notna().sum() == frame[column].notna().sum():
            frame[column] = converted
    by_type = frame.groupby(["source", "data_type"]).size()
    counts["by_source_and_type"] = {f"{s}/{t}": int(n) for (s, t), n in by_type.items()}
    counts["path"] = str(path)
    frame.attrs["ideas"] = counts
    return frame


def _optional_int(text: str, path: Path, row: int, field: str) -> int | None:
    value = _number(text, path, row, field)
    if np.isnan(value):
        return None
    if not float(value).is_integer():
        raise InputError(f"expected a whole number, got {text!r}", path=str(path), row=row, field=field)
    return int(value)


def _mapped(text: str, names: dict, path: Path, row: int, field: str, counts: dict | None = None) -> str | None:
    """The paper's name of a design label; a label we do not know is kept as written and
    counted in ``counts["unmapped"]`` (it names a condition, it is not a broken value)."""
    value = (text or "").strip()
    if value.lower() in NOT_APPLICABLE and value.lower() not in names:
        return None
    if value not in names:
        if counts is None:
            raise InputError(f"unknown value {value!r}; expected one of {sorted(set(names))}",
                             path=str(path), row=row, field=field)
        key = f"{field}={value}"
        counts["unmapped"][key] = counts["unmapped"].get(key, 0) + 1
        return value
    return names[value]


def _model(text: str, counts: dict) -> str | None:
    value = (text or "").strip()
    if not value:
        return None
    if "," in value or value.lower() == "mixed":
        counts["mixed_models"] += 1
        return "Mixed"
    return value


def _discussion(values: dict, counts: dict, path: Path, row: int) -> str:
    field = "discussion" if (values.get("discussion") or "").strip() else "discussion_method"
    text = (values.get(field) or "").strip()
    if not text:
        counts["discussion_filled_none"] += 1
        return "none"
    if text not in DISCUSSION_NAMES:
        raise InputError(f"unknown discussion {text!r}; expected one of {sorted(DISCUSSION_NAMES)}",
                         path=str(path), row=row, field=field)
    return DISCUSSION_NAMES[text]


def ideas_with_metrics(ideas: pd.DataFrame, metrics: pd.DataFrame) -> pd.DataFrame:
    """Every idea of ``read_ideas``, with the trajectory features of its conversation.

    A metrics row (``read_metrics`` output) is the partner of an idea with the same
    ``file_id`` and task. The nine Table 19 features, ``n_turns`` and any ``*_4b`` /
    extra metric columns of ``metrics`` are filled where there is a partner and NaN
    elsewhere (ideas of the none and progressive structures, single-agent baselines and
    human ideas without transcripts have none). No idea is dropped or duplicated.
    ``attrs["ideas_with_metrics"]``: ``ideas, with_metrics, without_metrics`` (and the
    latter by source/data_type/discussion), ``metrics_rows``, ``metrics_without_idea``.
    """
    from engine.measures.trajectory import PAPER_A_FEATURES
    from engine.importers.paper_release import EXTRA_METRICS

    for name, frame, needed in (("ideas", ideas, ("file_id", "task")),
                                ("metrics", metrics, ("file_id", "question_id"))):
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise InputError(f"the {name} table has no column {missing[0]!r}", field=missing[0])
    carried = [c for c in metrics.columns
               if c in PAPER_A_FEATURES or c == "n_turns" or c in EXTRA_METRICS
               or (c.endswith("_4b") and c[:-3] in (*PAPER_A_FEATURES, *EXTRA_METRICS, "n_turns"))]
    clashes = [c for c in carried if c in ideas.columns]
    if clashes:
        raise InputError(f"the ideas table already has column(s) {clashes}; join once", field=clashes[0])
    right = metrics[["file_id", "question_id", *carried]].astype({"file_id": str, "question_id": str})
    if right.duplicated(["file_id", "question_id"]).any():
        key = right[right.duplicated(["file_id", "question_id"])].iloc[0]
        raise InputError(f"the metrics table has {key['file_id']!r} / {key['question_id']!r} twice",
                         field="file_id")
    right = right.rename(columns={"question_id": "_task"})
    left = ideas.assign(_file=ideas["file_id"].astype(str), _task=ideas["task"].astype(str))
    joined = left.merge(right.rename(columns={"file_id": "_file"}), how="left", on=["_file", "_task"],
                        indicator=True, validate="many_to_one")
    matched = (joined["_merge"] == "both").to_numpy()
    joined = joined.drop(columns=["_file", "_task", "_merge"])
    joined.index = ideas.index
    unmatched = joined.loc[~matched]
    idea_keys = set(zip(left["_file"], left["_task"]))
    orphans = sum(key not in idea_keys for key in zip(right["file_id"], right["_task"]))
    groups = [c for c in ("source", "data_type", "discussion") if c in unmatched.columns]
    without = (unmatched.fillna({c: "(none)" for c in groups}).groupby(groups).size()
               if groups and len(unmatched) else pd.Series(dtype=int))
    joined.attrs = dict(ideas.attrs)
    joined.attrs["ideas_with_metrics"] = {
        "ideas": len(ideas), "with_metrics": int(matched.sum()),
        "without_metrics": int((~matched).sum()),
        "without_metrics_by": {"/".join(map(str, k if isinstance(k, tuple) else (k,))): int(n)
                               for k, n in without.items()},
        "metrics_rows": len(metrics), "metrics_without_idea": int(orphans),
        "columns_filled": carried,
    }
    return joined
