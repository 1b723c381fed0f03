"""``python -m engine --help`` loads no heavy library: what each subcommand needs is
imported by its handler, so asking for help costs an interpreter start, not numpy + pandas
+ torch (measured: 1.8-2.0 s before, about 0.2 s after)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "sklearn", "statsmodels", "umap", "torch",
         "sentence_transformers", "transformers", "llama_cpp", "openai", "httpx", "pydantic",
         "streamlit", "plotly", "tqdm", "ray", "onnxruntime", "onnx")


def every_command() -> list[list[str]]:
    """Every command and subcommand the parser knows, read from the parser itself (a new one
    is checked without being listed here), and the bare program."""
    import argparse

    from engine.cli import build_parser

    def walk(parser, prefix):
        found = [prefix]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found += walk(sub, [*prefix, name])
        return found

    return walk(build_parser(), [])


COMMANDS = every_command()

PROBE = """
import contextlib, io, json, sys
from engine.cli import main
for argv in json.loads(sys.argv[1]):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            main([*argv, "--help"])
        except SystemExit as stop:
            assert stop.code == 0, (argv, stop.code)
    assert "usage:" in out.getvalue(), argv
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in json.loads(sys.argv[2]))))
"""


def test_the_command_list_is_read_from_the_parser():
    names = {" ".join(c) for c in COMMANDS}
    assert {"", "run", "features", "plugins", "dataset features", "analyze fidelity", "judge pairwise"} <= names


def test_help_of_every_subcommand_imports_no_heavy_library():
    result = subprocess.run([sys.executable, "-c", PROBE, json.dumps(COMMANDS), json.dumps(HEAVY)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_the_method_choices_are_the_protocols_methods():
    from engine.names import METHODS, PAPER_A, PAPER_B
    from engine.protocols.registry import method_names

    # the built-ins, in the registry's order (plugins' methods come after them): the papers'
    # five structures (A) and six methods (B) first, then the project's own
    assert METHODS == method_names()[:len(METHODS)] and METHODS[:11] == PAPER_A + PAPER_B
