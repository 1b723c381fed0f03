"""A method is described once (``engine.protocols.method.Method``) and every reader uses it:
config validation, ``expected_calls``, ``run_session``, the CLI's ``--method`` choices, the
pilot's settings and the figures' codes and colours (``engine.protocols.registry``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.figures import codes, palette
from dashboard.pilot import settings as pilot_settings
from engine import names
from engine.corpus import Corpus
from engine.errors import InputError
from engine.llm import ScriptedBackend, run_sync
from engine.protocols import expected_calls, make_config, run_session
from engine.protocols import methods_paper_b, registry
from engine.protocols.config import ProtocolConfig
from engine.protocols.method import Method
from engine.registry import GROUPS, Registry, Source
from engine.runs.grid import options_hash
from engine.runs.runner import run_grid
from tests.support.cli_run import cli, refused

ROOT = Path(__file__).resolve().parents[3]
TASK = "plastic_waste"


# ----------------------------------------------------------------------------- (a) call counts
# Worked by hand from the papers: paper B's debates N (R + 1) + the consensus step (judge 1,
# + consensus_retries when asked again; vote N; random / all 0); Voting N + 1; Direct K (+ 1
# with K >= 2); Self-Refine K (1 + 2R) (+ 1). Paper A: the initial phase 2N (N proposals, N
# ratings), open / steered T turns + 1 synthesis, instructed T readings (hand-raising: N drafts
# + N bids per turn; asked up to 3 times in paper mode, 50 in release mode), iterative T (1 + N)
# (release: 2 per turn), progressive 4N after the initial phase.
HAND_WORKED = [
    ("homo_mad", {"agents": 3, "rounds": 2}, 3 * (2 + 1) + 1, 3 * (2 + 1) + 1 + 2),
    ("hetero_mad", {"agents": 4, "rounds": 1, "consensus": "vote"}, 4 * 2 + 4, 4 * 2 + 4),
    ("creative_mad", {"agents": 5, "rounds": 2, "consensus": "random"}, 15, 15),
    ("creative_mad", {"agents": 3, "rounds": 1, "k": 1, "consensus_retries": 4}, 3 * 2 + 1, 3 * 2 + 1 + 4),
    ("voting", {"agents": 5}, 6, 8),
    ("voting", {"agents": 5, "consensus": "all"}, 5, 5),
    ("direct", {}, 1, 1),
    ("direct", {"candidates": 3}, 4, 6),
    ("self_refine", {"rounds": 2}, 5, 5),
    ("self_refine", {"rounds": 1, "candidates": 2}, 2 * 3 + 1, 2 * 3 + 1 + 2),
    ("none", {"agents": 3}, 6, 6),
    ("open", {"agents": 3, "turn_limit": 10}, 11, 11),
    ("open", {"agents": 3, "turn_limit": 10, "initial_generation": True}, 17, 17),
    ("steered", {"agents": 3, "turn_limit": 8}, 9, 9),
    ("instructed", {"agents": 3, "turn_limit": 10}, 6 + 10, 6 + 10 * 3),
    ("instructed", {"agents": 3, "turn_limit": 10, "order": "raise"}, 6 + 10 * (3 + 3), 6 + 10 * (3 * 3 + 3)),
    ("instructed", {"agents": 3, "turn_limit": 10, "fidelity": "release", "initial_generation": False}, 10, 10),
    ("instructed", {"agents": 3, "turn_limit": 10, "fidelity": "release"}, 16, 6 + 10 * 50),
    ("iterative", {"agents": 3, "turn_limit": 10}, 6 + 10 * 4, 46),
    ("iterative", {"agents": 3, "turn_limit": 10, "fidelity": "release"}, 6 + 10 * 2, 26),
    ("progressive", {"agents": 3}, 6 + 12, 18),
]


@pytest.mark.parametrize("name, options, calls, with_retries", HAND_WORKED)
def test_each_methods_calls_are_the_hand_worked_count(name, options, calls, with_retries):
    config = make_config(name, **options)
    described = registry.method(name)
    assert described.calls(config, False) == calls == expected_calls(config)
    assert described.calls(config, True) == with_retries == expected_calls(config, with_retries=True)


def test_every_built_in_is_counted_by_hand_above():
    assert {name for name, *_ in HAND_WORKED} == set(names.METHODS)


# Session ids of the code before the registry (options_hash of engine.runs.grid, recorded on
# commit 40571ac): resumed runs keep their ids.
OLD_HASHES = [("homo_mad", {}, "aa145ef9"), ("open", {}, "f1d4d59b"), ("none", {}, "4c6db3b5"),
              ("instructed", {"order": "raise"}, "0e07c4e4"), ("direct", {"candidates": 3}, "1607fa1c"),
              ("creative_mad", {"peers": "random", "k": 1}, "b552294e"), ("self_refine", {"rounds": 3}, "9bd58073"),
              ("steered", {"steering": {"coherence_max": 0.8}}, "3638477e")]


@pytest.mark.parametrize("name, options, expected", OLD_HASHES)
def test_built_in_session_ids_are_unchanged(name, options, expected):
    assert options_hash(make_config(name, **options)) == expected


# ----------------------------------------------------------------------------- the built-ins
def test_the_papers_name_lists_come_from_the_descriptions():
    assert names.PAPER_A == ("none", "open", "instructed", "iterative", "progressive")
    assert names.PAPER_B == ("direct", "self_refine", "voting", "homo_mad", "hetero_mad", "creative_mad")
    assert registry.paper_a_methods() == names.PAPER_A and registry.paper_b_methods() == names.PAPER_B
    assert registry.debate_methods() == ("homo_mad", "hetero_mad", "creative_mad")
    assert registry.consensus_methods() == ("voting", "homo_mad", "hetero_mad", "creative_mad")
    assert registry.single_agent_methods() == ("direct", "self_refine")
    assert registry.turn_limited_methods() == names.PAPER_A + ("steered",)
    assert registry.method("steered").paper is None


def test_every_built_in_names_only_real_options_and_its_traits_agree():
    fields = set(ProtocolConfig.model_fields)
    for described in registry.BUILT_IN_METHODS:
        assert described.options <= fields, (described.name, described.options - fields)
        assert described.code and described.label and described.citation and described.colour
        if described.debate:
            assert {"lenses", "peers", "k", "rounds"} <= described.options
        # turn-limited: a turn_limit, or paper A's structures without a discussion phase
        has_turns = "turn_limit" in described.options or described.name in ("none", "progressive")
        assert described.turn_limited == has_turns


def test_the_defaults_each_method_describes_reach_its_config():
    # paper A's teams of 3, paper B's of 5, Direct and Self-Refine alone (section 6)
    assert {m: make_config(m).agents for m in names.METHODS} == {
        **{m: 3 for m in names.PAPER_A}, "steered": 3, "direct": 1, "self_refine": 1,
        "voting": 5, "homo_mad": 5, "hetero_mad": 5, "creative_mad": 5}
    assert [m for m in names.METHODS if not make_config(m).initial_generation] == ["open", "steered"]
    cmad = make_config("creative_mad")
    assert (cmad.lens_assignment, cmad.peer_strategy) == (True, "distant")
    assert (make_config("homo_mad").lens_assignment, make_config("homo_mad").peer_strategy) == (False, "all")
    assert [m for m in names.METHODS if make_config(m).fidelity == "paper"] == list(names.PAPER_A)


def test_every_built_in_runs_its_own_protocol_module():
    import inspect

    for described in registry.BUILT_IN_METHODS:
        run = described.runner()
        assert inspect.iscoroutinefunction(run) and run.__module__ == f"engine.protocols.{described.name}"


def test_describing_the_methods_imports_no_protocol_and_no_heavy_library():
    probe = ("import json, sys\nfrom engine.protocols import registry\nregistry.method_names()\n"
             "registry.method('creative_mad').calls\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pydantic')\n"
             "  or m in ('engine.protocols.debate', 'engine.protocols.session', 'engine.protocols.config'))))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


# ----------------------------------------------------------------------------- (b) a method added in-process
async def relay(session) -> str:
    """Each agent in turn rewrites the previous agent's idea; the last rewrite is the answer."""
    idea = session.task.prompt
    for number in range(session.config.agents):
        turn = await session.ask(f"Agent {number + 1}", [{"role": "user", "content": f"Improve: {idea}"}],
                                 phase="discussion", round=number)
        idea = turn.text
    session.meta["stop_reason"] = "relayed"
    return idea


RELAY = Method(name="relay", run=relay, calls=lambda config, with_retries: config.agents,
               label="Relay discussion", code="RLY", team=4,
               options={"agents", "temperature", "max_tokens"})


@pytest.fixture
def relay_registered(monkeypatch):
    """A registry of the built-ins plus RELAY, as a plugin would add it (no entry point)."""
    fresh = Registry("method", GROUPS["methods"], accepts=Method)
    for described in registry.BUILT_IN_METHODS:
        fresh.register(described)
    fresh.register(RELAY, source=Source(plugin="relay-plugin", version="1.0"))
    monkeypatch.setattr(registry, "METHODS_REGISTRY", fresh)
    return fresh


def test_a_new_method_is_validated_from_its_description(relay_registered):
    config = make_config("relay")
    assert config.agents == 4 and config.paper == "B" and not config.has_consensus
    with pytest.raises(InputError, match="fidelity"):
        make_config("relay", fidelity="paper")
    with pytest.raises(InputError, match="debate methods"):
        make_config("relay", lenses=True)
    with pytest.raises(InputError, match="needs at least 2 agents"):
        make_config("relay", agents=1)
    with pytest.raises(InputError, match="unknown method 'relai'.*relay"):
        make_config("relai")
    assert expected_calls(make_config("relay", agents=3)) == 3
    assert "relay" in registry.method_names() and registry.method_names()[-1] == "relay"


def test_a_new_method_runs_a_session_with_the_turns_it_asked_for(relay_registered):
    backend = ScriptedBackend(["a first idea", "a better idea", "the best idea"])
    conversation = run_sync(run_session(backend, TASK, make_config("relay", agents=3), conversation_id="c1"))
    assert conversation.status == "ok" and conversation.final_idea == "the best idea"
    assert [(t.speaker, t.round, t.text) for t in conversation.turns] == [
        ("Agent 1", 0, "a first idea"), ("Agent 2", 1, "a better idea"), ("Agent 3", 2, "the best idea")]
    assert backend.history[1]["messages"][-1]["content"] == "Improve: a first idea"
    assert conversation.meta["calls"] == 3 and conversation.meta["stop_reason"] == "relayed"
    assert (conversation.protocol, conversation.persona, conversation.order) == ("relay", "none", None)


def test_a_new_method_is_a_cli_choice_and_its_dry_run_counts_its_calls(relay_registered, tmp_path):
    outcome = cli(["run", "--method", "relay", "--agents", "3", "--task", TASK, "--replicates", "2",
                   "--model", "local", "--dry-run", "--out", tmp_path / "out"])
    assert outcome.code == 0, outcome.err
    assert "2 sessions, at most 6 chat calls" in outcome.err  # 2 replicates x 3 agents
    refused(cli(["run", "--method", "relai", "--task", TASK, "--out", tmp_path / "x"]), "--method", "relay")


def test_a_new_method_runs_through_a_grid(relay_registered, tmp_path):
    grid = {"name": "g", "model": "scripted", "tasks": [TASK],
            "conditions": [{"method": "relay", "agents": 2, "replicates": 2}]}
    result = run_grid(grid, tmp_path / "run", backend=ScriptedBackend(responder=lambda m: "an idea"),
                      progress=False, cache=False)
    assert (result.planned, result.ok, result.failed) == (2, 2, 0)
    corpus = Corpus.from_jsonl(tmp_path / "run" / "corpus.jsonl")
    assert sorted(len(c.turns) for c in corpus) == [2, 2]
    assert all(c.conversation_id.startswith(f"relay-{TASK}-") for c in corpus)


def test_a_new_method_in_the_pilot_settings_and_the_figures(relay_registered):
    assert "relay" in pilot_settings.method_choices()
    assert "relay" not in pilot_settings.TURN_LIMITED and "relay" not in pilot_settings.SINGLE_AGENT
    settings = {"method": "relay", "agents": 3, "rounds": 2, "turn_limit": 999, "replicates": 1,
                "max_tokens": 64, "temperature": 1.0, "judge": "none"}
    assert pilot_settings.check_settings(settings) == []  # a turn limit does not apply to it
    assert pilot_settings.protocol_config(settings).agents == 3
    assert pilot_settings.check_settings({**settings, "agents": 1}) == [
        "Agents: 1 is outside the allowed range 2 to 8"]
    assert codes.method_code("relay") == "RLY" and codes.describe("relay") == "Relay discussion"
    # no colour named: one no built-in method has, the same every time, never a crash
    colour = palette.colour("relay", "method")
    assert colour in palette.METHOD_FALLBACK and colour == palette.colour("relay")
    assert colour not in {palette.colour(m, "method") for m in names.METHODS}
    assert not palette.has_fixed_colour("relay", "method")


def test_a_method_naming_a_colour_gets_it(relay_registered):
    relay_registered.register(Method(name="tinted", run=relay, calls=lambda c, r: 1, colour="teal",
                                     single_agent=True, team=1), source=Source(plugin="tint"))
    assert palette.colour("tinted", "method") == palette.TOL_MUTED["teal"]
    assert palette.has_fixed_colour("tinted", "method")
    assert codes.method_code("tinted") == "TINTED"  # no code given: shortened from the name


# ----------------------------------------------------------------------------- (c) one name, one source
def test_a_name_taken_by_another_source_is_refused(relay_registered):
    homo_again = Method(name="homo_mad", run=relay, calls=lambda c, r: 1)
    with pytest.raises(ValueError, match="'homo_mad' is already registered by built in"):
        relay_registered.register(homo_again, source=Source(plugin="copycat", version="0.1"))
    with pytest.raises(ValueError, match="'relay' is already registered by relay-plugin 1.0"):
        relay_registered.register(RELAY, source=Source(plugin="other-plugin"))
    assert registry.method("homo_mad") is methods_paper_b.HOMO_MAD  # the built-in stays
    assert registry.METHODS_REGISTRY.source("relay").plugin == "relay-plugin"


def test_a_description_that_cannot_work_is_refused_when_written():
    with pytest.raises(ValueError, match="single-agent"):
        Method(name="alone", run=relay, calls=lambda c, r: 1, single_agent=True)
    with pytest.raises(ValueError, match="name"):
        Method(name="two words", run=relay, calls=lambda c, r: 1)
    with pytest.raises(ValueError, match="run must be"):
        Method(name="norun", run="no_colon_here", calls=lambda c, r: 1)
