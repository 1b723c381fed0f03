"""Pilot page: run a few sessions of one protocol on a real model, watch the turns arrive,
read the diagnosis of ``engine.diagnosis.diagnose`` against a reference dataset, save the pilot as a
dataset. The API key typed here lives only in this session's memory."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard.figures import diagnosis as diagnosis_figures
from dashboard.figures.live_map import PROJECTION_NOTE, LiveTrajectories, live_map
from dashboard.page_data import datasets
from dashboard.page_data.pilot_diagnosis import comparable_references, finished_sessions, pilot_page_data
from dashboard.pilot import history as pilot_history
from dashboard.pilot import settings as pilot_settings
from dashboard.pilot.job import PilotJob
from dashboard.widgets import notebook_button, session, ui
from dashboard.widgets.resources import get_embedder
from engine.diagnosis.diagnose import too_few_sessions_text
from engine.errors import InputError
from engine.tasks import TASK_IDS


def render(ctx) -> None:
    """The page (``dashboard.pages``: the app calls it with the open dataset, ``ctx``)."""
    JOB_KEY = "pilot_job"
    DATASET_KEY = "pilot_dataset"
    KEPT_KEY = "pilot_kept_folder"
    LIVE_KEY = "pilot_live_map"

    st.title("Pilot")
    st.caption("Try a model on a small pilot before a full grid: a few replicates of one protocol on "
               "one task, then a diagnosis of its trajectories against a reference dataset.")


    @st.cache_resource(show_spinner="Loading the local model…")
    def local_backend():
        from engine import llm

        return llm.make_backend(llm.Endpoint(provider="local", model="local"))


    def make_backend(kind: str, model: str, base_url: str, api_key: str):
        """The backend of the form's endpoint; a key typed in the form stays in memory (never in
        the Endpoint, which names only ``$OPENAI_API_KEY``, used when the field is empty)."""
        from engine import llm

        if kind == "local":
            return local_backend()
        if kind == "openai" and not base_url.strip():
            raise InputError("an OpenAI-compatible backend needs a base URL", field="base_url")
        if not model.strip():
            raise InputError("name the model to call", field="model")
        endpoint = llm.Endpoint(provider=kind, model=model.strip(), base_url=base_url.strip() or None)
        return llm.make_backend(endpoint, api_key=api_key or None)


    job: PilotJob | None = st.session_state.get(JOB_KEY)
    busy = job is not None and job.running
    _reference = st.session_state.get("pilot_reference")
    notebook_button.render("pilot", {
        # the form's plain settings only: never a key, nor a URL (it may carry credentials)
        "settings": {k: v for k, v in job.settings.items() if isinstance(v, (str, int, float, bool, type(None)))
                     and not any(word in k.lower() for word in ("key", "secret", "token", "url"))}
        if job is not None else None, "pilot": st.session_state.get(KEPT_KEY) or None,
        "reference": str(datasets.cached_runs_root() / _reference) if _reference else None})


    def number(where, name: str, value, step, *, disabled: bool = False, help: str = ""):
        """A number input with its allowed range in the label and NO bounds on the widget, so an
        out-of-range value reaches ``pilot_settings.check_settings`` and is refused with the range
        instead of being silently replaced by the widget."""
        _, _, label = pilot_settings.LIMITS[name]
        return where.number_input(f"{label} ({pilot_settings.range_text(name)})", value=value, step=step,
                                  key=f"pilot_{name}", disabled=disabled, help=help or None)


    with st.container(border=True):
        c1, c2 = st.columns(2)
        providers = pilot_settings.provider_choices()  # local, openai, then plugins' backends
        kind = c1.radio("Backend", list(providers), key="pilot_backend", horizontal=True, disabled=busy,
                        format_func=providers.get)
        model = base_url = api_key = ""
        if kind != "local":
            base_url = c1.text_input("Base URL", placeholder="https://api.openai.com/v1", key="pilot_base_url",
                                     disabled=busy)
            model = c1.text_input("Model", placeholder="gpt-4.1-mini", key="pilot_model", disabled=busy)
            api_key = c1.text_input("API key", type="password", key="pilot_api_key", disabled=busy,
                                    help="Kept only in this browser session's memory; never saved. "
                                         "Leave empty to use $OPENAI_API_KEY.")
        methods = pilot_settings.method_choices()  # the registry's, plugins' included
        method = c2.selectbox("Method", methods, index=methods.index("open"), key="pilot_method", disabled=busy)
        task = c2.selectbox("Task", TASK_IDS, key="pilot_task", disabled=busy)
        c3, c4, c5 = st.columns(3)
        single = method in pilot_settings.SINGLE_AGENT
        if single:
            c3.number_input("Agents (1: a single-agent method)", value=1, disabled=True, key="pilot_agents_single")
            agents = 1
        else:
            agents = number(c3, "agents", 3, 1, disabled=busy)
        paper_a = method in pilot_settings.TURN_LIMITED  # the steered discussion has paper A's turn limit
        if paper_a:
            turn_limit = number(c4, "turn_limit", 12, 1, disabled=busy,
                                help="Discussion turns (paper A uses 30 or 60; a pilot on the local model "
                                     "is faster with fewer).")
            rounds = None
        else:
            rounds = number(c4, "rounds", 2, 1, disabled=busy, help="Debate rounds R (paper B uses 2).")
            turn_limit = None
        replicates = number(c5, "replicates", 2, 1, disabled=busy)
        c6, c7, c8 = st.columns(3)
        max_tokens = number(c6, "max_tokens", 256, 32, disabled=busy,
                            help="Longest reply per discussion turn (an idea list gets this per idea); "
                                 "shorter is faster on the local model.")
        temperature = number(c7, "temperature", 1.0, 0.1, disabled=busy)
        judge = c8.selectbox("Judge", pilot_settings.JUDGES, key="pilot_judge", disabled=busy,
                             format_func=pilot_settings.JUDGE_LABELS.get,
                             help="Rates each final idea's novelty and usefulness (slower).")
        fidelity = None
        if pilot_settings.takes_fidelity(method):
            fidelity = st.radio("Fidelity", list(pilot_settings.FIDELITY_LABELS), key="pilot_fidelity",
                                format_func=pilot_settings.FIDELITY_LABELS.get, horizontal=True, disabled=busy,
                                help="Paper A's structures as the authors' released code ran them (the paper "
                                     "release's conversations were made so: a diagnosis against it compares "
                                     "like with like) or as the paper's text describes them (docs/fidelity.md).")
        b1, b2, _ = st.columns([1, 1, 4])
        start = b1.button("Run pilot", key="pilot_run", type="primary", disabled=busy)
        cancel = b2.button("Cancel", key="pilot_cancel", disabled=not busy,
                           help="Stops before the next model call; the turns received are kept.")

    if cancel and job is not None:
        job.cancel()

    if start:
        settings = {"backend": kind, "model": "local" if kind == "local" else model.strip(),
                    "base_url": base_url.strip() or None, "method": method, "task": task,
                    "agents": agents, "rounds": rounds, "turn_limit": turn_limit,
                    "replicates": replicates, "max_tokens": max_tokens, "temperature": temperature,
                    "judge": judge, "fidelity": fidelity}
        problems = pilot_settings.check_settings(settings)
        if problems:
            st.error("Not started. " + " · ".join(problems))
            start = False
    if start:
        try:
            backend = make_backend(kind, model, base_url, api_key)
            judge_backend = None if judge == "none" else backend if judge == "same" else local_backend()
        except InputError as error:
            st.error(f"Cannot start: {ui.escape(error)}")
        except Exception as error:  # e.g. the local model file is missing
            from engine.llm.secrets import scrub

            st.error(f"Cannot create the backend: {ui.escape(scrub(str(error)))}")
        else:
            embed = get_embedder().encode if method == "creative_mad" else None
            settings = {**settings, "agents": pilot_settings.team(settings) or 1,
                        "replicates": int(replicates), "max_tokens": int(max_tokens),
                        "temperature": float(temperature)}

            def run(job: PilotJob):
                from engine.runs.runner import run_pilot

                return run_pilot(method, task, pilot_settings.team(settings), pilot_settings.rounds(settings),
                                 int(replicates), job.guard(backend), on_turn=job.on_turn,
                                 on_session=job.on_session,
                                 judge_backend=None if judge_backend is None else job.guard(judge_backend),
                                 embedder=embed, **pilot_settings.protocol_options(settings))

            for key in (DATASET_KEY, KEPT_KEY, LIVE_KEY):
                st.session_state.pop(key, None)
            st.session_state[JOB_KEY] = PilotJob(settings).start(run)
            st.rerun()  # render the form locked (disabled) and the Cancel button enabled


    def turns_table(turns) -> pd.DataFrame:
        rows = [{"conversation": cid.rsplit("-", 1)[-1], "speaker": t.speaker, "round": t.round,
                 "phase": t.phase, "text": (t.text or "")[:300]} for cid, t in turns[-30:]]
        return pd.DataFrame(rows, columns=["conversation", "speaker", "round", "phase", "text"])


    def draw_live_map(turns, slot, note, draw: int) -> None:
        """Embed the turns not seen yet (MiniLM, cached) and draw the live trajectory map."""
        tracker: LiveTrajectories = st.session_state.setdefault(LIVE_KEY, LiveTrajectories())
        if tracker.error is None:
            try:
                tracker.update(turns, get_embedder().encode)
            except Exception as error:  # the run goes on; the map stops where it was
                tracker.error = f"{type(error).__name__}: {error}"
        points, marks = tracker.frames()
        unplaced = f"; {tracker.unplaced} before any discussion turn, not drawn" if tracker.unplaced else ""
        n_sessions = int(points["conversation_id"].nunique())
        note.caption(f"Live trajectory map: {len(points)} discussion turns of {n_sessions} session(s) (MiniLM, "
                     f"all-MiniLM-L6-v2; idea lists, ratings and moderator turns left out as in the trajectory "
                     f"features), {len(marks)} moderator intervention(s) marked{unplaced}. {PROJECTION_NOTE}")
        if tracker.error is not None:
            slot.warning(f"The live map stopped: the turns could not be embedded ({ui.escape(tracker.error)}). "
                         "The run goes on.")
        elif points.empty:
            slot.info("No discussion turn yet.")
        else:
            slot.plotly_chart(live_map(tracker), key=f"pilot_live_map_{draw}", width="stretch")


    def failed_sessions(job: PilotJob) -> list:
        return [c for c in (job.corpus or []) if c.status == "failed"]


    if job is not None:
        replicates_planned = job.settings["replicates"]
        with st.status("Pilot running…" if job.running else "Pilot finished", expanded=True,
                       state="running" if job.running else ("error" if job.error else "complete")) as status:
            progress = st.empty()
            live = st.empty()
            map_note, map_slot = st.empty(), st.empty()
            drawn = -1
            while True:
                turns, sessions = job.snapshot()
                progress.markdown(f"**{len(turns)}** turns received · **{sessions} / {replicates_planned}** "
                                  f"sessions finished · {(job.finished or time.time()) - job.started:.0f} s")
                live.dataframe(turns_table(turns), hide_index=True)
                if len(turns) != drawn:  # redraw only when turns arrived (and once at the start)
                    drawn = len(turns)
                    draw_live_map(turns, map_slot, map_note, drawn)
                if not job.running:
                    break
                time.sleep(0.5)
            if busy:  # the form above was drawn locked for the run: draw the page again, unlocked
                st.rerun()
            failed = failed_sessions(job)
            if job.cancelled:
                status.update(label=f"Pilot cancelled after {len(turns)} turns", state="error")
            elif job.error:
                status.update(label="Pilot stopped by an error", state="error")
            elif failed:
                status.update(label=f"Pilot finished, {len(failed)} of {replicates_planned} session(s) failed",
                              state="error")
            else:
                status.update(label="Pilot finished", state="complete")
            judged = (job.corpus.meta.get("judge") if job.corpus is not None else None) or {}
            if judged:  # consensual assessment of the final ideas (engine.judging.judge.rate_together)
                st.text(f"Judge: {judged.get('ideas', 0)} final ideas rated together in batches of at most "
                        f"{judged.get('batch_size')} by {len(judged.get('raters', []))} rater(s); "
                        f"irrelevant (rated 0, left out of the scaling): {judged.get('irrelevant', 0)}; "
                        f"unreadable verdicts (left missing): {judged.get('unreadable_verdicts', 0)}; "
                        f"replies asked again: {judged.get('retries', 0)}.")

    if job is not None and not job.running and job.corpus is not None:
        # Failures first, in full view: they are left out of everything below.
        failed = failed_sessions(job)
        n_sessions = len(job.corpus)
        if job.cancelled:
            st.warning(f"Cancelled by the user: the {len(job.snapshot()[0])} turns received are kept; "
                       "sessions that had not finished are marked failed and left out of the diagnosis.")
        if job.error:
            st.error(f"The run stopped: {ui.escape(job.error)}")
        if failed:
            st.error(f"{len(failed)} of {n_sessions} session(s) failed; they are left out of the diagnosis.")
            ui.table(st, pd.DataFrame([{"session": c.conversation_id, "turns received": len(c.turns),
                                        "error": c.error or ""} for c in failed]),
                     key="pilot_failed", hide_index=True)

    if job is not None and not job.running and job.corpus is not None and len(job.corpus):
        dataset = st.session_state.get(DATASET_KEY)
        if dataset is None:
            from engine.datasets import dataset_from_corpus

            settings = dict(job.settings)
            manifest = pilot_history.pilot_manifest(settings, started=job.started,
                                                    backend=job.corpus.meta.get("backend"), error=job.error,
                                                    cancelled=job.cancelled, conversations=list(job.corpus))
            with st.spinner("Embedding the turns and measuring the trajectories…"):
                dataset = dataset_from_corpus(job.corpus, get_embedder(),
                                              name=f"pilot_{settings['method']}_{settings['task']}", manifest=manifest)
            st.session_state[DATASET_KEY] = dataset
        if st.session_state.get(KEPT_KEY) is None:
            try:
                kept = pilot_history.keep(dataset, f"{datetime.fromtimestamp(job.started):%Y%m%d-%H%M%S}_"
                                                   f"{job.settings['method']}_{job.settings['task']}")
            except OSError as error:
                st.warning(f"This pilot could not be kept in the run history ({ui.escape(pilot_history.history_root())}): "
                           f"{ui.escape(error)}")
                kept = ""
            else:
                session.cached_dataset_names.clear()
            st.session_state[KEPT_KEY] = str(kept)
        if st.session_state.get(KEPT_KEY):
            st.caption(f"Kept in the run history: {ui.escape(st.session_state[KEPT_KEY])} (listed on the Data page, "
                       "selectable in the sidebar as “pilot: …”). The API key is never saved.")

        conversations = dataset.conversations
        succeeded = finished_sessions(conversations)
        st.subheader("Diagnosis")
        references = session.cached_dataset_names(str(datasets.cached_runs_root()))
        if succeeded.empty:
            reasons = sorted({c.error or "unknown error" for c in failed_sessions(job)})
            st.error(f"No diagnosis: none of the {len(conversations)} session(s) finished, so there is no "
                     f"trajectory to diagnose. Reason: {ui.escape('; '.join(reasons))}")
        elif not references:
            st.info("No reference dataset in cached_runs/ to compare with.")
        else:
            reference_name = st.selectbox("Reference", references, key="pilot_reference",
                                          index=references.index("paper_release") if "paper_release" in references else 0)
            reference_set = session.load_dataset(datasets.cached_runs_root() / reference_name)
            found = pilot_page_data(dataset, reference_set)
            if found.error:
                st.warning(f"No diagnosis: {ui.escape(found.error)}")
            else:
                diagnosis, left_out = found.diagnosis, found.left_out
                st.metric("Pilot conversations diagnosed", diagnosis.n_pilot)
                if left_out:
                    st.caption(f"{left_out} failed session(s) left out; {diagnosis.n_pilot} finished.")
                if diagnosis.caution:  # shown, never folded away
                    st.warning(ui.escape(diagnosis.caution))
                st.text(diagnosis.embedding_note)  # model names come from manifests: plain text
                st.text(diagnosis.implementation_note)
                if diagnosis.length_note:
                    st.text(diagnosis.length_note)
                recommendation = diagnosis.recommendation
                if diagnosis.diagnosed:
                    st.markdown("**Recommendation** (from the evidence below):")
                    st.text(recommendation.get("summary", ""))
                    for reason in recommendation.get("reasons", []):
                        st.text(f"• {reason}")
                    st.markdown("**Flags:** " + (ui.escape(", ".join(map(str, diagnosis.flags))) if diagnosis.flags
                                                 else "none"))
                elif not diagnosis.comparable:
                    st.markdown("**Recommendation:** none (not comparable); **Flags:** none")
                    st.markdown("**What would compare like with like**")
                    for route in diagnosis.routes:
                        st.text(f"({route['route']}) {route['title']}: {route['how']}")
                    offered = {name: session.load_dataset(datasets.cached_runs_root() / name) for name in references}
                    choices = comparable_references(dataset, offered)
                    ui.ours("The offered references, and whether each compares with this pilot "
                            "(same embedding model, same implementation, at least 20 conversations)")
                    ui.table(st, choices, key="pilot_comparable_references", hide_index=True)
                else:
                    st.markdown(f"**Recommendation:** none ({too_few_sessions_text(diagnosis.n_pilot)}); "
                                "**Flags:** none")
                if diagnosis.comparable:
                    ui.ours(f"Evidence: the pilot against {diagnosis.reference_description}"
                            + ("" if diagnosis.diagnosed else " (raw numbers, not assessed)"))
                    ui.chart(st, diagnosis_figures.diagnosis_positions(
                        diagnosis.evidence, diagnosis.n_pilot,
                        title=f"Pilot (N = {diagnosis.n_pilot}) within {diagnosis.reference_description}"),
                        key="pilot_positions")
                else:
                    ui.ours(f"Values side by side, not comparable: the pilot (N = {diagnosis.n_pilot}) and "
                            f"{diagnosis.reference_description}; no percentile is computed across them")
                ui.table(st, diagnosis.evidence, key="pilot_evidence", hide_index=True)
                with st.expander("Full diagnosis text"):
                    st.text(diagnosis.to_text())
        ui.ours("Pilot conversations")
        ui.table(st, conversations.drop(columns=["final_idea"], errors="ignore"), key="pilot_table",
                 hide_index=True)

        if not succeeded.empty:
            st.subheader("Save the pilot as a dataset")
            default_folder = pilot_history.save_folder(f"pilot_{job.settings['method']}_{job.settings['task']}_"
                                                       f"{datetime.fromtimestamp(job.started):%Y%m%d-%H%M%S}")
            folder = st.text_input("Folder (outside the project's checkout)", value=str(default_folder),
                                   key="pilot_save_folder")
            if failed_sessions(job):
                st.caption(f"The {len(failed_sessions(job))} failed session(s) are saved too, marked status = failed.")
            if st.button("Save", key="pilot_save"):
                target = Path(folder).expanduser()
                refusal = pilot_history.save_refusal(target)
                if refusal is not None:
                    st.error(ui.escape(refusal))
                else:
                    try:
                        dataset.save(target)
                    except OSError as error:
                        st.error(f"Could not save into {ui.escape(target)}: {ui.escape(error)}")
                    else:
                        session.cached_dataset_names.clear()
                        st.success(f"Saved {len(dataset.conversations)} conversations to {ui.escape(target)}. "
                                   "Pick it in the sidebar to explore it on every page.")
