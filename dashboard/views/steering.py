"""Steering page: the trajectory-steered discussion against open, instructed, iterative and
Creative-MAD on the cached local runs (``cached_runs/local_smollm2_steered``), with CIs and
N, whatever the result; the moderator's interventions by rule; what the dataset can show."""

from __future__ import annotations

import streamlit as st

from dashboard.figures import charts
from dashboard.page_data import steering as sd
from dashboard.page_data.analyses import small_model
from dashboard.page_data.datasets import cached_runs_root
from dashboard.widgets import notebook_button, page_context, ui
from dashboard.widgets.session import load_dataset
from engine.stats.guards import MIN_GROUPS_FOR_INTERVAL, too_few_text


def render(ctx: page_context.PageContext) -> None:
    """Draw the page; ``ctx``: the open dataset and the sidebar's selection."""
    st.title("Steering")
    st.caption("Beyond the papers: a moderator that watches paper A's trajectory features as the discussion "
               "forms (Table 19; targets from Table 23's LLM coefficients) and intervenes with floor, lens "
               "(paper B's Cognitive Lens Assignment), leap and converge rules. Protocol: "
               "`engine/protocols/steered.py`; run it with `python -m engine run --method steered`.")

    folder = cached_runs_root() / sd.DATASET_NAME
    if not (folder / "manifest.json").exists() or not (folder / sd.FINAL_IDS).exists():
        st.info(f"The steered-vs-baselines dataset is not built (no {sd.DATASET_NAME} in the cached runs). Build it: "
                "`nice -n 10 python -m engine run --grid cached_runs/grids/steered.yaml --out runs/steered` then "
                "`python -m dashboard.page_data.steering runs/steered`.")
        notebook_button.render("steering", {"folder": None})
        st.stop()

    dataset = load_dataset(folder)
    conversations = dataset.conversations
    data = sd.steering_page_data(conversations, folder)
    summary, n_ok = data.summary, data.finished
    ui.export_context(sample=f"finished sessions of {sd.DATASET_NAME}", n=f"{n_ok} sessions")
    manifest = dataset.manifest

    made_by = small_model(conversations) or "the local model"
    ui.ours(f"Steered vs baselines (our runs, {made_by})")
    groups_max = int(summary['groups'].max()) if len(summary) else 0
    st.caption(f"Dataset “{ui.escape(sd.DATASET_NAME)}”: {n_ok} finished sessions "
               f"({manifest.get('n_failed_sessions', 0)} failed, not shown), task(s) "
               f"{ui.escape(', '.join(manifest.get('tasks', [])))}, made by {ui.escape(made_by)}; no sidebar filter "
               "applies. Features: mean over sessions with a 95% Student-t interval (N = sessions with the feature). "
               "Judge (the same 135M model): rubric score 1–10 of each final idea (paper B) and creativity = novelty × "
               "usefulness rated together, scaled within task to [0, 1] (paper A), each with a 95% interval over the "
               "sessions it could rate that stays inside its range (Student t on the logit of the mean, "
               "back-transformed); parse rates = sessions with a readable score / sessions. Vendi / Div-BLEU: final "
               f"ideas in replicate order, groups of {sd.GROUP}, mean over groups with an interval inside [1, {sd.GROUP}] "
               f"and [0, 1]; at most {groups_max} groups per method"
               + (f": {too_few_text(groups_max)}, so the table shows the values only." if groups_max < MIN_GROUPS_FOR_INTERVAL
                  else ".") + " Fewer than 3 values: no interval.")
    notebook_button.render("steering", {"folder": str(folder)}, dataset=dataset, filters={})
    ui.table(st, data.shown.round(4), key="steering_summary", hide_index=True)

    differences = data.differences
    ui.ours("Steered minus each baseline")
    st.caption("Difference of session means, Welch 95% interval and Welch's p from the same statistic (they "
               "agree: p < .05 exactly when the interval excludes 0); an interval containing 0 means no "
               "detectable difference at this N. At least 3 sessions a side.")
    ui.table(st, differences.round(4), key="steering_differences", hide_index=True)

    records = data.records
    ui.ours("Moderator interventions by rule")
    st.caption(f"Recorded 'moderator' turns of the {data.steered_sessions} "
               "steered sessions (what was measured and the rule that fired are in each turn's meta; they are "
               "left out of every trajectory).")
    ui.table(st, data.interventions, key="steering_interventions", hide_index=True)

    steered_ids = data.steered_ids
    if steered_ids and dataset.turn_embeddings is not None:
        ui.ours("A steered session's trajectory, interventions marked")
        chosen = st.selectbox("Steered session", steered_ids, key="steering_session")
        rows = (dataset.turn_index["conversation_id"] == chosen).to_numpy()
        points, marks = sd.trajectory_with_marks(dataset.turn_embeddings[rows], chosen, records)
        figure = charts.trajectory_with_interventions(
            points, marks, axis_label="PC (the session's MiniLM embeddings)", label_turns=True, height=420)
        ui.chart(st, figure, key="steering_trajectory", outcome="the session's turn embeddings (PCA)",
                 n=f"1 session, {len(points)} turns", sample=chosen)
        if not marks.empty:
            shown = marks[["n_turns", "rule", "reason", "agent"] +
                          [c for c in marks.columns if c.startswith("measured_")]].round(4)
            ui.table(st, shown, key="steering_session_interventions", hide_index=True)

    st.subheader("What this dataset can and cannot show")
    for line in manifest.get("can_show", []):
        st.text(f"Can: {line}")
    for line in manifest.get("cannot_show", []):
        st.text(f"Cannot: {line}")
    if manifest.get("note"):
        st.caption(ui.escape(manifest["note"]))


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
