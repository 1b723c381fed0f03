"""Paper B's six methods (section 6), described once each.

Protocols: ``engine.protocols.direct``, ``self_refine``, ``voting``, and the three debates
``homo_mad``, ``hetero_mad``, ``creative_mad`` (shared rounds and consensus step in
``engine.protocols.debate``). Teams of 5 by default (the paper's N = 5); Direct and
Self-Refine are one agent, and with ``candidates`` K >= 2 they draw K answers for the
consensus judge. Every debate takes the design factors of section 7.4 (``lenses``,
``peers``, ``k``) and the consensus options; its own design is Creative-MAD's lenses and
distant peers (section 5), none for Homo- and Hetero-MAD. Call counts are exact.
"""

from __future__ import annotations

from engine.protocols.method import Method, consensus_calls

SHARED = frozenset({"temperature", "max_tokens", "models", "idea_words"})
CONSENSUS = frozenset({"consensus", "consensus_retries", "consensus_temperature"})
SINGLE = SHARED | CONSENSUS | {"candidates"}  # Direct, Self-Refine: K candidates for the judge
DEBATE = SHARED | CONSENSUS | {"agents", "rounds", "lenses", "peers", "k"}


def _direct_calls(config, with_retries: bool) -> int:
    """K answers (+ the judge's pick when K >= 2)."""
    return config.candidates + consensus_calls(config, with_retries=with_retries)


def _self_refine_calls(config, with_retries: bool) -> int:
    """K chains of an answer and R rounds of feedback + revision: K (1 + 2R) (+ the pick)."""
    return config.candidates * (1 + 2 * config.rounds) + consensus_calls(config, with_retries=with_retries)


def _voting_calls(config, with_retries: bool) -> int:
    """N independent answers + the consensus step: N + 1 with the judge."""
    return config.agents + consensus_calls(config, with_retries=with_retries)


def _debate_calls(config, with_retries: bool) -> int:
    """N answers in round 0 and in each of R rounds + the consensus step: N (R + 1) + 1 with the judge."""
    return config.agents * (config.rounds + 1) + consensus_calls(config, with_retries=with_retries)


DIRECT = Method(
    name="direct", run="engine.protocols.direct:run", calls=_direct_calls, paper="B",
    label="Direct", code="DIR", colour="indigo", citation="Paper B, section 6 (Direct)",
    single_agent=True, team=1, options=SINGLE, small_options={},
    # one answer; 3 candidates + the judge's pick (+ its 2 retries)
    worked_calls=(({}, 1, 1), ({"candidates": 3}, 4, 6)))
SELF_REFINE = Method(
    name="self_refine", run="engine.protocols.self_refine:run", calls=_self_refine_calls, paper="B",
    label="Self-Refine", code="SR", colour="sky",
    citation="Paper B, section 6 (Self-Refine, after Madaan et al. 2023)",
    single_agent=True, team=1, options=SINGLE | {"rounds"}, small_options=dict(rounds=1),
    # 1 + 2 x 2; 2 chains of 1 + 2 x 1 + the pick (+ 2 retries)
    worked_calls=(({"rounds": 2}, 5, 5), ({"rounds": 1, "candidates": 2}, 2 * 3 + 1, 2 * 3 + 1 + 2)))
VOTING = Method(
    name="voting", run="engine.protocols.voting:run", calls=_voting_calls, paper="B",
    label="Voting", code="VOTE", colour="olive", citation="Paper B, section 6 (Voting)",
    consensus=True, team=5, options=SHARED | CONSENSUS | {"agents"}, small_options=dict(agents=2),
    # 5 answers + the judge (+ 2 retries); keeping all: no consensus call
    worked_calls=(({"agents": 5}, 6, 8), ({"agents": 5, "consensus": "all"}, 5, 5)))
HOMO_MAD = Method(
    name="homo_mad", run="engine.protocols.homo_mad:run", calls=_debate_calls, paper="B",
    label="Homo MAD", code="HoMAD", colour="vermillion",
    citation="Paper B, sections 3.1 and 6 (Homo-MAD: identical agents, every peer read)",
    debate=True, consensus=True, team=5, options=DEBATE, small_options=dict(agents=2, rounds=1),
    worked_calls=(({"agents": 3, "rounds": 2}, 3 * (2 + 1) + 1, 3 * (2 + 1) + 1 + 2),))
HETERO_MAD = Method(
    name="hetero_mad", run="engine.protocols.hetero_mad:run", calls=_debate_calls, paper="B",
    label="Hetero MAD", code="HeMAD", colour="wine",
    citation="Paper B, section 6 (Hetero-MAD: a distinct persona per agent)",
    debate=True, consensus=True, team=5, persona="different", options=DEBATE,
    small_options=dict(agents=2, rounds=1),
    worked_calls=(({"agents": 4, "rounds": 1, "consensus": "vote"}, 4 * 2 + 4, 4 * 2 + 4),))  # a vote: 4
CREATIVE_MAD = Method(
    name="creative_mad", run="engine.protocols.creative_mad:run", calls=_debate_calls, paper="B",
    label="Creative-MAD", code="CMAD", colour="forest",
    citation="Paper B, section 5 (Creative-MAD: Cognitive Lens Assignment + Embedding-based Peer Selection)",
    debate=True, consensus=True, team=5, lenses=True, peers="distant", persona="lens", options=DEBATE,
    small_options=dict(agents=3, rounds=1, k=1),
    # a random pick makes no call; the judge with 4 retries
    worked_calls=(({"agents": 5, "rounds": 2, "consensus": "random"}, 15, 15),
                  ({"agents": 3, "rounds": 1, "k": 1, "consensus_retries": 4}, 3 * 2 + 1, 3 * 2 + 1 + 4)))

METHODS = (DIRECT, SELF_REFINE, VOTING, HOMO_MAD, HETERO_MAD, CREATIVE_MAD)
