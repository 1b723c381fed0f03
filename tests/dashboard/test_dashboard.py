"""AppTest page tests on the cached paper-release dataset.

Every number checked here is recomputed in the test straight from the Parquet file (pandas,
numpy, statsmodels' formula API), not through the dashboard's or engine's own functions.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import special
from scipy import stats as scipy_stats
from streamlit.testing.v1 import AppTest

from dashboard import pages

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "dashboard" / "app.py")
RELEASE = REPO / "cached_runs" / "paper_release"
FEATURES = ["local_coherence", "global_coherence", "path_length", "convergence_ratio", "max_distance",
            "trajectory_curvature", "topic_switching_rate", "revisit_score", "semantic_spread"]
PAGES = pages.keys()

pytestmark = pytest.mark.skipif(not (RELEASE / "manifest.json").exists(),
                                reason="cached_runs/paper_release is not built")


@pytest.fixture(scope="module")
def release() -> pd.DataFrame:
    return pd.read_parquet(RELEASE / "conversations.parquet")


def open_page(page: str, sidebar=None, widgets=None) -> AppTest:
    """Render ``page``; ``sidebar(at)`` sets filters first, ``widgets(at)`` then the page's own."""
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    if sidebar is not None:
        sidebar(at)
        at.run()
    if not pages.page(page).default:
        at.switch_page(pages.page(page).script)
        at.run()
    if widgets is not None:
        widgets(at)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def decode(values):
    """Plotly arrays arrive either as lists or as base64 typed arrays ({dtype, bdata, shape})."""
    if isinstance(values, dict) and "bdata" in values:
        array = np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"]))
        shape = values.get("shape")
        if shape:
            array = array.reshape([int(s) for s in str(shape).split(",")])
        return array
    return np.asarray(values, dtype=object)


def trajectory_sample(frame: pd.DataFrame) -> pd.DataFrame:
    llm = frame[(frame["source"] == "llm") & frame["discussion"].isin(["instructed", "open", "iterative"])]
    return llm.dropna(subset=FEATURES)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_without_exception(runs_root, page):
    at = open_page(page)
    assert at.title, f"{page} shows no title"


def test_data_page_counts_llm_and_human(runs_root, release):
    shown = metrics(open_page("data_page"))
    assert shown["Conversations selected"] == f"{len(release):,}"
    assert shown["LLM conversations"] == f"{(release['source'] == 'llm').sum():,}" == "3,702"
    assert shown["Human conversations"] == f"{(release['source'] == 'human').sum():,}" == "308"
    assert shown["Mean turns"] == f"{release['n_turns'].mean():.1f}"


def test_data_page_shows_how_a_cached_dataset_was_made(cached_runs_of):
    """A dataset's manifest note (e.g. the engine version's known limits) is on its Data page, as text."""
    def local(at):
        at.selectbox(key="dataset_choice").set_value("local_smollm2")

    root = cached_runs_of("paper_release", "local_smollm2")
    note = json.loads((root / "local_smollm2" / "manifest.json").read_text())["note"]
    at = open_page("data_page", sidebar=local)
    shown = [w.value.replace("\\", "") for w in at.warning]  # markdown escapes undone
    assert "N-1 agents agreed" in note and note in shown


def test_sidebar_filters_reach_every_page(runs_root, release):
    def only_o3_high(at):
        at.multiselect(key="filter_model").set_value(["o3-high"])

    expected = int((release["model"] == "o3-high").sum())
    assert metrics(open_page("data_page", only_o3_high))["Conversations selected"] == f"{expected:,}"
    shown = metrics(open_page("llm_vs_human", only_o3_high))
    assert shown["LLM conversations"] == f"{expected:,}" and shown["Human conversations"] == "0"
    at = open_page("llm_vs_human", only_o3_high)
    assert any("fewer than two conversations" in i.value for i in at.info)


def test_llm_vs_human_effect_sizes(runs_root, release):
    at = open_page("llm_vs_human")
    table = next(d.value for d in at.dataframe if "g" in d.value.columns)
    row = table.set_index("feature").loc["global_coherence"]
    llm = release.loc[release["source"] == "llm", "global_coherence"].dropna().to_numpy()
    human = release.loc[release["source"] == "human", "global_coherence"].dropna().to_numpy()
    n1, n2 = len(llm), len(human)
    pooled = np.sqrt(((n1 - 1) * llm.var(ddof=1) + (n2 - 1) * human.var(ddof=1)) / (n1 + n2 - 2))
    j = np.exp(special.gammaln((n1 + n2 - 2) / 2) - special.gammaln((n1 + n2 - 3) / 2)) / np.sqrt((n1 + n2 - 2) / 2)
    g = j * (llm.mean() - human.mean()) / pooled
    assert row["g"] == pytest.approx(g, abs=1e-4)
    welch = scipy_stats.ttest_ind(llm, human, equal_var=False)
    se = np.sqrt(llm.var(ddof=1) / n1 + human.var(ddof=1) / n2)
    # the CI bounds are noncentralities of Welch's t at its 97.5% and 2.5% points, in g units
    assert scipy_stats.nct.cdf(welch.statistic, welch.df, row["ci_low"] * pooled / (j * se)) == pytest.approx(0.975, abs=2e-3)
    assert scipy_stats.nct.cdf(welch.statistic, welch.df, row["ci_high"] * pooled / (j * se)) == pytest.approx(0.025, abs=2e-3)
    assert row["welch_p"] == ("<0.001" if welch.pvalue < 0.001 else pytest.approx(welch.pvalue, abs=1e-4))
    # no row where Welch's p and the interval of g disagree (convergence_ratio did: p < .001, d CI [-0.01, 0.22])
    for _, other in table.iterrows():
        p = 0.0 if str(other["welch_p"]).startswith("<") else float(other["welch_p"])
        assert (p < 0.05) == (other["ci_low"] > 0 or other["ci_high"] < 0), other["feature"]
    assert row["llm_mean"] == pytest.approx(llm.mean(), abs=1e-4)
    # no ratings in the release: the page says so and shows the published Table 5
    assert any("No ratings" in i.value for i in at.info)
    table5 = next(d.value for d in at.dataframe if "creativity_mean" in d.value.columns)
    assert table5.query("task == 'Overall' and group == 'LLM'")["creativity_mean"].item() == 0.30


def test_design_levers_heatmap_matches_ols_r2(runs_root, release):
    at = open_page("design_levers")
    heatmaps = [f for f in figures(at) if f["data"] and f["data"][0]["type"] == "heatmap"]
    ours, paper = heatmaps[0], heatmaps[1]
    z = decode(ours["data"][0]["z"]).astype(float)
    rows = list(ours["data"][0]["y"])
    columns = list(ours["data"][0]["x"])
    assert columns == ["Task", "+Discussion", "+Model", "Additive", "Interaction"]  # as the paper heads them
    sample = trajectory_sample(release)
    assert len(sample) == 3574
    formulas = {"Task": "C(task)", "+Discussion": "C(task) + C(discussion)", "+Model": "C(task) + C(model)",
                "Additive": "C(task) + C(discussion) + C(model)", "Interaction": "C(task) + C(discussion) * C(model)"}
    for feature, label in (("global_coherence", "Global Coherence"), ("semantic_spread", "Semantic Spread")):
        for column, rhs in formulas.items():
            r2 = smf.ols(f"{feature} ~ {rhs}", data=sample).fit().rsquared
            assert z[rows.index(label), columns.index(column)] == pytest.approx(100 * r2, abs=1e-6)
    # the published heatmap carries Table 24 as printed
    published = decode(paper["data"][0]["z"]).astype(float)
    assert published[list(paper["data"][0]["y"]).index("Global Coherence")].tolist() == [5.9, 27.0, 28.8, 47.5, 52.6]
    shown = [m.value for m in at.metric]
    assert shown[1] == "26.8%"  # published mean of the interaction column (Table 2)
    assert shown[0] == f"{z[:, 4].mean():.1f}%"


def test_regression_page_r2_and_samples(runs_root, release):
    at = open_page("regression")
    shown = metrics(at)
    llm = release[release["source"] == "llm"]
    others = [f for f in FEATURES if f != "local_coherence"]
    data = llm.dropna(subset=FEATURES)
    fit = smf.ols("local_coherence ~ " + " + ".join(others) + " + C(task)", data=data).fit()
    assert shown["LLM: N"] == f"{len(data):,}"
    assert shown["LLM: R²"] == f"{100 * fit.rsquared:.1f}%"

    def both_samples(at):
        at.radio(key="reg_sample").set_value("Both (side by side)")

    at = open_page("regression", widgets=both_samples)
    human = release[release["source"] == "human"].dropna(subset=FEATURES)
    assert metrics(at)["Human: N"] == f"{len(human):,}"
    coefficients = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Standardized"))
    assert [t["name"] for t in coefficients["data"]] == ["LLM", "Human"]
    assert any("LLM vs human" in m.value for m in at.markdown)


def test_regression_mixed_model_shows_conditional_r2(runs_root):
    def mixed_human(at):
        at.radio(key="reg_sample").set_value("Human")
        at.radio(key="reg_estimator").set_value("mixedlm")

    shown = metrics(open_page("regression", widgets=mixed_human))
    assert "Human: conditional R²" in shown


def test_trajectories_without_embeddings_say_so_and_map_conversations(runs_root, release):
    at = open_page("trajectories")
    assert any("no turn embeddings" in i.value for i in at.info)
    points = figures(at)[0]
    n_points = sum(len(decode(trace["x"])) for trace in points["data"])
    assert n_points == len(release.dropna(subset=FEATURES))


def test_diversity_without_debate_runs_shows_published_gain(runs_root):
    at = open_page("diversity")
    assert any("no paper-B debate runs" in i.value for i in at.info)
    gains = at.dataframe[0].value
    assert gains.loc[gains["model"] == "Qwen3-8B", "semantic (Vendi) gain %"].item() == 26.2


def test_export_page_lists_items_and_report(runs_root):
    at = open_page("export")
    options = at.selectbox(key="export_item").options
    assert "Paper A, Table 24 (R² %)" in options
    assert any(o.startswith("Manipulability (Table 24 layout), N = 3,574") for o in options)
    at.selectbox(key="export_item").set_value("Paper A, Table 1: R² ladder (%)").run()
    assert not at.exception
    preview = next(d.value for d in at.dataframe)
    assert preview["LLM"].tolist() == [8.6, 17.6, 22.3, 24.4, 32.6]


def upload(at: AppTest, name: str, payload: bytes) -> AppTest:
    at.file_uploader(key="upload_file").upload(name, payload).run()
    at.button(key="upload_load").click().run()
    return at


def test_upload_errors_are_messages_not_tracebacks(runs_root):
    for name, payload, fragment in (("broken.parquet", b"PAR1xxxxxxxx", "not a readable Parquet file"),
                                    ("empty.csv", b"", "is empty"),
                                    ("table.csv", b"conversation_id,global_coherence\nc1,abc\n", "row 1")):
        at = upload(open_page("data_page"), name, payload)
        assert not at.exception
        shown = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]  # as the page shows it, escapes undone
        assert any(fragment in text and name in text for text in shown), shown


def test_uploaded_table_becomes_the_selected_dataset(runs_root):
    table = pd.DataFrame({"conversation_id": ["a", "b", "c"], "source": ["llm", "llm", "human"],
                          "global_coherence": [0.2, 0.4, 0.9]})
    at = upload(open_page("data_page"), "mine.csv", table.to_csv(index=False).encode())
    assert not at.exception
    assert at.selectbox(key="dataset_choice").value == "upload: mine"
    shown = metrics(at)
    assert (shown["Conversations selected"], shown["LLM conversations"], shown["Human conversations"]) == ("3", "2", "1")
    at.switch_page("views/llm_vs_human.py").run()
    assert not at.exception
    assert metrics(at)["Human conversations"] == "1"


@pytest.mark.parametrize("page", PAGES)
def test_pages_on_a_bare_dataset_say_what_is_missing(tmp_path, monkeypatch, page):
    """A dataset with one row per conversation and nothing else: no features, turns, ratings. A
    page whose needs (``Page.needs``) it lacks shows the one message naming each missing thing
    and how to get it (``dashboard.page_data.needs.message``); every page renders without error."""
    from dashboard.page_data.datasets import availability
    from dashboard.page_data.needs import message, missing
    from engine.datasets import Dataset

    root = tmp_path / "cached_runs"
    frame = pd.DataFrame({"conversation_id": [f"c{i}" for i in range(4)], "source": "llm",
                          "task": "plastic_waste", "model": "smollm2", "discussion": "open", "n_turns": 3})
    Dataset(name="bare", conversations=frame, manifest={"description": "bare"}).save(root / "bare")
    monkeypatch.setenv("CDL_CACHED_RUNS", str(root))
    monkeypatch.setenv("CDL_CACHE_DIR", str(tmp_path / "cache"))
    at = open_page(page)
    needs = pages.page(page).needs
    lacking = missing(needs, availability(Dataset.load(root / "bare")))
    assert [n.name for n in lacking] == list(needs)  # the bare dataset holds none of what any page needs
    if lacking:
        shown = [e.value for e in at.info]
        assert message("bare", lacking) in shown, (page, shown)
        for need in lacking:
            assert need.what in message("bare", lacking) and need.how in message("bare", lacking)


def test_export_offers_what_the_pages_showed(runs_root):
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("views/design_levers.py").run()
    at.switch_page("views/export.py").run()
    assert not at.exception
    options = at.selectbox(key="export_item").options
    assert "Design levers: R² (%) published" in options
    at.selectbox(key="export_item").set_value("Design levers: R² (%) published").run()
    preview = json.loads(at.get("plotly_chart")[0].proto.spec)
    z = decode(preview["data"][0]["z"]).astype(float)
    assert z[0].tolist() == [5.9, 27.0, 28.8, 47.5, 52.6]  # Table 24, global coherence row


def test_regression_on_4b_features_matches_ols(runs_root, release):
    def use_4b(at):
        at.radio(key="reg_embedding").set_value("4B")

    at = open_page("regression", widgets=use_4b)
    llm = release[release["source"] == "llm"]
    robust = [f + "_4b" for f in FEATURES]
    data = llm.dropna(subset=robust)
    fit = smf.ols("local_coherence_4b ~ " + " + ".join(robust[1:]) + " + C(task)", data=data).fit()
    shown = metrics(at)
    assert shown["LLM: N"] == f"{len(data):,}"
    assert shown["LLM: R²"] == f"{100 * fit.rsquared:.1f}%"


def test_joining_a_ratings_file_unlocks_rating_views(runs_root, release):
    """The user path for the authors' ideas_with_ratings_clean.csv (synthetic values here)."""
    rng = np.random.default_rng(3)
    ratings = release[["file_id", "question_id"]].copy()
    ratings["avg_novelty_rating"] = rng.uniform(size=len(ratings)).round(4)
    ratings["avg_usefulness_rating"] = rng.uniform(size=len(ratings)).round(4)
    ratings["avg_creativity_rating"] = (ratings["avg_novelty_rating"] * ratings["avg_usefulness_rating"]).round(6)
    at = open_page("data_page")
    at.file_uploader(key="ratings_file").upload("ideas_with_ratings_clean.csv",
                                                ratings.to_csv(index=False).encode()).run()
    at.button(key="ratings_join").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="dataset_choice").value == "upload: paper_release+ratings"
    at.switch_page("views/regression.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="reg_outcome").value == "creativity"
    ladder = next(d.value for d in at.dataframe if "specification" in d.value.columns).set_index("specification")
    joined = release.merge(ratings, on=["file_id", "question_id"])
    llm = joined[joined["source"] == "llm"].dropna(subset=FEATURES)
    fit = smf.ols("avg_creativity_rating ~ " + " + ".join(FEATURES), data=llm).fit()
    assert ladder.loc["trajectory", "LLM"] == pytest.approx(round(100 * fit.rsquared, 1))
    human = joined[joined["source"] == "human"].dropna(subset=FEATURES)
    fit_h = smf.ols("avg_creativity_rating ~ " + " + ".join(FEATURES) + " + C(task)", data=human).fit()
    assert ladder.loc["+task", "Human"] == pytest.approx(round(100 * fit_h.rsquared, 1))


CACHED_DATASETS = sorted(p.name for p in (REPO / "cached_runs").iterdir() if (p / "manifest.json").is_file())


@pytest.mark.slow  # 12 pages on each cached dataset; the local ones embed their final outputs once
@pytest.mark.parametrize("dataset", CACHED_DATASETS)
def test_every_page_renders_on_every_cached_dataset(page_renders, dataset):
    """Each page opened with the dataset chosen in the sidebar: a title, no exception, no error
    box (the session's one render of each page per dataset, ``tests.support.page_renders``)."""
    shown = page_renders(dataset)
    for page in PAGES:
        assert not shown[page].exceptions, (page, dataset, shown[page].exceptions)
        assert shown[page].titles, f"{page} shows no title on {dataset}"
        assert not shown[page].errors, (page, dataset, shown[page].errors)
