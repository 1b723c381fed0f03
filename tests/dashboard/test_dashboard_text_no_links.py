"""Text from users, files and models produces no link on the dashboard, with Streamlit's
GitHub-flavoured renderer in mind; uploads with huge integers and the Trajectories page on a
dataset of 2 or 3 turns end in a message, never an exception box.

Streamlit renders markdown with remark-gfm, whose literal autolinks (``www.``, ``http://``,
``https://``, e-mail addresses) are found in the text *after* backslash escapes are resolved
(mdast-util-gfm-autolink-literal's transform), so an escaped ``http\\:\\/\\/host`` still
became a link, which a CommonMark renderer (the older test) does not show. ``gfm_autolinks``
below applies that transform's patterns to the text a markdown parser (markdown-it-py)
produces; ``markdown-it-py``'s own ``linkify`` (linkify-it-py) is checked too. The browser
test (``test_browser.py``) counts the links Chromium shows.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
WORD_JOINER = "\u2060"

# mdast-util-gfm-autolink-literal (lib/index.js): URL and e-mail literals found in text nodes
_GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE | re.ASCII)
_GFM_EMAIL = re.compile(r"(?:^|(?<=[\s\W]))([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)", re.ASCII)
_GFM_PROTOCOL_EMAIL = re.compile(r"(mailto|xmpp):[-.\w+]+@[-\w]+(?:\.[-\w]+)+", re.IGNORECASE | re.ASCII)
COMMONMARK = MarkdownIt("commonmark")
LINKIFY = MarkdownIt("gfm-like")  # markdown-it-py with linkify-it-py


def text_runs(markdown: str) -> list[str]:
    """The plain text of each inline run, escapes resolved, as a markdown parser sees it
    (what remark's text nodes hold before the autolink transform)."""
    runs = []
    for token in COMMONMARK.parse(markdown):
        if token.type != "inline":
            continue
        current = ""
        for child in token.children or []:
            if child.type in ("text", "text_special"):
                current += child.content
            else:
                runs.append(current)
                current = ""
        runs.append(current)
    return runs


def gfm_autolinks(markdown: str) -> list[str]:
    """Every literal autolink GitHub-flavoured markdown would make of ``markdown``."""
    found = []
    for run in text_runs(markdown):
        for pattern in (_GFM_URL, _GFM_EMAIL, _GFM_PROTOCOL_EMAIL):
            found += [m.group(0) for m in pattern.finditer(run) if "." in m.group(0) or ":" in m.group(0)]
    rendered = LINKIFY.render(markdown)
    found += re.findall(r"<a [^>]*>", rendered)
    return found


def visible(markdown: str) -> str:
    shown = html.unescape(re.sub(r"<[^>]+>", " ", COMMONMARK.render(markdown)))
    return " ".join(shown.replace(WORD_JOINER, "").split())


def test_the_checker_sees_what_streamlit_linked():
    # escaped as before: a CommonMark renderer shows no link, GFM's transform still makes one
    old = r"see http\:\/\/evil\.example\/x and www\.example\.com or bob\@example\.com"
    assert "<a " not in COMMONMARK.render(old)
    assert len(gfm_autolinks(old)) == 3
    assert gfm_autolinks("plain words, no link at all.") == []


URLISH = ["http://evil.example/x", "https://a.b/c?d=1&e=2", "www.example.com", "WWW.Example.org/x",
          "bob@example.com", "mailto:bob@example.com", "xmpp:me@chat.example", "<https://x.y>",
          "[link](http://x)", "![img](http://host/x.png)", "http://[::1]:80/", "ftp://files.example/x"]


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.sampled_from(URLISH + [" ", "\n", "text", "é", "*", "_", ".", ":", "/", "@", "w", "ww"]),
                max_size=10).map("".join))
def test_escaped_text_makes_no_link_and_shows_the_same_text(text):
    from dashboard.widgets.ui import escape

    body = escape(text)
    assert gfm_autolinks(body) == [], (text, body)
    assert "<img" not in COMMONMARK.render(body)
    assert visible(body) == " ".join(text.split())


def _upload(at: AppTest, name: str, payload: bytes) -> AppTest:
    at.file_uploader(key="upload_file").upload(name, payload).run()
    at.button(key="upload_load").click().run()
    return at


def _turns_csv(layout: list[int], task: str = "plastic_waste", model: str = "m") -> bytes:
    rows = ["conversation_id,speaker,text,turn,task,model"]
    for c, n in enumerate(layout):
        for t in range(n):
            rows.append(f"c{c},{'AB'[t % 2]},turn {t} of c{c} on http://evil.example/{c} and www.x{c}.example.com,"
                        f"{t},{task},{model}")
    return ("\n".join(rows) + "\n").encode()


def test_the_transcript_reader_shows_urls_in_task_and_model_as_text(runs_root):
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    _upload(at, "urls.csv", _turns_csv([3, 3], task="task http://task.example", model="model www.model.example"))
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("views/trajectories.py").run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value for c in at.caption if "task" in c.value and "model" in c.value]
    assert captions, [c.value for c in at.caption]
    for caption in captions:
        assert gfm_autolinks(caption) == [], caption
        assert "task http://task.example" in visible(caption)


@pytest.mark.parametrize("layout, method, message", [
    ([2], "pca", "at least 3 turns"), ([1, 1], "pca", "at least 3 turns"),
    ([3], "umap", "UMAP needs at least 4 turns"), ([3], "pca", None),
    pytest.param([2, 2], "umap", None, marks=pytest.mark.slow),  # UMAP's first fit compiles numba code
])
def test_the_trajectories_page_on_a_tiny_dataset_says_why_instead_of_crashing(runs_root, layout, method, message):
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    _upload(at, "tiny.csv", _turns_csv(layout))
    at.switch_page("views/trajectories.py").run()
    if method == "umap":
        at.radio(key="traj_method").set_value("umap").run()
    assert not at.exception, [e.value[:500] for e in at.exception]
    infos = " ".join(i.value.replace("\\", "") for i in at.info)
    if message:
        assert message in infos, infos
    else:
        assert "No map of the turns" not in infos


@pytest.mark.parametrize("name, payload, field", [
    ("turns.csv", b"conversation_id,speaker,text,turn\nc1,A,hi," + b"9" * 5000 + b"\nc1,B,yo,1\nc1,A,so,2\n", "turn"),
    ("turns.csv", b"conversation_id,speaker,text,turn\nc1,A,hi," + b"9" * 30 + b"\nc1,B,yo,1\nc1,A,so,2\n", "turn"),
    ("turns.jsonl", json.dumps({"conversation_id": "c1", "speaker": "A", "text": "hi", "turn": 0}).encode()
     + b"\n" + b'{"conversation_id": "c1", "speaker": "B", "text": "yo", "turn": 1, "team_size": '
     + b"9" * 5000 + b"}\n", "team_size"),
])
def test_an_upload_with_huge_integers_is_one_error_naming_the_field(runs_root, name, payload, field):
    from dashboard.page_data.uploads import read_upload
    from engine.errors import InputError

    with pytest.raises(InputError) as caught:
        read_upload(name, payload)
    assert caught.value.field == field and caught.value.path == name and "out of range" in str(caught.value)
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    _upload(at, name, payload)
    assert not at.exception, [e.value[:500] for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "out of range" in errors[0].replace("\\", ""), errors
