"""People rating ideas (paper A's Consensual Assessment Technique): items, the shared order,
resuming, last-rating-wins, the export (worked by hand, read back by ``read_ideas``), a torn
last line, bad names and scores, and the raters' agreement (ICC worked by hand)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.datasets import Dataset
from engine.errors import InputError
from engine.importers.ratings import read_ideas
from engine.judging import human_rating as hr
from engine.tasks import TASKS


def dataset(name="rate-test", **columns) -> Dataset:
    base = {"conversation_id": ["a", "b", "c", "d", "e", "f"],
            "task": ["plastic_waste"] * 3 + ["my_task"] * 3,
            "source": ["llm", "human", "llm", "llm", "llm", "llm"],
            "final_idea": [f"idea {x}" for x in "abcdef"]}
    return Dataset(name=name, conversations=pd.DataFrame({**base, **columns}))


@pytest.fixture
def root(tmp_path):
    return tmp_path / "ratings"


def test_items_keep_finished_conversations_with_a_task_and_a_text_and_prefer_the_paraphrase():
    frame = dataset(status=["ok", "ok", "failed", "ok", "ok", "ok"],
                    final_idea=["idea a", "idea b", "idea c", "  ", "idea e", "idea f"],
                    paraphrased_idea=["para a", None, "para c", None, "para e", "para f"],
                    task=["plastic_waste"] * 3 + ["my_task", "my_task", None])
    items = hr.idea_items(frame)
    assert items.text_column == "paraphrased_idea"
    # c failed, d has no text at all, f has no task; b has no paraphrase: shown as written
    assert [(i.item_id, i.text, i.text_column) for i in items.items] == [
        ("a", "para a", "paraphrased_idea"), ("b", "idea b", "final_idea"), ("e", "para e", "paraphrased_idea")]
    assert items.counts == {"conversations": 6, "not_ok": 1, "no_task": 1, "no_text": 1, "paraphrased": 2,
                            "final_idea": 1, "prompt_unknown": 1}
    by_id = items.by_id()
    assert by_id["a"].prompt == TASKS["plastic_waste"].prompt and by_id["e"].prompt == "my_task"
    assert "1 without a paraphrase shown as written" in items.describe()
    assert hr.idea_items(dataset(final_idea=[None] * 6)).items == ()
    with pytest.raises(InputError, match="appears twice") as error:
        hr.idea_items(dataset(conversation_id=["a", "b", "a", "d", "e", "f"]))
    assert error.value.row == 3 and error.value.field == "conversation_id"


def test_the_order_is_one_shuffle_seeded_by_the_name_shared_and_written_once(root):
    items = hr.idea_items(dataset())
    first = hr.open_order(items, root)
    assert first.written and first.path == root / "rate-test" / "order.json"
    again = hr.open_order(hr.idea_items(dataset()), root)  # a second rater, another session
    assert not again.written and again.sequence == first.sequence
    assert sorted(first.sequence) == list("abcdef")  # a permutation of the items
    # the definition, independently: SHA-256 of the name -> 63-bit seed, ids sorted then permuted,
    # then each task's ideas together in the order their task first comes up
    seed = int(hashlib.sha256(b"rate-test").hexdigest()[:16], 16) // 2
    assert first.seed == seed
    ids = sorted("abcdef")
    shuffled = [ids[k] for k in np.random.default_rng(seed).permutation(6)]
    task = {i: ("plastic_waste" if i in "abc" else "my_task") for i in ids}
    tasks = list(dict.fromkeys(task[i] for i in shuffled))
    assert list(first.sequence) == [i for t in tasks for i in shuffled if task[i] == t]
    stored = json.loads(first.path.read_text(encoding="utf-8"))
    assert stored["item_ids"] == list(first.sequence) and stored["dataset"] == "rate-test"
    assert stored["items"]["b"] == {"task": "plastic_waste", "prompt": TASKS["plastic_waste"].prompt,
                                    "text": "idea b", "text_column": "final_idea"}
    # an idea gone from the dataset: said, kept in the file; a new one: said, not shown
    frame = dataset().conversations
    frame.loc[frame["conversation_id"] == "c", "conversation_id"] = "g"
    later = hr.open_order(hr.idea_items(Dataset(name="rate-test", conversations=frame)), root)
    assert later.missing == ("c",) and later.unordered == ("g",)
    assert later.item_ids == first.item_ids and "c" not in later.sequence and len(later.sequence) == 5
    assert json.loads(first.path.read_text(encoding="utf-8")) == stored
    assert "1 idea(s) of the order are no longer in the dataset" in later.describe()


def test_a_rater_resumes_at_the_first_idea_of_the_order_not_rated(root):
    order = hr.open_order(hr.idea_items(dataset()), root)
    first, second, third, fourth = order.sequence[:4]
    for item_id in (first, second, fourth):
        hr.rate(order, "Ann", item_id, 5, 5)
    latest = hr.rater_ratings(order, "Ann").latest
    assert hr.next_position(order, latest) == 2  # the third idea (0-based index 2)
    assert hr.next_position(order, hr.rater_ratings(order, "Bob").latest) == 0
    for item_id in order.sequence:
        hr.rate(order, "Cy", item_id, 1, 1)
    assert hr.next_position(order, hr.rater_ratings(order, "Cy").latest) is None


def test_rating_again_appends_and_the_last_rating_counts(root):
    order = hr.open_order(hr.idea_items(dataset()), root)
    item_id = order.sequence[1]
    saved = hr.rate(order, "Ann", item_id, 3, 8)
    assert saved["position"] == 2 and saved["rater"] == "Ann" and saved["time"].endswith("Z")
    hr.rate(order, "Ann", item_id, 0, 10)
    found = hr.rater_ratings(order, "Ann")
    assert [(r["novelty"], r["usefulness"]) for r in found.records] == [(3, 8), (0, 10)]
    assert (found.latest[item_id]["novelty"], found.latest[item_id]["usefulness"]) == (0, 10)
    lines = (root / "rate-test" / "raters" / "ann.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["item_id"] == item_id


def test_scores_are_whole_numbers_from_0_to_10(root):
    order = hr.open_order(hr.idea_items(dataset()), root)
    for bad, field in ((11, "novelty"), (-1, "novelty"), (2.5, "novelty"), (True, "novelty"), ("7", "novelty")):
        with pytest.raises(InputError) as error:
            hr.rate(order, "Ann", order.sequence[0], bad, 5)
        assert error.value.field == field
    with pytest.raises(InputError) as error:
        hr.rate(order, "Ann", order.sequence[0], 5, 10.5)
    assert error.value.field == "usefulness"
    with pytest.raises(InputError, match="not an idea of the shared order") as error:
        hr.rate(order, "Ann", "zzz", 5, 5)
    assert error.value.field == "item_id"
    assert not (root / "rate-test" / "raters" / "ann.jsonl").exists()  # nothing was written
    assert hr.rate(order, "Ann", order.sequence[0], 0, 10.0)["usefulness"] == 10


@pytest.mark.parametrize("name", ["", " ", "x" * 65, "a/b", "<b>Ann</b>", "Ann\nLee", "...", "Ann;", "Ann@x"])
def test_bad_names_are_refused_naming_the_field(root, name):
    order = hr.open_order(hr.idea_items(dataset()), root)
    with pytest.raises(InputError) as error:
        hr.rate(order, name, order.sequence[0], 5, 5)
    assert error.value.field == "rater"


def test_good_names_and_two_names_of_one_file_name(root):
    for name, expected in (("O'Neil", "o-neil"), ("Anne-Marie K.", "anne-marie-k"), ("José", "josé"),
                           ("x" * 64, "x" * 64), ("  Ann Lee ", "ann-lee")):
        assert hr.slug(hr.check_rater_name(name)) == expected
    order = hr.open_order(hr.idea_items(dataset()), root)
    hr.rate(order, "Ann Lee", order.sequence[0], 5, 5)
    for other in ("ann-lee", "ANN_LEE", "Ann.Lee"):
        with pytest.raises(InputError, match="too close to the rater 'Ann Lee'") as error:
            hr.rate(order, other, order.sequence[1], 5, 5)
        assert error.value.field == "rater"
    assert len(hr.rater_ratings(order, "Ann Lee").records) == 1
    assert hr.check_rater_name("  Ann Lee ") == "Ann Lee"


def test_two_dataset_names_of_one_folder_name_do_not_share_an_order(root):
    hr.open_order(hr.idea_items(dataset(name="My Run")), root)
    with pytest.raises(InputError, match="holds the ratings of dataset 'My Run'") as error:
        hr.open_order(hr.idea_items(dataset(name="my run")), root)
    assert error.value.field == "dataset"


def test_a_torn_last_line_is_reported_and_set_aside_never_fatal(root):
    order = hr.open_order(hr.idea_items(dataset()), root)
    hr.rate(order, "Ann", order.sequence[0], 4, 6)
    path = root / "rate-test" / "raters" / "ann.jsonl"
    with path.open("a", encoding="utf-8") as handle:  # a writer killed mid-line
        handle.write('{"dataset": "rate-test", "item_id": "')
    found = hr.rater_ratings(order, "Ann")
    assert len(found.records) == 1 and len(found.notes) == 1 and "cut short" in found.notes[0]
    hr.rate(order, "Ann", order.sequence[1], 7, 2)  # the tail goes to ann.jsonl.torn first
    again = hr.rater_ratings(order, "Ann")
    assert [(r["novelty"], r["usefulness"]) for r in again.records] == [(4, 6), (7, 2)] and not again.notes
    assert (root / "rate-test" / "raters" / "ann.jsonl.torn").read_text(encoding="utf-8").startswith('{"dataset"')


# Two raters, two tasks. "adam" and "Zoe" are numbered by name with case folded (a plain sort
# would put "Zoe" first). Ratings (novelty, usefulness); "-" = not rated:
#   task plastic_waste: a adam (2, 5) Zoe (4, 7); b (6, 3) (8, 3); c (4, 9) -
#   task my_task:       d (1, 1) (5, 2);  e (3, 0) (7, 4);  f (9, 10) -
RATINGS = {"adam": {"a": (2, 5), "b": (6, 3), "c": (4, 9), "d": (1, 1), "e": (3, 0), "f": (9, 10)},
           "Zoe": {"a": (4, 7), "b": (8, 3), "d": (5, 2), "e": (7, 4)}}
# means: novelty a 3, b 7, c 4 | d 3, e 5, f 9; usefulness a 6, b 3, c 9 | d 1.5, e 2, f 10
# scaled within task: novelty a 0, b 1, c 1/4 | d 0, e 1/3, f 1
#                     usefulness a 1/2, b 0, c 1 | d 0, e (2 - 1.5) / 8.5 = 1/17, f 1
EXPECTED = {"a": (0, 0.5), "b": (1, 0), "c": (0.25, 1), "d": (0, 0), "e": (1 / 3, 1 / 17), "f": (1, 1)}


def rated(root) -> hr.Order:
    order = hr.open_order(hr.idea_items(dataset()), root)
    for name, ratings in RATINGS.items():
        for item_id, (novelty, usefulness) in ratings.items():
            hr.rate(order, name, item_id, novelty, usefulness)
    hr.rate(order, "adam", "a", 9, 9)
    hr.rate(order, "adam", "a", 2, 5)  # revised back: the last rating counts
    return order


def test_the_export_by_hand(root):
    order = rated(root)
    found = hr.export_table(order, hr.idea_items(dataset()))
    table = found.table
    assert list(table.columns) == ["file_id", "question_id", "final_idea", "source", "data_type", "N1", "N2",
                                   "U1", "U2", "avg_novelty_rating", "avg_usefulness_rating", "avg_creativity_rating",
                                   "irrelevant"]
    assert not table["irrelevant"].any()  # e: one of its two raters gave a 0, not more than half
    assert found.legend == {"N1": "adam", "N2": "Zoe", "U1": "adam", "U2": "Zoe"}
    assert list(table["file_id"]) == [i for i in order.sequence]  # the shared order
    rows = table.set_index("file_id")
    assert rows.loc["b", "source"] == "human_data" and rows.loc["b", "data_type"] == "human"
    assert rows.loc["a", "source"] == "llm" and rows.loc["a", "data_type"] == "experiment"
    assert rows.loc["a", "final_idea"] == "idea a" and rows.loc["d", "question_id"] == "my_task"
    assert (rows.loc["a", "N1"], rows.loc["a", "N2"], rows.loc["a", "U1"], rows.loc["a", "U2"]) == (2, 4, 5, 7)
    assert pd.isna(rows.loc["c", "N2"]) and pd.isna(rows.loc["f", "U2"])
    for item_id, (novelty, usefulness) in EXPECTED.items():
        assert rows.loc[item_id, "avg_novelty_rating"] == pytest.approx(novelty, abs=1e-12)
        assert rows.loc[item_id, "avg_usefulness_rating"] == pytest.approx(usefulness, abs=1e-12)
        assert rows.loc[item_id, "avg_creativity_rating"] == pytest.approx(novelty * usefulness, abs=1e-12)
    assert found.info["items"] == 6 and found.info["raters"] == [
        {"number": 1, "name": "adam", "ideas_rated": 6}, {"number": 2, "name": "Zoe", "ideas_rated": 4}]


def test_unrated_ideas_are_left_out_irrelevant_ones_unscaled_and_a_flat_task_is_not_scaled(root):
    order = hr.open_order(hr.idea_items(dataset()), root)
    for item_id, novelty, usefulness in (("a", 3, 4), ("b", 3, 4), ("c", 0, 9), ("d", 2, 4), ("e", 6, 4)):
        hr.rate(order, "Ann", item_id, novelty, usefulness)
    hr.rate(order, "Bob", "d", 0, 4)  # d: one 0 of two raters, not irrelevant
    found = hr.export_table(order, hr.idea_items(dataset()))
    rows = found.table.set_index("file_id")
    assert sorted(rows.index) == ["a", "b", "c", "d", "e"]
    # c: its only rater gave a 0: irrelevant, scores kept, no scaled mean, out of the range
    assert list(rows["irrelevant"].sort_index()) == [False, False, True, False, False]
    assert (rows.loc["c", "N1"], rows.loc["c", "U1"]) == (0, 9) and pd.isna(rows.loc["c", "avg_novelty_rating"])
    assert rows.loc[["a", "b"], "avg_novelty_rating"].isna().all()  # 3 and 3 (c left out): no range
    assert list(rows.loc[["d", "e"], "avg_novelty_rating"]) == [0.0, 1.0]  # means 1 and 6
    assert rows["avg_usefulness_rating"].isna().all()  # 4 everywhere once c is out
    assert found.info["tasks_not_scaled"] == {"novelty": ["plastic_waste"], "usefulness": ["my_task", "plastic_waste"]}
    assert found.info["irrelevant"] == 1


def test_the_export_is_read_back_by_read_ideas(root, tmp_path):
    order = rated(root)
    csv_path, legend_path = hr.write_export(hr.export_table(order, hr.idea_items(dataset())), tmp_path / "out.csv")
    assert legend_path == tmp_path / "out.raters.json"
    assert json.loads(legend_path.read_text(encoding="utf-8"))["columns"]["N2"] == "Zoe"
    ideas = read_ideas(csv_path).set_index("file_id")
    assert len(ideas) == 6 and ideas.loc["b", "source"] == "human" and ideas.loc["a", "source"] == "llm"
    assert ideas.loc["b", "data_type"] == "human" and ideas.loc["e", "data_type"] == "experiment"
    assert ideas.loc["e", "novelty"] == pytest.approx(1 / 3, abs=1e-12)
    assert ideas.loc["e", "creativity"] == pytest.approx(1 / 51, abs=1e-12)
    assert (ideas.loc["e", "N1"], ideas.loc["e", "N2"], ideas.loc["e", "U2"]) == (3.0, 7.0, 4.0)
    assert ideas.loc["e", "conversation_id"] == "e::my_task"


def test_agreement_of_two_raters_by_hand(root):
    # rater A: 2, 4, 6, 8; rater B: 3, 4, 8, 9 on both scales. Row means 2.5, 4, 7, 8.5, grand mean 5.5,
    # rater means 5, 6. SS rows = 2 (9 + 2.25 + 2.25 + 9) = 45, BMS = 15; SS raters = 4 (0.25 + 0.25) = 2,
    # JMS = 2; SS total = 21 + 27 = 48; SS error = 1, EMS = 1/3.
    # ICC(3,2) = (BMS - EMS) / BMS = 44/45; ICC(2,1) = (BMS - EMS) / (BMS + EMS + 2 (JMS - EMS) / 4) = 88/97;
    # ICC(2,2) = (BMS - EMS) / (BMS + (JMS - EMS) / 4) = 176/185.
    # alpha: D_o = (2 (1 + 0 + 4 + 1)) / 8 = 1.5; D_e = 2 (8 * 290 - 44^2) / 56 = 96/7; alpha = 1 - 7/64 = 57/64.
    order = hr.open_order(hr.idea_items(dataset()), root)
    four = order.sequence[:4]
    for name, values in (("A", (2, 4, 6, 8)), ("B", (3, 4, 8, 9))):
        for item_id, value in zip(four, values):
            hr.rate(order, name, item_id, value, value)
    found = hr.agreement(order)
    assert found.reason == "" and found.shared == 4 and found.counts == {"A": 4, "B": 4}
    overall = found.table[found.table["task"] == "all"].set_index("scale")
    for scale in ("novelty", "usefulness"):
        row = overall.loc[scale]
        assert row["N items"] == 4 and row["k raters"] == 2
        assert row["ICC(3,k)"] == pytest.approx(44 / 45, abs=1e-6)
        assert row["ICC(2,1)"] == pytest.approx(88 / 97, abs=1e-6)
        assert row["ICC(2,k)"] == pytest.approx(176 / 185, abs=1e-6)
        assert row["alpha (interval)"] == pytest.approx(57 / 64, abs=1e-6)
    assert found.texts[0].startswith("novelty: judge human raters: 2 ratings per item from 2 raters, N = 4 items")


def test_agreement_below_three_shared_ideas_gives_the_counts(root):
    order = hr.open_order(hr.idea_items(dataset()), root)
    assert hr.agreement(order).reason.startswith("0 rater(s) so far")
    for item_id in order.sequence:
        hr.rate(order, "A", item_id, 5, 5)
    assert hr.agreement(order).reason.startswith("1 rater(s) so far: agreement needs two raters")
    for item_id in order.sequence[:2]:
        hr.rate(order, "B", item_id, 6, 6)
    found = hr.agreement(order)
    assert found.table.empty and found.shared == 2
    assert found.reason == "2 idea(s) rated by all 2 raters (A 6, B 2 rated): agreement needs at least 3"


def test_the_ratings_folder_is_the_environments_or_the_users_data_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("CDL_RATINGS_DIR", str(tmp_path / "here"))
    assert hr.ratings_root() == tmp_path / "here"
    monkeypatch.delenv("CDL_RATINGS_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert hr.ratings_root() == tmp_path / "data" / "creativity-dynamics-lab" / "human_ratings"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert hr.ratings_root() == Path.home() / ".local/share/creativity-dynamics-lab/human_ratings"
    repo = Path(hr.__file__).resolve().parents[2]
    assert repo not in hr.ratings_root().parents  # never inside the checkout
