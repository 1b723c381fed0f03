"""A researcher's plugin package, written and pip-installed on a temporary path by a test.

It lives outside the project and declares entry points in the three groups of
``engine.registry``: a feature (``first_last_distance``: 1 - cos(e_1, e_n)), a discussion
method (``round_robin_once``: each agent speaks once, in order, or ``passes`` times around, an
option of its own; the last turn is the idea),
and a backend (``canned``: replies "canned reply K to AGENT" without any server), plus one
entry point that fails to import (a missing module), which must cost one line, not the run.
A second feature, ``question_share`` (the share of turns whose text ends with "?"), reads the
turns' text: a plugin's feature may need turn fields beside the embeddings.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

PLUGIN_NAME = "lab-plugin-example"
PLUGIN_VERSION = "0.3.1"

PYPROJECT = f"""
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{PLUGIN_NAME}"
version = "{PLUGIN_VERSION}"

[tool.setuptools]
packages = ["lab_plugin_example"]

[project.entry-points."creativity_lab.features"]
first_last_distance = "lab_plugin_example.measures:FIRST_LAST"
question_share = "lab_plugin_example.measures:QUESTION_SHARE"
broken = "lab_plugin_example_missing.module:THING"

[project.entry-points."creativity_lab.methods"]
round_robin_once = "lab_plugin_example.method:ROUND_ROBIN_ONCE"

[project.entry-points."creativity_lab.backends"]
canned = "lab_plugin_example.backend:CANNED"
"""

MEASURES = '''
"""first_last_distance: 1 - cos(e_1, e_n), how far the talk ended from where it began."""
import numpy as np

from engine.measures.feature import Feature


def first_last(chunk):
    return 1.0 - chunk.similarity[:, 0, -1]


FIRST_LAST = Feature("first_last_distance", "First-last distance", first_last,
                     "a plugin's own measure", min_turns=2)


def question_share(chunk):
    """The share of a conversation's turns whose text, stripped, ends with a question mark."""
    return np.array([np.mean([str(t).strip().endswith("?") for t in texts]) for texts in chunk.texts])


QUESTION_SHARE = Feature("question_share", "Share of questions", question_share,
                         "a plugin's own measure of the words", min_turns=1, needs=("text",))
'''


METHOD = '''
"""round_robin_once: each agent speaks once, in order, having read the turns before it (or
``passes`` times around, the method's own option, in ``lab_plugin_example.options``: that
module loads pydantic, so this one names it as text and ``--help`` stays light)."""
from engine.protocols.method import Method


async def round_robin_once(session):
    said = []
    for k in range(session.config.agents * session.config.passes):
        speaker = f"Agent {k % session.config.agents + 1}"
        messages = [{"role": "system", "content": f"You are {speaker}."},
                    {"role": "user", "content": "\\n".join([session.task.prompt, *said])}]
        turn = await session.ask(speaker, messages, phase="discussion", round=k)
        said.append(turn.text)
    return said[-1]


ROUND_ROBIN_ONCE = Method(
    name="round_robin_once", run=round_robin_once, label="Round robin, once",
    calls=lambda config, with_retries: config.agents * config.passes, team=3,
    options={"agents", "temperature", "max_tokens"},
    options_model="lab_plugin_example.options:RoundRobinOptions")
'''

OPTIONS = '''
"""round_robin_once's own option."""
from pydantic import Field

from engine.protocols.config import ProtocolConfig


class RoundRobinOptions(ProtocolConfig):
    passes: int = Field(1, ge=1, le=5, strict=True)  # times around the team
'''

BACKEND = '''
"""canned: a backend with no server; reply K (1, 2, ...) to the system prompt's speaker."""
from engine.llm.base import Backend, ChatResult
from engine.llm.providers import BackendFactory


class CannedBackend(Backend):
    kind = "canned"

    def __init__(self, model, **options):
        super().__init__(model=model, concurrency=options.get("concurrency", 4))
        self.replies = 0

    async def _complete(self, messages, *, temperature, max_tokens, seed):
        self.replies += 1
        speaker = messages[0]["content"].removeprefix("You are ").rstrip(".")
        text = f"canned reply {self.replies} to {speaker}"
        return ChatResult(text=text, prompt_tokens=10, completion_tokens=len(text.split()))


def build(endpoint, *, api_key=None, concurrency=16, **options):
    return CannedBackend(endpoint.model, concurrency=concurrency)


CANNED = BackendFactory("canned", build, price=lambda endpoint: (1.0, 2.0),
                        description="canned replies, no server")
'''


def plugin_sources() -> dict[str, str]:
    """The package's files, by path relative to its folder."""
    return {"pyproject.toml": textwrap.dedent(PYPROJECT),
            "lab_plugin_example/__init__.py": "",
            "lab_plugin_example/measures.py": textwrap.dedent(MEASURES),
            "lab_plugin_example/method.py": textwrap.dedent(METHOD),
            "lab_plugin_example/options.py": textwrap.dedent(OPTIONS),
            "lab_plugin_example/backend.py": textwrap.dedent(BACKEND)}


def install_plugin(workdir: Path) -> Path:
    """Write the package under ``workdir/src`` and pip-install it into ``workdir/site``
    (no index, no build isolation: this venv's setuptools); returns the site folder."""
    source, site = workdir / "src", workdir / "site"
    for relative, text in plugin_sources().items():
        path = source / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    "--no-build-isolation", "--target", str(site), str(source)],
                   check=True, capture_output=True, text=True)
    return site


def env_with(site: Path) -> dict[str, str]:
    """The environment of a subprocess that has the plugin installed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env
