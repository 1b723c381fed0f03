"""The options of one session: method, team, rounds and the design factors of both papers.

Paper A (Table 6 / A.1): persona none|same|different, order fixed|random|raise, turn_limit,
min_rounds, pool size, generation interactive|nominal, initial_generation on/off (default:
off for open, whose Table 6 conditions 9-16 have no initial phase; on for the others; none
and progressive are built on it). Paper B
(section 6): agents N, rounds R, k peers for Creative-MAD. Unknown options are rejected
with a message naming them.

``fidelity`` (paper A's structures only): ``paper`` follows paper A's text (appendix A.1.2),
``release`` the authors' generation code (GitHub ``pitehu/llm_multiagent_creativity``,
``generation/*.py``) where the two disagree (``engine.protocols.fidelity_modes``; the differences are
listed in ``docs/reference/fidelity.md``). ``reply_attempts``: how many times an instructed turn is
asked before its reply counts as unreadable (default: 3 in ``paper`` mode, the release's 50
in ``release`` mode).

Paper B's design factors are options of every debate method (section 7.4's ablations):
``lenses`` (Cognitive Lens Assignment on/off), ``peers`` (all | distant = Embedding-based
Peer Selection | closest | random, k peers each), and the consensus step (``consensus``:
judge | vote | random | all, ``consensus_retries`` extra judge samples before a seeded
random pick). ``candidates`` (Direct, Self-Refine): K >= 2 independent answers of which the
consensus judge picks one (paper B: "all methods use a judge-based selection mechanism"). Left unset, lenses and peers take the method's own design: Creative-MAD =
lenses + distant, Homo/Hetero-MAD = no lenses + all. ``models`` gives one backend per
agent (paper A's "Mixed" teams, Tables 7 and 20; Hetero-MAD by model), cycled if shorter
than the team.

Which of these a method takes, its defaults (team size, initial phase, a debate's own
design) and its traits come from the method's one description (``engine.protocols.method.
Method``, looked up in ``engine.protocols.registry``, plugins' methods included): ``method``
is checked against the registry, and an option only some methods take (fidelity,
reply_attempts, pool, lenses, peers, candidates, steering) is refused for the others.

``ProtocolConfig`` holds the options every method shares. A method with options of its own
names a subclass of it in its description (``Method.options_model``), e.g.::

    class ReverseOptions(ProtocolConfig):
        flip_at: int = Field(2, ge=1, le=50)  # the turn after which the order reverses

``make_config`` validates a method's options with its model (``options_model``), so such an
option is checked (a bad value is an ``InputError`` naming it), recorded in the session's
meta and in its id (``hash_payload``), and accepted by a grid's conditions, the CLI's
``--option NAME=VALUE`` and the Pilot page; any other method refuses it as unknown.
"""

from __future__ import annotations

import importlib
import re
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator, model_validator

from engine.errors import InputError
from engine.fields import ModelName, Number, Whole

from engine.protocols import registry
from engine.protocols.fidelity_modes import DEFAULT_FIDELITY, FIDELITIES, default_reply_attempts
from engine.protocols.method import PEER_STRATEGIES
from engine.protocols.registry import BUILT_IN_METHODS, hand_raising_methods, is_method, method_names, methods_taking

# The built-in debates, for callers written before the registry (read
# engine.protocols.registry for plugins' methods too).
DEBATES = tuple(m.name for m in BUILT_IN_METHODS if m.debate)
CONSENSUS_MODES = ("judge", "vote", "random", "all")
# Options added after runs were made: left at their default they stay out of a session's
# id (engine.runs.grid.options_hash), so earlier runs keep their ids and resume.
# ``fidelity`` is always set for paper A's structures (so their ids changed when it came in:
# the parsing and re-asking of both modes changed with it) and unset (left out) elsewhere.
LATER_OPTIONS = {"lenses": None, "peers": None, "consensus": "judge", "consensus_retries": 2,
                 "models": None, "steering": None, "fidelity": None, "reply_attempts": None,
                 "candidates": 1, "consensus_temperature": None}


IDEA_WORDS = re.compile(r"^([0-9]{1,4})(?:-([0-9]{1,4}))?$")
MAX_IDEA_WORDS = 2000


class ProtocolConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    method: str  # a registered method (engine.protocols.registry)
    agents: Whole | None = Field(None, ge=1, le=16)
    rounds: Whole = Field(2, ge=0, le=20)
    persona: Literal["none", "same", "different"] = "none"
    order: Literal["fixed", "random", "raise"] = "fixed"
    turn_limit: Whole = Field(30, ge=1, le=500)
    min_rounds: Whole = Field(0, ge=0, le=500)
    pool: Whole = Field(0, ge=0, le=20)
    generation: Literal["interactive", "nominal"] = "interactive"
    initial_generation: StrictBool | None = None  # None: the method's default (see _consistent)
    ideas_per_agent: Whole = Field(5, ge=1, le=10)
    idea_words: str = "80-100"
    convergence: Whole | None = Field(None, ge=1, le=100)
    refine_top: Whole = Field(5, ge=1, le=20)
    k: Whole = Field(2, ge=1, le=15)
    temperature: Number | None = Field(1.0, ge=0.0, le=2.0)
    max_tokens: Whole = Field(512, ge=8, le=32768)
    rating_max_tokens: Whole | None = Field(None, ge=4, le=32768)
    lenses: StrictBool | None = None
    peers: Literal[PEER_STRATEGIES] | None = None  # type: ignore[valid-type]
    consensus: Literal[CONSENSUS_MODES] = "judge"  # type: ignore[valid-type]
    consensus_retries: Whole = Field(2, ge=0, le=10)
    # the consensus judge's sampling temperature; None: the session's (paper B states one
    # temperature, 1.0, for every method and names no other for its judge)
    consensus_temperature: Number | None = Field(None, ge=0.0, le=2.0)
    models: tuple[ModelName, ...] | None = None
    steering: dict[str, Number] | None = None  # steered: moderator targets (engine.protocols.steered)
    candidates: Whole = Field(1, ge=1, le=16)  # direct / self_refine: K answers, the judge picks one
    fidelity: Literal[FIDELITIES] | None = None  # type: ignore[valid-type]  # paper A: paper | release
    reply_attempts: Whole | None = Field(None, ge=1, le=100)  # None: the fidelity's default

    @property
    def judge_temperature(self) -> float | None:
        """The temperature the consensus judge samples at (its own, or the session's)."""
        return self.temperature if self.consensus_temperature is None else self.consensus_temperature

    @field_validator("idea_words")
    @classmethod
    def _word_range(cls, value):
        """A target idea length put into the prompts: ``N`` or ``LOW-HIGH`` words, never other text."""
        found = IDEA_WORDS.match(value)
        low, high = (int(found.group(1)), int(found.group(2) or found.group(1))) if found else (0, 0)
        if not found or not 1 <= low <= high <= MAX_IDEA_WORDS:
            raise ValueError(f"expected a number of words or a range LOW-HIGH (1 to {MAX_IDEA_WORDS}, "
                             f"e.g. 80-100), got {value!r}")
        return value

    @field_validator("steering")
    @classmethod
    def _known_targets(cls, value):
        if value is not None:
            from engine.protocols.steering_targets import steering_targets

            steering_targets(value)  # a ValueError naming the bad target
        return value

    @field_validator("method")
    @classmethod
    def _registered(cls, value):
        if not is_method(value):
            raise ValueError(f"unknown method {value!r}; choose one of: {', '.join(method_names())}")
        return value

    @classmethod
    def own_options(cls) -> tuple[str, ...]:
        """The options a method's own model adds to the shared ones (none for the shared model)."""
        return tuple(name for name in cls.model_fields if name not in ProtocolConfig.model_fields)

    @model_validator(mode="after")
    def _consistent(self) -> "ProtocolConfig":
        """The method's defaults filled in, and the options it does not take refused
        (``engine.protocols.method.Method``: its traits, ``options`` and defaults)."""
        name, described = self.method, registry.method(self.method)
        model = options_model(name)
        if type(self) is not model:
            raise ValueError(f"method: {name}'s options are a {model.__name__}, not a {type(self).__name__} "
                             f"(make them with make_config)")
        takes = described.takes
        if self.agents is None:
            object.__setattr__(self, "agents", described.team)
        if takes("fidelity") and self.fidelity is None:
            object.__setattr__(self, "fidelity", DEFAULT_FIDELITY)
        elif not takes("fidelity") and self.fidelity is not None:
            raise ValueError(f"fidelity: applies to paper A's structures ({_listed('fidelity')}), not {name}")
        if self.reply_attempts is not None and not takes("reply_attempts"):
            raise ValueError(f"reply_attempts: applies to {_only(methods_taking('reply_attempts'))} only, "
                             f"not {name}")
        if self.initial_generation is None:
            object.__setattr__(self, "initial_generation", described.initial_generation)
        if described.single_agent and self.agents != 1:
            raise ValueError(f"agents: {name} uses a single agent (got {self.agents})")
        if not described.single_agent and self.agents < 2:
            raise ValueError(f"agents: {name} is a team structure, it needs at least 2 agents"
                             if described.turn_limited else f"agents: {name} needs at least 2 agents")
        if self.order == "raise" and not described.hand_raising:
            raise ValueError(f"order: 'raise' (hand-raising) applies to {_only(hand_raising_methods())} "
                             f"only, not {name}")
        if self.pool and not takes("pool"):
            raise ValueError(f"pool: the replacement pool applies to {_only(methods_taking('pool'))} only, "
                             f"not {name}")
        if self.pool and not self.initial_generation:
            raise ValueError("pool: a replacement pool needs the initial generation phase")
        if described.needs_initial_generation and not self.initial_generation:
            raise ValueError(f"initial_generation: {name} is built on the initial generation phase")
        if (self.lenses is not None and not takes("lenses")) or (self.peers is not None and not takes("peers")):
            raise ValueError(f"lenses/peers: apply to the debate methods ({_listed('peers')}), not {name}")
        if self.candidates > 1 and not takes("candidates"):
            raise ValueError(f"candidates: applies to {_only(methods_taking('candidates'))} "
                             f"(judge-based selection), not {name}")
        if self.consensus != "judge" and not self.has_consensus:
            raise ValueError(f"consensus: {name} has no consensus step")
        if self.steering is not None and not takes("steering"):
            raise ValueError(f"steering: applies to {_only(methods_taking('steering'))} only, not {name}")
        if self.models is not None and not self.models:
            raise ValueError("models: give at least one model name")
        if takes("peers") and self.peer_strategy != "all" and self.k > self.agents - 1:
            raise ValueError(f"k: {self.k} peers per agent must be below agents={self.agents}")
        return self

    @property
    def has_consensus(self) -> bool:
        """Debates and Voting, and Direct / Self-Refine with several candidates."""
        return registry.method(self.method).consensus or self.candidates > 1

    @property
    def lens_assignment(self) -> bool:
        """Cognitive Lens Assignment on? (the method's default when ``lenses`` is unset)."""
        return registry.method(self.method).lenses if self.lenses is None else self.lenses

    @property
    def peer_strategy(self) -> str:
        """Which peers an agent reads (the method's default when ``peers`` is unset)."""
        if self.peers is not None:
            return self.peers
        return registry.method(self.method).peers

    def hash_payload(self) -> dict[str, Any]:
        """What identifies the options of a session (later options only when not default)."""
        data = self.model_dump()
        for key, default in LATER_OPTIONS.items():
            if data.get(key) == default:
                data.pop(key, None)
        return data

    @property
    def paper(self) -> str | None:
        """The paper that defines the method: "A", "B", or None for one beyond the papers."""
        return registry.method(self.method).paper

    @property
    def turn_limited(self) -> bool:
        """How a session is run and recorded: True for the turn-limited methods (paper A's
        structures, the steered discussion built on its open one) with paper A's team factors
        (persona, speaking order); False for the debate-round ones, recorded as paper B's."""
        return registry.method(self.method).turn_limited

    @property
    def attempts(self) -> int:
        """How many times an instructed turn is asked before it counts as unreadable."""
        return self.reply_attempts or default_reply_attempts(self.fidelity or DEFAULT_FIDELITY)

    @property
    def ratings_tokens(self) -> int:
        return self.rating_max_tokens or 24

    def meta(self) -> dict[str, Any]:
        """The options recorded in Conversation.meta (only those that apply to the method)."""
        data = self.model_dump()
        common = ("agents", "temperature", "max_tokens")
        if self.turn_limited:
            keep = common + ("persona", "order", "turn_limit", "min_rounds", "pool", "generation",
                             "initial_generation", "ideas_per_agent", "idea_words", "convergence",
                             "refine_top", "fidelity")
        else:
            keep = common + ("rounds", "k", "idea_words")
        meta = {key: data[key] for key in (*keep, *self.own_options())}
        described = registry.method(self.method)
        takes = described.takes
        if not takes("fidelity"):
            meta.pop("fidelity", None)
        if described.debate:
            meta.update(lenses=self.lens_assignment, peers=self.peer_strategy)
        if self.has_consensus:
            meta.update(consensus=self.consensus, consensus_retries=self.consensus_retries,
                        consensus_temperature=self.judge_temperature)
        if takes("candidates"):
            meta["candidates"] = self.candidates
        if self.models:
            meta["models"] = list(self.models)
        if takes("reply_attempts"):
            meta["reply_attempts"] = self.attempts
        if takes("steering"):
            from engine.protocols.steering_targets import steering_targets

            meta["steering"] = steering_targets(self.steering)
        return meta


def options_model(method: str) -> type[ProtocolConfig]:
    """The model of a method's options: its description's ``options_model`` (a "module:Class"
    imported here, on first use), or the shared ``ProtocolConfig``."""
    return _model(registry.method(method).options_model, method)


@lru_cache(maxsize=None)
def _model(named: "str | type | None", method: str) -> type[ProtocolConfig]:
    if named is None:
        return ProtocolConfig
    model = named
    if isinstance(named, str):
        module, _, attribute = named.partition(":")
        try:
            model = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError) as error:
            raise InputError(f"method {method!r}: its options model {named!r} cannot be loaded ({error})",
                             field="method") from None
    if not (isinstance(model, type) and issubclass(model, ProtocolConfig)):
        raise InputError(f"method {method!r}: its options model must be a ProtocolConfig subclass, "
                         f"got {named!r}", field="method")
    return model


def make_config(method: str, **options: Any) -> ProtocolConfig:
    """Validate options into the method's options model (``options_model``: a ProtocolConfig,
    or its subclass with the method's own options); a bad value or unknown option is an
    InputError naming it."""
    if not is_method(method):
        raise InputError(f"unknown method {method!r}; choose one of: {', '.join(method_names())}",
                         field="method")
    options = {k: v for k, v in options.items() if v is not None}
    try:
        return options_model(method)(method=method, **options)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or None
        message = first.get("msg", str(error)).removeprefix("Value error, ")
        if first.get("type") == "extra_forbidden":
            message = f"unknown option for method {method!r}"
        raise InputError(message, field=where) from None


def _listed(option: str) -> str:
    """The methods taking an option, for a message: "a, b, c"."""
    return ", ".join(methods_taking(option))


def _only(names: tuple[str, ...]) -> str:
    """"instructed" / "direct and self_refine" / "a, b and c"."""
    if len(names) < 2:
        return names[0] if names else "no method"
    return f"{', '.join(names[:-1])} and {names[-1]}"
