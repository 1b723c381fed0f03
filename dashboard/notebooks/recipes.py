"""Each page's notebook, as code (``dashboard.notebooks.build`` writes the cells): one function per
page, named in the page registry (``dashboard.pages``: ``Page.notebook``). A recipe's docstring is
the notebook's first markdown cell; its body, split at ``# %%`` lines, is the code cells, written
as they are (the final ``return`` left out: it names the ``headline`` and ``page_numbers`` the
last cell prints). Its parameters are the names the notebook's first cell defines (``dataset``,
``frame`` after the sidebar's filters, ``have``: what the dataset holds, ``OPTIONS``: the page's
choices, ``FILTERS``, ``find_data``) and Jupyter's ``display``; ``pd``, ``Path`` and ``Dataset``
are imported there too. So the recipes are Python a linter and the tests read, and a recipe calls
the engine's public functions (``engine.stats``, ``engine.samples``...) where they hold the page's
step and the page's ``page_data`` function otherwise. Every recipe sets ``headline``, the numbers
the page leads with, as numbers, and ``page_numbers``, its tables.

A page with two notebooks (a map of turns or of conversations; fewer than two runs to compare)
names the other with ``@instead(when, recipe)``: ``recipe`` is written when ``when(OPTIONS)``.
"""

from __future__ import annotations

from pathlib import Path  # noqa: F401  (the notebook's first cell imports it)

import pandas as pd

from engine.datasets import Dataset  # noqa: F401  (the notebook's first cell imports it)


def instead(when, recipe):
    """Mark a recipe: ``recipe`` is written in its place when ``when(options)`` holds."""
    def mark(function):
        function.instead = (when, recipe)
        return function
    return mark


def data_page(frame):
    """## What the dataset holds

    Conversations selected, by source, and the mean number of turns (the page's four numbers), then the
    conversations by model and task (`dashboard.page_data.datasets.data_page_data`). `headline` holds
    the numbers the page leads with, as numbers (ints and floats; formatting only for display)."""
    counts = frame["source"].value_counts() if "source" in frame else pd.Series(dtype=int)
    headline = {"Conversations selected": len(frame), "LLM conversations": int(counts.get("llm", 0)),
                "Human conversations": int(counts.get("human", 0)),
                "Mean turns": float(frame["n_turns"].mean()) if "n_turns" in frame else None}
    pd.Series(headline, name="value").to_frame()
    # %%
    from dashboard.page_data.datasets import data_page_data

    by_model_and_task = data_page_data(frame).by_model_and_task  # conversations by model and task, with totals
    by_model_and_task
    # %%
    page_numbers = {"by model and task": by_model_and_task}
    return headline, page_numbers


def llm_vs_human(frame, OPTIONS):
    """## LLM vs human teams (paper A, Figure 1, Tables 5 and 12)

    The page's sample (`engine.samples`), then each trajectory feature LLM − human
    (`engine.stats.feature_effects`): the difference of means with Welch's interval and p, Hedges' g
    with its interval from Welch's statistic; then who is in the pooled top 5% of the outcome
    (`engine.stats.top_share`). `headline` holds the numbers the page leads with, as numbers (ints and
    floats; formatting only for display)."""
    from dashboard.figures import charts
    from engine import samples, stats
    from engine.errors import InputError
    from engine.stats.feature_effects import feature_effects

    rows = samples.sample(OPTIONS["sample"]).select(frame)
    features = OPTIONS.get("features")
    counts = rows["source"].value_counts()
    n_llm, n_human = int(counts.get("llm", 0)), int(counts.get("human", 0))
    print(f"{samples.sample(OPTIONS['sample']).title}: {n_llm:,} LLM and {n_human:,} human conversations")
    charts.distributions_by_group(rows, features, title="Trajectory features by source (box = quartiles, dashed = mean)") \
        if features else None
    # %%
    both = n_llm >= 2 and n_human >= 2
    effects = feature_effects(rows, features, group="source", groups=("llm", "human")) if both and features else None
    effects.style.format(precision=4).format({"welch_p": "{:.3g}"}) if effects is not None else None
    # %%
    top_overall = None
    if OPTIONS.get("outcome"):
        try:
            shares = stats.top_share(rows, OPTIONS["outcome"], q=0.95)
            top_overall = shares[shares["by"] == "overall"].drop(columns="by")
        except InputError as problem:
            print("no top-5% view:", problem)
    top_overall
    # %%
    headline = {"LLM conversations": n_llm, "Human conversations": n_human,
                "Features compared": len(effects) if effects is not None else None}
    page_numbers = {"effects": effects, "top 5%": top_overall}
    pd.Series(headline, name="value").to_frame()
    return headline, page_numbers


def trajectories_by_features(dataset, frame, OPTIONS):
    """## Conversations by their features

    No turn embeddings in this dataset: PCA of the z-scored features, one point per conversation
    (`dashboard.page_data.trajectories.trajectories_page_data`)."""
    from dashboard.figures import charts
    from dashboard.page_data.trajectories import trajectories_page_data

    points = trajectories_page_data(dataset, frame).conversation_map
    colour = OPTIONS.get("colour", "source")
    charts.scatter_map(points.fillna({colour: "(none)"}), colour, "Conversations by trajectory features (PCA)") \
        if len(points) else None
    # %%
    headline = {"conversations drawn": len(points)}
    page_numbers = {"points": len(points), "map": points[["conversation_id", "x", "y"]].round(6)}
    return headline, page_numbers


@instead(lambda options: not options.get("method"), trajectories_by_features)  # no turn embeddings
def trajectories(dataset, frame, OPTIONS):
    """## Turns in semantic space

    Every turn's embedding projected to 2-D (PCA or UMAP with seed 42, cached on disk), the map the page
    draws (every turn up to `MAX_MAP_POINTS`; above, every turn in an image and whole conversations
    sampled with seed 0 drawn over it), cluster labels (k-means of the embeddings named by c-TF-IDF
    keywords), search, paths and the Figure 4 pair
    (`dashboard.page_data.trajectories.trajectories_page_data`)."""
    from dashboard.figures import charts, explore_map
    from dashboard.page_data.trajectories import trajectories_page_data

    method, clusters = OPTIONS["method"], OPTIONS.get("clusters")
    data = trajectories_page_data(dataset, frame, method, clusters=clusters, search=OPTIONS.get("search", ""),
                                  pair=OPTIONS["pair"])
    points, drawn, hits = data.map.points, data.map.drawn, data.map.hits
    print(f"{len(points):,} turns of {len(data.ids):,} conversations, {len(drawn):,} drawn; "
          f"search {OPTIONS.get('search')!r}: {int(hits.sum()):,} turns")
    # %%
    explore_map.turn_map(drawn, OPTIONS.get("colour", "progress"), f"Turns in semantic space ({method.upper()})",
                         hits=data.map.drawn_hits, cluster_column="cluster" if clusters else None,
                         aggregate=points if len(drawn) < len(points) else None)
    # %%
    explore_map.paths_on_density(points, OPTIONS.get("conversations") or [], points,
                                 title=f"Chosen conversations as paths ({method.upper()})")
    # %%
    left, right = OPTIONS["pair"]
    charts.trajectory_pair(points, left, right, title=f"Two conversations on shared axes ({method.upper()})")
    # %%
    data.feature_values
    # %%
    headline = {"turns": len(points), "conversations": len(data.ids), "drawn": len(drawn), "search hits": int(hits.sum())}
    page_numbers = {"turns": len(points), "conversations": len(data.ids), "drawn": len(drawn),
                    "search hits": int(hits.sum()),
                    "cluster labels": sorted(points["cluster"].dropna().unique().tolist()) if clusters else [],
                    "feature values": data.feature_values}
    return headline, page_numbers


def design_levers(frame, have, OPTIONS):
    """## Design levers (paper A, Tables 2, 24, 25)

    Feature means by two design factors, then the manipulability table: R² of each of paper A's nine
    features on task; + discussion; + model; both; their interaction, OLS on the LLM rows of the page's
    sample with all nine features (`engine.stats.manipulability`), in percent, beside the published
    Table 24 (`engine.stats.published_a`). The headline: the mean R² of the interaction model (Table 2),
    adjusted R² when N < 10·k. `headline` holds the numbers the page leads with, as numbers (ints and
    floats; formatting only for display)."""
    from dashboard.figures import charts
    from engine import samples, stats
    from engine.errors import InputError
    from engine.measures.trajectory import PAPER_A_FEATURES
    from engine.stats import published_a
    from engine.stats.manipulability import adjusted_r2

    rows = samples.sample(OPTIONS["sample"]).select(frame)
    llm = rows[rows["source"] == "llm"] if "source" in rows else rows
    charts.group_means_with_ci(llm, OPTIONS["feature"], OPTIONS["x"], OPTIONS["colour"]) \
        if OPTIONS.get("feature") and OPTIONS["x"] != OPTIONS["colour"] and len(llm) else None
    # %%
    table24 = None
    if len(llm) and have.features:
        try:
            fitted = stats.manipulability(samples.select(frame, OPTIONS["sample"], source="llm"),
                                          features=list(PAPER_A_FEATURES), drop_constant=True)
            table24 = fitted * 100
            table24.attrs.update(fitted.attrs)
        except InputError as error:  # the page says it cannot compute the table on this selection
            print("cannot compute the manipulability table:", error)
    table24.style.format(precision=1) if table24 is not None else None
    # %%
    charts.percent_heatmap(table24, "R² (%) computed here", zmax=60) if table24 is not None else None
    # %%
    charts.percent_heatmap(published_a.table24(), "R² (%) published (paper A, Table 24)", colorscale="Oranges", zmax=60)
    # %%
    headline = {"Mean R², interaction model (published, Table 2), %": float(published_a.table24()["interaction"].mean())}
    if table24 is not None:
        fit = table24.attrs["fits"]["interaction"]
        headline.update({"N": int(table24.attrs["n"]), "interaction k": int(fit["k"]),
                         "interaction N − k": int(fit["df_resid"]), "small sample (N < 10·k)": bool(fit["small_sample"]),
                         "refused (N − k < 5)": bool(fit["refuse"]),
                         "Mean R², interaction model, %": float(table24["interaction"].mean()),
                         "Mean adjusted R², interaction model, %": float(100 * adjusted_r2(fitted)["interaction"].mean())})
    page_numbers = {"Table 24 (R² %)": table24}
    pd.Series(headline, name="value").to_frame()
    return headline, page_numbers


def regression(frame, have, OPTIONS, display):
    """## Regression (paper A, Tables 1, 20-23, Figure 3a)

    The page's sample, outcome, estimator and predictor blocks (the blocks the page fitted per team
    type, in `OPTIONS["blocks"]`), one fit per team type with `engine.stats.fit` (OLS with HC3 errors,
    or a REML mixed model with task intercepts and Nakagawa's R²), then the R² ladder of Table 1 when
    the dataset has ratings (`engine.stats.paper_tables.ladder`). The headline table gives each fit's N,
    k, N − k, R², adjusted R² (mixed: marginal and conditional R²) and the R² the page leads with
    (`engine.stats.guards.r2_headline`: adjusted R² when N < 10·k). p-values are numbers; only the
    display rounds them. `headline` holds the numbers the page leads with, as numbers (ints and floats;
    formatting only for display)."""
    from dashboard.figures import charts
    from engine import samples, stats
    from engine.errors import InputError
    from engine.measures.trajectory import PAPER_A_FEATURES
    from engine.stats.guards import r2_headline
    from engine.stats.paper_tables import ladder

    rows = samples.sample(OPTIONS.get("sample", "all")).select(frame)
    if OPTIONS.get("embedding") == "4B":  # the release's Qwen3-Embedding-4B features in place of the 0.6B ones (Table 26)
        from dashboard.page_data.regression import with_4b_features

        rows = with_4b_features(rows)
    fits = {}
    for source in OPTIONS["teams"]:
        label = {"llm": "LLM", "human": "Human"}[source]
        part = rows[rows["source"] == source]
        blocks = OPTIONS["blocks"].get(label)
        if blocks is None:  # the page fitted nothing for this team type (too few rows, or no block chosen)
            print(f"{label}: {len(part)} rows, not fitted")
            continue
        spec = stats.RegressionSpec(name=f"{label}: {OPTIONS['outcome']}", outcome=OPTIONS["outcome"], blocks=blocks,
                                    estimator=OPTIONS["estimator"], group="task", star_levels=tuple(OPTIONS["stars"]))
        try:
            fits[label] = stats.fit(spec, part, allow_nonconvergence=True)
        except InputError as error:  # a guard's refusal (too few rows) or a design the data cannot fit
            print(f"{label}: {error}")
    # %%
    def headline_row(label, summary):
        lead = r2_headline(summary)
        return {"team": label, "N": summary["n"], "k": summary["k"], "N − k": summary["df_resid"],
                "R²": summary["r2"], "adjusted R²": summary["adj_r2"], "marginal R²": summary["marginal_r2"],
                "conditional R²": summary["conditional_r2"], "headline": lead.label, "headline value": lead.value,
                "headline allowed": bool(lead.headline), "small sample (N < 10·k)": bool(summary["small_sample"])}


    headline = pd.DataFrame([headline_row(label, fit.summary) for label, fit in fits.items()],
                            columns=["team", "N", "k", "N − k", "R²", "adjusted R²", "marginal R²", "conditional R²",
                                     "headline", "headline value", "headline allowed", "small sample (N < 10·k)"])
    headline.style.format(precision=4, na_rep="—") if len(headline) else headline
    # %%
    coefficients = {label: fit.table for label, fit in fits.items()}
    for label, table in coefficients.items():
        print(label)
        display(table.style.format(precision=4).format({"p": "{:.3g}"}))
    # %%
    charts.coefficient_plot(coefficients, title=f"Standardized coefficients on {OPTIONS['outcome']} (95% CI)",
                            terms=[f for f in PAPER_A_FEATURES if all(f in set(t["term"]) for t in coefficients.values())]
                            or None) if coefficients else None
    # %%
    r2_ladder = ladder_fits = None
    ratings = list(have.ratings)
    if ratings:
        ladder_outcome = "creativity" if "creativity" in ratings else ratings[0]
        parts, notes = ladder(rows, sources=("llm", "human"), outcome=ladder_outcome)
        r2_ladder = parts["R² (%)"]
        ladder_fits = {f"{TEAM} fit": parts[f"{TEAM} fit"][["model", "n", "k", "n_minus_k", "r2", "adj_r2"]]
                       for TEAM in ("llm", "human") if f"{TEAM} fit" in parts}
        print(f"R² (%) of {ladder_outcome} by specification (Table 1)")
        for note in notes:
            print("note:", note)
        display(r2_ladder.style.format(precision=1))
        for name, table in ladder_fits.items():
            display(table)
    r2_ladder
    # %%
    page_numbers = {**{f"{label} coefficients": table for label, table in coefficients.items()},
                    "ladder": r2_ladder, "ladder fits": ladder_fits}
    return headline, page_numbers


def paper_a_tables(frame, OPTIONS, display):
    """## One of paper A's tables, reproduced

    `engine.stats.paper_tables.build` on the page's sample and stars (the CLI's twin: `python -m engine
    analyze table N`), then ours beside the published table row by row (`dashboard.page_data.beside`,
    the page's layout). `headline` holds the numbers the page leads with, as numbers (ints and floats;
    formatting only for display)."""
    from dashboard.page_data import beside
    from engine.errors import InputError
    from engine.stats import paper_tables

    result = None
    lacking = paper_tables.missing_needs(OPTIONS["table"], frame)
    if lacking:
        print("this table needs", "; and ".join(lacking))
    else:
        try:
            result = paper_tables.build(OPTIONS["table"], frame, stars=OPTIONS["stars"], sample=OPTIONS["sample"])
        except InputError as error:
            print("cannot compute this table on this selection:", error)
    if result is not None:
        print(f"{result.title}: sample {result.sample}, N = {result.n:,}")
        for title, part in result.parts.items():
            print(title)
            display(part)
    # %%
    for table in (beside.beside(result) if result is not None else []):
        print(table.title, table.caption)
        display(table.formatted())
    # %%
    headline = {"N": result.n if result is not None else None, "sample": result.sample if result is not None else None}
    page_numbers = {"parts": dict(result.parts) if result is not None else {}}
    pd.Series(headline, name="value").to_frame()
    return headline, page_numbers


def diversity(dataset, frame, have, OPTIONS):
    """## Diversity (paper B, sections 6 and 7)

    Vendi Score and Div-BLEU of the final outputs of each full condition and task, in groups of runs
    (paper B: 15 runs, 3 groups of 5), Creative-MAD's gain over Homo MAD, diversity across debate rounds
    (`dashboard.page_data.diversity.diversity_page_data`)."""
    from engine.embedding.embedder import Embedder

    embed = Embedder().encode  # the bundled all-MiniLM-L6-v2, through the project's embedding cache

    from dashboard.page_data.diversity import diversity_page_data
    from engine.stats import published_b

    methods = tuple(OPTIONS.get("methods") or have.paper_b_methods)
    inter = data = None
    if have.paper_b_methods and have.final_ideas and methods:
        data = diversity_page_data(dataset, frame, methods, embed, group_size=int(OPTIONS.get("group_size", 5)),
                                   turns=have.turns)
        print("Creative-MAD vs Homo MAD:", data.gains)
        inter = data.shown.round(4)
    else:
        print("no paper-B debate runs with final outputs: the published gains only")
    inter
    # %%
    data.intra if data is not None else None
    # %%
    published_b.diversity_gains()
    # %%
    headline = {"runs the gains rest on": data.headline_rows if data else None}
    for metric, gain in (data.gains.items() if data else []):
        interval = data.intervals[metric] or {}
        headline[f"Creative-MAD vs Homo MAD, {metric} (%)"] = gain
        headline[f"Creative-MAD vs Homo MAD, {metric} (%), 95% low"] = interval.get("low")
        headline[f"Creative-MAD vs Homo MAD, {metric} (%), 95% high"] = interval.get("high")
    page_numbers = {"diversity by condition and task": inter}
    pd.Series(headline, name="value", dtype=float).to_frame()
    return headline, page_numbers


def quality_diversity(dataset, frame, have, display):
    """## Quality–Diversity (paper B, section 6)

    Per condition: diversity of the final outputs (groups of 5), the judge's rubric score and pairwise
    win rates, the Pareto frontier
    (`dashboard.page_data.quality_diversity.quality_diversity_page_data`)."""
    from engine.embedding.embedder import Embedder

    embed = Embedder().encode  # the bundled all-MiniLM-L6-v2, through the project's embedding cache

    from dashboard.figures import charts
    from dashboard.page_data.quality_diversity import quality_diversity_page_data

    summary = None
    if have.paper_b_methods and have.final_ideas:
        data = quality_diversity_page_data(dataset, frame, have.paper_b_methods, embed, turns=have.turns)
        summary = data.summary
        display(charts.quality_diversity_scatter(summary, "vendi", "Vendi Score", summary["pareto (rubric × Vendi)"]))
        summary = summary.drop(columns=["method"]).round(3)
    summary
    # %%
    headline = {"conditions": len(summary) if summary is not None else 0}
    page_numbers = {"quality and diversity per condition": summary}
    return headline, page_numbers


def steering(OPTIONS, find_data, display):
    """## Steering

    The steered discussion against its baselines on the cached steered runs: session means with
    intervals, differences with Welch's interval and p, the moderator's interventions
    (`dashboard.page_data.steering.steering_page_data`)."""
    from dashboard.page_data.steering import steering_page_data

    summary = differences = None
    FOLDER = find_data(OPTIONS["folder"]) if OPTIONS.get("folder") else None
    if FOLDER is not None:
        data = steering_page_data(Dataset.load(FOLDER).conversations, FOLDER)
        summary, differences = data.shown.round(4), data.differences.round(4)
        display(summary)
        display(data.interventions)
    differences
    # %%
    headline = {"conditions": len(summary) if summary is not None else 0}
    page_numbers = {"summary": summary, "differences": differences}
    return headline, page_numbers


def pilot(OPTIONS, find_data):
    """## Pilot

    The pilot this session ran (kept in the run history), diagnosed against the reference dataset (each
    feature's percentile within the reference's trajectory sample when both were embedded and made
    alike, the values side by side otherwise, `dashboard.page_data.pilot_diagnosis.pilot_page_data`).
    Without a pilot, the settings of the form and the command that runs one."""
    from dashboard.page_data.pilot_diagnosis import pilot_page_data

    evidence = None
    print("pilot settings:", OPTIONS.get("settings"))
    print("run one from a shell: python -m engine run --method", (OPTIONS.get("settings") or {}).get("method", "open"),
          "--model local ...")
    if OPTIONS.get("pilot") and OPTIONS.get("reference"):
        found = pilot_page_data(Dataset.load(find_data(OPTIONS["pilot"])), Dataset.load(find_data(OPTIONS["reference"])))
        if found.error:
            print("No diagnosis:", found.error)
        else:
            print(found.diagnosis.to_text())
            evidence = found.diagnosis.evidence
    evidence
    # %%
    headline = {"Pilot conversations diagnosed": found.diagnosis.n_pilot if evidence is not None else None}
    page_numbers = {"evidence": evidence}
    return headline, page_numbers


def compare_fewer_than_two(OPTIONS):
    """## Compare runs

    The page compares two or more runs; fewer were chosen."""
    headline = {"runs": len(OPTIONS.get("runs") or {})}
    page_numbers = {"runs": list((OPTIONS.get("runs") or {}))}
    return headline, page_numbers


@instead(lambda options: len(options.get("runs") or {}) < 2, compare_fewer_than_two)
def compare(dataset, OPTIONS, find_data, display):
    """## Compare runs

    Each run taken whole (no filter): what it holds, what differs in the runs' manifests, feature and
    rating summaries, each run minus the reference run (Welch's interval, Holm's p, Hedges' g),
    diversity per group of final outputs (`dashboard.page_data.comparison.compare_page_data`)."""
    from engine.embedding.embedder import Embedder

    embed = Embedder().encode  # the bundled all-MiniLM-L6-v2, through the project's embedding cache

    from dashboard.figures import charts, compare_runs
    from dashboard.page_data import comparison

    runs = {name: Dataset.load(find_data(where)) for name, where in OPTIONS["runs"].items()}
    frames = {name: d.conversations for name, d in runs.items()}
    reference = OPTIONS["reference"]
    data = comparison.compare_page_data(frames, {name: d.manifest for name, d in runs.items()}, reference,
                                        include_same=bool(OPTIONS.get("include_same")),
                                        group_size=int(OPTIONS.get("group_size", 5)), embed=embed)
    display(data.overview)
    data.config
    # %%
    features = data.features
    feature_summary = data.feature_summary.loc[features].round(4) if features else None
    if features:
        display(charts.distributions_by_group(comparison.combined(frames), OPTIONS.get("features") or features[:6],
                                              group="dataset",
                                              title="Features by dataset (box = quartiles, dashed = mean)"))
        display(compare_runs.difference_forest(data.feature_differences, f"Features: run − {reference} (Hedges' g)"))
    data.feature_differences
    # %%
    data.rating_differences
    # %%
    diversity = data.diversity.round(4) if data.diversity is not None else None
    diversity
    # %%
    def without_reference(table):
        return table.drop(columns=["reference"]).round(4) if table is not None and len(table) else None


    headline = {"runs": len(runs), "features compared": len(features)}
    page_numbers = {"overview": data.overview, "config": data.config, "feature summary": feature_summary,
                    "feature differences": without_reference(data.feature_differences),
                    "rating differences": without_reference(data.rating_differences), "diversity": diversity}
    return headline, page_numbers


def rate_ideas(dataset, OPTIONS):
    """## Rate ideas (paper A, Methods "Creativity evaluation")

    The people's ratings of this dataset's ideas as the page reads them (`engine.judging.human_rating`;
    rating itself happens on the page): every rater's progress, the export (per-rater N1..Nk / U1..Uk,
    means min-max scaled within task) and the raters' agreement, ICC(3,k) as paper A's Table 4
    (`dashboard.page_data.rating.rate_ideas_page_data`)."""
    from dashboard.page_data.rating import exact_values, rate_ideas_page_data

    from engine.judging.human_rating import ratings_root

    RATINGS = Path(OPTIONS["ratings_dir"]) if OPTIONS.get("ratings_dir") else ratings_root()  # $CDL_RATINGS_DIR or yours
    print("ratings read from", RATINGS)
    data = rate_ideas_page_data(dataset, RATINGS)
    print(data.items.describe())
    if data.order is not None:
        print(data.order.describe() if data.order_written else "no rating saved yet: no shared order written")
    data.progress
    # %%
    export = data.export.table if data.export is not None else None
    print(data.export.info["columns"] if data.export is not None else "no rating yet: nothing to export")
    export
    # %%
    agreement = data.agreement.table if data.agreement is not None else None
    if data.agreement is not None:
        print(data.agreement.reason or exact_values(data.agreement))
    agreement
    # %%
    headline = {"ideas to rate": len(data.items.items), "raters": len(data.progress)}
    page_numbers = {"progress": data.progress, "export": export, "agreement": agreement}
    return headline, page_numbers


def judges(dataset, OPTIONS, find_data, display):
    """## Judges

    A measure checked against people's ratings: the saved validation report the page showed (`python -m
    engine judge validate ... --out`), turned into the page's tables by
    `dashboard.page_data.judges.judges_page_data`. Published anchors are kept apart."""
    from dashboard.page_data.judges import judges_page_data, read_report

    summary = per_prompt = None
    if OPTIONS.get("report"):
        REPORT = find_data(OPTIONS["report"], dataset=False)
        data = judges_page_data(read_report(REPORT.read_bytes(), str(REPORT)))
        print(data.provenance)
        summary, per_prompt = data.summary.round(4), data.per_prompt.round(4)
        display(data.people.round(4))
        print("published anchors (kept apart from ours):")
        display(data.published)
    summary
    # %%
    headline = {"measures checked": len(summary) if summary is not None else 0,
                "items": int(data.report.get("n", 0)) if summary is not None else None}
    page_numbers = {"summary": summary, "per prompt": per_prompt,
                    "people": data.people.round(4) if summary is not None else None}
    return headline, page_numbers


def export(dataset, frame, have, FILTERS, display):
    """## Export

    The standard items of the Export page for this selection (`dashboard.exports.report.catalog`, the
    page's own function): every table and figure the one-file report holds."""
    from dashboard.exports import report

    items = report.catalog(dataset, frame, have, selections=FILTERS)
    tables = {}
    for item in items:
        print(item.title)
        if item.figure is not None:
            display(item.figure)
        if item.table is not None:
            tables[item.title] = item.table
            display(item.table)
    # %%
    headline = {"items": len(items), "tables": len(tables)}
    page_numbers = {"items": [item.title for item in items], "tables": tables}
    return headline, page_numbers
