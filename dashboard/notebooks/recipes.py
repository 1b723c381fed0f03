"""Each page's cells for its notebook (``dashboard.notebooks.build``): one function per page,
named in the page registry (``dashboard.pages``: ``Page.notebook``), taking the ``Selection``
and returning cells. The numbers come from the page's own ``page_data`` function, called with
the page's options (``OPTIONS``, written into the preamble): the notebook holds no second copy
of the page's logic, only the calls, the charts and the last cell, ``page_numbers``, the
numbers the page shows."""

from __future__ import annotations

from dashboard.notebooks.cells import code, md


def data_page(selection) -> list:
    return [
        md("## What the dataset holds\n\nConversations selected, by source, and the mean number of turns "
           "(the page's four numbers), then the conversations by model and task "
           "(`dashboard.page_data.datasets.data_page_data`)."),
        code('''
from dashboard.page_data.datasets import data_page_data

data = data_page_data(frame)
data.headline
'''),
        code("data.by_model_and_task"),
        code('page_numbers = {**data.headline, "by model and task": data.by_model_and_task}'),
    ]


def llm_vs_human(selection) -> list:
    return [
        md("## LLM vs human teams (paper A, Figure 1, Tables 5 and 12)\n\nThe page's sample "
           "(`engine.samples`), then each trajectory feature LLM − human: Welch's interval and p, "
           "Hedges' g with its interval, and the top 5% of the outcome "
           "(`dashboard.page_data.llm_vs_human.llm_vs_human_page_data`)."),
        code('''
from dashboard.figures import charts, labels
from dashboard.page_data.llm_vs_human import llm_vs_human_page_data
from engine import samples

rows = samples.sample(OPTIONS["sample"]).select(frame)
features = OPTIONS.get("features")
data = llm_vs_human_page_data(rows, features, OPTIONS.get("outcome"), have.ratings)
print(f"{samples.sample(OPTIONS['sample']).title}: {data.n_llm:,} LLM and {data.n_human:,} human conversations")
'''),
        code('''
charts.distributions_by_group(rows, features, title="Trajectory features by source (box = quartiles, dashed = mean)") \\
    if features else None
'''),
        code('''
effects = labels.regression_table(data.effects, 4) if data.effects is not None else None
effects
'''),
        code('''
top_overall = data.top.drop(columns="by").round(4) if data.top is not None else None
top_overall
'''),
        code('page_numbers = {"LLM conversations": f"{data.n_llm:,}", "Human conversations": f"{data.n_human:,}", '
             '"effects": effects, "top 5%": top_overall}'),
    ]


def trajectories(selection) -> list:
    if not selection.options.get("method"):  # no turn embeddings: the conversation map
        return [
            md("## Conversations by their features\n\nNo turn embeddings in this dataset: PCA of the "
               "z-scored features, one point per conversation "
               "(`dashboard.page_data.trajectories.trajectories_page_data`)."),
            code('''
from dashboard.figures import charts
from dashboard.page_data.trajectories import trajectories_page_data

points = trajectories_page_data(dataset, frame).conversation_map
colour = OPTIONS.get("colour", "source")
charts.scatter_map(points.fillna({colour: "(none)"}), colour, "Conversations by trajectory features (PCA)") \\
    if len(points) else None
'''),
            code('page_numbers = {"points": len(points), "map": points[["conversation_id", "x", "y"]].round(6)}'),
        ]
    return [
        md("## Turns in semantic space\n\nEvery turn's embedding projected to 2-D (PCA or UMAP with seed 42, "
           "cached on disk), the map the page draws (every turn up to `MAX_MAP_POINTS`; above, every turn in "
           "an image and whole conversations sampled with seed 0 drawn over it), cluster labels (k-means of "
           "the embeddings named by c-TF-IDF keywords), search, paths and the Figure 4 pair "
           "(`dashboard.page_data.trajectories.trajectories_page_data`)."),
        code('''
from dashboard.figures import charts, explore_map
from dashboard.page_data.trajectories import trajectories_page_data

method, clusters = OPTIONS["method"], OPTIONS.get("clusters")
data = trajectories_page_data(dataset, frame, method, clusters=clusters, search=OPTIONS.get("search", ""),
                              pair=OPTIONS["pair"])
points, drawn, hits = data.map.points, data.map.drawn, data.map.hits
print(f"{len(points):,} turns of {len(data.ids):,} conversations, {len(drawn):,} drawn; "
      f"search {OPTIONS.get('search')!r}: {int(hits.sum()):,} turns")
'''),
        code('''
explore_map.turn_map(drawn, OPTIONS.get("colour", "progress"), f"Turns in semantic space ({method.upper()})",
                     hits=data.map.drawn_hits, cluster_column="cluster" if clusters else None,
                     aggregate=points if len(drawn) < len(points) else None)
'''),
        code('''
explore_map.paths_on_density(points, OPTIONS.get("conversations") or [], points,
                             title=f"Chosen conversations as paths ({method.upper()})")
'''),
        code('''
left, right = OPTIONS["pair"]
charts.trajectory_pair(points, left, right, title=f"Two conversations on shared axes ({method.upper()})")
'''),
        code("data.feature_values"),
        code('''
page_numbers = {"turns": len(points), "conversations": len(data.ids), "drawn": len(drawn),
                "search hits": int(hits.sum()),
                "cluster labels": sorted(points["cluster"].dropna().unique().tolist()) if clusters else [],
                "feature values": data.feature_values}
'''),
    ]


def design_levers(selection) -> list:
    return [
        md("## Design levers (paper A, Tables 2, 24, 25)\n\nFeature means by two design factors, then the "
           "manipulability table: R² of each feature on task, + discussion, + model, both, their interaction, "
           "OLS on the LLM rows of the page's sample (`engine.stats.manipulability`), beside the published "
           "Table 24 (`dashboard.page_data.design_levers.design_levers_page_data`)."),
        code('''
from dashboard.figures import charts
from dashboard.page_data.design_levers import design_levers_page_data
from engine import samples
from engine.stats import published_a

rows = samples.sample(OPTIONS["sample"]).select(frame)
data = design_levers_page_data(frame, rows, OPTIONS["sample"], have)
if data.error:  # the page says it cannot compute the table on this selection
    print("cannot compute the manipulability table:", data.error)
charts.group_means_with_ci(data.llm, OPTIONS["feature"], OPTIONS["x"], OPTIONS["colour"]) \\
    if OPTIONS.get("feature") and OPTIONS["x"] != OPTIONS["colour"] and len(data.llm) else None
'''),
        code('''
table24 = data.ours.astype(float).round(1) if data.ours is not None else None
table24
'''),
        code('''
charts.percent_heatmap(data.ours, "R² (%) computed here", zmax=60) if data.ours is not None else None
'''),
        code('''
charts.percent_heatmap(published_a.table24(), "R² (%) published (paper A, Table 24)", colorscale="Oranges", zmax=60)
'''),
        code('page_numbers = {"Table 24 (R² %)": table24, '
             '"N": data.ours.attrs["n"] if data.ours is not None else None}'),
    ]


def regression(selection) -> list:
    return [
        md("## Regression (paper A, Tables 1, 20-23, Figure 3a)\n\nThe page's sample, outcome, estimator and "
           "predictor blocks, one fit per team type (OLS with HC3 errors or a mixed model with task intercepts), "
           "then the R² ladder of Table 1 when the dataset has ratings "
           "(`dashboard.page_data.regression.regression_page_data`)."),
        code('''
from dashboard.figures import charts, labels
from dashboard.page_data.regression import regression_page_data
from engine import samples

rows = samples.sample(OPTIONS.get("sample", "all")).select(frame)
data = regression_page_data(rows, OPTIONS["outcome"], OPTIONS["teams"], OPTIONS["estimator"], features=have.features,
                            ratings=have.ratings, trajectory=OPTIONS["trajectory"], factors=OPTIONS["factors"],
                            star_levels=OPTIONS["stars"], embedding=OPTIONS.get("embedding", "0.6B"))
for team in data.teams:  # the page shows a refusal (too few rows) in place of the table
    print(f"{team.label}: " + (f"N = {team.fit['summary']['n']:,}, k = {team.fit['summary']['k']}" if team.fit
                               else team.error or f"{team.rows} rows, not fitted"))
coefficients = {label: labels.regression_table(fit["table"], 4) for label, fit in data.fits.items()}
for label, table in coefficients.items():
    display(table)
'''),
        code('''
charts.coefficient_plot({label: fit["table"] for label, fit in data.fits.items()},
                        title=f"Standardized coefficients on {OPTIONS['outcome']} (95% CI)", terms=data.terms()) \\
    if data.fits else None
'''),
        code('''
ladder = data.ladder.round(1) if data.ladder is not None else None
ladder
'''),
        code('''
page_numbers = {**{f"{label} coefficients": table for label, table in coefficients.items()},
                **{f"{label} N": fit["summary"]["n"] for label, fit in data.fits.items()}, "ladder": ladder}
'''),
    ]


def paper_a_tables(selection) -> list:
    return [
        md("## One of paper A's tables, reproduced\n\n`engine.stats.paper_tables.build` on the page's sample "
           "and stars (the CLI's twin: `python -m engine analyze table N`), then ours beside the published "
           "table row by row (`dashboard.page_data.paper_a_tables.paper_a_tables_page_data`)."),
        code('''
from dashboard.page_data.paper_a_tables import paper_a_tables_page_data

data = paper_a_tables_page_data(frame, OPTIONS["table"], OPTIONS["sample"], OPTIONS["stars"])
result = data.result
if data.lacking:
    print("this table needs", "; and ".join(data.lacking))
elif data.error:
    print("cannot compute this table on this selection:", data.error)
else:
    print(f"{result.title}: sample {result.sample}, N = {result.n:,}")
    for title, part in result.parts.items():
        print(title)
        display(part)
'''),
        code('''
for table, text in data.compared:
    print(table.title, table.caption)
    display(text)
'''),
        code('page_numbers = {"N": result.n if result else None, "parts": dict(result.parts) if result else {}}'),
    ]


EMBEDDER = '''
from engine.embedding.embedder import Embedder

embed = Embedder().encode  # the bundled all-MiniLM-L6-v2, through the project's embedding cache
'''


def diversity(selection) -> list:
    return [
        md("## Diversity (paper B, sections 6 and 7)\n\nVendi Score and Div-BLEU of the final outputs of each "
           "full condition and task, in groups of runs (paper B: 15 runs, 3 groups of 5), Creative-MAD's gain "
           "over Homo MAD, diversity across debate rounds "
           "(`dashboard.page_data.diversity.diversity_page_data`)."),
        code(EMBEDDER + '''
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
'''),
        code("data.intra if data is not None else None"),
        code("published_b.diversity_gains()"),
        code('page_numbers = {"diversity by condition and task": inter}'),
    ]


def quality_diversity(selection) -> list:
    return [
        md("## Quality–Diversity (paper B, section 6)\n\nPer condition: diversity of the final outputs "
           "(groups of 5), the judge's rubric score and pairwise win rates, the Pareto frontier "
           "(`dashboard.page_data.quality_diversity.quality_diversity_page_data`)."),
        code(EMBEDDER + '''
from dashboard.figures import charts
from dashboard.page_data.quality_diversity import quality_diversity_page_data

summary = None
if have.paper_b_methods and have.final_ideas:
    data = quality_diversity_page_data(dataset, frame, have.paper_b_methods, embed, turns=have.turns)
    summary = data.summary
    display(charts.quality_diversity_scatter(summary, "vendi", "Vendi Score", summary["pareto (rubric × Vendi)"]))
    summary = summary.drop(columns=["method"]).round(3)
summary
'''),
        code('page_numbers = {"quality and diversity per condition": summary}'),
    ]


def steering(selection) -> list:
    return [
        md("## Steering\n\nThe steered discussion against its baselines on the cached steered runs: session "
           "means with intervals, differences with Welch's interval and p, the moderator's interventions "
           "(`dashboard.page_data.steering.steering_page_data`)."),
        code('''
from dashboard.page_data.steering import steering_page_data

summary = differences = None
FOLDER = Path(OPTIONS["folder"]) if OPTIONS.get("folder") else None
if FOLDER is not None and (FOLDER / "manifest.json").exists():
    data = steering_page_data(Dataset.load(FOLDER).conversations, FOLDER)
    summary, differences = data.shown.round(4), data.differences.round(4)
    display(summary)
    display(data.interventions)
differences
'''),
        code('page_numbers = {"summary": summary, "differences": differences}'),
    ]


def pilot(selection) -> list:
    return [
        md("## Pilot\n\nThe pilot this session ran (kept in the run history), diagnosed against the reference "
           "dataset (each feature's percentile within the reference's trajectory sample when both were embedded "
           "and made alike, the values side by side otherwise, "
           "`dashboard.page_data.pilot_diagnosis.pilot_page_data`). Without a pilot, the settings of the form "
           "and the command that runs one."),
        code('''
from dashboard.page_data.pilot_diagnosis import pilot_page_data

evidence = None
print("pilot settings:", OPTIONS.get("settings"))
print("run one from a shell: python -m engine run --method", (OPTIONS.get("settings") or {}).get("method", "open"),
      "--model local ...")
if OPTIONS.get("pilot") and OPTIONS.get("reference"):
    found = pilot_page_data(Dataset.load(OPTIONS["pilot"]), Dataset.load(OPTIONS["reference"]))
    if found.error:
        print("No diagnosis:", found.error)
    else:
        print(found.diagnosis.to_text())
        evidence = found.diagnosis.evidence
evidence
'''),
        code('page_numbers = {"evidence": evidence}'),
    ]


def compare(selection) -> list:
    if len(selection.options.get("runs") or {}) < 2:
        return [md("## Compare runs\n\nThe page compares two or more runs; fewer were chosen."),
                code('page_numbers = {"runs": list((OPTIONS.get("runs") or {}))}')]
    return [
        md("## Compare runs\n\nEach run taken whole (no filter): what it holds, what differs in the runs' "
           "manifests, feature and rating summaries, each run minus the reference run (Welch's interval, "
           "Holm's p, Hedges' g), diversity per group of final outputs "
           "(`dashboard.page_data.comparison.compare_page_data`)."),
        code(EMBEDDER + '''
from dashboard.figures import charts, compare_runs
from dashboard.page_data import comparison

runs = {name: Dataset.load(path) for name, path in OPTIONS["runs"].items()}
frames = {name: d.conversations for name, d in runs.items()}
reference = OPTIONS["reference"]
data = comparison.compare_page_data(frames, {name: d.manifest for name, d in runs.items()}, reference,
                                    include_same=bool(OPTIONS.get("include_same")),
                                    group_size=int(OPTIONS.get("group_size", 5)), embed=embed)
display(data.overview)
data.config
'''),
        code('''
features = data.features
feature_summary = data.feature_summary.loc[features].round(4) if features else None
if features:
    display(charts.distributions_by_group(comparison.combined(frames), OPTIONS.get("features") or features[:6],
                                          group="dataset",
                                          title="Features by dataset (box = quartiles, dashed = mean)"))
    display(compare_runs.difference_forest(data.feature_differences, f"Features: run − {reference} (Hedges' g)"))
data.feature_differences
'''),
        code("data.rating_differences"),
        code('''
diversity = data.diversity.round(4) if data.diversity is not None else None
diversity
'''),
        code('''
def without_reference(table):
    return table.drop(columns=["reference"]).round(4) if table is not None and len(table) else None


page_numbers = {"overview": data.overview, "config": data.config, "feature summary": feature_summary,
                "feature differences": without_reference(data.feature_differences),
                "rating differences": without_reference(data.rating_differences), "diversity": diversity}
'''),
    ]


def rate_ideas(selection) -> list:
    return [
        md("## Rate ideas (paper A, Methods \"Creativity evaluation\")\n\nThe people's ratings of this dataset's "
           "ideas as the page reads them (`engine.judging.human_rating`; rating itself happens on the page): "
           "every rater's progress, the export (per-rater N1..Nk / U1..Uk, means min-max scaled within task) "
           "and the raters' agreement, ICC(3,k) as paper A's Table 4 "
           "(`dashboard.page_data.rating.rate_ideas_page_data`)."),
        code('''
from dashboard.page_data.rating import exact_values, rate_ideas_page_data

data = rate_ideas_page_data(dataset, OPTIONS.get("ratings_dir"))
print(data.items.describe())
if data.order is not None:
    print(data.order.describe() if data.order_written else "no rating saved yet: no shared order written")
data.progress
'''),
        code('''
export = data.export.table if data.export is not None else None
print(data.export.info["columns"] if data.export is not None else "no rating yet: nothing to export")
export
'''),
        code('''
agreement = data.agreement.table if data.agreement is not None else None
if data.agreement is not None:
    print(data.agreement.reason or exact_values(data.agreement))
agreement
'''),
        code('page_numbers = {"progress": data.progress, "export": export, "agreement": agreement}'),
    ]


def export(selection) -> list:
    return [
        md("## Export\n\nThe standard items of the Export page for this selection (`dashboard.exports.report."
           "catalog`, the page's own function): every table and figure the one-file report holds."),
        code('''
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
'''),
        code('page_numbers = {"items": [item.title for item in items], "tables": tables}'),
    ]


def judges(selection) -> list:
    return [
        md("## Judges\n\nA measure checked against people's ratings: the saved validation report the page showed "
           "(`python -m engine judge validate ... --out`), turned into the page's tables by "
           "`dashboard.page_data.judges.judges_page_data`. Published anchors are kept apart."),
        code('''
from dashboard.page_data.judges import judges_page_data, read_report

summary = per_prompt = None
if OPTIONS.get("report"):
    data = judges_page_data(read_report(Path(OPTIONS["report"]).read_bytes(), OPTIONS["report"]))
    print(data.provenance)
    summary, per_prompt = data.summary.round(4), data.per_prompt.round(4)
    display(data.published)
summary
'''),
        code('page_numbers = {"summary": summary, "per prompt": per_prompt}'),
    ]

