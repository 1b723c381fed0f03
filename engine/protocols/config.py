"""The options of one session: method, team, rounds and the design factors of both papers.

Paper A (Table 6 / A.1): persona none|same|different, order fixed|random|raise, turn_limit,
min_rounds, pool size, generation interactive|nominal, initial_generation on/off (default:
off for open, whose Table 6 conditions 9-16 have no initial phase; on for the others; none
and progressive are built on it). Paper B
(section 6): agents N, rounds R, k peers for Creative-MAD. Unknown options are rejected
with a message naming them.

``fidelity`` (paper A's structures only): ``paper`` follows paper A's text (appendix A.1.2),
``release`` the authors' generation code (GitHub ``pitehu/llm_multiagent_creativity``,
``generation/*.py``) where the two disagree (``engine.protocols.fidelity``; the differences are
listed in ``docs/fidelity.md``). ``reply_attempts``: how many times an instructed turn is
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
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator, model_validator

from engine.errors import InputError
from engine.fields import Whole

from engine.names import METHODS, PAPER_A, PAPER_B, STEERED
from engine.protocols.fidelity import DEFAULT_FIDELITY, FIDELITIES, default_reply_attempts

DEBATES = ("homo_mad", "hetero_mad", "creative_mad")
WITH_CONSENSUS = DEBATES + ("voting",)
PEER_STRATEGIES = ("all", "distant", "closest", "random")
CONSENSUS_MODES = ("judge", "vote", "random", "all")
# Options added after runs were made: left at their default they stay out of a session's
# id (engine.runs.grid.options_hash), so earlier runs keep their ids and resume.
# ``fidelity`` is always set for paper A's structures (so their ids changed when it came in:
# the parsing and re-asking of both modes changed with it) and unset (left out) elsewhere.
LATER_OPTIONS = {"lenses": None, "peers": None, "consensus": "judge", "consensus_retries": 2,
                 "models": None, "steering": None, "fidelity": None, "reply_attempts": None,
                 "candidates": 1}


IDEA_WORDS = re.compile(r"^([0-9]{1,4})(?:-([0-9]{1,4}))?$")
MAX_IDEA_WORDS = 2000


class ProtocolConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    method: Literal[METHODS]  # type: ignore[valid-type]
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
    temperature: float | None = Field(1.0, ge=0.0, le=2.0)
    max_tokens: Whole = Field(512, ge=8, le=32768)
    rating_max_tokens: Whole | None = Field(None, ge=4, le=32768)
    lenses: StrictBool | None = None
    peers: Literal[PEER_STRATEGIES] | None = None  # type: ignore[valid-type]
    consensus: Literal[CONSENSUS_MODES] = "judge"  # type: ignore[valid-type]
    consensus_retries: Whole = Field(2, ge=0, le=10)
    models: tuple[str, ...] | None = None
    steering: dict[str, float] | None = None  # steered: moderator targets (engine.protocols.steered)
    candidates: int = Field(1, ge=1, le=16)  # direct / self_refine: K answers, the judge picks one
    fidelity: Literal[FIDELITIES] | None = None  # type: ignore[valid-type]  # paper A: paper | release
    reply_attempts: int | None = Field(None, ge=1, le=100)  # None: the fidelity's default

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

    @model_validator(mode="after")
    def _consistent(self) -> "ProtocolConfig":
        method = self.method
        if self.agents is None:
            default = {"direct": 1, "self_refine": 1}.get(method, 5 if method in PAPER_B else 3)
            object.__setattr__(self, "agents", default)
        if method in PAPER_A and self.fidelity is None:
            object.__setattr__(self, "fidelity", DEFAULT_FIDELITY)
        elif method not in PAPER_A and self.fidelity is not None:
            raise ValueError(f"fidelity: applies to paper A's structures ({', '.join(PAPER_A)}), "
                             f"not {method}")
        if self.reply_attempts is not None and method != "instructed":
            raise ValueError("reply_attempts: applies to the instructed structure only")
        if self.initial_generation is None:
            object.__setattr__(self, "initial_generation", method not in ("open", "steered"))
        if method in ("direct", "self_refine") and self.agents != 1:
            raise ValueError(f"agents: {method} uses a single agent (got {self.agents})")
        if method in PAPER_B and method not in ("direct", "self_refine") and self.agents < 2:
            raise ValueError(f"agents: {method} needs at least 2 agents")
        if self.paper == "A" and self.agents < 2:
            raise ValueError(f"agents: {method} is a team structure, it needs at least 2 agents")
        if self.order == "raise" and method != "instructed":
            raise ValueError("order: 'raise' (hand-raising) applies to the instructed structure only")
        if self.pool and method != "instructed":
            raise ValueError("pool: the replacement pool applies to the instructed structure only")
        if self.pool and not self.initial_generation:
            raise ValueError("pool: a replacement pool needs the initial generation phase")
        if method in ("none", "progressive") and not self.initial_generation:
            raise ValueError(f"initial_generation: {method} is built on the initial generation phase")
        if (self.lenses is not None or self.peers is not None) and method not in DEBATES:
            raise ValueError(f"lenses/peers: apply to the debate methods ({', '.join(DEBATES)}), "
                             f"not {method}")
        if self.candidates > 1 and method not in ("direct", "self_refine"):
            raise ValueError("candidates: applies to direct and self_refine (judge-based selection)")
        if self.consensus != "judge" and not self.has_consensus:
            raise ValueError(f"consensus: {method} has no consensus step")
        if self.steering is not None and method != "steered":
            raise ValueError(f"steering: applies to the steered discussion, not {method}")
        if self.models is not None and not self.models:
            raise ValueError("models: give at least one model name")
        if method in DEBATES and self.peer_strategy != "all" and self.k > self.agents - 1:
            raise ValueError(f"k: {self.k} peers per agent must be below agents={self.agents}")
        return self

    @property
    def has_consensus(self) -> bool:
        """Debates and Voting, and Direct / Self-Refine with several candidates."""
        return self.method in WITH_CONSENSUS or self.candidates > 1

    @property
    def lens_assignment(self) -> bool:
        """Cognitive Lens Assignment on? (the method's default when ``lenses`` is unset)."""
        return self.method == "creative_mad" if self.lenses is None else self.lenses

    @property
    def peer_strategy(self) -> str:
        """Which peers an agent reads (the method's default when ``peers`` is unset)."""
        if self.peers is not None:
            return self.peers
        return "distant" if self.method == "creative_mad" else "all"

    def hash_payload(self) -> dict[str, Any]:
        """What identifies the options of a session (later options only when not default)."""
        data = self.model_dump()
        for key, default in LATER_OPTIONS.items():
            if data.get(key) == default:
                data.pop(key, None)
        return data

    @property
    def paper(self) -> str:
        """"A" for paper A's structures and the steered discussion built on its open one."""
        return "A" if self.method in PAPER_A + STEERED else "B"

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
        keep = {
            "A": common + ("persona", "order", "turn_limit", "min_rounds", "pool", "generation",
                           "initial_generation", "ideas_per_agent", "idea_words", "convergence",
                           "refine_top", "fidelity"),
            "B": common + ("rounds", "k", "idea_words"),
        }[self.paper]
        meta = {key: data[key] for key in keep}
        if self.method in DEBATES:
            meta.update(lenses=self.lens_assignment, peers=self.peer_strategy)
        if self.has_consensus:
            meta.update(consensus=self.consensus, consensus_retries=self.consensus_retries)
        if self.method in ("direct", "self_refine"):
            meta["candidates"] = self.candidates
        if self.models:
            meta["models"] = list(self.models)
        if self.method == "instructed":
            meta["reply_attempts"] = self.attempts
        if self.method == "steered":
            meta.pop("fidelity", None)
            from engine.protocols.steering_targets import steering_targets

            meta["steering"] = steering_targets(self.steering)
        return meta


def make_config(method: str, **options: Any) -> ProtocolConfig:
    """Validate options into a ProtocolConfig; a bad value or unknown option is an InputError."""
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}",
                         field="method")
    options = {k: v for k, v in options.items() if v is not None}
    try:
        return ProtocolConfig(method=method, **options)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or None
        message = first.get("msg", str(error)).removeprefix("Value error, ")
        if first.get("type") == "extra_forbidden":
            message = f"unknown option for method {method!r}"
        raise InputError(message, field=where) from None
