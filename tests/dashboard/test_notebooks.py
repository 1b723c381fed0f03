""""Download as notebook", executed as a researcher would run it: every page's notebook built
from the selection the page kept (dataset, sidebar filters, options, as its button writes it),
saved in a folder OUTSIDE the checkout with a copy of its dataset(s) beside it, executed (nbclient)
in one ``python3`` Jupyter kernel this module's notebooks share (each on an empty namespace, in
its own folder: ``notebook_runs.execute``), and its headline numbers (the JSON its last cell prints) compared with the page's own numbers: the
metrics AppTest shows and the page's ``page_data`` function called as the page calls it, to 1e-9.

The kernel imports the code under test (``PYTHONPATH`` = this checkout) and finds its dataset by
the notebook's rule (a folder of the dataset's name beside the notebook); ``CDL_CACHED_RUNS``
points at an empty folder so nothing else can supply it. The count of numbers compared and the
largest difference are printed at the end of the module (``pytest -s``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import pages
from tests.dashboard.notebook_runs import (
    COMPARED,
    KERNEL,
    REPO,
    RUNS,
    as_int_text,
    close,
    execute,
    metrics,
    page,
    same_table,
    selection,
    shown,
    table,
)

RELEASE, LOCAL, STEERED, PAPER_B = "paper_release", "local_smollm2", "local_smollm2_steered", "local_smollm2_paper_b"

pytestmark = [pytest.mark.skipif(not (RUNS / RELEASE / "manifest.json").exists(), reason="paper release not built")]


def built(*names: str) -> bool:
    return all((RUNS / name / "manifest.json").exists() for name in names)


@pytest.fixture(scope="module", autouse=True)
def report():
    yield
    KERNEL.shutdown()
    if COMPARED["numbers"]:
        print(f"\nnotebooks: {COMPARED['numbers']} numbers compared on {len(COMPARED['pages'])} pages "
              f"({', '.join(sorted(COMPARED['pages']))}); largest difference {COMPARED['max_difference']:.3g}; "
              "seconds per notebook: " + ", ".join(f"{k} {v:.0f}" for k, v in COMPARED["seconds"].items()))


# -- the pages ------------------------------------------------------------------------------
@pytest.mark.slow  # the notebooks share one kernel (notebook_runs.KERNEL)
def test_data_page_notebook_on_a_filtered_release(cached_runs_of, tmp_path):
    cached_runs_of(RELEASE)
    at = page("data_page", before=lambda at: at.multiselect(key="filter_model").set_value(["o3-high"]))
    chosen = selection(at, "data_page")
    assert chosen.filters == {"model": ["o3-high"]}
    numbers = execute(chosen, tmp_path, (RELEASE,))
    headline, shown_metrics = numbers["headline"], metrics(at)
    release = pd.read_parquet(RUNS / RELEASE / "conversations.parquet")
    rows = release[release["model"] == "o3-high"]
    for label in ("Conversations selected", "LLM conversations", "Human conversations"):
        assert as_int_text(headline[label]) == shown_metrics[label]
    close("data_page", len(rows), headline["Conversations selected"], "conversations")
    close("data_page", float(rows["n_turns"].mean()), headline["Mean turns"], "mean turns")
    assert f"{headline['Mean turns']:.1f}" == shown_metrics["Mean turns"]
    same_table("data_page", shown(at, "data_counts"), numbers["by model and task"], "by model and task")


@pytest.mark.slow
def test_llm_vs_human_notebook(cached_runs_of, tmp_path):
    from dashboard.page_data.llm_vs_human import llm_vs_human_page_data
    from engine import samples

    cached_runs_of(RELEASE)
    at = page("llm_vs_human")
    chosen = selection(at, "llm_vs_human")
    numbers = execute(chosen, tmp_path, (RELEASE,))
    rows = samples.sample(chosen.options["sample"]).select(pd.read_parquet(RUNS / RELEASE / "conversations.parquet"))
    data = llm_vs_human_page_data(rows, chosen.options["features"], chosen.options.get("outcome"))
    headline = numbers["headline"]
    close("llm_vs_human", data.n_llm, headline["LLM conversations"], "LLM N")
    close("llm_vs_human", data.n_human, headline["Human conversations"], "human N")
    assert as_int_text(headline["LLM conversations"]) == metrics(at)["LLM conversations"]
    assert str(headline["Features compared"]) == metrics(at)["Features compared"]
    same_table("llm_vs_human", data.effects, numbers["effects"], "effects")
    if data.top is None:  # the release holds no ratings until they are joined: no outcome, no top-5% view
        assert numbers["top 5%"] is None
    else:
        same_table("llm_vs_human", data.top.drop(columns="by"), numbers["top 5%"], "top 5%")


@pytest.mark.slow
def test_design_levers_notebook(cached_runs_of, tmp_path):
    from dashboard.page_data.datasets import availability
    from dashboard.page_data.design_levers import design_levers_page_data
    from engine import samples
    from engine.datasets import Dataset

    cached_runs_of(RELEASE)
    at = page("design_levers")
    chosen = selection(at, "design_levers")
    numbers = execute(chosen, tmp_path, (RELEASE,))
    dataset = Dataset.load(RUNS / RELEASE)
    frame = dataset.conversations
    data = design_levers_page_data(frame, samples.sample(chosen.options["sample"]).select(frame),
                                   chosen.options["sample"], availability(dataset))
    headline, fit = numbers["headline"], data.interaction_fit
    close("design_levers", data.ours.attrs["n"], headline["N"], "N")
    assert headline["N"] == 3574  # the trajectory sample's LLM rows with all nine features (Table 24)
    close("design_levers", fit["k"], headline["interaction k"], "k")
    close("design_levers", fit["df_resid"], headline["interaction N − k"], "N − k")
    close("design_levers", data.mean_interaction, headline["Mean R², interaction model, %"], "mean R²")
    close("design_levers", data.mean_interaction_adjusted, headline["Mean adjusted R², interaction model, %"],
          "mean adjusted R²")
    close("design_levers", data.published_mean_interaction,
          headline["Mean R², interaction model (published, Table 2), %"], "published mean R²")
    assert f"{headline['Mean R², interaction model, %']:.1f}%" in metrics(at).values()
    same_table("design_levers", data.ours.reset_index(drop=True), numbers["Table 24 (R² %)"], "Table 24")


def team_metric(at: AppTest, team: str, what: str) -> str:
    """The Regression page's metric ``<team> [(model)]: <what>``."""
    return next(m.value for m in at.metric if m.label.startswith(team) and m.label.endswith(f": {what}"))


def without_task(at):  # the trajectory block alone: 18 rated LLM rows, k = 10 (with task k = 15, refused)
    at.checkbox(key="reg_block_task").uncheck()


def mixed_effects(at):
    at.radio(key="reg_estimator").set_value("mixedlm")


def both_teams(at):
    at.radio(key="reg_sample").set_value("Both (side by side)")


@pytest.mark.slow
@pytest.mark.parametrize("name, widgets, teams", [
    (RELEASE, both_teams, ["LLM", "Human"]),  # LLM and human fits side by side; no ratings, no ladder
    (RELEASE, mixed_effects, ["LLM"]),  # no R² and adjusted R²: marginal and conditional R² (Nakagawa)
    pytest.param(LOCAL, without_task, ["LLM"], marks=pytest.mark.skipif(not built(LOCAL), reason="local run not built")),
], ids=["release-both-teams", "release-mixed-effects", "local-with-ratings-and-ladder"])
def test_regression_notebook_gives_r2_adjusted_r2_n_k_and_p_as_numbers(cached_runs_of, tmp_path, name, widgets, teams):
    from dashboard.page_data.datasets import availability
    from dashboard.page_data.regression import regression_page_data
    from engine import samples
    from engine.datasets import Dataset

    cached_runs_of(name)
    at = page("regression", widgets=widgets)
    chosen = selection(at, "regression")
    options = chosen.options
    assert sorted(options["blocks"]) == sorted(teams)
    numbers = execute(chosen, tmp_path, (name,))
    dataset = Dataset.load(RUNS / name)
    have = availability(dataset)
    data = regression_page_data(samples.sample(options["sample"]).select(dataset.conversations), options["outcome"],
                                options["teams"], options["estimator"], features=have.features,
                                ratings=have.ratings, trajectory=options["trajectory"], factors=options["factors"],
                                star_levels=options["stars"], embedding=options["embedding"])
    headline = table(numbers["headline"]).set_index("team")
    assert list(headline.index) == teams
    for team in data.teams:
        assert team.fit is not None, team.error
        s, got = team.fit["summary"], headline.loc[team.label]
        for key, column in (("n", "N"), ("k", "k"), ("df_resid", "N − k"), ("r2", "R²"), ("adj_r2", "adjusted R²"),
                            ("marginal_r2", "marginal R²"), ("conditional_r2", "conditional R²")):
            close("regression", s[key], got[column], f"{team.label} {column}")
        close("regression", team.r2.value, got["headline value"], f"{team.label} headline R²")
        assert got["headline"] == team.r2.label
        assert team_metric(at, team.label, "N") == as_int_text(got["N"])
        if team.r2.headline:  # the page's R² metric, as the page formats the notebook's number
            assert team_metric(at, team.label, team.r2.label) == team.r2.text()
        coefficients = numbers[f"{team.label} coefficients"]
        same_table("regression", team.fit["table"], coefficients, f"{team.label} coefficients")
        assert all(isinstance(p, float) for p in table(coefficients)["p"])  # not "<0.001"
    if data.ladder is None:
        assert not have.ratings and numbers["ladder"] is None
        return
    same_table("regression", data.ladder, numbers["ladder"], "R² ladder")
    fits = data.ladder_n.set_index("specification")
    for source, label in (("llm", "LLM"), ("human", "Human")):
        if f"{label} N" not in fits:
            assert f"{source} fit" not in numbers["ladder fits"]
            continue
        ladder_fit = table(numbers["ladder fits"][f"{source} fit"]).set_index("model")
        for specification, row in fits.iterrows():
            close("regression", row[f"{label} N"], ladder_fit.loc[specification, "n"], f"ladder {label} N")
            close("regression", row[f"{label} k"], ladder_fit.loc[specification, "k"], f"ladder {label} k")


@pytest.mark.slow
def test_paper_a_tables_notebook(cached_runs_of, tmp_path):
    from dashboard.page_data.paper_a_tables import paper_a_tables_page_data

    cached_runs_of(RELEASE)
    at = page("paper_a_tables", widgets=lambda at: at.selectbox(key="pat_table").set_value("25"))
    chosen = selection(at, "paper_a_tables")
    assert chosen.options["table"] == "25"
    numbers = execute(chosen, tmp_path, (RELEASE,))
    frame = pd.read_parquet(RUNS / RELEASE / "conversations.parquet")
    result = paper_a_tables_page_data(frame, "25", chosen.options["sample"], chosen.options["stars"]).result
    close("paper_a_tables", result.n, numbers["headline"]["N"], "N")
    assert list(numbers["parts"]) == list(result.parts)
    for position, (title, part) in enumerate(result.parts.items()):
        same_table("paper_a_tables", part, numbers["parts"][title], title)
        same_table("paper_a_tables", shown(at, f"pat_ours_25_{position}"), numbers["parts"][title], title)


@pytest.mark.slow
@pytest.mark.skipif(not built(LOCAL), reason="local cached run not built")
def test_trajectories_notebook(cached_runs_of, tmp_path):
    cached_runs_of(LOCAL)
    at = page("trajectories", widgets=lambda at: at.text_input(key="traj_search").input("plastic"))
    chosen = selection(at, "trajectories")
    assert chosen.options["search"] == "plastic" and chosen.options["method"] == "pca"
    numbers = execute(chosen, tmp_path, (LOCAL,))
    headline = numbers["headline"]
    close("trajectories", len(pd.read_parquet(RUNS / LOCAL / "turn_index.parquet")), headline["turns"], "turns")
    close("trajectories", len(shown(at, "traj_selected")), headline["search hits"], "search hits")
    same_table("trajectories", shown(at, "traj_feature_values"), numbers["feature values"], "feature values")


@pytest.mark.slow
@pytest.mark.skipif(not built(PAPER_B), reason="paper-B cached run not built")
def test_diversity_and_quality_diversity_notebooks(cached_runs_of, tmp_path):
    from dashboard.page_data.datasets import availability
    from dashboard.page_data.diversity import diversity_page_data
    from engine.datasets import Dataset
    from engine.embedding.embedder import Embedder

    cached_runs_of(PAPER_B)
    at = page("diversity")
    chosen = selection(at, "diversity")
    numbers = execute(chosen, tmp_path / "diversity", (PAPER_B,))
    dataset = Dataset.load(RUNS / PAPER_B)
    have = availability(dataset)
    data = diversity_page_data(dataset, dataset.conversations, tuple(chosen.options["methods"]), Embedder().encode,
                               group_size=int(chosen.options["group_size"]), turns=have.turns)
    headline = numbers["headline"]
    close("diversity", data.headline_rows, headline["runs the gains rest on"], "runs")
    shown_gains = {label.split(", ")[1].split(" (")[0]: value for label, value in metrics(at).items()
                   if label.startswith("Creative-MAD vs Homo MAD")}
    assert set(shown_gains) == set(data.gains) == {"vendi", "div_bleu"}
    for metric, gain in data.gains.items():
        got = headline[f"Creative-MAD vs Homo MAD, {metric} (%)"]
        close("diversity", gain, got, f"{metric} gain")
        assert shown_gains[metric] == ("n/a" if got is None else f"{got:+.1f}%")
        interval = data.intervals[metric] or {}
        close("diversity", interval.get("low"), headline[f"Creative-MAD vs Homo MAD, {metric} (%), 95% low"], "low")
        close("diversity", interval.get("high"), headline[f"Creative-MAD vs Homo MAD, {metric} (%), 95% high"], "high")
    same_table("diversity", data.shown.round(4), numbers["diversity by condition and task"], "diversity")

    at = page("quality_diversity")
    chosen = selection(at, "quality_diversity")
    numbers = execute(chosen, tmp_path / "qd", (PAPER_B,))
    summary = shown(at, "qd_summary")
    same_table("quality_diversity", summary, numbers["quality and diversity per condition"], "summary")
    close("quality_diversity", len(summary), numbers["headline"]["conditions"], "conditions")


@pytest.mark.slow
@pytest.mark.skipif(not built(LOCAL, STEERED), reason="local cached runs not built")
def test_steering_and_compare_runs_notebooks(cached_runs_of, tmp_path):
    from dashboard.page_data.steering import steering_page_data

    cached_runs_of(LOCAL, STEERED)
    at = page("steering")
    chosen = selection(at, "steering")
    assert chosen.options["folder"]
    numbers = execute(chosen, tmp_path / "steering", (LOCAL, STEERED) if Path(chosen.dataset).name == LOCAL
                      else (STEERED,))
    data = steering_page_data(pd.read_parquet(RUNS / STEERED / "conversations.parquet"), RUNS / STEERED)
    same_table("steering", data.shown.round(4), numbers["summary"], "summary")
    same_table("steering", data.differences.round(4), numbers["differences"], "differences")

    at = page("compare", widgets=lambda at: at.multiselect(key="compare_datasets").set_value([LOCAL, STEERED]))
    chosen = selection(at, "compare")
    assert set(chosen.options["runs"]) == {LOCAL, STEERED}
    first = Path(chosen.dataset).name
    numbers = execute(chosen, tmp_path / "compare", (first, *({LOCAL, STEERED} - {first})))
    same_table("compare", shown(at, "compare_feature_differences"),
               numbers["feature differences"], "feature differences")
    same_table("compare", shown(at, "compare_config"), numbers["config"], "config")
    same_table("compare", shown(at, "compare_diversity"), numbers["diversity"], "diversity")
    assert numbers["headline"]["runs"] == 2


@pytest.mark.slow
@pytest.mark.skipif(not (RUNS / "human_ratings").is_dir(), reason="no people's ratings in cached_runs")
def test_judges_notebook_reads_the_report_the_page_showed(cached_runs_of, tmp_path):
    """The report (``cached_runs/human_ratings/<set>/reports/*.json``) is named within the folder
    of datasets and found beside the notebook, like a dataset."""
    cached_runs_of(RELEASE, "human_ratings")
    at = page("judges")
    chosen = selection(at, "judges")
    assert chosen.options["report"]
    numbers = execute(chosen, tmp_path, (RELEASE, "human_ratings"))
    shown_summary = shown(at, "judges_summary")
    same_table("judges", shown_summary, numbers["summary"], "summary")
    if "judges_people" in at.session_state["shown_items"]:
        same_table("judges", shown(at, "judges_people"), numbers["people"], "people's agreement")
    else:  # the report holds no people's agreement: the page says so, the notebook's table is empty
        assert table(numbers["people"]).empty
    close("judges", len(shown_summary), numbers["headline"]["measures checked"], "measures")


@pytest.mark.slow
def test_export_notebook_lists_the_reports_items_and_tables(cached_runs_of, tmp_path):
    from dashboard.exports import report
    from dashboard.page_data.datasets import availability
    from engine.datasets import Dataset

    cached_runs_of(RELEASE)
    at = page("export")
    numbers = execute(selection(at, "export"), tmp_path, (RELEASE,))
    dataset = Dataset.load(RUNS / RELEASE)
    items = report.catalog(dataset, dataset.conversations, availability(dataset), selections={})
    close("export", len(items), numbers["headline"]["items"], "items")
    assert numbers["items"] == [item.title for item in items]
    tables = [item for item in items if item.table is not None]
    assert tables and sorted(numbers["tables"]) == sorted(item.title for item in tables)
    for item in tables:
        same_table("export", item.table, numbers["tables"][item.title], item.title)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pilot", "rate_ideas"])  # pilot: none in this session
def test_the_session_pages_notebooks_run_outside_the_checkout(cached_runs_of, tmp_path, name):
    """The pages whose numbers come from a session (a pilot run, ratings typed on the page): on
    the release alone their notebooks run and agree with the page's function."""
    cached_runs_of(RELEASE)
    at = page(name)
    chosen = selection(at, name)
    numbers = execute(chosen, tmp_path, (RELEASE,))
    headline = numbers["headline"]
    if name == "rate_ideas":
        from dashboard.page_data.rating import rate_ideas_page_data
        from engine.datasets import Dataset

        data = rate_ideas_page_data(Dataset.load(RUNS / RELEASE), chosen.options.get("ratings_dir"))
        close(name, len(data.items.items), headline["ideas to rate"], "ideas")
        close(name, len(data.progress), headline["raters"], "raters")
    else:
        assert headline == {"Pilot conversations diagnosed": None}  # no pilot in this session


@pytest.mark.slow
@pytest.mark.skipif(not built("local_smollm2_fidelity"), reason="fidelity run not built")
def test_pilot_notebook_diagnoses_a_kept_pilot_against_the_reference(cached_runs_of, tmp_path):
    """A kept pilot takes a real run on a model (the page's background job); the selection its
    button writes then names the kept folder and the reference (``views/pilot.py``): here a
    cached local run stands for the kept pilot, and the notebook's diagnosis is compared with
    ``pilot_page_data``'s."""
    from dashboard.notebooks import Selection
    from dashboard.page_data.pilot_diagnosis import pilot_page_data
    from engine.datasets import Dataset

    pilot = "local_smollm2_fidelity"
    root = cached_runs_of(RELEASE, pilot)
    at = page("pilot")
    kept = selection(at, "pilot")
    chosen = Selection(page="pilot", dataset=kept.dataset, filters=kept.filters,
                       options={**kept.options, "pilot": str(root / pilot), "reference": str(root / RELEASE)})
    numbers = execute(chosen, tmp_path, (RELEASE, pilot))
    found = pilot_page_data(Dataset.load(RUNS / pilot), Dataset.load(RUNS / RELEASE))
    assert not found.error
    close("pilot", found.diagnosis.n_pilot, numbers["headline"]["Pilot conversations diagnosed"], "pilot N")
    same_table("pilot", found.diagnosis.evidence, numbers["evidence"], "evidence")


def notebook_tests_of_pages(module: Path) -> set[str]:
    """The pages whose notebook a test of ``module`` runs: a test function calling ``execute``
    (``notebook_runs``) names its page in ``page("<key>")`` or a ``name`` parameter's values."""
    import ast

    tree = ast.parse(module.read_text(encoding="utf-8"))
    executed = set()
    for function in [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]:
        calls = [n for n in ast.walk(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
        if not any(c.func.id == "execute" for c in calls):
            continue
        named = {c.args[0].value for c in calls if c.func.id == "page" and isinstance(c.args[0], ast.Constant)}
        for decorator in function.decorator_list:  # @pytest.mark.parametrize("name", [...])
            if isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("parametrize"):
                values = decorator.args[1]
                if isinstance(values, ast.List) and ast.unparse(decorator.args[0]) == "'name'":
                    named |= {v.value for v in values.elts if isinstance(v, ast.Constant)}
        executed |= named
    return executed


def test_every_page_s_notebook_is_executed_by_a_test():
    """Every registered page's notebook is run (``execute``) by a test, here or in the page's own
    test module (``tests/dashboard/test_<page>.py``): a new page's notebook gets a test or this
    fails. The pages are the registry's; no list of them is kept here."""
    executed = set().union(*(notebook_tests_of_pages(module) for module in Path(__file__).parent.glob("test_*.py")))
    assert sorted(set(pages.keys()) - executed) == []


def test_the_notebook_test_finder_reads_a_page_s_own_module(tmp_path):
    """A page's notebook test in its own module is found, by ``page("<key>")`` or parametrized names."""
    module = tmp_path / "test_a_page.py"
    module.write_text("import pytest\n\n\ndef test_mine(tmp_path):\n    execute(selection(page('a_page'), 'a_page'), "
                      "tmp_path, ())\n\n\n@pytest.mark.parametrize('name', ['b_page', 'c_page'])\n"
                      "def test_theirs(name):\n    execute(name)\n\n\ndef test_no_notebook():\n    page('d_page')\n")
    assert notebook_tests_of_pages(module) == {"a_page", "b_page", "c_page"}


@pytest.mark.parametrize("name", pages.keys())
def test_every_page_has_the_button_and_its_notebook_is_valid_python(cached_runs_of, name):
    """Every page keeps its selection and offers "Download as notebook"; the notebook validates
    (nbformat), every code cell parses, it names its dataset by name (no machine path) and
    sets ``headline``; text from the dataset only in code cells."""
    import ast

    import nbformat

    from dashboard.notebooks import notebook_bytes

    cached_runs_of(RELEASE)
    at = page(name)
    assert any(b.proto.label == "Download as notebook" for b in at.get("download_button")), name
    text = notebook_bytes(selection(at, name)).decode("utf-8")
    written = nbformat.reads(text, as_version=4)
    nbformat.validate(written)
    assert written.metadata["creativity_dynamics_lab"]["page"] == name
    assert written.metadata["creativity_dynamics_lab"]["dataset"] == RELEASE
    assert str(REPO) not in text
    sources = [cell.source for cell in written.cells if cell.cell_type == "code"]
    for source in sources:
        ast.parse(source)
    assert any("headline = " in source for source in sources)
    for cell in written.cells:
        if cell.cell_type != "code":
            assert "paper_release" not in cell.source  # names from files never in markdown
