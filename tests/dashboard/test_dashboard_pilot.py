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

REPO = Path(__file__).resolve().parents[2]
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

    def fake_make_backend(endpoint, api_key=None, **kwargs):
        calls.append({"model": endpoint.model, "base_url": endpoint.base_url, "api_key": api_key})
        return backend

    import engine.llm
    import engine.runs.runner  # noqa: F401  imported first, so it keeps the real make_backend after the test

    monkeypatch.setattr(engine.llm, "make_backend", fake_make_backend)
    return calls


def start_pilot(replicates=2, agents=3, turn_limit=8, method="open", **more):
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/pilot.py").run()
    at.radio(key="pilot_backend").set_value("openai").run()
    at.text_input(key="pilot_base_url").input("http://127.0.0.1:9/v1")
    at.text_input(key="pilot_model").input("test-model")
    at.text_input(key="pilot_api_key").input(SECRET)
    at.selectbox(key="pilot_method").set_value(method).run()
    at.number_input(key="pilot_agents").set_value(agents)
    at.number_input(key="pilot_turn_limit").set_value(turn_limit)
    at.number_input(key="pilot_replicates").set_value(replicates)
    for key, value in more.items():
        widget = at.selectbox(key=f"pilot_{key}") if key == "judge" else at.number_input(key=f"pilot_{key}")
        widget.set_value(value)
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
    # the live trajectory map: the same 9 trajectory turns per session as the features,
    # one path per session, no intervention (an open discussion has no moderator)
    import json

    live = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
            if json.loads(c.proto.spec)["layout"]["xaxis"]["title"]["text"] == "random projection 1"]
    assert len(live) == 1
    paths = [t for t in live[0]["data"] if t["mode"].startswith("lines")]
    assert len(paths) == 2 and len(live[0]["data"]) == 2
    assert all(len(t["hovertext"]) == 8 + 1 for t in paths)
    assert any(f"{discussion_turns} discussion turns of 2 session(s)" in c.value and "0 moderator" in c.value
               for c in at.caption)
    # the diagnosis: both conversations, the pilot's own mean as evidence, a recommendation
    assert {m.label: m.value for m in at.metric}["Pilot conversations diagnosed"] == "2"
    evidence = next(d.value for d in at.dataframe if "pilot_mean" in d.value.columns).set_index("feature")
    assert evidence.loc["global_coherence", "pilot_mean"] == pytest.approx(table["global_coherence"].mean())
    # a MiniLM pilot against the release's Qwen3 features: not comparable, said in full view;
    # the values side by side, no percentile, no chart of positions, no flag, no recommendation
    assert not any(json.loads(c.proto.spec)["layout"]["title"]["text"].startswith("Pilot (N = 2) within")
                   for c in at.get("plotly_chart"))
    assert evidence["percentile"].isna().all() and evidence["z"].isna().all()
    assert set(evidence["flag"]) == {"not comparable"}
    from engine.measures.trajectory import PAPER_A_FEATURES

    release = Dataset.load(RELEASE, with_corpus=False).conversations
    open_rows = release[(release["source"] == "llm") & (release["discussion"] == "open")].dropna(
        subset=list(PAPER_A_FEATURES))
    assert evidence.loc["global_coherence", "reference_p50"] == pytest.approx(open_rows.global_coherence.median())
    assert any("**Recommendation:** none (not comparable)" in m.value for m in at.markdown)
    assert any(w.value.startswith("Not comparable") and "embedding models differ" in w.value for w in at.warning)
    assert any("nothing is ranked across them" in t.value for t in at.text)
    routes = [t.value for t in at.text if t.value.startswith("(")]
    assert routes[0].startswith("(a) re-embed the pilot with Qwen/Qwen3-Embedding-0.6B")
    assert any(r.startswith("(c) prescribe and verify") for r in routes)
    # the pilot ran paper A's open discussion as the release did: the page says so
    assert any("fidelity release" in t.value and "Made by: pilot" in t.value for t in at.text)
    offered = next(d.value for d in at.dataframe if "why not" in d.value.columns).set_index("reference")
    assert not offered["comparable"].any()  # no cached dataset is MiniLM + release mode of this revision
    assert "embedding Qwen/Qwen3-Embedding-0.6B" in offered.loc["paper_release", "why not"]

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


def test_live_map_of_a_steered_pilot_marks_every_intervention(runs_root, monkeypatch):
    """A steered pilot: the live map has the session's discussion turns as one path and a
    star per moderator turn, on the turn after which it fired, its rule in the hover."""
    import json

    backend = ScriptedBackend(responder=varied_reply(itertools.count()), model="test-model")
    patch_backend(monkeypatch, backend)
    at = start_pilot(replicates=1, turn_limit=8, method="steered")
    assert not at.exception, [e.value for e in at.exception]
    (live,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
               if json.loads(c.proto.spec)["layout"]["xaxis"]["title"]["text"] == "random projection 1"]
    (path,) = [t for t in live["data"] if t["mode"].startswith("lines")]
    (stars,) = [t for t in live["data"] if t.get("marker", {}).get("symbol") == "star"]
    job = at.session_state["pilot_job"]
    (conversation,) = list(job.corpus)
    moderator = [t for t in conversation.turns if t.phase == "moderator"]
    assert moderator  # the converge rule fires once the exploration budget is spent
    trajectory = [t for t in conversation.turns if t.phase not in ("moderator", "generation", "rating")]
    assert len(path["hovertext"]) == len(trajectory)
    assert len(stars["hovertext"]) == len(moderator)
    for hover, turn in zip(stars["hovertext"], moderator):
        assert turn.meta["rule"] in hover and f"after turn {turn.meta['n_turns']}" in hover


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
    # one MiniLM session against the release's Qwen3 features: the raw numbers side by side and
    # the caution in full view, no flag, no recommendation
    assert any(w.value.startswith("Not comparable") for w in at.warning)
    assert any("**Recommendation:** none (not comparable)" in m.value for m in at.markdown)
    evidence = next(d.value for d in at.dataframe if "pilot_mean" in d.value.columns)
    assert set(evidence["flag"]) == {"not comparable"} and evidence["percentile"].isna().all()


def test_out_of_range_inputs_are_refused_with_the_range(runs_root, monkeypatch):
    """Agents 1 and turn limit 1 used to run silently as 3 agents and 12 turns."""
    backend = ScriptedBackend(responder=varied_reply(itertools.count()), model="test-model")
    calls = patch_backend(monkeypatch, backend)
    at = start_pilot(replicates=1, agents=1, turn_limit=1)
    assert not at.exception, [e.value for e in at.exception]
    errors = " ".join(e.value for e in at.error)
    assert "Agents: 1 is outside the allowed range 2 to 8" in errors
    assert "Turn limit: 1 is outside the allowed range 2 to 60" in errors
    assert calls == [] and backend.history == [] and "pilot_job" not in at.session_state
    # the range is stated on the form itself
    assert at.number_input(key="pilot_agents").label == "Agents (2 to 8)"
    assert at.number_input(key="pilot_max_tokens").label == "Max tokens per turn (16 to 4096)"


@pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built")
def test_unreachable_server_fails_first_and_is_not_diagnosed(runs_root, monkeypatch):
    """Every call fails: the failures lead the page, nothing is diagnosed or offered to save."""
    def down(messages):
        raise BackendError("connection refused by 127.0.0.1:9")

    patch_backend(monkeypatch, ScriptedBackend(responder=down, model="test-model"))
    at = start_pilot(replicates=2)
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert any("2 of 2 session(s) failed" in e for e in errors)
    assert any(e.startswith("No diagnosis: none of the 2 session(s) finished") and "connection refused" in e
               for e in errors)
    assert "Pilot conversations diagnosed" not in {m.label for m in at.metric}
    assert not any("Recommendation" in m.value for m in at.markdown)
    assert not [b for b in at.button if b.key == "pilot_save"]
    failed = next(d.value for d in at.dataframe if "error" in d.value.columns)
    assert len(failed) == 2 and failed["error"].str.contains("connection refused").all()
    # kept in the history all the same, marked failed
    from dashboard.pilot import history as pilot_history

    listing = pilot_history.listing()
    assert listing[["sessions", "failed"]].values.tolist() == [[2, 2]]


@pytest.mark.skipif(not (RELEASE / "manifest.json").exists(), reason="paper release not built")
def test_max_tokens_and_temperature_reach_the_model_and_the_pilot_is_kept(runs_root, monkeypatch):
    backend = ScriptedBackend(responder=varied_reply(itertools.count()), model="test-model")
    patch_backend(monkeypatch, backend)
    at = start_pilot(replicates=1, turn_limit=4, max_tokens=96, temperature=0.3)
    assert not at.exception, [e.value for e in at.exception]
    # open discussion has no initial generation phase: every call is a discussion turn or the
    # synthesis, each with the 96 chosen (never the 512 default)
    assert {h["max_tokens"] for h in backend.history} == {96}
    assert [h["temperature"] for h in backend.history] == pytest.approx([0.3] * len(backend.history))
    from dashboard.pilot import history as pilot_history

    listing = pilot_history.listing()
    assert len(listing) == 1 and listing.loc[0, "sessions"] == 1 and listing.loc[0, "failed"] == 0
    kept = Dataset.load(listing.loc[0, "path"])
    assert kept.manifest["settings"]["max_tokens"] == 96
    assert SECRET not in (Path(listing.loc[0, "path"]) / "manifest.json").read_text()
    # the Data page lists it and opens it as a dataset
    at.switch_page("views/data_page.py").run()
    pilots = next(d.value for d in at.dataframe if "failed" in d.value.columns and "method" in d.value.columns)
    assert pilots["name"].tolist() == [listing.loc[0, "name"]]
    at.button(key="data_pilot_open").click().run()
    assert not at.exception
    assert at.sidebar.selectbox[0].value == "pilot: " + listing.loc[0, "name"]
    assert {m.label: m.value for m in at.metric}["Conversations selected"] == "1"


def test_cancel_keeps_the_turns_received():
    """PilotJob.cancel stops before the next model call; every turn received is kept."""
    import threading
    import time

    from dashboard.pilot.job import CANCELLED, PilotJob
    from engine.runs.runner import run_pilot

    gate = threading.Semaphore(0)
    counter = itertools.count()
    good = varied_reply(itertools.count())

    def slow(messages):
        next(counter)
        gate.acquire(timeout=10)  # each call waits for the test to let it through
        return good(messages)

    backend = ScriptedBackend(responder=slow, model="test-model")
    job = PilotJob({"method": "open", "task": "plastic_waste", "model": "test-model", "replicates": 1})
    job.start(lambda j: run_pilot("open", "plastic_waste", 3, None, 1, j.guard(backend),
                                  on_turn=j.on_turn, on_session=j.on_session, turn_limit=12))
    deadline = time.time() + 20
    while len(job.snapshot()[0]) < 2 and time.time() < deadline:
        gate.release()
        time.sleep(0.05)
    received = len(job.snapshot()[0])
    assert received >= 2
    job.cancel()
    for _ in range(5):
        gate.release()
    job.wait(20)
    assert not job.running
    (conversation,) = list(job.corpus)
    assert conversation.status == "failed" and CANCELLED in conversation.error
    assert len(conversation.turns) >= received  # nothing received was dropped
    assert len(conversation.turns) <= received + 1  # at most the call already in flight
    assert len(backend.history) < 6 + 12  # the 12-turn discussion did not run to its end


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
    at.selectbox(key="pilot_judge").set_value("same")
    at.run()
    at.button(key="pilot_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    judged = [t.value for t in at.text if t.value.startswith("Judge:")]
    # 2 final ideas, one batch for each of the panel's 5 raters (paper A's five raters): the
    # idea every rater gave 0 is irrelevant by majority, nothing unreadable
    assert judged == ["Judge: 2 final ideas rated together in batches of at most 10 by 5 rater(s); "
                      "irrelevant (rated 0, left out of the scaling): 1; unreadable verdicts (left "
                      "missing): 0; replies asked again: 0."]
    batches = [h for h in backend.history if "Idea N: Novelty" in h["messages"][-1]["content"]]
    assert len(batches) == 5
