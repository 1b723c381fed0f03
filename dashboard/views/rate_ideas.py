"""Rate ideas page: people rate a dataset's ideas as paper A's five judges did (Methods,
"Creativity evaluation": novelty and usefulness on a 10-point scale, 0 = irrelevant, every
rater in the same randomized order, the source hidden). Each rating is saved the moment it is
given (``engine.judging.human_rating``); a rater who comes back, in a new tab or another
session, resumes at the first idea they have not rated. Below: every rater's progress, the
export (an ideas file ``python -m engine analyze table --ideas`` reads) and the raters'
agreement (``dashboard.page_data.rating.rate_ideas_page_data``)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.page_data.rating import exact_values, rate_ideas_page_data, rateable
from dashboard.widgets import notebook_button, page_context, session, ui
from engine.errors import InputError
from engine.judging import human_rating as hr


def render(ctx: page_context.PageContext) -> None:
    """Draw the page; ``ctx``: the open dataset and the sidebar's selection."""
    MESSAGE_KEY = "rate_message"
    IDENTITY_KEY = "rate_identity"

    def score_label(value: int) -> str:
        return "0 (irrelevant)" if value == hr.IRRELEVANT else str(value)

    def position_key(dataset_name: str, rater: str) -> str:
        return f"rate_position::{dataset_name}::{hr.slug(rater)}"

    def forget_choices() -> None:
        """Another dataset or rater: the radio buttons of the previous one start empty."""
        for key in [k for k in st.session_state if str(k).startswith(("rate_novelty_", "rate_usefulness_"))]:
            del st.session_state[key]

    def go_to(key: str, position: int) -> None:
        st.session_state[key] = position
        st.session_state.pop(MESSAGE_KEY, None)

    def save(order: hr.Order, rater: str, key: str, position: int) -> None:
        """The form's button: save the two ratings of the idea at ``position`` now, then go on (to
        the next idea; after the last one, to the first still unrated, if any)."""
        novelty = st.session_state.get(f"rate_novelty_{position}")
        usefulness = st.session_state.get(f"rate_usefulness_{position}")
        if novelty is None or usefulness is None:
            st.session_state[MESSAGE_KEY] = ("warning", "Choose a novelty and a usefulness rating before saving "
                                                        "(0 = irrelevant to the task).")
            return
        item_id = order.sequence[position]
        try:
            hr.rate(order, rater, item_id, novelty, usefulness)
        except InputError as error:  # a disk that is full, a file that is not the rater's
            st.session_state[MESSAGE_KEY] = ("error", f"Not saved: {error}")
            return
        following = position + 1 if position + 1 < len(order.sequence) else \
            hr.next_position(order, hr.rater_ratings(order, rater).latest)
        st.session_state[key] = len(order.sequence) if following is None else following
        st.session_state[MESSAGE_KEY] = ("success", f"Saved idea {position + 1}: novelty {novelty}, "
                                                    f"usefulness {usefulness}.")

    def rate_one(order: hr.Order, rater: str, mine: hr.RaterRatings) -> None:
        """The rater's current idea (``mine``: their ratings so far), the form and the way back and forth."""
        for note in mine.notes:
            st.caption(ui.escape(note))
        total = len(order.sequence)
        key = position_key(order.dataset, rater)
        if key not in st.session_state:  # resume where this rater stopped (any tab, any session)
            following = hr.next_position(order, mine.latest)
            st.session_state[key] = total if following is None else following
        position = min(int(st.session_state[key]), total)
        done = sum(i in mine.latest for i in order.sequence)
        st.progress(done / total, text=f"{done} of {total} ideas rated by {ui.escape(rater)}")
        message = st.session_state.pop(MESSAGE_KEY, None)
        if message:
            getattr(st, message[0])(ui.escape(message[1]))
        if position >= total:
            st.success(f"All {total} ideas rated. Thank you: go back to revise any of them.")
            st.button("◀ Previous idea", key="rate_previous", on_click=go_to, args=(key, total - 1))
            return
        item_id = order.sequence[position]
        stored = order.items[item_id]
        previous = mine.latest.get(item_id)
        st.subheader(f"Idea {position + 1} of {total}")
        with st.container(border=True, key="rate_item"):
            st.caption("Task")
            st.text(stored.get("prompt") or stored["task"])
            st.caption("Idea")
            st.text(stored["text"])
        if previous is not None:
            st.caption(f"You rated this idea before (novelty {previous['novelty']}, usefulness {previous['usefulness']}); "
                       "saving again replaces it (the earlier rating stays in the file's history).")
        with st.form(key=f"rate_form_{position}", border=False):
            st.radio("Novelty: how original is the idea, relative to other ideas for this task? "
                     "(1 = not at all, 10 = highly original; 0 = irrelevant to the task)", hr.SCALE,
                     index=None if previous is None else hr.SCALE.index(previous["novelty"]), horizontal=True,
                     format_func=score_label, key=f"rate_novelty_{position}")
            st.radio("Usefulness: how practical and feasible is it? "
                     "(1 = not at all, 10 = highly useful; 0 = irrelevant to the task)", hr.SCALE,
                     index=None if previous is None else hr.SCALE.index(previous["usefulness"]), horizontal=True,
                     format_func=score_label, key=f"rate_usefulness_{position}")
            st.form_submit_button("Save and next", type="primary", key="rate_save", on_click=save,
                                  args=(order, rater, key, position))
        following = hr.next_position(order, mine.latest)
        left, middle, right = st.columns(3)
        left.button("◀ Previous idea", key="rate_previous", disabled=position == 0, on_click=go_to,
                    args=(key, position - 1))
        middle.button("Next idea ▶", key="rate_next", disabled=previous is None, on_click=go_to,
                      args=(key, position + 1), help="Only to ideas you have rated: the first pass follows the order.")
        right.button("Go to my first unrated idea", key="rate_resume",
                     disabled=following is None or following == position, on_click=go_to,
                     args=(key, following if following is not None else position))

    st.title("Rate ideas")
    st.caption("Paper A's Consensual Assessment Technique (Methods, \"Creativity evaluation\"): each idea is rated on "
               "novelty (originality relative to the other ideas for the task) and usefulness (practicality and "
               "feasibility) on a 10-point scale, 0 when it is irrelevant to the task. Every rater sees the ideas in "
               "the same randomized order, the ideas of a task together, with no source, model or condition. Each "
               "rating is saved the moment it is given; come back with the same name to resume. No model is used "
               "here, and the sidebar's filters do not apply: every idea of the dataset is rated.")

    choices, unreadable = [], 0
    for choice in session.dataset_choices():
        try:
            if rateable(session.dataset_by_choice(choice)):
                choices.append(choice)
        except InputError:
            unreadable += 1
    if not choices:
        st.info("No dataset here has idea texts to rate (a final_idea or paraphrased_idea column): run sessions "
                "(`python -m engine run`) and build a dataset from them, or upload one on the Data page."
                + (f" {unreadable} dataset(s) could not be read." if unreadable else ""))
        notebook_button.render("rate_ideas", {"ratings_dir": str(hr.ratings_root())})
        st.stop()
    if st.session_state.get("rate_dataset") not in choices:
        sidebar_choice = st.session_state.get(session.DATASET_KEY)
        st.session_state["rate_dataset"] = sidebar_choice if sidebar_choice in choices else choices[0]
    choice = st.selectbox("Dataset to rate (those with idea texts)", choices, key="rate_dataset",
                          format_func=session.choice_label)
    dataset = session.dataset_by_choice(choice)
    root = hr.ratings_root()
    items = hr.idea_items(dataset)
    try:
        planned = hr.planned_order(items, root)
    except InputError as error:  # an order file of another dataset of the same folder name
        st.warning(ui.escape(error))
        st.stop()
    st.caption(ui.escape(items.describe()))
    st.caption(ui.escape(planned.describe() if planned.path.exists()
                         else f"No one has rated this dataset yet: the shared order is written when the first rater "
                              f"starts ({len(planned.sequence):,} ideas, seed {planned.seed} from the dataset's name)."))
    ui.export_context(rests_on=f"dataset {dataset.name}: human ratings in {root}", n=f"{len(planned.sequence)} ideas")

    rater = st.text_input("Your name as a rater", key="rate_rater", max_chars=hr.MAX_NAME,
                          help="Letters, digits, spaces and - _ . ' (up to 64 characters). Use the same name to resume; "
                               "your ratings are kept under it.").strip()
    if not rater:
        st.info("Type your name (and press Enter) to start rating, or to resume where you stopped.")
    else:
        try:
            name = hr.check_rater_name(rater)
            order = planned if planned.path.exists() else hr.open_order(items, root)  # written once, at the start
            mine = hr.rater_ratings(order, name)  # refuses a name too close to another rater's
        except InputError as error:
            st.warning(ui.escape(error))
        else:
            identity = (dataset.name, name)
            if st.session_state.get(IDENTITY_KEY) != identity:
                forget_choices()
                st.session_state[IDENTITY_KEY] = identity
            rate_one(order, name, mine)

    st.divider()
    ui.ours("Every rater of this dataset")
    notebook_button.render("rate_ideas", {"ratings_dir": str(root)}, dataset=dataset, filters={})
    shown = st.toggle("Show every rater's progress, the export and the agreement", key="rate_show_all",
                      help="For the study's coordinator. Raters: keep it closed until you have finished, so that your "
                           "ratings stay independent of the others' (paper A's judges rated independently).")
    if not shown:
        st.caption("Hidden while rating, so that no rater sees the others' ratings (paper A: rating independence "
                   "across judges).")
        st.stop()
    try:
        data = rate_ideas_page_data(dataset, root)
    except InputError as error:  # a rater file that is not readable
        st.warning(ui.escape(error))
        st.stop()
    for note in data.notes:
        st.caption(ui.escape(note))
    if data.progress.empty:
        st.info("No rating saved yet for this dataset.")
    else:
        ui.table(st, data.progress, key="rate_progress", hide_index=True)

    if data.export is not None:
        table, info = data.export.table, data.export.info
        st.subheader("Export")
        st.caption(f"{len(table):,} idea(s) with at least one rating (of {len(data.order.sequence):,}), "
                   f"{len(info['raters'])} rater(s): per-rater N1..Nk (novelty) and U1..Uk (usefulness), raters numbered "
                   "by name; avg_novelty_rating and avg_usefulness_rating are the mean over the idea's raters min-max "
                   "scaled within task (paper A), avg_creativity_rating their product; an idea more than half of whose "
                   f"raters gave a 0 is irrelevant (paper A left such ideas out): its scores kept, no scaled mean "
                   f"({info['irrelevant']} so far). Read it with `python -m engine analyze table 4 --ideas FILE` "
                   "(paper A's Table 4 on these raters; Tables 5, 13 and 14 too).")
        unscaled = {scale: tasks for scale, tasks in info["tasks_not_scaled"].items() if tasks}
        if unscaled:
            ui.caveat(st, "Not scaled (all ratings of the task equal, so min-max is undefined; left blank): "
                      + "; ".join(f"{scale} in {', '.join(tasks)}" for scale, tasks in unscaled.items()), kind="caption")
        legend = [{"column": f"N{r['number']} / U{r['number']}", "rater": r["name"], "ideas rated": r["ideas_rated"]}
                  for r in info["raters"]]
        ui.table(st, pd.DataFrame(legend), key="rate_legend", hide_index=True)
        stem = hr.dataset_slug(dataset.name) + "_human_ratings"
        left, right = st.columns(2)
        left.download_button("Download the ratings (CSV)", hr.export_csv(data.export), file_name=f"{stem}.csv",
                             mime="text/csv", key="rate_export_csv", on_click="ignore", icon=":material/download:")
        right.download_button("Download the rater legend (JSON)", hr.export_legend_json(data.export),
                              file_name=f"{stem}.raters.json", mime="application/json", key="rate_export_legend",
                              on_click="ignore", icon=":material/download:")

    if data.agreement is not None and data.order_written:
        st.subheader("Agreement of the raters")
        found = data.agreement
        if found.reason:
            st.info(ui.escape(found.reason + ". Paper A reports ICC(3,5) of its five judges per task and scale "
                              "(Table 4)."))
        else:
            st.caption(f"On the {found.shared} ideas every rater rated ("
                       + ", ".join(f"{ui.escape(name)} {n}" for name, n in found.counts.items())
                       + "): ICC(3,k) as paper A's Table 4 (two-way mixed, consistency, average of the k raters), "
                         "ICC(2,1) (two-way random, absolute agreement, one rater) and ICC(2,k), Shrout & Fleiss (1979), "
                         "with 95% intervals; Krippendorff's alpha (interval). One row per scale for all tasks, then per "
                         "task when there are several.")
            ui.table(st, found.table, key="rate_agreement", hide_index=True)
            with st.container(key="rate_agreement_exact"):
                st.code(exact_values(found) + "\n\n" + "\n".join(found.texts), language=None, wrap_lines=True)
        with st.expander("Paper A's own raters (published, Table 4)"):
            ui.published("ICC(3,5) of paper A's five judges by task and dimension")
            ui.table(st, data.published, key="rate_published_table4", hide_index=True)


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
