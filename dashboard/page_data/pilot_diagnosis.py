"""The Pilot page's numbers: a pilot's finished sessions diagnosed against a reference
dataset's LLM conversations of paper A's trajectory sample (``engine.diagnosis.diagnose.
diagnose``: each feature's percentile within the reference, the flags and the recommendation
that follow from them, when both sides were embedded and made alike), and which of the
offered references would compare like with like."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from engine.datasets import Dataset
from engine.diagnosis.diagnose import Diagnosis, diagnose, trajectory_rows
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


def reference_rows(reference: Dataset) -> pd.DataFrame:
    """The reference's LLM conversations of paper A's trajectory sample (as in the release)."""
    return trajectory_rows(reference.conversations)


def pilot_page_data(pilot: Dataset, reference: Dataset) -> PilotDiagnosis:
    """The pilot's finished sessions diagnosed within the reference's trajectory sample; the
    manifests name the embedding models and the implementations (``diagnose`` ranks only when
    both agree, and shows the values side by side otherwise)."""
    finished = finished_sessions(pilot.conversations)
    try:
        result = diagnose(finished, reference_rows(reference),
                          pilot_embedding=pilot.manifest.get("embedding_model"),
                          reference_embedding=reference.manifest.get("embedding_model"))
    except InputError as error:
        return PilotDiagnosis(len(pilot.conversations), len(finished), error=str(error))
    return PilotDiagnosis(len(pilot.conversations), len(finished), result)


def comparable_references(pilot: Dataset, references: dict[str, Dataset]) -> pd.DataFrame:
    """One row per offered reference: its embedding model, its implementation, how many
    conversations of the pilot's structure it holds, and whether it compares like with like
    with the pilot (and if not, why)."""
    from engine.protocols.implementation import describe, differences, implementation_of_table
    from engine.stats.reference import same_embedding_model

    finished = finished_sessions(pilot.conversations)
    pilot_model = pilot.manifest.get("embedding_model")
    pilot_made = implementation_of_table(finished)
    structure = finished["discussion"].dropna().unique() if "discussion" in finished else []
    rows = []
    for name, reference in references.items():
        table = reference_rows(reference)
        if len(structure) == 1 and "discussion" in table:
            table = table[table["discussion"] == structure[0]]
        model = reference.manifest.get("embedding_model")
        made = implementation_of_table(table) if len(table) else None
        why = []
        if not same_embedding_model(pilot_model, model):
            why.append(f"embedding {model or 'not recorded'}")
        why += differences(pilot_made, made)
        rows.append({"reference": name, "conversations": len(table), "embedding model": model or "not recorded",
                     "made by": describe(made), "comparable": not why and len(table) >= 20,
                     "why not": "; ".join(why) if why else ("" if len(table) >= 20 else
                                                            f"{len(table)} conversations (20 needed)")})
    return pd.DataFrame(rows, columns=["reference", "comparable", "conversations", "embedding model",
                                       "made by", "why not"])
