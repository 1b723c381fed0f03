"""Uploads say what they did: rows read, turns kept and set aside (and why), moderator and judge
turns kept with their own phase (not dropped, not in the trajectory), renumbering; a debate of
any protocol name used as a paper-B method or as a custom debate without invented factors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.page_data import uploads
from dashboard.page_data.datasets import availability
from dashboard.page_data.import_summary import summary_lines
from dashboard.page_data.trajectories import transcript
from engine.protocols.conditions import add_condition
from tests.support.hash_embedder import HashEmbedder

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")


def debate_rows(n_conversations: int = 3, rounds: int = 3) -> list[dict]:
    """Debates named ``mad_debate``: per round a Moderator turn then three agents, a Judge
    turn at the end, turns numbered from 1 in the file; the first conversation has two turns
    with empty text."""
    rows = []
    for c in range(n_conversations):
        number = 1
        cid = f"d{c}"

        def add(speaker, text):
            nonlocal number
            rows.append({"conversation_id": cid, "turn": number, "speaker": speaker, "text": text,
                         "protocol": "mad_debate", "task": "plastic_waste", "model": "m",
                         "final_idea": f"final idea {c} about {['rivers', 'bees', 'tax', 'drones'][c % 4]}"})
            number += 1

        for r in range(rounds):
            add("Moderator", f"Round {r} of {cid}: argue your case.")
            for a in range(3):
                add(f"Agent {a + 1}", f"{cid} agent {a} round {r}: we should try idea {a * 7 + r}.")
            if c == 0 and r == 1:
                add("Agent 2", "")
        add("Judge", f"The judge picks agent {c % 3 + 1} in {cid}.")
    return rows


def upload(rows, debate_as=None):
    payload = pd.DataFrame(rows).to_csv(index=False).encode()
    return uploads.read_upload("debates.csv", payload, embedder_factory=HashEmbedder, debate_as=debate_as)


def test_summary_counts_rows_kept_set_aside_roles_and_renumbering():
    rows = debate_rows()
    dataset = upload(rows)
    summary = dataset.manifest["import_summary"]
    frame = pd.DataFrame(rows)
    empty = (frame["text"] == "").sum()
    moderators, judges = (frame["speaker"] == "Moderator").sum(), (frame["speaker"] == "Judge").sum()
    assert (len(frame), empty, moderators, judges) == (3 * (3 * 4 + 1) + 1, 1, 9, 3)
    assert summary["rows_read"] == len(frame) == 40
    assert summary["set_aside"] == {"turns with empty text": 1}
    assert summary["turns_kept"] == 39
    assert summary["other_turns"] == {"moderator": 9, "judge": 3}
    assert summary["discussion_turns"] == 39 - 12 == 27
    assert summary["renumbered_conversations"] == 3  # every conversation starts at 1
    lines = " ".join(summary_lines(summary))
    assert "40 rows read." in lines and "39 turns kept in 3 conversations" in lines
    assert "27 discussion turns" in lines and "9 moderator turns" in lines and "3 judge turns" in lines
    assert "Set aside: 1 turns with empty text." in lines and "Renumbered: in 3 conversations" in lines


def test_moderator_and_judge_turns_stay_with_their_phase_outside_the_trajectory():
    rows = debate_rows()
    dataset = upload(rows)
    # the reader: every kept turn of d1, in file order, moderators and the judge with their phase
    reader = transcript(dataset, "d1")
    kept = [r for r in rows if r["conversation_id"] == "d1" and r["text"]]
    assert reader["text"].tolist() == [r["text"] for r in kept]
    phases = dict(zip(reader["text"], reader["phase"]))
    assert {phases[r["text"]] for r in kept if r["speaker"] == "Moderator"} == {"moderator"}
    assert {phases[r["text"]] for r in kept if r["speaker"] == "Judge"} == {"judge"}
    # embeddings and the map: the agents' turns only, named by their place in the conversation
    index = dataset.turn_index[dataset.turn_index["conversation_id"] == "d1"]
    agents = [i for i, r in enumerate(kept) if r["speaker"].startswith("Agent")]
    assert index["turn"].tolist() == agents
    assert reader["distance to previous turn"].isna().tolist() == [
        i not in agents[1:] for i in range(len(kept))]
    # the nine features on the discussion turns: global coherence by hand
    e = HashEmbedder().encode([kept[i]["text"] for i in agents])
    centroid = e.mean(axis=0)
    expected = np.mean(e @ centroid / (np.linalg.norm(e, axis=1) * np.linalg.norm(centroid)))
    table = dataset.conversations.set_index("conversation_id")
    assert table.loc["d1", "global_coherence"] == pytest.approx(expected)
    assert table.loc["d1", "n_turns"] == 9 and table.loc["d1", "n_other_turns"] == 4


def test_a_custom_debate_is_a_condition_of_its_own_without_invented_factors():
    dataset = upload(debate_rows(), debate_as="custom")
    frame = dataset.conversations
    assert availability(dataset).paper_b_methods == ("mad_debate",)
    labels = set(add_condition(frame)["condition"])
    assert labels == {"mad_debate [custom debate, design not recorded] m"}
    assert "[no CLA" not in " ".join(labels) and "all peers" not in " ".join(labels)
    assert "custom debates" in " ".join(summary_lines(dataset.manifest["import_summary"]))


def test_a_debate_mapped_to_homo_mad_keeps_its_name_and_assumes_nothing():
    dataset = upload(debate_rows(), debate_as="homo_mad")
    frame = dataset.conversations
    assert set(frame["discussion"]) == {"homo_mad"} and set(frame["protocol_in_file"]) == {"mad_debate"}
    assert availability(dataset).paper_b_methods == ("homo_mad",)
    conditions = add_condition(frame)
    assert set(conditions["condition"]) == {"homo_mad [design not recorded] m"}
    assert conditions["cond_lenses"].isna().all() and conditions["cond_peers"].isna().all()
    assert conditions["cond_consensus"].isna().all() and conditions["ablation"].isna().all()
    # the engine's own homo_mad runs still carry their design
    own = add_condition(pd.DataFrame({"discussion": ["homo_mad"], "model": ["m"]}))
    assert own["condition"].item() == "homo_mad [no CLA, all peers] m"


def test_upload_summary_on_the_data_page_and_the_custom_debate_on_the_diversity_page(runs_root):
    """The real page: load the file with "custom debate", the summary is shown first, and the
    Diversity page measures the custom condition (10 runs -> 2 groups of 5)."""
    from streamlit.testing.v1 import AppTest

    rows = debate_rows(n_conversations=10, rounds=1)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.selectbox(key="upload_debate_as").set_value("custom").run()
    at.file_uploader(key="upload_file").upload("debates.csv", pd.DataFrame(rows).to_csv(index=False).encode()).run()
    at.button(key="upload_load").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="dataset_choice").value == "upload: debates"
    summary = next(t.value for t in at.text if "rows read" in t.value)
    assert summary.startswith(f"{len(rows)} rows read.")
    assert "10 moderator turns" in summary and "10 judge turns" in summary and "custom debates" in summary
    at.switch_page("views/diversity.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not any("no paper-B debate runs" in i.value for i in at.info)
    table = next(d.value for d in at.dataframe if "condition" in d.value.columns and "vendi" in d.value.columns)
    row = table.set_index("condition").loc["mad_debate [custom debate, design not recorded] m"]
    assert int(row["n_groups"]) == 2
