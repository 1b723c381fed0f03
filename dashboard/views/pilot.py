"""Pilot page: run a few sessions of one protocol on a real model, watch the turns arrive,
read the diagnosis of ``engine.diagnosis.diagnose`` against a reference dataset, save the pilot as a
dataset. The API key typed here lives only in this session's memory. Layout only: the run's logic
is in ``dashboard.pilot`` (``settings``, ``run``, ``job``, ``history``), the diagnosis in
``dashboard.page_data.pilot_diagnosis``."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import streamlit as st

from dashboard.figures import diagnosis as diagnosis_figures
from dashboard.figures.live_map import PROJECTION_NOTE, LiveTrajectories, live_map
from dashboard.page_data import datasets
from dashboard.page_data.pilot_diagnosis import comparable_references, finished_sessions, pilot_page_data
from dashboard.pilot import history as pilot_history
from dashboard.pilot import run as pilot_run
from dashboard.pilot import settings as pilot_settings
from dashboard.pilot.job import PilotJob
from dashboard.widgets import notebook_button, page_context, session, ui
from dashboard.widgets.resources import get_embedder
from engine.diagnosis.diagnose import too_few_sessions_text
from engine.errors import InputError
from engine.tasks import TASK_IDS

JOB_KEY = "pilot_job"
DATASET_KEY = "pilot_dataset"
KEPT_KEY = "pilot_kept_folder"
LIVE_KEY = "pilot_live_map"


def render(ctx: page_context.PageContext) -> None:
    """The page: the form, the running or finished job, its diagnosis and saving."""
    st.title("Pilot")
    st.caption("Try a model on a small pilot before a full grid: a few replicates of one protocol on "
               "one task, then a diagnosis of its trajectories against a reference dataset.")
    job: PilotJob | None = st.session_state.get(JOB_KEY)
    busy = job is not None and job.running
    notebook_button.render("pilot", pilot_run.notebook_options(
        job.settings if job is not None else None, st.session_state.get(KEPT_KEY),
        pilot_run.reference_folder(datasets.cached_runs_root(), st.session_state.get("pilot_reference"))))
    form(busy, job)
    if job is None:
        return
    progress(job, busy)
    if job.running or job.corpus is None:
        return
    failures(job)
    if len(job.corpus):
        results(job)


@st.cache_resource(show_spinner="Loading the local model…")
def local_backend(model: str = "local"):
    from engine import llm

    return llm.make_backend(llm.Endpoint(provider="local", model=model))


def number(where, name: str, value, step, *, disabled: bool = False, help: str = ""):
    """A number input with its allowed range in the label and NO bounds on the widget, so an
    out-of-range value reaches ``pilot_settings.check_settings`` and is refused with the range
    instead of being silently replaced by the widget."""
    _, _, label = pilot_settings.LIMITS[name]
    return where.number_input(f"{label} ({pilot_settings.range_text(name)})", value=value, step=step,
                              key=f"pilot_{name}", disabled=disabled, help=help or None)


def form(busy: bool, job: PilotJob | None) -> None:
    """The pilot's settings (locked while it runs), Run and Cancel."""
    with st.container(border=True):
        c1, c2 = st.columns(2)
        providers = pilot_settings.provider_choices()  # every registered backend, plugins' included
        kind = c1.radio("Backend", list(providers), key="pilot_backend", horizontal=True, disabled=busy,
                        format_func=providers.get)
        values = {field.name: c1.text_input(field.label, value=field.default, help=field.help or None,
                                            key=f"pilot_{field.name}", disabled=busy)
                  for field in pilot_settings.backend_form(kind)}  # the fields the backend declares
        api_key = ""
        if pilot_settings.takes_key(kind):
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
        method_options = {name: st.text_input(f"{name} ({method}'s own option)", value=default, disabled=busy,
                                               key=f"pilot_own_{method}_{name}")
                          for name, default in pilot_settings.own_options(method).items()}
        fidelity = None
        if pilot_settings.takes_fidelity(method):
            fidelity = st.radio("Fidelity", list(pilot_settings.FIDELITY_LABELS), key="pilot_fidelity",
                                format_func=pilot_settings.FIDELITY_LABELS.get, horizontal=True, disabled=busy,
                                help="Paper A's structures as the authors' released code ran them (the paper "
                                     "release's conversations were made so: a diagnosis against it compares "
                                     "like with like) or as the paper's text describes them (docs/reference/fidelity.md).")
        b1, b2, _ = st.columns([1, 1, 4])
        start = b1.button("Run pilot", key="pilot_run", type="primary", disabled=busy)
        cancel = b2.button("Cancel", key="pilot_cancel", disabled=not busy,
                           help="Stops before the next model call; the turns received are kept.")

    if cancel and job is not None:
        job.cancel()
    if start:
        settings = pilot_run.form_settings(kind, values, method=method, task=task, agents=agents,
                                           rounds=rounds, turn_limit=turn_limit, replicates=replicates,
                                           max_tokens=max_tokens, temperature=temperature, judge=judge,
                                           fidelity=fidelity, method_options=method_options)
        problems = pilot_settings.check_settings(settings)
        if problems:
            st.error("Not started. " + " · ".join(problems))
        else:
            start_job(settings, kind, values, api_key)


def start_job(settings: dict, kind: str, values: dict[str, str], api_key: str) -> None:
    """Make the backends and start the pilot in the background; errors said on the page."""
    judge = settings["judge"]
    try:
        backend = pilot_run.backend(kind, values, api_key, local_backend)
        judge_backend = None if judge == "none" else backend if judge == "same" else local_backend()
    except InputError as error:
        st.error(f"Cannot start: {ui.escape(error)}")
        return
    except Exception as error:  # e.g. the local model file is missing
        from engine.llm.secrets import scrub

        st.error(f"Cannot create the backend: {ui.escape(scrub(str(error)))}")
        return
    embed = get_embedder().encode if settings["method"] == "creative_mad" else None
    settings = pilot_run.started_settings(settings)
    for key in (DATASET_KEY, KEPT_KEY, LIVE_KEY):
        st.session_state.pop(key, None)
    st.session_state[JOB_KEY] = PilotJob(settings).start(pilot_run.job_function(settings, backend, judge_backend,
                                                                                  embed))
    st.rerun()  # render the form locked (disabled) and the Cancel button enabled


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


def progress(job: PilotJob, busy: bool) -> None:
    """The turns as they arrive and the live map, until the job ends; then its status."""
    replicates_planned = job.settings["replicates"]
    with st.status("Pilot running…" if job.running else "Pilot finished", expanded=True,
                   state="running" if job.running else ("error" if job.error else "complete")) as status:
        shown_progress = st.empty()
        live = st.empty()
        map_note, map_slot = st.empty(), st.empty()
        drawn = -1
        while True:
            turns, sessions = job.snapshot()
            shown_progress.markdown(f"**{len(turns)}** turns received · **{sessions} / {replicates_planned}** "
                                    f"sessions finished · {(job.finished or time.time()) - job.started:.0f} s")
            live.dataframe(pilot_run.turns_table(turns), hide_index=True)
            if len(turns) != drawn:  # redraw only when turns arrived (and once at the start)
                drawn = len(turns)
                draw_live_map(turns, map_slot, map_note, drawn)
            if not job.running:
                break
            time.sleep(0.5)
        if busy:  # the form above was drawn locked for the run: draw the page again, unlocked
            st.rerun()
        label, state = pilot_run.status(job, len(turns))
        status.update(label=label, state=state)
        judged = (job.corpus.meta.get("judge") if job.corpus is not None else None) or {}
        if judged:  # consensual assessment of the final ideas (engine.judging.judge.rate_together)
            st.text(pilot_run.judge_summary(judged))


def failures(job: PilotJob) -> None:
    """Failures first, in full view: they are left out of everything below."""
    failed = pilot_run.failed_sessions(job)
    if job.cancelled:
        st.warning(f"Cancelled by the user: the {len(job.snapshot()[0])} turns received are kept; "
                   "sessions that had not finished are marked failed and left out of the diagnosis.")
    if job.error:
        st.error(f"The run stopped: {ui.escape(job.error)}")
    if failed:
        st.error(f"{len(failed)} of {len(job.corpus)} session(s) failed; they are left out of the diagnosis.")
        ui.table(st, pilot_run.failures_table(failed), key="pilot_failed", hide_index=True)


def pilot_dataset(job: PilotJob):
    """The finished pilot as a dataset (embedded and measured once), kept in the run history."""
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
            kept = pilot_history.keep(dataset, pilot_run.run_name(job.settings,
                                                                  f"{datetime.fromtimestamp(job.started):%Y%m%d-%H%M%S}"))
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
    return dataset


def results(job: PilotJob) -> None:
    """The finished pilot: its dataset, its diagnosis, its conversations, saving it."""
    dataset = pilot_dataset(job)
    conversations = dataset.conversations
    succeeded = finished_sessions(conversations)
    st.subheader("Diagnosis")
    references = session.cached_dataset_names(str(datasets.cached_runs_root()))
    if succeeded.empty:
        reasons = sorted({c.error or "unknown error" for c in pilot_run.failed_sessions(job)})
        st.error(f"No diagnosis: none of the {len(conversations)} session(s) finished, so there is no "
                 f"trajectory to diagnose. Reason: {ui.escape('; '.join(reasons))}")
    elif not references:
        st.info("No reference dataset in cached_runs/ to compare with.")
    else:
        diagnosis_of(dataset, references)
    ui.ours("Pilot conversations")
    ui.table(st, conversations.drop(columns=["final_idea"], errors="ignore"), key="pilot_table",
             hide_index=True)
    if not succeeded.empty:
        save(job, dataset)


def diagnosis_of(dataset, references: list[str]) -> None:
    """The pilot against the chosen reference (``dashboard.page_data.pilot_diagnosis``)."""
    reference_name = st.selectbox("Reference", references, key="pilot_reference",
                                  index=references.index("paper_release") if "paper_release" in references else 0)
    reference_set = session.load_dataset(datasets.cached_runs_root() / reference_name)
    found = pilot_page_data(dataset, reference_set)
    if found.error:
        st.warning(f"No diagnosis: {ui.escape(found.error)}")
        return
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


def save(job: PilotJob, dataset) -> None:
    """Save the pilot as a dataset folder outside the checkout."""
    st.subheader("Save the pilot as a dataset")
    default_folder = pilot_history.save_folder(f"pilot_{job.settings['method']}_{job.settings['task']}_"
                                               f"{datetime.fromtimestamp(job.started):%Y%m%d-%H%M%S}")
    folder = st.text_input("Folder (outside the project's checkout)", value=str(default_folder),
                           key="pilot_save_folder")
    failed = pilot_run.failed_sessions(job)
    if failed:
        st.caption(f"The {len(failed)} failed session(s) are saved too, marked status = failed.")
    if st.button("Save", key="pilot_save"):
        target = Path(folder).expanduser()
        refusal = pilot_history.save_refusal(target)
        if refusal is not None:
            st.error(ui.escape(refusal))
            return
        try:
            dataset.save(target)
        except OSError as error:
            st.error(f"Could not save into {ui.escape(target)}: {ui.escape(error)}")
        else:
            session.cached_dataset_names.clear()
            st.success(f"Saved {len(dataset.conversations)} conversations to {ui.escape(target)}. "
                       "Pick it in the sidebar to explore it on every page.")


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
