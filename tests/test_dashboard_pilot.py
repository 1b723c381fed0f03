"""Pilot page (AppTest): live run, failure keeps turns, save, and the API key never leaks.

The backend is engine.llm.ScriptedBackend, a test double, patched in for
``engine.llm.make_backend``; the page itself only ever offers real backends.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.datasets import Dataset
from engine.llm import BackendError, ScriptedBackend

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "dashboard" / "app.py")
RELEASE = REPO / "cached_runs" / "paper_release"
SECRET = "sk-test-NEVER-SHOWN"  # fake; shaped like a key (scrubbed by shape too)
WORDS = ("refill", "deposit", "tokens", "bacteria", "enzyme", "festival", "school", "market",
         "drone", "river", "seaweed", "packaging", "app", "game", "tax", "robot", "garden")


def varied_reply(counter):
    def reply(messages):
        i = next(counter)
        words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(6)]
        return f"Idea {i}: build a {' '.join(words)} programme for the city, version {i}."
    return reply


def patch_backend(monkeypatch, backend):
    calls = []

    def fake_make_backend(model="local", base_url=None, api_key=None, **kwargs):
        calls.append({"model": model, "base_url": base_url, "api_key": api_key})
        return backend

    import engine.llm

    monkeypatch.setattr(engine.llm, "make_backend", fake_make_backend)
    return calls


def start_pilot(replicates=2):
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/pilot.py").run()
    at.radio(key="pilot_backend").set_value("openai").run()
    at.text_input(key="pilot_base_url").input("http://127.0.0.1:9/v1")
    at.text_input(key="pilot_model").input("test-model")
    at.text_input(key="pilot_api_key").input(SECRET)
    at.selectbox(key="pilot_method").set_value("open").run()
    at.number_input(key="pilot_agents").set_value(3)
    at.number_input(key="pilot_turn_limit").set_value(8)
    at.number_input(key="pilot_replicates").set_value(replicates)
    at.run()
    at.button(key="pilot_run").click().run()
    return at


def page_text(at) -> str:
    parts = []
    for kind in ("markdown", "caption", "error", "warning", "info", "success", "text", "metric", "exception"):
        for element in getattr(at, kind):
            parts.append(str(getattr(element, "value", "")) + str(getattr(element, "label", "")))
    for frame in at.dataframe:
        parts.append(frame.value.to_csv())
    return "\n".join(parts)


@pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built")
def test_pilot_runs_shows_turns_and_saves_without_the_key(runs_root, monkeypatch, tmp_path):
    backend = ScriptedBackend(responder=varied_reply(itertools.count()), model="test-model")
    calls = patch_backend(monkeypatch, backend)
    at = start_pilot(replicates=2)
    assert not at.exception, [e.value for e in at.exception]
    assert calls == [{"model": "test-model", "base_url": "http://127.0.0.1:9/v1", "api_key": SECRET}]
    # every model call became a turn; the live view counted them all and both sessions
    n_turns = len(backend.history)
    assert any(f"**{n_turns}** turns received" in m.value and "**2 / 2** sessions" in m.value
               for m in at.markdown)
    table = next(d.value for d in at.dataframe if "global_coherence" in d.value.columns)
    assert len(table) == 2 and table["status"].eq("ok").all()
    # the trajectory of an open session: 8 discussion turns + the synthesis; the other calls
    # (ratings, judge) are recorded but are not turns of the discussion
    discussion_turns = 2 * (8 + 1)
    assert table["n_turns"].sum() == discussion_turns
    # the diagnosis: both conversations, the pilot's own mean as evidence, a recommendation
    assert {m.label: m.value for m in at.metric}["Pilot conversations diagnosed"] == "2"
    evidence = next(d.value for d in at.dataframe if "pilot_mean" in d.value.columns).set_index("feature")
    assert evidence.loc["global_coherence", "pilot_mean"] == pytest.approx(table["global_coherence"].mean())
    assert any(m.value.startswith("**Recommendation:**") for m in at.markdown)
    # MiniLM pilot against the release's Qwen3 features: percentiles only, said on the page
    assert any("switched to percentile ranks within the reference by itself" in t.value for t in at.text)
    assert evidence["z"].isna().all()

    target = tmp_path / "saved_pilot"
    at.text_input(key="pilot_save_folder").input(str(target)).run()
    at.button(key="pilot_save").click().run()
    assert not at.exception
    assert any("Saved 2 conversations" in s.value for s in at.success)
    saved = Dataset.load(target)
    assert len(saved.conversations) == 2
    assert saved.turn_embeddings.shape[0] == discussion_turns
    assert saved.manifest["settings"]["base_url"] == "http://127.0.0.1:9/v1"
    for path in target.rglob("*"):
        assert SECRET.encode() not in path.read_bytes(), f"key written into {path.name}"
    assert SECRET not in page_text(at)


@pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built")
def test_failing_backend_shows_error_and_keeps_turns(runs_root, monkeypatch):
    counter = itertools.count()
    good = varied_reply(itertools.count())

    def flaky(messages):
        if next(counter) >= 8:
            raise BackendError(f"server said 401 for key {SECRET}")
        return good(messages)

    backend = ScriptedBackend(responder=flaky, model="test-model")
    patch_backend(monkeypatch, backend)
    at = start_pilot(replicates=1)
    assert not at.exception, [e.value for e in at.exception]
    text = page_text(at)
    assert SECRET not in text
    problems = [e.value for e in at.error] + [w.value for w in at.warning]
    assert problems, "the failure is not shown"
    table = next(d.value for d in at.dataframe if "status" in d.value.columns)
    assert table["status"].eq("failed").all()
    # the turns answered before the failure are kept: open has no initial generation phase
    # (paper A, Table 6), so the 8 calls answered were 8 discussion turns (turn limit 12)
    assert table["n_turns"].sum() == 8


def test_openai_backend_without_url_is_a_message(runs_root):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("views/pilot.py").run()
    at.radio(key="pilot_backend").set_value("openai").run()
    at.button(key="pilot_run").click().run()
    assert not at.exception
    assert any("base URL" in e.value for e in at.error)


@pytest.mark.slow
@pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built")
def test_pilot_on_the_real_local_model(runs_root):
    """The default backend: SmolLM2 in-process, one Self-Refine session, diagnosed."""
    at = AppTest.from_file(APP, default_timeout=900)
    at.run()
    at.switch_page("views/pilot.py").run()
    assert at.radio(key="pilot_backend").value == "local"
    at.selectbox(key="pilot_method").set_value("self_refine").run()
    at.number_input(key="pilot_rounds").set_value(1)
    at.number_input(key="pilot_replicates").set_value(1)
    at.run()
    at.button(key="pilot_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "global_coherence" in d.value.columns)
    assert table["status"].tolist() == ["ok"]
    n_turns = int(table["n_turns"].iloc[0])
    assert n_turns >= 2
    assert any(f"**{n_turns}** turns received" in m.value for m in at.markdown)
    assert {m.label: m.value for m in at.metric}["Pilot conversations diagnosed"] == "1"


@pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built")
def test_pilot_judge_rates_final_ideas_together_and_shows_the_counts(runs_root, monkeypatch):
    team = varied_reply(itertools.count())

    def reply(messages):
        prompt = messages[-1]["content"]
        if "Idea N: Novelty <number>, Usefulness <number>" in prompt:  # the judge's batch
            # the first idea shown is judged irrelevant (0), the second gets 6 / 4
            return "Idea 1: Novelty 0, Usefulness 0\nIdea 2: Novelty 6, Usefulness 4"
        return team(messages)

    backend = ScriptedBackend(responder=reply, model="test-model")
    patch_backend(monkeypatch, backend)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/pilot.py").run()
    at.radio(key="pilot_backend").set_value("openai").run()
    at.text_input(key="pilot_base_url").input("http://127.0.0.1:9/v1")
    at.text_input(key="pilot_model").input("test-model")
    at.selectbox(key="pilot_method").set_value("open").run()
    at.number_input(key="pilot_turn_limit").set_value(2)
    at.number_input(key="pilot_replicates").set_value(2)
    at.checkbox(key="pilot_judge").check()
    at.run()
    at.button(key="pilot_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    judged = [t.value for t in at.text if t.value.startswith("Judge:")]
    # 2 final ideas, one batch, one rater: one judged irrelevant, nothing unreadable
    assert judged == ["Judge: 2 final ideas rated together in batches of at most 10 by 1 rater(s); "
                      "irrelevant (rated 0, left out of the scaling): 1; unreadable verdicts (left "
                      "missing): 0; replies asked again: 0."]
    batches = [h for h in backend.history if "Idea N: Novelty" in h["messages"][-1]["content"]]
    assert len(batches) == 1
