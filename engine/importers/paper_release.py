"""Importer for the released trajectory metrics of paper A (pitehu/llm_multiagent_creativity).

The release (CC BY-NC-SA 4.0) has one row per conversation with the nine features of
Table 19, four unused extra metrics, ``file_id``, ``question_id`` and ``n_turns``. The
design factors of each LLM conversation are encoded in ``file_id`` (grammar below, from
the release's README); human teams are ``i<team>_<number>``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from engine.errors import InputError
from engine.measures.trajectory import PAPER_A_FEATURES

LICENCE_NOTE = (
    "Derived from the public release of 'Multi-agent AI systems outperform human teams in "
    "creativity' (GitHub pitehu/llm_multiagent_creativity, data/); licence CC BY-NC-SA 4.0 "
    "(attribution, non-commercial, share-alike)."
)
EXTRA_METRICS = ("mean_distance", "effective_dims", "cluster_dispersion", "semantic_velocity")
REQUIRED_COLUMNS = (*PAPER_A_FEATURES, "file_id", "question_id", "n_turns")

# {models}_{run}_{agents}_{persona}_{phases}_{generation}_{discussion}_{order}_pool_{pool}_{length}_{min_rounds}[_v{version}]
LLM_FILE_ID = re.compile(
    r"^(?P<models>gpt-4\.1|o3-high|o3-low|deepseek-R1_gemini-2\.5-pro_o3)"
    r"_(?P<run>\d+)_(?P<agents>\d+)_(?P<persona>none|same|different)"
    r"_(?P<phases>direct_discussion|three_stage)_(?P<generation>Direct|dependent|independent)"
    r"_(?P<discussion>all_at_once|open|iterative_refinement|none|creative)"
    r"_(?P<order>fixed|random|hand_raising)_pool_(?P<pool>\d+)_(?P<length>\d+)"
    r"_(?P<min_rounds>None|\d+)(?:_v(?P<version>\w+))?$"
)
HUMAN_FILE_ID = re.compile(r"^i(?P<team>\d+)_(?P<number>\d+)$")

MODEL_NAMES = {"gpt-4.1": "gpt-4.1", "o3-high": "o3-high", "o3-low": "o3-low",
               "deepseek-R1_gemini-2.5-pro_o3": "Mixed"}
DISCUSSION_NAMES = {"all_at_once": "instructed", "open": "open",
                    "iterative_refinement": "iterative", "none": "none", "creative": "progressive"}
GENERATION_NAMES = {"Direct": "direct", "dependent": "interactive", "independent": "nominal"}
ORDER_NAMES = {"fixed": "fixed", "random": "random", "hand_raising": "raise"}

OUTPUT_COLUMNS = (
    "conversation_id", "source", "task", "model", "discussion", "persona", "team_size",
    "order", "pool", "turn_limit", "min_rounds", "replicate", "n_turns", *PAPER_A_FEATURES,
    "generation", "initial_generation", "version", "team", "file_id", "question_id",
)


def parse_file_id(file_id: str) -> dict:
    """Design factors encoded in one ``file_id`` (paper A, Table 6), or ValueError."""
    match = LLM_FILE_ID.match(file_id)
    if match:
        g = match.groupdict()
        return {
            "source": "llm", "model": MODEL_NAMES[g["models"]],
            "discussion": DISCUSSION_NAMES[g["discussion"]], "persona": g["persona"],
            "team_size": int(g["agents"]), "order": ORDER_NAMES[g["order"]],
            "pool": int(g["pool"]), "turn_limit": int(g["length"]),
            "min_rounds": None if g["min_rounds"] == "None" else int(g["min_rounds"]),
            "replicate": int(g["run"]), "generation": GENERATION_NAMES[g["generation"]],
            "initial_generation": g["phases"] == "three_stage", "version": g["version"],
            "team": None,
        }
    match = HUMAN_FILE_ID.match(file_id)
    if match:
        return {
            "source": "human", "model": "human", "discussion": None, "persona": None,
            "team_size": None, "order": None, "pool": None, "turn_limit": None,
            "min_rounds": None, "replicate": int(match["number"]), "generation": None,
            "initial_generation": None, "version": None, "team": f"i{match['team']}",
        }
    raise ValueError("does not match the LLM grammar "
                     "{models}_{run}_{agents}_{persona}_{phases}_{generation}_{discussion}_"
                     "{order}_pool_{pool}_{length}_{min_rounds}[_v{version}] nor the human "
                     "form i<team>_<number>")


def read_metrics(path: str | Path) -> pd.DataFrame:
    """Read a released metrics CSV into one row per conversation with its design factors.

    Columns: ``conversation_id, source, task, model, discussion, persona, team_size, order,
    pool, turn_limit, min_rounds, replicate, n_turns``, the nine features of Table 19, then
    ``generation, initial_generation, version, team, file_id, question_id`` and the four
    extra metrics. ``conversation_id`` is ``file_id::question_id``; features missing in the
    release (too-short conversations) stay NaN.
    """
    path = Path(path)
    frame = _read_csv(path)
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"missing column(s) {missing}; a metrics file needs {list(REQUIRED_COLUMNS)}",
                         path=str(path), field=missing[0])
    if frame.empty:
        raise InputError("has a header but no rows", path=str(path))

    records = []
    for position, (file_id, task) in enumerate(zip(frame["file_id"], frame["question_id"]), start=1):
        if not isinstance(file_id, str) or not file_id:
            raise InputError("empty", path=str(path), row=position, field="file_id")
        if not isinstance(task, str) or not task:
            raise InputError("empty", path=str(path), row=position, field="question_id")
        try:
            records.append(parse_file_id(file_id))
        except ValueError as error:
            raise InputError(f"{file_id!r} {error}", path=str(path), row=position,
                             field="file_id") from None
    factors = pd.DataFrame.from_records(records, index=frame.index)

    numeric = {}
    for column in (*PAPER_A_FEATURES, "n_turns", *[m for m in EXTRA_METRICS if m in frame.columns]):
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() & frame[column].notna() & (frame[column].astype(str).str.strip() != "")
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0]) + 1
            raise InputError(f"expected a number, got {frame[column].iloc[row - 1]!r}",
                             path=str(path), row=row, field=column)
        numeric[column] = values
    if numeric["n_turns"].isna().any():
        row = int(np.flatnonzero(numeric["n_turns"].isna().to_numpy())[0]) + 1
        raise InputError("missing", path=str(path), row=row, field="n_turns")

    out = factors.assign(
        conversation_id=frame["file_id"] + "::" + frame["question_id"],
        task=frame["question_id"], file_id=frame["file_id"], question_id=frame["question_id"],
        **numeric,
    )
    out["n_turns"] = out["n_turns"].astype(int)
    duplicated = out["conversation_id"].duplicated()
    if duplicated.any():
        row = int(np.flatnonzero(duplicated.to_numpy())[0]) + 1
        raise InputError(f"duplicate conversation {out['conversation_id'].iloc[row - 1]!r}",
                         path=str(path), row=row, field="file_id")
    for column in ("team_size", "pool", "turn_limit", "min_rounds", "replicate"):
        out[column] = out[column].astype("Int64")
    extras = [m for m in EXTRA_METRICS if m in out.columns]
    return out[[*OUTPUT_COLUMNS, *extras]].reset_index(drop=True)


METRICS_4B = "comprehensive_trajectory_metrics_4b.csv"
SUFFIX_4B = "_4b"


def read_release(path: str | Path) -> pd.DataFrame:
    """``read_metrics`` of the 0.6B file plus the 4B features (Table 26) as ``<feature>_4b``
    columns when ``comprehensive_trajectory_metrics_4b.csv`` lies beside it."""
    path = Path(path)
    base = read_metrics(path)
    robust_path = path.with_name(METRICS_4B)
    if path.name == METRICS_4B or not robust_path.exists():
        return base
    robust = read_metrics(robust_path)[["conversation_id", *PAPER_A_FEATURES]]
    robust = robust.rename(columns={f: f + SUFFIX_4B for f in PAPER_A_FEATURES})
    merged = base.merge(robust, on="conversation_id", how="left", validate="one_to_one")
    if len(merged) != len(base):
        raise InputError("4B metrics do not name the same conversations", path=str(robust_path))
    return merged


def _read_csv(path: Path) -> pd.DataFrame:
    """Read a CSV as text columns, turning every pandas failure into an InputError."""
    from engine.storage.files import read_bytes, universal_newlines

    raw = read_bytes(path)
    if not raw.strip():
        raise InputError("is empty", path=str(path))
    try:
        text = universal_newlines(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n")
        raise InputError(f"not UTF-8 text (byte 0x{raw[error.start]:02x})", path=str(path),
                         row=line) from None
    import io

    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        reason = " ".join(str(error).split())  # pandas' message ends in a newline
        raise InputError(f"not a readable CSV ({reason})", path=str(path)) from None
    from engine.storage.csv_cells import unescape_frame

    return unescape_frame(frame)  # the quote our CSV writers put before a formula, taken off
