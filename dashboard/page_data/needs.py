"""What a page needs from the open dataset, by name (``Page.needs`` in ``dashboard.pages``), and
the one message a page shows when the dataset lacks some of it: what is missing and how to get
it. Each need is read off the dataset's ``Availability`` (``dashboard.page_data.datasets``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from dashboard.page_data.datasets import Availability


@dataclass(frozen=True)
class Need:
    """One thing a page needs: its name (as ``Page.needs`` writes it), what it is in words,
    whether a dataset has it (``met``) and how to get it."""

    name: str
    what: str
    met: Callable[[Availability], bool]
    how: str


NEEDS: dict[str, Need] = {need.name: need for need in (
    Need("features", "trajectory features (paper A, Table 19)", lambda have: bool(have.features),
         "open a dataset built by the engine or the paper release, or add them to a run's dataset with "
         "`python -m engine dataset features FOLDER`"),
    Need("turn_embeddings", "turn embeddings (one vector per turn)", lambda have: have.turn_embeddings,
         "open a dataset built by the engine from its runs (e.g. `local_smollm2`) or upload transcripts on "
         "the Data page (the paper release has one row of features per conversation, no turns)"),
    Need("turns", "the conversations' turns", lambda have: have.turns,
         "open a dataset built from runs or transcripts (e.g. `local_smollm2`)"),
    Need("outcome", "an outcome to model (ratings or trajectory features)",
         lambda have: bool(have.ratings or have.features),
         "join the authors' ratings on the Data page, or open a dataset with trajectory features"),
    Need("ratings", "creativity ratings (creativity, novelty, usefulness)", lambda have: bool(have.ratings),
         "join a ratings file on the Data page, or rate ideas on the Rate ideas page"),
    Need("paper_b_runs", "paper-B debate runs with final outputs (homo_mad, creative_mad, ...)",
         lambda have: bool(have.paper_b_methods) and have.final_ideas,
         "open `local_smollm2_paper_b` or run paper B's grid: "
         "`python -m engine run --grid cached_runs/grids/paper_b_ablation.yaml`"),
)}


def unknown(names: tuple[str, ...]) -> list[str]:
    """The names among ``names`` that are no need (a typo in a ``Page.needs``)."""
    return [name for name in names if name not in NEEDS]


def missing(names: tuple[str, ...], have: Availability) -> list[Need]:
    """The needs named by ``names`` that a dataset with ``have`` lacks, in the order named."""
    if unknown(names):
        raise KeyError(f"unknown need(s) {', '.join(unknown(names))}; needs: {', '.join(NEEDS)}")
    return [NEEDS[name] for name in names if not NEEDS[name].met(have)]


def message(dataset_name: str, lacking: list[Need]) -> str:
    """The page's one message about ``lacking``: what the dataset has not, and how to get each
    (markdown: commands in backticks; ``dataset_name`` given escaped by the caller)."""
    head = f"“{dataset_name}” has no " + " and no ".join(need.what for need in lacking) + "."
    return " ".join([head, *(f"For {need.what}: {need.how}." for need in lacking)])
