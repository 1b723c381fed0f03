"""Each page's cells for its notebook (``dashboard.notebooks.build``): one function per page,
named as the page's view module, taking the ``Selection`` and returning cells. Every cell
calls the function the page calls, with the page's options (``OPTIONS``, written into the
preamble); the last one sets ``page_numbers``, the numbers the page shows."""

from __future__ import annotations

from dashboard.notebooks.cells import code, md


def data_page(selection) -> list:
    return [
        md("## What the dataset holds\n\nConversations selected, by source, and the mean number of turns "
           "(the page's four numbers), then the conversations by model and task."),
        code('''
counts = frame["source"].value_counts() if "source" in frame else pd.Series(dtype=int)
headline = {
    "Conversations selected": f"{len(frame):,}",
    "LLM conversations": f"{int(counts.get('llm', 0)):,}",
    "Human conversations": f"{int(counts.get('human', 0)):,}",
    "Mean turns": f"{frame['n_turns'].mean():.1f}" if "n_turns" in frame else "n/a",
}
headline
'''),
        code('''
by_model_and_task = None
if {"source", "model", "task"} <= set(frame.columns):
    by_model_and_task = pd.crosstab(frame["model"].fillna("(none)"), frame["task"].fillna("(none)"),
                                    margins=True, margins_name="total")
by_model_and_task
'''),
        code('page_numbers = {**headline, "by model and task": by_model_and_task}'),
    ]


def llm_vs_human(selection) -> list:
    cells = [
        md("## LLM vs human teams (paper A, Figure 1, Tables 5 and 12)\n\nThe page's sample "
           "(`engine.samples`), then each trajectory feature LLM − human: Welch's interval and p, "
           "Hedges' g with its interval (`engine.stats.group_comparison`, one row per feature in "
           "`dashboard.page_data.analyses.feature_comparison`)."),
        code('''
from dashboard.figures import charts, labels
from dashboard.page_data import analyses
from engine import samples, stats

frame = samples.sample(OPTIONS["sample"]).select(frame)
counts = frame["source"].value_counts()
n_llm, n_human = int(counts.get("llm", 0)), int(counts.get("human", 0))
both = n_llm >= 2 and n_human >= 2
features = OPTIONS.get("features") or []
print(f"{samples.sample(OPTIONS['sample']).title}: {n_llm:,} LLM and {n_human:,} human conversations")
'''),
        code('''
charts.distributions_by_group(frame, features, title="Trajectory features by source (box = quartiles, dashed = mean)") \\
    if features else None
'''),
        code('''
effects = labels.regression_table(analyses.feature_comparison(frame, features), 4) if both and features else None
effects
'''),
    ]
    if selection.options.get("outcome"):
        cells.append(code('''
outcome = OPTIONS["outcome"]
top = stats.top_share(frame, outcome, q=0.95)
top_overall = top[top["by"] == "overall"].drop(columns="by").round(4)
top_overall
'''))
    else:
        cells.append(code("top_overall = None"))
    cells.append(code('page_numbers = {"LLM conversations": f"{n_llm:,}", "Human conversations": f"{n_human:,}", '
                      '"effects": effects, "top 5%": top_overall}'))
    return cells


def trajectories(selection) -> list:
    if not selection.options.get("method"):  # no turn embeddings: the conversation map
        return [
            md("## Conversations by their nine features\n\nNo turn embeddings in this dataset: PCA of the "
               "z-scored features, one point per conversation (`dashboard.page_data.analyses.conversation_map`)."),
            code('''
from dashboard.figures import charts
from dashboard.page_data import analyses

points = analyses.conversation_map(frame)
colour = OPTIONS.get("colour", "source")
charts.scatter_map(points.fillna({colour: "(none)"}), colour, "Conversations by trajectory features (PCA)") \\
    if len(points) else None
'''),
            code('page_numbers = {"points": len(points), "map": points[["conversation_id", "x", "y"]].round(6)}'),
        ]
    return [
        md("## Turns in semantic space\n\nEvery turn's embedding projected to 2-D (`engine.maps.projection."
           "project_turns`, PCA or UMAP with seed 42, cached on disk), the map the page draws (every "
           "turn up to `MAX_MAP_POINTS`; above, every turn in an image and whole conversations sampled with "
           "seed 0 drawn over it), cluster labels (k-means of the "
           "embeddings named by c-TF-IDF keywords, `engine.maps.topic_labels`), search, paths and the Figure 4 pair."),
        code('''
from dashboard.figures import charts, explore_map
from dashboard.page_data import trajectories

method = OPTIONS["method"]
ids, points, drawn = trajectories.map_frames(trajectories.projected_turns(dataset, method), frame)
clusters = OPTIONS.get("clusters")
if clusters:
    labelled = trajectories.turn_clusters(dataset, int(clusters))
    points = points.merge(labelled, on=["conversation_id", "turn"], how="left")
    drawn = drawn.merge(labelled, on=["conversation_id", "turn"], how="left")
hits = trajectories.search_hits(points, OPTIONS.get("search", ""))
print(f"{len(points):,} turns of {len(ids):,} conversations, {len(drawn):,} drawn; "
      f"search {OPTIONS.get('search')!r}: {int(hits.sum()):,} turns")
'''),
        code('''
explore_map.turn_map(drawn, OPTIONS.get("colour", "progress"), f"Turns in semantic space ({method.upper()})",
                     hits=trajectories.search_hits(drawn, OPTIONS.get("search", "")),
                     cluster_column="cluster" if clusters else None,
                     aggregate=points if len(drawn) < len(points) else None)
'''),
        code('''
explore_map.paths_on_density(points, OPTIONS.get("conversations") or [], points,
                             title=f"Chosen conversations as paths ({method.upper()})")
'''),
        code('''
left, right = OPTIONS["pair"]
feature_values = trajectories.feature_pair_table(frame, [left, right])
charts.trajectory_pair(points, left, right, title=f"Two conversations on shared axes ({method.upper()})")
'''),
        code("feature_values"),
        code('''
page_numbers = {"turns": len(points), "conversations": len(ids), "drawn": len(drawn), "search hits": int(hits.sum()),
                "cluster labels": sorted(points["cluster"].dropna().unique().tolist()) if clusters else [],
                "feature values": feature_values}
'''),
    ]


def design_levers(selection) -> list:
    return [
        md("## Design levers (paper A, Tables 2, 24, 25)\n\nFeature means by two design factors, then the "
           "manipulability table: R² of each feature on task, + discussion, + model, both, their interaction, "
           "OLS on the LLM rows of the page's sample (`engine.stats.manipulability`, in percent in "
           "`dashboard.page_data.analyses.manipulability_percent`), beside the published Table 24."),
        code('''
from dashboard.figures import charts
from dashboard.page_data import analyses
from engine import samples
from engine.stats import published_a

everything = frame
frame = samples.sample(OPTIONS["sample"]).select(frame)
llm = frame[frame["source"] == "llm"] if "source" in frame else frame
charts.group_means_with_ci(llm, OPTIONS["feature"], OPTIONS["x"], OPTIONS["colour"]) \\
    if OPTIONS.get("feature") and OPTIONS["x"] != OPTIONS["colour"] and len(llm) else None
'''),
        code('''
try:
    ours = analyses.manipulability_percent(everything, "", OPTIONS["sample"])
except Exception as error:  # the page says it cannot compute the table on this selection
    ours = None
    print("cannot compute the manipulability table:", error)
table24 = ours.astype(float).round(1) if ours is not None else None
table24
'''),
        code('''
charts.percent_heatmap(ours, "R² (%) computed here", zmax=60) if ours is not None else None
'''),
        code('''
published = published_a.table24()
charts.percent_heatmap(published, "R² (%) published (paper A, Table 24)", colorscale="Oranges", zmax=60)
'''),
        code('page_numbers = {"Table 24 (R² %)": table24, "N": ours.attrs["n"] if ours is not None else None}'),
    ]


def regression(selection) -> list:
    return [
        md("## Regression (paper A, Tables 1, 20-23, Figure 3a)\n\nThe page's sample, outcome, estimator and "
           "predictor blocks, one fit per team type (`engine.stats.fit` of an `engine.stats.RegressionSpec`: "
           "OLS with HC3 errors or a mixed model with task intercepts), then the R² ladder of Table 1 when the "
           "dataset has ratings (`engine.stats.paper_tables.ladder`)."),
        code('''
from dashboard.figures import charts, labels
from dashboard.page_data import analyses
from engine import samples, stats
from engine.measures.trajectory import FEATURE_NAMES

frame = samples.sample(OPTIONS.get("sample", "all")).select(frame)
if OPTIONS.get("embedding") == "4B":  # the release's Qwen3-Embedding-4B features (Table 26)
    swapped = {f"{f}_4b": f for f in FEATURE_NAMES if f"{f}_4b" in frame.columns}
    frame = frame.drop(columns=list(swapped.values())).rename(columns=swapped)
fits = {}
for label, blocks in (OPTIONS.get("blocks") or {}).items():
    part = frame[frame["source"] == {"LLM": "llm", "Human": "human"}[label]]
    spec = stats.RegressionSpec(name=f"{label}: {OPTIONS['outcome']}", outcome=OPTIONS["outcome"], blocks=blocks,
                                estimator=OPTIONS["estimator"], group="task", star_levels=tuple(OPTIONS["stars"]))
    try:
        fits[label] = stats.fit(spec, part, allow_nonconvergence=True)
    except Exception as error:  # the page shows the refusal (too few rows) in place of the table
        print(f"{label}: {error}")
        continue
    print(f"{label}: N = {fits[label].summary['n']:,}, k = {fits[label].summary['k']}")
coefficients = {label: labels.regression_table(result.table, 4) for label, result in fits.items()}
for label, table in coefficients.items():
    display(table)
'''),
        code('''
charts.coefficient_plot({label: result.table for label, result in fits.items()},
                        title=f"Standardized coefficients on {OPTIONS['outcome']} (95% CI)",
                        terms=[f for f in FEATURE_NAMES if all(f in set(r.table["term"]) for r in fits.values())] or None) \\
    if fits else None
'''),
        code('''
ladder = None
if have.ratings:
    outcome = "creativity" if "creativity" in have.ratings else have.ratings[0]
    ladder, notes, ladder_n = analyses.regression_ladder(frame, outcome)
    ladder = ladder.round(1)
ladder
'''),
        code('''
page_numbers = {**{f"{label} coefficients": table for label, table in coefficients.items()},
                **{f"{label} N": result.summary["n"] for label, result in fits.items()}, "ladder": ladder}
'''),
    ]


def paper_a_tables(selection) -> list:
    return [
        md("## One of paper A's tables, reproduced\n\n`engine.stats.paper_tables.build` on the page's sample "
           "and stars (the CLI's twin: `python -m engine analyze table N`), then ours beside the published "
           "table row by row (`dashboard.page_data.beside`)."),
        code('''
from dashboard.page_data import beside
from engine.stats import paper_tables

lacking = paper_tables.missing_needs(OPTIONS["table"], frame)
result = None
if lacking:
    print("this table needs", "; and ".join(lacking))
else:
    result = paper_tables.build(OPTIONS["table"], frame, stars=OPTIONS["stars"], sample=OPTIONS["sample"])
    print(f"{result.title}: sample {result.sample}, N = {result.n:,}")
    for title, part in result.parts.items():
        print(title)
        display(part)
'''),
        code('''
for table in (beside.beside(result) if result is not None else []):
    print(table.title, table.caption)
    display(table.formatted())
'''),
        code('page_numbers = {"N": result.n if result else None, "parts": dict(result.parts) if result else {}}'),
    ]


DIVERSITY_SETUP = '''
from dashboard.page_data import diversity as diversity_data
from engine.embedding.embedder import Embedder

embed = Embedder().encode  # the bundled all-MiniLM-L6-v2, through the project's embedding cache
'''


def diversity(selection) -> list:
    return [
        md("## Diversity (paper B, sections 6 and 7)\n\nVendi Score and Div-BLEU of the final outputs of each "
           "full condition and task, in groups of runs (paper B: 15 runs, 3 groups of 5), "
           "`engine.measures.diversity.diversity_by_condition` through `dashboard.page_data.diversity`."),
        code(DIVERSITY_SETUP + '''
from engine.stats import published_b

methods = tuple(OPTIONS.get("methods") or have.paper_b_methods)
inter = None
if have.paper_b_methods and have.final_ideas and methods:
    inter = diversity_data.inter_session_table(frame, methods, embed, group_size=int(OPTIONS.get("group_size", 5)))
    inter = inter.drop(columns=["vendi_per_group", "div_bleu_per_group"]).round(4)
else:
    print("no paper-B debate runs with final outputs: the published gains only")
inter
'''),
        code('''
published_b.diversity_gains()
'''),
        code('page_numbers = {"diversity by condition and task": inter}'),
    ]


def quality_diversity(selection) -> list:
    return [
        md("## Quality–Diversity (paper B, section 6)\n\nPer condition: diversity of the final outputs "
           "(groups of 5), the judge's rubric score and pairwise win rates, the Pareto frontier "
           "(`dashboard.page_data.quality_diversity`)."),
        code(DIVERSITY_SETUP + '''
from dashboard.figures import charts
from dashboard.page_data import quality_diversity as qd

summary = None
if have.paper_b_methods and have.final_ideas:
    methods = tuple(have.paper_b_methods)
    rubric, pairwise = qd.load_quality(dataset)
    data = diversity_data.paper_b_rows(frame, methods)
    inter = diversity_data.inter_session_table(frame, methods, embed, group_size=5)
    summary = qd.condition_summary(inter, data, rubric, pairwise, group_size=5)
    summary["pareto (rubric × Vendi)"] = qd.pareto(summary, "rubric", "vendi")
    summary["pareto (rubric × Div-BLEU)"] = qd.pareto(summary, "rubric", "div_bleu")
    display(charts.quality_diversity_scatter(summary, "vendi", "Vendi Score", summary["pareto (rubric × Vendi)"]))
    summary = summary.drop(columns=["method"]).round(3)
summary
'''),
        code('page_numbers = {"quality and diversity per condition": summary}'),
    ]


def steering(selection) -> list:
    return [
        md("## Steering\n\nThe steered discussion against its baselines on the cached steered runs "
           "(`dashboard.page_data.steering`: session means with intervals, differences with Welch's "
           "interval and p)."),
        code('''
from dashboard.page_data import steering as sd

summary = differences = None
FOLDER = Path(OPTIONS["folder"]) if OPTIONS.get("folder") else None
if FOLDER is not None and (FOLDER / "manifest.json").exists():
    steered = Dataset.load(FOLDER)
    summary = sd.summary_table(steered.conversations, sd.final_vectors(FOLDER))
    differences = sd.difference_table(steered.conversations).round(4)
    summary = summary[[c for c in OPTIONS["columns"] if c in summary.columns]].round(4)
    display(summary)
differences
'''),
        code('page_numbers = {"summary": summary, "differences": differences}'),
    ]


def pilot(selection) -> list:
    return [
        md("## Pilot\n\nThe pilot this session ran (kept in the run history), diagnosed against the reference "
           "dataset (`engine.diagnosis.diagnose.diagnose`: each feature's percentile within the reference's LLM "
           "conversations). Without a pilot, the settings of the form and the command that runs one."),
        code('''
from engine.diagnosis.diagnose import diagnose

evidence = None
print("pilot settings:", OPTIONS.get("settings"))
print("run one from a shell: python -m engine run --method", (OPTIONS.get("settings") or {}).get("method", "open"),
      "--model local ...")
if OPTIONS.get("pilot") and OPTIONS.get("reference"):
    pilot_set, reference_set = Dataset.load(OPTIONS["pilot"]), Dataset.load(OPTIONS["reference"])
    pilot_rows = pilot_set.conversations
    if "status" in pilot_rows:
        pilot_rows = pilot_rows[pilot_rows["status"].fillna("ok") == "ok"]
    reference = reference_set.conversations
    if "source" in reference.columns:
        reference = reference[reference["source"] == "llm"]
    diagnosis = diagnose(pilot_rows, reference, pilot_embedding=pilot_set.manifest.get("embedding_model"),
                         reference_embedding=reference_set.manifest.get("embedding_model"))
    print(diagnosis.to_text())
    evidence = diagnosis.evidence
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
           "Holm's p, Hedges' g: `engine.stats.guards`), diversity per group of final outputs "
           "(`dashboard.page_data.comparison`)."),
        code('''
from dashboard.figures import charts, compare_runs
from dashboard.page_data import comparison
from engine.embedding.embedder import Embedder
from engine.measures.trajectory import FEATURE_NAMES

runs = {name: Dataset.load(path) for name, path in OPTIONS["runs"].items()}
frames = {name: d.conversations for name, d in runs.items()}
manifests = {name: d.manifest for name, d in runs.items()}
reference = OPTIONS["reference"]
overview = comparison.overview(frames, manifests)
config = comparison.config_differences(manifests, include_same=bool(OPTIONS.get("include_same")))
display(overview)
config
'''),
        code('''
both = comparison.combined(frames)
features = [f for f in FEATURE_NAMES if f in both and both[f].notna().any()]
feature_summary = comparison.feature_summary(frames).loc[features].round(4) if features else None
feature_differences = comparison.run_differences(frames, features, reference) if features else None
if features:
    display(charts.distributions_by_group(both, OPTIONS.get("features") or features[:6], group="dataset",
                                          title="Features by dataset (box = quartiles, dashed = mean)"))
    display(compare_runs.difference_forest(feature_differences, f"Features: run − {reference} (Hedges' g)"))
feature_differences
'''),
        code('''
ratings = comparison.rating_summary(frames)
rated = [c for c in comparison.RATINGS if any(ratings.loc[c, f"{n} N"] > 0 for n in frames)]
rating_differences = comparison.run_differences(frames, rated, reference) if rated else None
rating_differences
'''),
        code('''
groups = comparison.diversity_groups(frames, Embedder().encode, group_size=int(OPTIONS.get("group_size", 5)))
diversity = comparison.diversity_summary(frames, None, int(OPTIONS.get("group_size", 5)), groups=groups).round(4)
diversity
'''),
        code('''
page_numbers = {"overview": overview, "config": config, "feature summary": feature_summary,
                "feature differences": feature_differences.drop(columns=["reference"]).round(4)
                if feature_differences is not None and len(feature_differences) else None,
                "rating differences": rating_differences.drop(columns=["reference"]).round(4)
                if rating_differences is not None and len(rating_differences) else None,
                "diversity": diversity}
'''),
    ]


def export(selection) -> list:
    return [
        md("## Export\n\nThe standard items of the Export page for this selection (`dashboard.exports.report."
           "catalog`): every table and figure the one-file report holds."),
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
