"""Tasks: Table 3 of paper A, user tasks from text and from a JSONL file."""

from __future__ import annotations

import pytest

from engine.errors import InputError
from engine.tasks import TASK_IDS, get_task, load_tasks_file, task_from_text


def test_six_table3_tasks_with_the_shared_closing_instruction():
    assert TASK_IDS == ("plastic_waste", "supply_chain", "sorry_pandemic", "education_inequality",
                        "employee_attrition", "singing_shower")
    for task_id in TASK_IDS:
        prompt = get_task(task_id).prompt
        assert "You are collaborating with other team members to come up with one creative idea to " in prompt
        assert prompt.endswith("The idea will be evaluated on its creativity (i.e., it should be both "
                               "novel and useful).")
    assert get_task("plastic_waste").prompt.startswith(
        "Plastic waste is one of the biggest environmental problems of our lifetime. You are")
    assert "to reduce its spread." in get_task("sorry_pandemic").prompt


def test_unknown_task_names_the_known_ones():
    with pytest.raises(InputError, match="plastic_waste"):
        get_task("plastics")


def test_task_from_text_and_file(tmp_path):
    assert task_from_text("  Invent a new sport.  ", "sport").prompt == "Invent a new sport."
    with pytest.raises(InputError, match="empty"):
        task_from_text("   ")
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "a", "prompt": "Do A."}\n\n{"id": "b", "prompt": "Do B.", "title": "B"}\n')
    tasks = load_tasks_file(path)
    assert [(t.id, t.prompt, t.title) for t in tasks] == [("a", "Do A.", "a"), ("b", "Do B.", "B")]


@pytest.mark.parametrize("content, row, field", [
    ('{"id": "a"}\n', 1, "prompt"),
    ('{"id": "a", "prompt": "x"}\n{"id": "a", "prompt": "y"}\n', 2, "id"),
    ('{"id": "a", "prompt": "x", "colour": 1}\n', 1, "colour"),
    ('{"id": "a b", "prompt": "x"}\n', 1, "id"),
])
def test_bad_tasks_file_names_row_and_field(tmp_path, content, row, field):
    path = tmp_path / "t.jsonl"
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        load_tasks_file(path)
    assert caught.value.row == row and caught.value.field == field


def test_tasks_file_not_json(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("{oops\n")
    with pytest.raises(InputError, match="not valid JSON"):
        load_tasks_file(path)
