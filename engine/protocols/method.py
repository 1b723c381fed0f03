"""What describes one discussion method: the ``Method`` value (and the consensus step's calls).

A method is described once, in one ``Method``: the paper that defines it, its display label,
figure code and colour, where the papers define it, its traits (single agent, turn-limited,
debate, consensus step), which shared options of ``engine.protocols.config.ProtocolConfig``
apply to it and the model of its own options, its defaults (team size, initial generation
phase, a debate's own lens and peer design), how many chat calls a session makes, and how it
is run. Config validation, ``expected_calls``, the session runner, the CLI's choices, the
pilot's settings and the figures' codes and colours all read it (through
``engine.protocols.registry``).

The layout:

* this module: the ``Method`` class, imported by every description, stdlib only;
* ``methods_paper_a``, ``methods_paper_b``, ``methods_beyond``: the built-in descriptions, one
  module per family beside the protocol modules; each names its protocol by module path
  (``"engine.protocols.homo_mad:run"``), so describing a method imports no protocol code
  (numpy, pydantic): ``python -m engine run --help`` stays fast;
* ``engine.protocols.registry``: ``METHODS_REGISTRY`` (the built-ins, then plugins' entry
  points in the group ``creativity_lab.methods``) and the helpers that read it.

A plugin's method is a ``Method`` whose ``run`` is the async function itself::

    MY_METHOD = Method(name="mine", run=my_run, calls=lambda config, with_retries: config.agents,
                       label="My method", team=3, options={"agents", "temperature", "max_tokens"},
                       options_model="my_package.methods:MyOptions")

where ``MyOptions`` (optional) is a ``ProtocolConfig`` subclass adding the method's own options
(``flip_at: int = 2``); they are validated, recorded in each session's meta and in its id.

declared in the plugin's ``pyproject.toml`` as ``[project.entry-points."creativity_lab.methods"]
mine = "my_package.methods:MY_METHOD"``; it is then a choice of ``python -m engine run
--method``, of a grid's conditions and of the pilot. The CLI's ``--help`` loads the module
that defines it, so keep that module light (import the ``Session`` type under
``TYPE_CHECKING`` and heavy libraries inside ``my_run``).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable

# A session's protocol: the async function given the running ``engine.protocols.session.Session``,
# returning the final idea (None when the method keeps no single idea).
Run = Callable[[Any], Awaitable["str | None"]]
# Chat calls of one session: ``calls(config, with_retries)`` (see ``engine.protocols.registry.expected_calls``).
Calls = Callable[[Any, bool], int]

PAPERS = ("A", "B", None)  # the paper that defines a method; None: this project's own, or a plugin's
PEER_STRATEGIES = ("all", "distant", "closest", "random")
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")  # a session id starts with it: method-task-...


@dataclass(frozen=True)
class Method:
    """One discussion structure or debate method.

    ``run``: the protocol, an async function of the Session, or ``"module:function"`` (the
    built-ins', imported when a session starts). ``calls(config, with_retries)``: its chat
    calls (exact, or the most a stopping rule allows). Traits:

    * ``single_agent``: one agent (``agents`` must be 1); otherwise a team of 2 or more;
    * ``turn_limited``: runs for discussion turns with paper A's team factors (persona,
      order, ``turn_limit``), recorded as paper A's sessions are; otherwise debate rounds,
      recorded as paper B's;
    * ``debate``: paper B's multi-agent debate (agents read chosen peers each round); its own
      design is ``lenses`` (Cognitive Lens Assignment on) and ``peers``, which the ``lenses``
      and ``peers`` options override;
    * ``consensus``: always ends with a consensus step (paper B, section 3.1);
    * ``hand_raising``: takes ``order="raise"``.

    ``paper``: the paper that defines the method ("A", "B"), None for one beyond the papers.

    ``options``: the shared ``ProtocolConfig`` options that mean something to the method.
    Options only some methods take (fidelity, reply_attempts, pool, lenses, peers, candidates,
    steering) are refused when set for a method that does not list them; shared ones
    (temperature, turn_limit...) are accepted and ignored where they do not apply, so one
    grid's defaults serve every condition. ``options_model``: the method's own options, a
    ``ProtocolConfig`` subclass adding fields (``"module:Class"``, imported when a config is
    made, or the class); None: the shared options only. Defaults: ``team`` agents, the
    ``initial_generation`` phase on or off (``needs_initial_generation``: it cannot be
    turned off). ``persona``: what a session of a method without the persona option records
    as its persona.
    Display: ``label`` (words), ``code`` (figures' short code), ``colour`` (a colour name of
    ``dashboard.figures.palette.NAMED`` such as ``"forest"``, or ``"#RRGGBB"``; None: one the
    palette generates, apart from the other methods' colours), ``citation`` (where the method
    is defined).

    Checked facts (``tests/engine/protocols/test_method_registry.py`` requires them of every
    built-in): ``small_options``, the options of a quick session on the local model (the slow
    tier runs one of each method with them); ``worked_calls``, sessions' options with their
    chat calls worked out by hand from the method's definition, ``(options, calls,
    calls_with_retries)``, which ``calls`` must give.
    """

    name: str
    run: str | Run
    calls: Calls
    paper: str | None = None
    label: str = ""
    code: str = ""
    colour: str | None = None
    citation: str = ""
    single_agent: bool = False
    turn_limited: bool = False
    debate: bool = False
    consensus: bool = False
    hand_raising: bool = False
    team: int = 3
    initial_generation: bool = True
    needs_initial_generation: bool = False
    lenses: bool = False
    peers: str = "all"
    persona: str = "none"
    options: frozenset[str] = field(default_factory=frozenset)
    options_model: "str | type | None" = None
    small_options: dict[str, Any] = field(default_factory=dict, hash=False)
    worked_calls: tuple[tuple[dict[str, Any], int, int], ...] = field(default=(), hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", frozenset(_names(self.options)))
        problem = self._problem()
        if problem:
            raise ValueError(f"method {self.name!r}: {problem}")

    def _problem(self) -> str | None:
        if not isinstance(self.name, str) or not NAME.match(self.name):
            return "the name must be letters, digits and _, starting with a letter"
        if self.paper not in PAPERS:
            return f"paper must be one of {PAPERS}, got {self.paper!r}"
        if not (isinstance(self.run, str) and ":" in self.run) and not callable(self.run):
            return "run must be an async function of the Session, or 'module:function'"
        if not callable(self.calls):
            return "calls must be a function (config, with_retries) -> int"
        if not isinstance(self.team, int) or not 1 <= self.team <= 16:
            return f"team must be 1 to 16 agents, got {self.team!r}"
        if self.single_agent != (self.team == 1):
            return "a single-agent method has a team of 1, and only it"
        if self.peers not in PEER_STRATEGIES:
            return f"peers must be one of {PEER_STRATEGIES}, got {self.peers!r}"
        if self.needs_initial_generation and not self.initial_generation:
            return "a method built on the initial generation phase has it on by default"
        if self.options_model is not None and not isinstance(self.options_model, type) and not (
                isinstance(self.options_model, str) and ":" in self.options_model):
            return "options_model must be a ProtocolConfig subclass, or 'module:Class'"
        return None

    @property
    def display(self) -> str:
        """The label, or the name in words when the method gave none."""
        return self.label or self.name.replace("_", " ")

    def runner(self) -> Run:
        """The protocol's async function (a built-in's module is imported here, not before)."""
        if callable(self.run):
            return self.run
        module, _, attribute = self.run.partition(":")
        return getattr(importlib.import_module(module), attribute)

    def takes(self, option: str) -> bool:
        """A shared option listed in ``options`` (the method's own options it always takes)."""
        return option in self.options


def _names(options: Iterable[str]) -> Iterable[str]:
    if isinstance(options, str):
        raise ValueError(f"options must be a set of option names, got the string {options!r}")
    return options


def consensus_calls(config, *, with_retries: bool = False) -> int:
    """Calls of the consensus step (paper B, section 3.1): judge 1 (+ its retries of an
    unreadable pick), vote N, random / all none; 0 without a consensus step."""
    if not config.has_consensus:
        return 0
    return {"judge": 1 + (config.consensus_retries if with_retries else 0),
            "vote": config.agents, "random": 0, "all": 0}[config.consensus]


def initial_calls(config) -> int:
    """Paper A's initial generation-and-selection phase (A.1.2): N proposals, N ratings."""
    return 2 * config.agents if config.initial_generation else 0
