"""The Pilot page's numbers: a pilot's finished sessions diagnosed against a reference
dataset's LLM conversations (``engine.diagnosis.diagnose.diagnose``: each feature's percentile
within the reference, the flags and the recommendation that follow from them)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from engine.datasets import Dataset
from engine.diagnosis.diagnose import Diagnosis, diagnose
from engine.errors import InputError


def finished_sessions(conversations: pd.DataFrame) -> pd.DataFrame:
    """The sessions that finished (status ok; a table without status counts every row)."""
    if "status" not in conversations:
        return conversations
    return conversations[conversations["status"].fillna("ok") == "ok"]


@dataclass(frozen=True)
class PilotDiagnosis:
    sessions: int  # every session of the pilot
    finished: int  # those diagnosed
    diagnosis: Diagnosis | None = None
    error: str = ""  # why there is no diagnosis

    @property
    def left_out(self) -> int:
        return self.sessions - self.finished


def pilot_page_data(pilot: Dataset, reference: Dataset) -> PilotDiagnosis:
    """The pilot's finished sessions diagnosed within the reference's LLM conversations; the two
    manifests name the embedding models (``diagnose`` compares by percentile ranks only when
    they differ, or one is not recorded, and says so)."""
    finished = finished_sessions(pilot.conversations)
    rows = reference.conversations
    if "source" in rows.columns:
        rows = rows[rows["source"] == "llm"]
    try:
        result = diagnose(finished, rows, pilot_embedding=pilot.manifest.get("embedding_model"),
                          reference_embedding=reference.manifest.get("embedding_model"))
    except InputError as error:
        return PilotDiagnosis(len(pilot.conversations), len(finished), error=str(error))
    return PilotDiagnosis(len(pilot.conversations), len(finished), result)
