"""Where the paper release lives and the paper's trajectory-analysis sample.

Paper A analyses trajectories of LLM conversations with turn-by-turn discussion
(instructed, open, iterative; Methods, "Trajectory Analysis Scope"); progressive and
no-discussion conditions are left out. With rows missing a feature dropped this is N = 3,574.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from engine.errors import InputError
# the embedding models behind the release's features (Methods, "Turn Embeddings"; Table 26)
from engine.names import RELEASE_EMBEDDING, RELEASE_EMBEDDING_4B

from engine.samples import TRAJECTORY_STRUCTURES  # one definition of the sample
RELEASE_FILE = "comprehensive_trajectory_metrics.csv"
RELEASE_FILE_4B = "comprehensive_trajectory_metrics_4b.csv"


def release_embedding(path: str | Path) -> str | None:
    """The embedding model of a paper release metrics file, known by its name (else None)."""
    name = Path(path).name
    return {RELEASE_FILE: RELEASE_EMBEDDING, RELEASE_FILE_4B: RELEASE_EMBEDDING_4B}.get(name)


def same_embedding_model(a: str | None, b: str | None) -> bool | None:
    """Whether two embedding model names are the same model (organisation prefix, case and an
    embeddings server's ``openai:<URL>:`` prefix ignored); None when either is unknown."""
    if not a or not b:
        return None
    return model_id(a) == model_id(b)


SERVED = re.compile(r"^openai:[A-Za-z][\w+.-]*://[^/\s]+(?:/[^:\s]*)?:(?P<model>.+)$")


def model_id(name: str) -> str:
    """``openai:http://host:8000/v1:Qwen/Qwen3-Embedding-0.6B`` (engine.embedding.openai_endpoint)
    and ``Qwen/Qwen3-Embedding-0.6B`` both give ``qwen3-embedding-0.6b``."""
    served = SERVED.match(str(name))
    model = served.group("model") if served else str(name)
    return model.split("/")[-1].lower()


def default_release_path() -> Path:
    """``$CDL_PAPER_RELEASE`` or ``../shared/data/paper_release/...`` beside the repository."""
    if os.environ.get("CDL_PAPER_RELEASE"):
        return Path(os.environ["CDL_PAPER_RELEASE"])
    return Path(__file__).resolve().parents[3] / "shared" / "data" / "paper_release" / RELEASE_FILE


def trajectory_sample(df: pd.DataFrame) -> pd.DataFrame:
    """LLM rows whose discussion structure has turn-by-turn dialogue (the paper's sample)."""
    missing = [c for c in ("source", "discussion") if c not in df.columns]
    if missing:
        raise InputError(f"column {missing[0]!r} is not in the data", field=missing[0])
    return df[(df["source"] == "llm") & df["discussion"].isin(TRAJECTORY_STRUCTURES)]


def load_reference(path: str | Path | None = None) -> pd.DataFrame:
    """The paper release's trajectory sample (read with ``read_metrics``); ``attrs
    ["embedding_model"]`` names the model behind its features (None for a file not named
    as in the release)."""
    from engine.importers.paper_release import read_metrics
    from engine.protocols.implementation import PAPER_RELEASE

    path = Path(path) if path else default_release_path()
    if not path.exists():
        raise InputError("the paper release metrics file is not here; pass its path "
                         "(comprehensive_trajectory_metrics.csv) or set CDL_PAPER_RELEASE", path=str(path))
    sample = trajectory_sample(read_metrics(path)).copy()
    sample.attrs["embedding_model"] = release_embedding(path)
    sample.attrs["implementation"] = PAPER_RELEASE  # the authors' generation code
    return sample


def generating_cluster(df: pd.DataFrame) -> pd.Series:
    """Paper A, A.5's generating cluster: the LLM condition by task, or the human team.

    An LLM condition is its ``file_id`` without the replicate number; human rows use ``team``.
    """
    from engine.importers.paper_release import LLM_FILE_ID

    missing = [c for c in ("source", "file_id", "task") if c not in df.columns]
    if missing:
        raise InputError(f"a generating cluster needs column {missing[0]!r} (paper release rows)", field=missing[0])

    def condition(row) -> str | None:
        if row["source"] == "human":
            return None if pd.isna(row.get("team")) else f"human::{row['team']}"
        match = LLM_FILE_ID.match(str(row["file_id"]))
        if not match:
            return None
        start, end = match.span("run")
        return f"{row['file_id'][:start]}*{row['file_id'][end:]}::{row['task']}"

    return df.apply(condition, axis=1).rename("generating_cluster")
