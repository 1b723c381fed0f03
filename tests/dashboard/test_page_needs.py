"""What a page needs from the open dataset (``dashboard.page_data.needs``): each need read off a
dataset's availability, and the one message naming what is missing and how to get it."""

from __future__ import annotations

import pytest

from dashboard.page_data.datasets import Availability
from dashboard.page_data.needs import NEEDS, message, missing


def availability(**held) -> Availability:
    """A dataset's availability with nothing but ``held``."""
    empty = dict(n_conversations=4, turns=False, turn_embeddings=False, features=(), ratings=(), sources=("llm",),
                 paper_b_methods=(), final_ideas=False, features_4b=False)
    return Availability(**{**empty, **held})


@pytest.mark.parametrize("held, met", [
    ({}, set()),
    ({"features": ("path_length",)}, {"features", "outcome"}),
    ({"ratings": ("creativity",)}, {"ratings", "outcome"}),
    ({"turns": True, "turn_embeddings": True}, {"turns", "turn_embeddings"}),
    ({"paper_b_methods": ("homo_mad",)}, set()),  # runs without final outputs: no set-level diversity
    ({"paper_b_methods": ("homo_mad",), "final_ideas": True}, {"paper_b_runs"}),
])
def test_each_need_is_met_by_what_the_dataset_holds(held, met):
    have = availability(**held)
    assert {name for name, need in NEEDS.items() if need.met(have)} == met


def test_missing_keeps_the_order_named_and_refuses_an_unknown_need():
    have = availability(features=("path_length",))
    assert [n.name for n in missing(("paper_b_runs", "features", "turn_embeddings"), have)] == \
        ["paper_b_runs", "turn_embeddings"]
    with pytest.raises(KeyError, match="unknown need.*embedings"):
        missing(("embedings",), have)


def test_the_message_names_each_missing_thing_and_how_to_get_it():
    lacking = missing(("features", "ratings"), availability())
    assert message("bare", lacking) == (
        "“bare” has no trajectory features (paper A, Table 19) and no creativity ratings (creativity, novelty, "
        "usefulness). For trajectory features (paper A, Table 19): open a dataset built by the engine or the "
        "paper release, or add them to a run's dataset with `python -m engine dataset features FOLDER`. "
        "For creativity ratings (creativity, novelty, usefulness): join a ratings file on the Data page, or "
        "rate ideas on the Rate ideas page.")
