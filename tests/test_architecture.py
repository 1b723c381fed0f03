"""The rules of ARCHITECTURE.md, checked on the source with ``ast`` (nothing is imported):
Streamlit only in the views, the widgets and the app's entry; no import circle in ``engine/``
or ``dashboard/``, between modules or between the engine's parts; each part of the engine
imports only its own layer or those below; the dashboard's computing folders never import a
page or a widget; the engine never imports the dashboard; one page list
(``dashboard/pages.py``). Imports inside functions count as much as top-level ones.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "dashboard", "devtools")
STREAMLIT_ALLOWED = ("dashboard.views", "dashboard.widgets", "dashboard.app")
COMPUTING = ("dashboard.page_data", "dashboard.figures", "dashboard.pilot", "dashboard.exports", "dashboard.notebooks")


def module_files(root: Path, packages=PACKAGES) -> dict[str, Path]:
    """``{dotted module name: file}`` for every ``.py`` file under the packages."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def imported_modules(path: Path, module: str, modules) -> set[str]:
    """The dotted names a file imports (relative imports resolved). ``from a import b`` names
    ``a.b`` when that is a module in ``modules`` and ``a`` otherwise; ``import a.b`` names ``a.b``."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                names.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return names


def import_graph(root: Path, packages=PACKAGES) -> dict[str, set[str]]:
    """Edges between the project's own modules: ``a -> b`` when ``a`` imports module ``b``."""
    modules = module_files(root, packages)
    return {name: {m for m in imported_modules(path, name, modules) if m in modules and m != name}
            for name, path in modules.items()}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# ----------------------------------------------------------------------------- the checker itself
def test_cycle_finder_sees_a_circle_made_by_an_import_inside_a_function(tmp_path):
    _write(tmp_path, {"engine/__init__.py": "", "engine/a.py": "from engine.b import x\n",
                      "engine/b.py": "def x():\n    from engine.a import y\n",
                      "engine/c.py": "from engine import a\n"})
    assert import_cycles(import_graph(tmp_path, ("engine",))) == [["engine.a", "engine.b"]]


def test_cycle_finder_sees_a_three_module_circle_and_relative_imports(tmp_path):
    _write(tmp_path, {"engine/__init__.py": "", "engine/p/__init__.py": "",
                      "engine/p/config.py": "from .steered import t\n",
                      "engine/p/steered.py": "from engine.p.session import s\n",
                      "engine/p/session.py": "from engine.p import config\n"})
    assert import_cycles(import_graph(tmp_path, ("engine",))) == [
        ["engine.p.config", "engine.p.session", "engine.p.steered"]]


def test_a_package_importing_its_own_submodule_is_not_a_circle(tmp_path):
    _write(tmp_path, {"engine/__init__.py": "", "engine/s/__init__.py": "from engine.s.r import fit\n",
                      "engine/s/r.py": "from engine.s import spec\n", "engine/s/spec.py": "X = 1\n"})
    assert import_cycles(import_graph(tmp_path, ("engine",))) == []


# ----------------------------------------------------------------------------- the rules
def test_no_import_circle_in_the_project():
    assert import_cycles(import_graph(REPO)) == []


@pytest.mark.parametrize("name,path", sorted(module_files(REPO).items()))
def test_streamlit_only_in_views_widgets_and_the_app(name, path):
    if name.startswith(STREAMLIT_ALLOWED):
        return
    imported = imported_modules(path, name, {})
    streamlit = {n for n in imported if n == "streamlit" or n.startswith("streamlit.")}
    assert not streamlit, f"{path.relative_to(REPO)} imports Streamlit; only views and widgets may"


def test_computing_folders_import_no_page_and_no_widget():
    graph = import_graph(REPO)
    wrong = {name: sorted(e for e in edges if e.startswith(("dashboard.views", "dashboard.widgets")))
             for name, edges in graph.items() if name.startswith(COMPUTING)}
    assert {k: v for k, v in wrong.items() if v} == {}


def test_widgets_import_no_page_and_the_engine_no_dashboard():
    graph = import_graph(REPO)
    upward = {name: sorted(e for e in edges if e.startswith(("dashboard", "devtools")))
              for name, edges in graph.items() if name.startswith("engine")}
    assert {k: v for k, v in upward.items() if v} == {}
    from_widgets = {name: sorted(e for e in edges if e.startswith("dashboard.views"))
                    for name, edges in graph.items() if name.startswith("dashboard.widgets")}
    assert {k: v for k, v in from_widgets.items() if v} == {}


def published_definitions(root: Path = REPO) -> list[str]:
    """Functions and constants named ``published...`` defined in the engine outside
    ``engine/stats/published_*.py`` (where the papers' printed numbers are transcribed)."""
    found = []
    for name, path in module_files(root, ("engine",)).items():
        if name.startswith("engine.stats.published_"):
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            names = [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else \
                [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
            found += [f"{name}.{n}" for n in names if n.lower().startswith("published")]
    return sorted(found)


def test_published_numbers_are_transcribed_in_the_published_modules_only():
    assert published_definitions() == []


def test_published_numbers_live_in_the_engine_only():
    """Paper A's and paper B's printed values are transcribed once, in ``engine.stats``."""
    assert (REPO / "engine/stats/published_a.py").is_file() and (REPO / "engine/stats/published_b.py").is_file()
    stray = [p.relative_to(REPO).as_posix() for p in (REPO / "dashboard").rglob("*published*.py")]
    assert stray == []


# ----------------------------------------------------------------------------- the engine's layout
ROOT_MODULE_LIMIT = 12
ENTRY_MODULES = {"__init__", "__main__"}


def root_modules(root: Path = REPO) -> list[str]:
    """The engine's modules that sit at its root (its entry files not counted)."""
    return sorted(p.stem for p in (root / "engine").glob("*.py") if p.stem not in ENTRY_MODULES)


def test_the_engine_root_keeps_at_most_twelve_modules():
    """Everything else lives in a package named for its role (embedding, storage, ...)."""
    modules = root_modules()
    assert len(modules) <= ROOT_MODULE_LIMIT, modules


def test_root_counter_counts_files_not_packages(tmp_path):
    _write(tmp_path, {"engine/__init__.py": "", "engine/__main__.py": "", "engine/a.py": "",
                      "engine/b.py": "", "engine/pkg/__init__.py": "", "engine/pkg/c.py": ""})
    assert root_modules(tmp_path) == ["a", "b"]


# ----------------------------------------------------------------------------- the engine's parts
# The engine's layers, lowest first (ARCHITECTURE.md, "Layers"): a part imports only parts of its
# own layer or of layers below it, and no two parts import each other, even through others.
# A part is a subpackage (``storage`` for ``engine/storage``) or a root module (``corpus`` for
# ``engine/corpus.py``); ``engine`` is the package's own ``__init__``.
LAYERS = (
    ("base", ("engine", "errors", "fields", "registry", "prompts")),
    ("data", ("storage", "corpus", "llm", "tasks")),
    ("measures", ("embedding", "measures", "maps", "importers")),
    ("methods", ("protocols",)),
    ("analysis", ("names", "samples", "stats", "datasets", "judging")),
    ("runs", ("cluster", "runs")),
    ("builds", ("dataset_builds", "diagnosis")),
    ("commands", ("cli", "__main__")),
)


def engine_part(module: str) -> str:
    """The part a module of the engine belongs to: ``engine.storage.files`` -> ``storage``,
    ``engine.corpus`` -> ``corpus``, ``engine`` -> ``engine``."""
    return module.split(".")[1] if "." in module else module


def part_graph(root: Path) -> dict[str, set[str]]:
    """Edges between the engine's parts: ``a -> b`` when a module of ``a`` imports one of ``b``."""
    graph: dict[str, set[str]] = {}
    for module, edges in import_graph(root, ("engine",)).items():
        part = engine_part(module)
        graph.setdefault(part, set()).update(engine_part(e) for e in edges if engine_part(e) != part)
    return graph


def layer_violations(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """Every import of a part from a higher layer, and every part no layer names."""
    level = {part: i for i, (_, parts) in enumerate(layers) for part in parts}
    name = {part: layer for layer, parts in layers for part in parts}
    found = [f"engine/{part} is in no layer: add it to LAYERS and to ARCHITECTURE.md"
             for part in sorted(graph) if part not in level]
    found += [f"{part} ({name[part]}) imports {other} ({name[other]}), a higher layer"
              for part in sorted(graph) if part in level
              for other in sorted(graph[part]) if other in level and level[other] > level[part]]
    return found


def test_no_two_engine_parts_import_each_other():
    assert import_cycles(part_graph(REPO)) == []


def test_engine_parts_import_only_their_own_layer_or_below():
    assert layer_violations(part_graph(REPO)) == []


def documented_layers(architecture: Path) -> list[tuple[str, list[str]]]:
    """The layers ARCHITECTURE.md draws, lowest first: ``(layer, [part, ...])`` from each line
    ``name   engine/part, engine/module.py (notes), ...`` of its layer diagram."""
    found = []
    for line in architecture.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([a-z]+) {2,}(engine/.*)$", line)
        if match:
            found.append((match.group(1), re.findall(r"engine/(\w+)", re.sub(r"\([^)]*\)", "", match.group(2)))))
    return found[::-1]


def test_architecture_md_draws_the_layers_the_test_checks():
    drawn = [(layer, set(parts)) for layer, parts in documented_layers(REPO / "ARCHITECTURE.md")]
    assert drawn == [(layer, set(parts) - {"engine"}) for layer, parts in LAYERS]


def test_every_layered_part_exists():
    """A part renamed or removed leaves no stale name in LAYERS."""
    parts = {p.stem for p in (REPO / "engine").glob("*.py")} | \
            {p.parent.name for p in (REPO / "engine").glob("*/__init__.py")}
    layered = [part for _, members in LAYERS for part in members]
    assert len(layered) == len(set(layered))
    assert set(layered) - {"engine"} == parts - {"__init__"}


def test_part_rule_refuses_a_two_way_import_the_module_rule_misses(tmp_path):
    """corpus imports storage at the top; a function of storage imports corpus: no two modules
    import each other, but the two parts do."""
    _write(tmp_path, {"engine/__init__.py": "", "engine/corpus.py": "from engine.storage.files import write\n",
                      "engine/storage/__init__.py": "", "engine/storage/files.py": "def write():\n    pass\n",
                      "engine/storage/run_folder.py": "def append():\n    from engine.corpus import Corpus\n"})
    assert import_cycles(import_graph(tmp_path, ("engine",))) == []
    graph = part_graph(tmp_path)
    assert graph == {"engine": set(), "corpus": {"storage"}, "storage": {"corpus"}}
    assert import_cycles(graph) == [["corpus", "storage"]]


def test_layer_rule_refuses_an_upward_import_and_an_unplaced_part(tmp_path):
    _write(tmp_path, {"engine/__init__.py": "", "engine/storage/__init__.py": "",
                      "engine/storage/files.py": "def read():\n    from engine.measures.registry import FEATURES\n",
                      "engine/measures/__init__.py": "", "engine/measures/registry.py": "FEATURES = ()\n",
                      "engine/rooms/__init__.py": "from engine.storage import files\n"})
    assert layer_violations(part_graph(tmp_path)) == [
        "engine/rooms is in no layer: add it to LAYERS and to ARCHITECTURE.md",
        "storage (data) imports measures (measures), a higher layer"]


def cli_importers(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """Modules outside ``engine.cli`` (its entry ``engine.__main__`` aside) that import it."""
    return {name: sorted(e for e in edges if e == "engine.cli" or e.startswith("engine.cli."))
            for name, edges in graph.items()
            if not (name == "engine.cli" or name.startswith("engine.cli.") or name == "engine.__main__")
            and any(e == "engine.cli" or e.startswith("engine.cli.") for e in edges)}


def test_nothing_outside_the_cli_imports_it():
    """Loaders and other library code live in library modules; the CLI only parses and prints."""
    graph = import_graph(REPO, PACKAGES + ("benchmarks",))
    assert cli_importers(graph) == {}


def test_cli_importer_check_sees_a_dashboard_import(tmp_path):
    _write(tmp_path, {"engine/__init__.py": "", "engine/cli/__init__.py": "", "engine/cli/data.py": "",
                      "engine/__main__.py": "from engine.cli import main\n",
                      "dashboard/__init__.py": "", "dashboard/x.py": "from engine.cli.data import load\n"})
    graph = import_graph(tmp_path, ("engine", "dashboard"))
    assert cli_importers(graph) == {"dashboard.x": ["engine.cli.data"]}


def private_imports(root: Path, packages=PACKAGES + ("benchmarks",)) -> list[str]:
    """``from a.b import _name`` where ``a.b`` is another of the project's modules."""
    found = []
    for name, path in module_files(root, packages).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in packages:
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{name}: {node.module}.{alias.name}")
    return sorted(found)


def test_no_module_imports_another_modules_private_name():
    assert private_imports(REPO) == []


def test_private_import_check_sees_one(tmp_path):
    _write(tmp_path, {"engine/__init__.py": "", "engine/a.py": "def _helper():\n    pass\n",
                      "engine/b.py": "from engine.a import _helper, __doc__\n"})
    assert private_imports(tmp_path, ("engine",)) == ["engine.b: engine.a._helper"]


# ----------------------------------------------------------------------------- one page list
PAGE_REGISTRY = REPO / "dashboard" / "pages.py"
PAGE_LIST_FOLDERS = ("dashboard", "devtools", "benchmarks", "tests")


def registered_pages(registry: Path) -> list[tuple[str, str]]:
    """``(key, title)`` of every ``Page("key", "title", ...)`` in the registry's source."""
    found = []
    for node in ast.walk(ast.parse(registry.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Page" and len(node.args) >= 2 \
                and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args[:2]):
            found.append((node.args[0].value, node.args[1].value))
    return found


def page_lists(path: Path, pages: list[tuple[str, str]]) -> list[str]:
    """Where ``path`` lists pages itself: every literal list, tuple or set holding three page
    names or more (keys, titles or view scripts ``views/<key>.py``), every dict whose values are
    three page names or more (``{key: title}``; a dict of numbers per page is data about those
    pages, not a list of them), and the file as a whole when its string literals name more
    than half of the pages' titles."""
    keys = {key for key, _ in pages}
    titles = {title for _, title in pages}
    names = keys | titles | {f"views/{key}.py" for key in keys}
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            items = node.values if isinstance(node, ast.Dict) else node.elts
            named = {i.value for i in items if isinstance(i, ast.Constant) and i.value in names}
            if len(named) >= 3:
                found.append(f"line {node.lineno}: {', '.join(sorted(named))}")
    said = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in titles}
    if len(said) > len(titles) / 2:
        found.append(f"{len(said)} of the {len(titles)} page titles")
    return found


def test_page_list_finder_sees_a_tuple_a_dict_and_a_file_of_titles(tmp_path):
    registry = tmp_path / "pages.py"
    registry.write_text("PAGES = (Page('a_page', 'A'), Page('b', 'Bee'), Page('c', 'Sea'), Page('d', 'Dee'))\n")
    pages = registered_pages(registry)
    assert pages == [("a_page", "A"), ("b", "Bee"), ("c", "Sea"), ("d", "Dee")]
    _write(tmp_path, {"one.py": "PAGES = ['a_page', 'b', 'views/c.py']\n",
                      "two.py": "TITLES = {'a_page': 'A', 'b': 'Bee', 'c': 'Sea'}\n",
                      "three.py": "x = 'A'\ny = 'Bee'\nz = 'Sea'\n",
                      "fine.py": "open_page('a_page')\nopen_page('b')\nnot_these = ('c', 'other')\n"
                                 "AT_LEAST = {'a_page': 2, 'b': 3, 'c': 1}\n"})
    assert page_lists(tmp_path / "one.py", pages) == ["line 1: a_page, b, views/c.py"]
    assert page_lists(tmp_path / "two.py", pages) == ["line 1: A, Bee, Sea", "3 of the 4 page titles"]
    assert page_lists(tmp_path / "three.py", pages) == ["3 of the 4 page titles"]
    assert page_lists(tmp_path / "fine.py", pages) == []


def test_one_page_list():
    """The pages are listed once, in ``dashboard/pages.py``: the app, the notebooks, devtools,
    the benchmarks and the tests read it (``dashboard.pages``)."""
    pages = registered_pages(PAGE_REGISTRY)
    assert len(pages) >= 10
    found = {path.relative_to(REPO).as_posix(): lists
             for folder in PAGE_LIST_FOLDERS for path in sorted((REPO / folder).rglob("*.py"))
             if path != PAGE_REGISTRY and (lists := page_lists(path, pages))}
    assert found == {}
