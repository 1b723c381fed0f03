"""Text from users, files and models is shown as text on the dashboard, never as markdown.

Streamlit renders st.error/st.warning/st.success/st.markdown bodies as markdown, so an
uploaded cell ``![x](http://host/x.png)`` inside an error message made the browser fetch
that URL. The bodies are checked here with an independent CommonMark renderer
(markdown-it-py): no image, no link, no raw HTML, and the visible text is the user's text.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
NASTY = ["![x](http://host/x.png)", "[link](http://x)", "<img src=x>",
         "<a href='http://evil'>click</a>", "http://auto.link www.example.com", "$x^2$ :red[red] **bold**"]
RENDER = MarkdownIt("commonmark")  # raw HTML on, as permissive as CommonMark gets


def visible_text(rendered: str) -> str:
    """The text a reader sees: tags dropped, entities resolved, without the invisible word
    joiners (U+2060) that ``escape`` puts into URLs so GFM makes no link of them."""
    shown = html.unescape(re.sub(r"<[^>]+>", " ", rendered)).replace("\u2060", "")
    return " ".join(shown.split())


def assert_shown_as_text(body: str, user_text: str) -> None:
    rendered = RENDER.render(body)
    for tag in ("<img", "<a ", "<script", "<h1", "<ul", "<ol", "<code>"):
        assert tag not in rendered, (body, rendered)
    assert "$" not in body.replace("\\$", "") and ":red[" not in body  # LaTeX and directives disarmed
    assert " ".join(user_text.split()) in visible_text(rendered), (user_text, rendered)


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs", "Cc"), include_characters="\n"),
               max_size=60)
       | st.lists(st.sampled_from(NASTY + ["#", "-", "1.", ">", "`", "*", "\n", " ", "    ", "&amp;",
                                            "\\", "|a|b|", "==="]), max_size=8).map("".join))
def test_escaped_text_renders_as_exactly_that_text(text):
    from dashboard.widgets.ui import escape

    rendered = RENDER.render(escape(text))
    assert "<img" not in rendered and "<a " not in rendered
    assert visible_text(rendered) == " ".join(text.split())


def upload(name: str, payload: bytes) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.file_uploader(key="upload_file").upload(name, payload).run()
    at.button(key="upload_load").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("cell", NASTY[:4])
def test_upload_error_quoting_a_cell_shows_it_as_text(runs_root, cell):
    table = pd.DataFrame({"conversation_id": ["c1", "c1"], "turn": [cell, "2"],
                          "speaker": ["a", "b"], "text": ["hello", "there"]})
    at = upload("turns.csv", table.to_csv(index=False).encode())
    bodies = [e.value for e in at.error]
    assert len(bodies) == 1 and "row 1" in bodies[0] and "turn" in bodies[0], bodies
    assert_shown_as_text(bodies[0], cell)


def test_uploaded_file_name_is_shown_as_text(runs_root):
    name = "![x](https:host.example) [link](https:evil.example)"
    table = pd.DataFrame({"conversation_id": ["a", "b"], "source": ["llm", "human"],
                          "global_coherence": [0.2, 0.4]})
    at = upload(f"{name}.csv", table.to_csv(index=False).encode())
    bodies = [s.value for s in at.success] + [m.value for m in at.markdown]
    shown = [b for b in bodies if "example" in b]
    assert shown, bodies
    for body in shown:
        assert_shown_as_text(body, name)


# -- a static guard: errors, names and texts going into a markdown call are escaped ---------
MARKDOWN_CALLS = {"error", "warning", "info", "success", "caption", "markdown", "write", "toast",
                  "title", "header", "subheader"}
# placeholders whose words say they hold text from a user, a file or a model (counts, the
# app's own labels and constants are left to the author)
RISKY = re.compile(r"\berror\b|\bexc\b|\breason\b|\bnote\b|\btext\b|reply|conversation_id|\.name\b|"
                   r"\bname\b|\btarget\b|\bfolder\b|\bpath\b|root\(")


def test_every_error_name_or_text_in_a_markdown_message_is_escaped():
    import ast

    unescaped = []
    for path in sorted((REPO / "dashboard").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in MARKDOWN_CALLS and node.args):
                continue
            first = node.args[0]
            if isinstance(first, ast.Call) and getattr(first.func, "attr", getattr(first.func, "id", "")) == "escape":
                continue
            parts = [p.value for p in ast.walk(first) if isinstance(p, ast.FormattedValue) and p.format_spec is None]
            if isinstance(first, (ast.Name, ast.Attribute, ast.Call)):
                parts.append(first)
            for value in parts:
                if isinstance(value, ast.Call) and getattr(value.func, "attr", getattr(value.func, "id", "")) == "escape":
                    continue
                text = ast.get_source_segment(source, value)
                if RISKY.search(text):
                    unescaped.append(f"{path.relative_to(REPO)}:{node.lineno}: {text}")
    assert not unescaped, "wrap user/file/model text in ui.escape(...):\n" + "\n".join(unescaped)
