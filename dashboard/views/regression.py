"""Regression page: paper A's sample (``engine.samples``; the trajectory sample by default, as
Tables 1, 20-23), predictor blocks, estimator (OLS HC3 / mixed effects), LLM / human teams;
coefficients with CIs side by side (Figure 3a, Table 23), the R² ladder (Table 1) with the N of
every fit, convergence warnings shown."""

from __future__ import annotations

import streamlit as st

from dashboard.figures import charts, labels
from dashboard.page_data import analyses
from dashboard.page_data.regression import FACTOR_BLOCKS, TEAMS, interval_method, regression_page_data
from dashboard.widgets import cached, notebook_button, page_context, sample_picker, ui
from engine import samples
from engine.stats import published_a
from engine.stats.guards import not_comparable


def render(ctx: page_context.PageContext) -> None:
    """Draw the page; ``ctx``: the open dataset and the sidebar's selection."""
    st.title("Regression")
    dataset, frame, have = ctx.opened()

    outcomes = [*have.ratings, *have.features]
    if page_context.says_what_is_missing(ctx):
        st.stop()
    if not have.ratings:
        st.info("No ratings in this dataset, so creativity cannot be the outcome (Tables 1, 23 need the "
                "authors' ratings: join them on the Data page). You can model a trajectory feature from "
                "the design factors and the other features; the paper's published tables are below.")

    controls, results = st.columns([1, 3])
    sample_name, frame = sample_picker.pick(controls, frame, key="reg_paper_sample")
    ui.export_context(sample=samples.sample(sample_name).title)
    embedding = "0.6B"
    if have.features_4b:
        embedding = controls.radio("Feature embeddings", ["0.6B", "4B"], key="reg_embedding", horizontal=True,
                                   help="The release's features from Qwen3-Embedding-0.6B (main) or -4B "
                                        "(robustness, Table 26).")
    outcome = controls.selectbox("Outcome", outcomes, key="reg_outcome")
    present = set(frame["source"].dropna().astype(str)) if "source" in frame else set()
    available_samples = [label for label, sources in TEAMS.items() if all(s in present for s in sources)]
    if not available_samples:
        st.warning(f"The {sample_name} sample has no LLM or human rows in this selection.")
        st.stop()
    sample_label = controls.radio("Teams (within the sample)", available_samples, key="reg_sample")
    estimator = controls.radio("Estimator", ["ols_hc3", "mixedlm"], key="reg_estimator",
                               format_func={"ols_hc3": "OLS, HC3 SEs", "mixedlm": "Mixed effects (task intercepts, REML)"}.get)
    controls.caption("Predictor blocks")
    use_trajectory = controls.checkbox("Trajectory features", value=True, key="reg_block_trajectory")
    factor_choice = {b: controls.checkbox(b.replace("_", " "), value=b == "task", key=f"reg_block_{b}",
                                          disabled=b not in frame.columns)
                     for b in FACTOR_BLOCKS}
    all_terms = controls.checkbox("Plot every term (not only the features)", value=False, key="reg_all_terms")
    STAR_CHOICES = {"conventional": (0.05, 0.01, 0.001), "tenths": (0.10, 0.05, 0.01)}
    star_choice = controls.radio("Stars", list(STAR_CHOICES), key="reg_stars", horizontal=True,
                                 format_func={"conventional": ".05/.01/.001 (Tables 23, 26, 28)",
                                              "tenths": ".10/.05/.01 (Tables 1, 20, 21)"}.get)
    star_levels = STAR_CHOICES[star_choice]

    data = regression_page_data(frame, outcome, TEAMS[sample_label], estimator, features=have.features,
                                ratings=have.ratings, trajectory=use_trajectory,
                                factors=[b for b, on in factor_choice.items() if on], star_levels=star_levels,
                                embedding=embedding, compute=cached)
    frame = data.frame
    for team in data.teams:
        label = team.label
        if team.too_few:
            results.info(f"{label}: {team.rows} conversation(s) in this selection; a regression needs at least "
                         f"{analyses.MIN_ROWS}. Widen the sidebar filters.")
            continue
        if team.skipped:
            results.caption(f"{label}: " + "; ".join(
                f"factor {b} dropped: 1 level ({ui.escape(level)})" if level is not None else f"factor {b} dropped: missing values"
                for b, level in team.skipped.items()))
        if not team.blocks and estimator != "mixedlm":
            results.warning(f"{label}: choose at least one predictor block.")
            continue
        if team.error:  # a guard, not a fault: the message stands in place of the table
            ui.caveat(results, f"{label}: {team.error}", "warning")
    fits = data.fits

    made_by = analyses.small_model(frame)
    notebook_button.render("regression", {"sample": sample_name, "outcome": outcome, "estimator": estimator,
                                          "embedding": embedding, "trajectory": bool(use_trajectory),
                                          "factors": [b for b, on in factor_choice.items() if on],
                                          "teams": TEAMS[sample_label], "stars": list(star_levels),
                                          "blocks": data.used_blocks}, where=controls)
    with results:
        if fits:
            fitted_teams = [team for team in data.teams if team.fit is not None]
            metric_columns = st.columns(len(fitted_teams))
            for column, team in zip(metric_columns, fitted_teams):
                label, s, r2 = team.label, team.fit["summary"], team.r2
                who = f"{label} ({made_by})" if made_by else label
                if s.get("sample_warning"):  # above the numbers: N < 10 k, or a mixed fit's too few groups
                    ui.caveat(column, f"{label}: {s['sample_warning']}")
                column.metric(f"{who}: N", f"{s['n']:,}")
                groups = f", {s['n_groups']} task groups" if s.get("n_groups") is not None else ""
                column.caption(f"k = {s['k']} estimated coefficients, N − k = {s['df_resid']:,}{groups}")
                if r2.headline:
                    column.metric(f"{who}: {r2.label}", r2.text())
                    column.caption(r2.beside)
                else:  # the raw numbers, said to be no headline, and why
                    column.text(f"{who}: {r2.label} {r2.text()}, {r2.beside}")
                    ui.caveat(column, f"{label}: {r2.reason}", "caption")
                if not s.get("converged", True):
                    ui.caveat(column, f"{label}: the mixed model did NOT converge; read its estimates with care.", "error")
                for note in s.get("warnings", []):
                    ui.caveat(column, f"{label}: {note}", "warning")
            tables = {label: f["table"] for label, f in fits.items()}
            terms = data.terms(all_terms)
            fitted_n = "; ".join(f"{label} {f['summary']['n']:,}" for label, f in fits.items())
            ui.export_context(outcome=outcome, n=f"{fitted_n} fitted")
            interval, interval_short = interval_method(estimator)
            ui.chart(st, charts.coefficient_plot(tables, title=f"Standardized coefficients on {outcome} (95% CI)",
                                                 terms=terms, interval=interval, interval_short=interval_short),
                     key="reg_coefficients")
            st.caption(f"Error bars: {interval}.")
            for label, table in tables.items():
                with st.expander(f"{label}: all coefficients"):
                    ui.table(st, labels.regression_table(table, 4), key=f"reg_table_{label}", hide_index=True)
            if len(fits) == 2:
                if data.compare_error:
                    st.caption(f"No side-by-side table: {ui.escape(data.compare_error)}")
                else:
                    compared = data.compared
                    ui.ours(f"LLM vs human coefficients on {outcome} (as Table 23)" if outcome == "creativity" else
                            f"LLM vs human coefficients on {outcome} (Table 23's layout; the paper's outcome is "
                            "creativity)")
                    ui.table(st, labels.regression_table(compared, 4), key="reg_compare", hide_index=True)

    st.divider()
    st.subheader("R² ladder (Table 1)")
    if data.ladder is not None:
        ladder_outcome, ladder, notes, ladder_n = data.ladder_outcome, data.ladder, data.ladder_notes, data.ladder_n
        if ladder.empty:
            st.info("No specification could be fitted on this selection: " + ui.escape(" · ".join(notes)))
        else:
            warnings = data.ladder_warnings
            for line in warnings:
                ui.caveat(st, line)
            models = f" ({made_by})" if made_by else ""
            ui.ours(f"Hierarchical specifications on {ladder_outcome}{models}, {samples.sample(sample_name).title}")
            st.caption(samples.sample(sample_name).label(frame) + "; each rung drops rows missing a feature "
                       "(N per fit in the table). A rung with N − k < 5 is refused (a note says so).")
            adjusted = [c for c in ladder.columns if c.endswith(" adj.")]
            ladder_fitted = "; ".join(f"{c[:-2]} {', '.join(f'{int(v):,}' for v in sorted(set(ladder_n[c].dropna())))}"
                                      for c in ladder_n.columns if c.endswith(" N"))
            if warnings:
                ui.chart(st, charts.r2_ladder(ladder[["specification", *adjusted]],
                                              title="Adjusted R² by specification (small samples: N < 10·k)"),
                         key="reg_ladder", outcome=f"adjusted R² (%) of {ladder_outcome}", n=f"{ladder_fitted} fitted")
            else:
                ui.chart(st, charts.r2_ladder(ladder.drop(columns=adjusted)), key="reg_ladder",
                         outcome=f"R² (%) of {ladder_outcome}", n=f"{ladder_fitted} fitted")
            ui.table(st, ladder.round(1), key="reg_ladder_table", hide_index=True)
            st.caption("N, k (estimated coefficients) and N − k of each fit; small sample: N < 10·k:")
            ui.table(st, ladder_n, key="reg_ladder_n", hide_index=True)
            for note in notes:
                st.caption("Note: " + ui.escape(note))
    else:
        st.caption("Needs ratings; the published ladder is shown.")
    if made_by:
        ui.caveat(st, not_comparable(published_a.MODELS, f"{made_by}, {len(frame):,} conversations"), "caption")
    ui.published("Paper A, Table 1 (R² %, creativity)")
    ui.chart(st, charts.r2_ladder(published_a.table1(), title="Published R² ladder"), key="reg_ladder_paper",
             outcome="R² (%) of creativity", n=published_a.printed_n("1"), sample="the paper's trajectory sample",
                    width="stretch")
    with st.expander("Published coefficient tables (Tables 23 and 26)"):
        ui.published("Table 23: LLM vs human, trajectory + task, standardized")
        ui.table(st, published_a.table23(), key="reg_table23", hide_index=True)
        ui.published("Table 26: 0.6B vs 4B embedding features")
        ui.table(st, published_a.table26(), key="reg_table26", hide_index=True)


if __name__ == "__main__":  # Streamlit runs this file as the page (dashboard/app.py)
    page_context.show(__file__)
