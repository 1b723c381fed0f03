"""A method is described once (``engine.protocols.method.Method``) and every reader uses it:
config validation, ``expected_calls``, ``run_session``, the CLI's ``--method`` choices, the
pilot's settings and the figures' codes and colours (``engine.protocols.registry``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import Field

from dashboard.figures import codes, colour_difference, palette
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
# Each built-in's description carries sessions whose calls were worked out by hand from the
# papers (``Method.worked_calls``, the arithmetic beside each): paper B's debates N (R + 1) +
# the consensus step (judge 1, + consensus_retries when asked again; vote N; random / all 0);
# Voting N + 1; Direct K (+ 1 with K >= 2); Self-Refine K (1 + 2R) (+ 1). Paper A: the initial
# phase 2N (N proposals, N ratings), open / steered T turns + 1 synthesis, instructed T
# readings (hand-raising: N drafts + N bids per turn; asked up to 3 times in paper mode, 50
# in release mode), iterative T (1 + N) (release: 2 per turn), progressive 4N after the
# initial phase.
HAND_WORKED = [(m.name, options, calls, with_retries)
               for m in registry.BUILT_IN_METHODS for options, calls, with_retries in m.worked_calls]


@pytest.mark.parametrize("name, options, calls, with_retries", HAND_WORKED)
def test_each_methods_calls_are_the_hand_worked_count(name, options, calls, with_retries):
    config = make_config(name, **options)
    described = registry.method(name)
    assert described.calls(config, False) == calls == expected_calls(config)
    assert described.calls(config, True) == with_retries == expected_calls(config, with_retries=True)


@pytest.mark.parametrize("described", registry.BUILT_IN_METHODS, ids=lambda m: m.name)
def test_every_built_in_has_its_checked_facts(described):
    """Hand-worked calls, small options for the slow tier, a colour of its own (named or
    generated), a label, a code and where it is defined."""
    assert described.worked_calls, "no session with its calls worked out by hand"
    small = make_config(described.name, **described.small_options)  # they are valid options ...
    assert expected_calls(small, with_retries=True) <= 20  # ... of a quick session (at most 20 calls)
    assert small.agents <= 3
    assert palette.HEX.match(palette.colour(described.name, "method"))
    assert described.code and described.label and described.citation


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
    # paper A's five structures (Table 6) and paper B's six methods (section 6), in their order
    assert names.PAPER_A == ("none", "open", "instructed", "iterative", "progressive")
    assert names.PAPER_B == ("direct", "self_refine", "voting", "homo_mad", "hetero_mad", "creative_mad")
    assert registry.paper_a_methods() == names.PAPER_A and registry.paper_b_methods() == names.PAPER_B
    assert names.METHODS[:11] == names.PAPER_A + names.PAPER_B
    # paper B's traits (sections 3.1 and 6), whatever else is registered
    assert {"homo_mad", "hetero_mad", "creative_mad"} <= set(registry.debate_methods())
    assert not {"direct", "self_refine", "voting"} & set(registry.debate_methods())
    assert {"voting", "homo_mad", "hetero_mad", "creative_mad"} <= set(registry.consensus_methods())
    assert {"direct", "self_refine"} <= set(registry.single_agent_methods())
    assert set(names.PAPER_A) | {"steered"} <= set(registry.turn_limited_methods())
    assert not set(names.PAPER_B) & set(registry.turn_limited_methods())
    # paper: the paper that defines the method, nothing else
    assert {make_config(m).paper for m in names.PAPER_A} == {"A"}
    assert {make_config(m).paper for m in names.PAPER_B} == {"B"}
    assert registry.method("steered").paper is None and make_config("steered").paper is None
    assert make_config("steered").turn_limited and not make_config("homo_mad").turn_limited


def test_every_built_in_names_only_real_options_and_its_traits_agree():
    fields = set(ProtocolConfig.model_fields)
    for described in registry.BUILT_IN_METHODS:
        assert described.options <= fields, (described.name, described.options - fields)
        if described.debate:
            assert {"lenses", "peers", "k", "rounds"} <= described.options
        # turn-limited: a turn_limit, or paper A's structures without a discussion phase
        has_turns = "turn_limit" in described.options or described.name in ("none", "progressive")
        assert described.turn_limited == has_turns


def test_the_defaults_each_method_describes_reach_its_config():
    # paper A's teams of 3, paper B's of 5, Direct and Self-Refine alone (section 6)
    for name in names.PAPER_A:
        assert make_config(name).agents == 3
    assert {m: make_config(m).agents for m in names.PAPER_B} == {
        "direct": 1, "self_refine": 1, "voting": 5, "homo_mad": 5, "hetero_mad": 5, "creative_mad": 5}
    for described in registry.BUILT_IN_METHODS:
        config = make_config(described.name)
        assert config.agents == described.team
        assert config.initial_generation == described.initial_generation
        assert config.fidelity == ("paper" if described.takes("fidelity") else None)
    # Table 6: the open discussion's conditions 9-16 have no initial phase; the others do
    assert [m for m in names.PAPER_A if not make_config(m).initial_generation] == ["open"]
    assert not make_config("steered").initial_generation  # built on the open discussion
    cmad = make_config("creative_mad")
    assert (cmad.lens_assignment, cmad.peer_strategy) == (True, "distant")
    assert (make_config("homo_mad").lens_assignment, make_config("homo_mad").peer_strategy) == (False, "all")
    assert {make_config(m).fidelity for m in names.PAPER_A} == {"paper"}


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
    assert config.agents == 4 and not config.has_consensus
    assert config.paper is None and not config.turn_limited  # no paper defines it; run in rounds
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
    # no colour named: one generated, apart from every built-in's (CIEDE2000, normal vision and
    # the three simulated deficiencies), the same every time, never a crash
    colour = palette.colour("relay", "method")
    assert colour == palette.colour("relay") == palette.METHOD["relay"]
    built_in = [palette.colour(m.name, "method") for m in registry.BUILT_IN_METHODS]
    assert all(colour_difference.apart(colour, other) for other in built_in)
    assert palette.has_fixed_colour("relay", "method")


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


# ----------------------------------------------------------------------------- (d) a method's own option
class FlipOptions(ProtocolConfig):
    """reverse_once's own option: after ``flip_at`` turns the rest of the team speaks in reverse."""

    flip_at: int = Field(2, ge=1, le=50, strict=True)


async def reverse_once(session) -> str:
    """Agents 1..N speak once each; after ``flip_at`` turns the rest go from the last agent back."""
    agents, flip = session.config.agents, session.config.flip_at
    order = [*range(1, flip + 1), *range(agents, flip, -1)]
    text = ""
    for position, number in enumerate(order):
        turn = await session.ask(f"Agent {number}", [{"role": "user", "content": f"Go on: {text}"}],
                                 phase="discussion", round=position)
        text = turn.text
    return text


# named as "module:Class", as a plugin names a model kept out of its light method module
REVERSE = Method(name="reverse_once", run=reverse_once, calls=lambda config, with_retries: config.agents,
                 label="Reverse once", code="REV", team=4, options={"agents", "temperature", "max_tokens"},
                 options_model=f"{__name__}:FlipOptions")


@pytest.fixture
def reverse_registered(relay_registered):
    relay_registered.register(REVERSE, source=Source(plugin="reverse-plugin", version="0.1"))
    return relay_registered


def test_a_methods_own_option_is_validated_by_its_model(reverse_registered):
    assert make_config("reverse_once").flip_at == 2 and make_config("reverse_once", flip_at=3).flip_at == 3
    assert type(make_config("reverse_once")) is FlipOptions and FlipOptions.own_options() == ("flip_at",)
    for bad in (0, 51, "three", True):
        with pytest.raises(InputError) as refused_value:
            make_config("reverse_once", flip_at=bad)
        assert refused_value.value.field == "flip_at"
    with pytest.raises(InputError, match="unknown option") as other_method:
        make_config("relay", flip_at=3)  # not relay's option
    assert other_method.value.field == "flip_at"
    with pytest.raises(ValueError, match="FlipOptions"):
        ProtocolConfig(method="reverse_once")  # its options are its own model's
    assert make_config("reverse_once").paper is None


def test_a_methods_own_option_is_in_its_meta_and_its_session_id(reverse_registered):
    backend = ScriptedBackend(["one", "two", "three", "four"])
    conversation = run_sync(run_session(backend, TASK, make_config("reverse_once", flip_at=2),
                                        conversation_id="c1"))
    # 4 agents, flip after 2 turns: agents 1, 2, then 4, 3
    assert [t.speaker for t in conversation.turns] == ["Agent 1", "Agent 2", "Agent 4", "Agent 3"]
    assert conversation.meta["flip_at"] == 2 and conversation.final_idea == "four"
    two, three = make_config("reverse_once", flip_at=2), make_config("reverse_once", flip_at=3)
    assert two.hash_payload()["flip_at"] == 2 and three.hash_payload()["flip_at"] == 3
    assert options_hash(two) != options_hash(three)
    # the hash of the payload's JSON, as engine.runs.grid documents it
    import hashlib

    payload = json.dumps(three.hash_payload(), sort_keys=True).encode()
    assert options_hash(three) == hashlib.sha256(payload).hexdigest()[:8]


def test_a_methods_own_option_in_a_grid_condition(reverse_registered, tmp_path):
    from engine.runs.grid import load_grid

    grid = {"name": "g", "model": "scripted", "tasks": [TASK],
            "conditions": [{"method": "reverse_once", "agents": 3, "flip_at": 1},
                           {"method": "reverse_once", "agents": 3, "flip_at": 3}]}
    result = run_grid(grid, tmp_path / "run", backend=ScriptedBackend(responder=lambda m: "an idea"),
                      progress=False, cache=False)
    assert (result.planned, result.ok) == (2, 2)  # two sessions: the option is in their ids
    corpus = Corpus.from_jsonl(tmp_path / "run" / "corpus.jsonl")
    speakers = {c.meta["flip_at"]: [t.speaker for t in c.turns] for c in corpus}
    assert speakers == {1: ["Agent 1", "Agent 3", "Agent 2"], 3: ["Agent 1", "Agent 2", "Agent 3"]}
    with pytest.raises(InputError) as bad:
        load_grid({**grid, "conditions": [{"method": "reverse_once", "flip_at": 0}]})
    assert bad.value.field == "conditions[0].flip_at"
    with pytest.raises(InputError) as elsewhere:
        load_grid({**grid, "conditions": [{"method": "relay", "flip_at": 2}]})
    assert elsewhere.value.field == "conditions[0].flip_at"


def test_a_methods_own_option_on_the_command_line(reverse_registered, tmp_path):
    outcome = cli(["run", "--method", "reverse_once", "--option", "flip_at=3", "--agents", "5", "--task", TASK,
                   "--model", "local", "--dry-run"])
    assert outcome.code == 0, outcome.err
    assert "1 sessions, at most 5 chat calls" in outcome.err  # 5 agents speak once each
    refused(cli(["run", "--method", "reverse_once", "--option", "flip_at=0", "--task", TASK, "--dry-run"]),
            "flip_at")
    refused(cli(["run", "--method", "reverse_once", "--option", "flip_at", "--task", TASK, "--dry-run"]),
            "--option", "NAME=VALUE")
    refused(cli(["run", "--method", "relay", "--option", "flip_at=2", "--task", TASK, "--dry-run"]),
            "flip_at", "unknown option")
    refused(cli(["run", "--method", "reverse_once", "--agents", "3", "--option", "agents=4", "--task", TASK,
                 "--dry-run"]), "--agents")


def test_a_methods_own_option_in_the_pilot_settings(reverse_registered):
    assert pilot_settings.own_options("reverse_once") == {"flip_at": "2"}
    assert pilot_settings.own_options("relay") == {} == pilot_settings.own_options("homo_mad")
    settings = {"method": "reverse_once", "agents": 4, "rounds": 2, "turn_limit": 12, "replicates": 1,
                "max_tokens": 64, "temperature": 1.0, "judge": "none", "method_options": {"flip_at": "3"}}
    assert pilot_settings.check_settings(settings) == []
    assert pilot_settings.protocol_config(settings).flip_at == 3
    assert pilot_settings.protocol_config({**settings, "method_options": {"flip_at": " "}}).flip_at == 2
    [problem] = pilot_settings.check_settings({**settings, "method_options": {"flip_at": "0"}})
    assert "flip_at" in problem


def test_an_own_option_without_a_default_must_be_given(reverse_registered):
    class Required(ProtocolConfig):
        flip_at: int = Field(ge=1)

    reverse_registered.register(Method(name="must_flip", run=reverse_once, calls=lambda c, r: c.agents, team=3,
                                       options={"agents"}, options_model=Required), source=Source(plugin="p"))
    assert pilot_settings.own_options("must_flip") == {"flip_at": ""}
    with pytest.raises(InputError) as missing:
        make_config("must_flip")
    assert missing.value.field == "flip_at"
    assert make_config("must_flip", flip_at=1).meta()["flip_at"] == 1
