"""Pilot page: run a few sessions of one protocol on a real model, watch the turns arrive,
read the diagnosis of ``engine.diagnose`` against a reference dataset, save the pilot as a
dataset. The API key typed here lives only in this session's memory."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import data, ui
from dashboard.pilot_job import PilotJob
from dashboard.resources import get_embedder
from engine.errors import InputError
from engine.protocols.config import METHODS, PAPER_A
from engine.tasks import TASK_IDS

JOB_KEY = "pilot_job"
DATASET_KEY = "pilot_dataset"

st.title("Pilot")
st.caption("Try a model on a small pilot before a full grid: a few replicates of one protocol on "
           "one task, then a diagnosis of its trajectories against a reference dataset.")


@st.cache_resource(show_spinner="Loading the local model…")
def local_backend():
    from engine import llm

    return llm.make_backend("local")


def make_backend(kind: str, model: str, base_url: str, api_key: str):
    from engine import llm

    if kind == "local":
        return local_backend()
    if not base_url.strip():
        raise InputError("an OpenAI-compatible backend needs a base URL", field="base_url")
    if not model.strip():
        raise InputError("name the model to call", field="model")
    return llm.make_backend(model.strip(), base_url=base_url.strip(), api_key=api_key or None)


job: PilotJob | None = st.session_state.get(JOB_KEY)
busy = job is not None and job.running

with st.container(border=True):
    c1, c2 = st.columns(2)
    kind = c1.radio("Backend", ["local", "openai"], key="pilot_backend", horizontal=True, disabled=busy,
                    format_func={"local": "Local model (SmolLM2, in-process)",
                                 "openai": "OpenAI-compatible server"}.get)
    model = base_url = api_key = ""
    if kind == "openai":
        base_url = c1.text_input("Base URL", placeholder="https://api.openai.com/v1", key="pilot_base_url",
                                 disabled=busy)
        model = c1.text_input("Model", placeholder="gpt-4.1-mini", key="pilot_model", disabled=busy)
        api_key = c1.text_input("API key", type="password", key="pilot_api_key", disabled=busy,
                                help="Kept only in this browser session's memory; never saved. "
                                     "Leave empty to use $OPENAI_API_KEY.")
    method = c2.selectbox("Protocol", METHODS, index=METHODS.index("open"), key="pilot_method", disabled=busy)
    task = c2.selectbox("Task", TASK_IDS, key="pilot_task", disabled=busy)
    c3, c4, c5 = st.columns(3)
    single = method in ("direct", "self_refine")
    agents = c3.number_input("Agents", min_value=1 if single else 2, max_value=8, value=1 if single else 3,
                             key="pilot_agents", disabled=busy or single)
    paper_a = method in PAPER_A
    if paper_a:
        turn_limit = c4.number_input("Turn limit", min_value=2, max_value=60, value=12, key="pilot_turn_limit",
                                     disabled=busy, help="Discussion turns (paper A uses 30 or 60; a pilot "
                                                         "on the local model is faster with fewer).")
        rounds = None
    else:
        rounds = c4.number_input("Rounds", min_value=0, max_value=10, value=2, key="pilot_rounds",
                                 disabled=busy, help="Debate rounds R (paper B uses 2).")
        turn_limit = None
    replicates = c5.number_input("Replicates", min_value=1, max_value=20, value=2, key="pilot_replicates",
                                 disabled=busy)
    judge = st.checkbox("Rate final ideas with the same model (slower)", value=False, key="pilot_judge",
                        disabled=busy)
    start = st.button("Run pilot", key="pilot_run", type="primary", disabled=busy)

if start:
    team = None if single else int(agents)
    settings = {"backend": kind, "model": "local" if kind == "local" else model.strip(),
                "base_url": base_url.strip() or None, "method": method, "task": task,
                "agents": team or 1, "rounds": None if rounds is None else int(rounds),
                "turn_limit": None if turn_limit is None else int(turn_limit),
                "replicates": int(replicates), "judge": bool(judge)}
    options = {"rounds": settings["rounds"], "turn_limit": settings["turn_limit"]}
    try:
        from engine.protocols.config import make_config

        make_config(method, agents=team, **options)  # a bad combination stops here
        backend = make_backend(kind, model, base_url, api_key)
    except InputError as error:
        st.error(f"Cannot start: {ui.escape(error)}")
    except Exception as error:  # e.g. the local model file is missing
        from engine.llm.secrets import scrub

        st.error(f"Cannot create the backend: {ui.escape(scrub(str(error)))}")
    else:
        embed = get_embedder().encode if method == "creative_mad" else None

        def run(job: PilotJob):
            from engine.runner import run_pilot

            return run_pilot(method, task, team, options["rounds"], int(replicates), backend,
                             turn_limit=options["turn_limit"],
                             on_turn=job.on_turn, on_session=job.on_session,
                             judge_backend=backend if judge else None, embedder=embed)

        st.session_state.pop(DATASET_KEY, None)
        job = st.session_state[JOB_KEY] = PilotJob(settings).start(run)


def turns_table(turns) -> pd.DataFrame:
    rows = [{"conversation": cid.rsplit("-", 1)[-1], "speaker": t.speaker, "round": t.round,
             "phase": t.phase, "text": (t.text or "")[:300]} for cid, t in turns[-30:]]
    return pd.DataFrame(rows, columns=["conversation", "speaker", "round", "phase", "text"])


if job is not None:
    replicates_planned = job.settings["replicates"]
    with st.status("Pilot running…" if job.running else "Pilot finished", expanded=True,
                   state="running" if job.running else ("error" if job.error else "complete")) as status:
        progress = st.empty()
        live = st.empty()
        while True:
            turns, sessions = job.snapshot()
            progress.markdown(f"**{len(turns)}** turns received · **{sessions} / {replicates_planned}** "
                              f"sessions finished · {(job.finished or time.time()) - job.started:.0f} s")
            live.dataframe(turns_table(turns), hide_index=True)
            if not job.running:
                break
            time.sleep(0.5)
        failed = [c for c in (job.corpus or []) if c.status == "failed"]
        if job.error:
            status.update(label="Pilot stopped by an error", state="error")
            st.error(f"The backend failed: {ui.escape(job.error)}. The {len(turns)} turns received are kept below.")
        elif failed:
            status.update(label=f"Pilot finished, {len(failed)} session(s) failed", state="error")
            for conversation in failed:
                st.warning(f"{ui.escape(conversation.conversation_id)}: {ui.escape(conversation.error)}")
        else:
            status.update(label="Pilot finished", state="complete")
        judged = (job.corpus.meta.get("judge") if job.corpus is not None else None) or {}
        if judged:  # consensual assessment of the final ideas (engine.judge.rate_together)
            st.text(f"Judge: {judged.get('ideas', 0)} final ideas rated together in batches of at most "
                    f"{judged.get('batch_size')} by {len(judged.get('raters', []))} rater(s); "
                    f"irrelevant (rated 0, left out of the scaling): {judged.get('irrelevant', 0)}; "
                    f"unreadable verdicts (left missing): {judged.get('unreadable_verdicts', 0)}; "
                    f"replies asked again: {judged.get('retries', 0)}.")

if job is not None and not job.running and job.corpus is not None and len(job.corpus):
    dataset = st.session_state.get(DATASET_KEY)
    if dataset is None:
        from engine.datasets import dataset_from_corpus

        settings = dict(job.settings)
        manifest = {"description": f"pilot: {settings['method']} on {settings['task']}, "
                                   f"{settings['replicates']} replicate(s)",
                    "source": "engine.runner.run_pilot from the dashboard",
                    "made_by": "dashboard Pilot page", "settings": settings,
                    "created": datetime.now().isoformat(timespec="seconds"),
                    "backend": job.corpus.meta.get("backend"), "error": job.error}
        with st.spinner("Embedding the turns and measuring the trajectories…"):
            dataset = dataset_from_corpus(job.corpus, get_embedder(), name=f"pilot_{settings['method']}_{settings['task']}",
                                          manifest=manifest)
        st.session_state[DATASET_KEY] = dataset

    st.subheader("Diagnosis")
    references = data.cached_dataset_names(str(data.cached_runs_root()))
    if not references:
        st.info("No reference dataset in cached_runs/ to compare with.")
    else:
        reference_name = st.selectbox("Reference", references, key="pilot_reference",
                                      index=references.index("paper_release") if "paper_release" in references else 0)
        reference_set = data.load_dataset(data.cached_runs_root() / reference_name)
        reference = reference_set.conversations
        if "source" in reference.columns:
            reference = reference[reference["source"] == "llm"]
        try:
            from engine.diagnose import diagnose

            # the two manifests name the embedding models; diagnose compares by percentile
            # ranks only when they differ (or one is not recorded) and says so
            diagnosis = diagnose(dataset.conversations, reference,
                                 pilot_embedding=dataset.manifest.get("embedding_model"),
                                 reference_embedding=reference_set.manifest.get("embedding_model"))
        except ImportError:
            st.info("The diagnosis module (engine.diagnose) is not installed in this build.")
        except InputError as error:
            st.warning(f"No diagnosis: {ui.escape(error)}")
        else:
            st.metric("Pilot conversations diagnosed", diagnosis.n_pilot)
            st.text(diagnosis.embedding_note)  # model names come from manifests: plain text
            recommendation = diagnosis.recommendation
            summary = recommendation.get("summary", "") if isinstance(recommendation, dict) else str(recommendation)
            st.markdown(f"**Recommendation:** {ui.escape(summary)}")
            for reason in (recommendation.get("reasons", []) if isinstance(recommendation, dict) else []):
                st.markdown(f"- {ui.escape(reason)}")
            st.markdown("**Flags:** " + (ui.escape(", ".join(map(str, diagnosis.flags))) if diagnosis.flags else "none"))
            ui.ours(f"Evidence: the pilot against {diagnosis.reference_description}")
            ui.table(st, diagnosis.evidence, key="pilot_evidence", hide_index=True)
            with st.expander("Full diagnosis text"):
                st.text(diagnosis.to_text())
    ui.ours("Pilot conversations")
    ui.table(st, dataset.conversations.drop(columns=["final_idea"], errors="ignore"), key="pilot_table",
                 hide_index=True)

    st.subheader("Save the pilot as a dataset")
    default_folder = data.cached_runs_root() / f"pilot_{job.settings['method']}_{job.settings['task']}_" \
                                               f"{datetime.fromtimestamp(job.started):%Y%m%d-%H%M%S}"
    folder = st.text_input("Folder", value=str(default_folder), key="pilot_save_folder")
    if st.button("Save", key="pilot_save"):
        target = Path(folder).expanduser()
        if (target / "manifest.json").exists():
            st.error(f"{ui.escape(target)} already holds a dataset; choose another folder.")
        else:
            try:
                dataset.save(target)
            except OSError as error:
                st.error(f"Could not save into {ui.escape(target)}: {ui.escape(error)}")
            else:
                data.cached_dataset_names.clear()
                st.success(f"Saved {len(dataset.conversations)} conversations to {ui.escape(target)}. "
                           "Pick it in the sidebar to explore it on every page.")
