"""A trajectory-steered discussion: paper A's open discussion with a moderator that watches
the semantic trajectory as it forms and steers it toward the region paper A associates
with creative LLM ideas.

Paper A (Table 23, Model 2, LLM teams) finds more creative ideas where the conversation
ranges widely (negative global coherence, beta = -0.40), disperses (positive semantic
spread, +0.23) and explores efficiently (negative path length, -0.12, and negative max
distance, -0.28); section 4 suggests "target specific trajectory features ... to increase
creativity". Paper B (section 5) gives the tool for an agent drifting toward the majority:
a persistent Cognitive Lens.

The session runs like ``open``: agents speak in the configured order for ``turn_limit``
turns, then one agent writes the final idea. After each discussion turn the moderator
embeds the turn (the session's embedder: all-MiniLM-L6-v2 unless the runner injects
another), computes the running Table 19 features of the discussion so far with
``engine.measures.trajectory.trajectory_features`` and, from the ``warmup``-th turn on (and before the
last turn, after which nothing could act on it), fires at most one rule, first match wins:

1. ``converge``: the exploration budget is spent (``explore_share`` of ``turn_limit``
   turns, or ``path_budget`` of path length), or the discussion strays too far
   (``max_distance`` above ``max_distance_max``). From then on every prompt asks the team to
   converge on the strongest idea, and the other rules stop. Fires once.
2. ``leap``: global coherence above ``coherence_max`` for ``patience`` checks in a row; the
   next speaker is asked for a conceptual leap.
3. ``floor``: semantic spread below ``spread_min`` (from three turns on: the spread of two
   turns is always 0); the floor goes to the agent whose last
   ``recent`` turns (mean embedding) are farthest from the centroid (cosine distance).
4. ``lens``: an agent without a lens whose latest turn has cosine similarity above
   ``drift_min`` to the centroid of the discussion (drifting toward the majority) gets a
   persistent Creative-MAD lens (``engine.prompts.LENSES``, next unused in ``LENS_ORDER``).

Every intervention is a recorded turn with phase ``moderator`` (speaker "moderator", no
model call, excluded from trajectories by ``Corpus.trajectory_view``): its text is the
instruction, its meta the rule, the reason, the band, the running features it saw
(``measured``, NaN as None), the number of discussion turns they were computed on, and the
rule's own measurement (agent distances or similarities). Defaults are on the scale of
all-MiniLM-L6-v2 cosine geometry (set from the local cached runs' open discussions, whose
global coherence is 0.66-0.92 and spread 0.06-0.20); every target is an option
(``steering={...}`` in a grid condition, ``--steer KEY=VALUE`` on the command line).

Calls per session: exactly those of ``open`` (``turn_limit`` turns + 1 synthesis, plus
2 x agents with the initial phase); the moderator makes no chat calls, only one embedding
per discussion turn.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine import prompts
from engine.corpus import Turn
from engine.measures.trajectory import trajectory_features
from engine.protocols.parsing import clean_idea
from engine.protocols.session import Agent, Session, transcript
from engine.protocols.team import build_team, initial_phase

from engine.protocols.steering_targets import (DEFAULT_TARGETS, INTEGER_TARGETS, TRACKED,  # noqa: F401
                                               steering_targets)

RULES = ("converge", "leap", "floor", "lens")

LEAP_NOTE = ("Moderator to {agent}: the discussion keeps circling one theme. Make a conceptual "
             "leap: propose an idea from a completely different domain or angle.")
FLOOR_NOTE = ("Moderator: {agent}, your contributions are the furthest from where the team is "
              "heading. You have the floor: develop your direction further.")
LENS_NOTE = ("Moderator to {agent}: you are drifting toward the majority view. From now on, {lens}")
CONVERGE_NOTE = ("Moderator: Converge now: pick the strongest idea so far and sharpen it, "
                 "combining the best of the others.")
CONVERGE_WHY = {"turns": "the exploration budget is spent", "path_length": "the exploration budget is spent",
                "max_distance": "the ideas now lie very far apart"}


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _clean(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


class Moderator:
    """Tracks the discussion's embeddings and decides the next intervention (or none)."""

    def __init__(self, agents: list[Agent], targets: dict[str, float], turn_limit: int):
        self.agents = agents
        self.targets = targets
        self.turn_limit = turn_limit
        self.vectors: list[np.ndarray] = []
        self.speakers: list[str] = []
        self.lenses: dict[str, str] = {}
        self.converging = False
        self.coherent_streak = 0

    def observe(self, speaker: str, vector: np.ndarray) -> None:
        self.vectors.append(np.asarray(vector, dtype=float))
        self.speakers.append(speaker)

    def running_features(self) -> dict[str, float]:
        """The tracked Table 19 features of the discussion so far (engine.measures.trajectory)."""
        values = trajectory_features(np.stack(self.vectors))
        return {name: values[name] for name in TRACKED}

    def decide(self) -> dict[str, Any] | None:
        """The intervention after the latest turn, as turn meta (None: no rule fired)."""
        t, n = self.targets, len(self.vectors)
        if n < t["warmup"] or self.converging:
            return None
        measured = self.running_features()
        gc = measured["global_coherence"]
        self.coherent_streak = self.coherent_streak + 1 if gc > t["coherence_max"] else 0
        base = {"measured": {k: _clean(v) for k, v in measured.items()}, "n_turns": n}
        if n >= t["explore_share"] * self.turn_limit:
            return self._converge(base, "turns", {"turns": n, "explore_share": t["explore_share"]})
        if measured["path_length"] >= t["path_budget"]:
            return self._converge(base, "path_length", {"path_budget": t["path_budget"]})
        if measured["max_distance"] > t["max_distance_max"]:
            return self._converge(base, "max_distance", {"max_distance_max": t["max_distance_max"]})
        if self.coherent_streak >= t["patience"]:
            self.coherent_streak = 0
            return {**base, "rule": "leap", "reason": "global_coherence",
                    "band": {"coherence_max": t["coherence_max"], "patience": t["patience"]},
                    "agent": None}
        # with two turns the spread is 0 whatever they say (both lie equally far from their
        # centroid), so the floor rule needs three
        if n >= 3 and measured["semantic_spread"] < t["spread_min"]:
            distances = self.agent_distances()
            agent = max(distances, key=lambda name: (distances[name], -self._index(name)))
            return {**base, "rule": "floor", "reason": "semantic_spread",
                    "band": {"spread_min": t["spread_min"]}, "agent": agent,
                    "agent_distances": distances}
        similarities = self.latest_similarities()
        drifting = {name: s for name, s in similarities.items()
                    if name not in self.lenses and s > t["drift_min"]}
        if drifting and len(self.lenses) < len(prompts.LENS_ORDER):
            agent = max(drifting, key=lambda name: (drifting[name], -self._index(name)))
            lens = next(l for l in prompts.LENS_ORDER if l not in self.lenses.values())
            self.lenses[agent] = lens
            return {**base, "rule": "lens", "reason": "drift_to_majority",
                    "band": {"drift_min": t["drift_min"]}, "agent": agent, "lens": lens,
                    "agent_similarities": similarities}
        return None

    def _converge(self, base: dict, reason: str, band: dict) -> dict[str, Any]:
        self.converging = True
        return {**base, "rule": "converge", "reason": reason, "band": band, "agent": None}

    def _index(self, name: str) -> int:
        return [a.name for a in self.agents].index(name)

    def centroid(self) -> np.ndarray:
        return np.stack(self.vectors).mean(axis=0)

    def agent_distances(self) -> dict[str, float]:
        """Cosine distance from the centroid to the mean of each agent's last ``recent`` turns."""
        centroid, recent = self.centroid(), self.targets["recent"]
        out = {}
        for agent in self.agents:
            own = [v for v, s in zip(self.vectors, self.speakers) if s == agent.name][-recent:]
            if own:
                out[agent.name] = 1.0 - _cosine(np.mean(own, axis=0), centroid)
        return out

    def latest_similarities(self) -> dict[str, float]:
        """Cosine similarity of each agent's latest turn to the centroid of the discussion."""
        centroid = self.centroid()
        out = {}
        for agent in self.agents:
            own = [v for v, s in zip(self.vectors, self.speakers) if s == agent.name]
            if own:
                out[agent.name] = _cosine(own[-1], centroid)
        return out


def note_for(event: dict[str, Any]) -> str:
    rule, agent = event["rule"], event.get("agent")
    if rule == "leap":
        return LEAP_NOTE.format(agent="the next speaker")
    if rule == "floor":
        return FLOOR_NOTE.format(agent=agent)
    if rule == "lens":
        return LENS_NOTE.format(agent=agent, lens=prompts.LENSES[event["lens"]])
    return f"Moderator: {CONVERGE_WHY[event['reason']]}. {CONVERGE_NOTE.removeprefix('Moderator: ')}"


def system_with_lens(agent: Agent, lens: str | None) -> str:
    if lens is None:
        return agent.system
    return f"{agent.system}\n{prompts.LENSES[lens]} Keep this lens in every turn."


async def run(session: Session) -> str:
    config = session.config
    agents = build_team(session)
    targets = steering_targets(config.steering)
    moderator = Moderator(agents, targets, config.turn_limit)
    start = (await initial_phase(session))[0] if config.initial_generation else None
    pending_note, floor_to = None, None
    for turn_number in range(1, config.turn_limit + 1):
        if floor_to is not None:
            agent = session.agent(floor_to)
            session.spoke(agent)
        else:
            agent = session.next_speaker(agents)
        messages = prompts.open_turn(system_with_lens(agent, moderator.lenses.get(agent.name)),
                                     transcript(session.turns), turn_number, config.turn_limit, start)
        note = CONVERGE_NOTE if moderator.converging and pending_note is None else pending_note
        if note:
            messages[-1] = {**messages[-1], "content": f"{messages[-1]['content']}\n\n{note}"}
        turn = await session.ask(agent.name, messages, phase="discussion", round=turn_number,
                                 lens=moderator.lenses.get(agent.name))
        pending_note, floor_to = None, None
        moderator.observe(agent.name, (await session.embed([turn.text]))[0])
        if turn_number == config.turn_limit:
            break  # no turn left for an intervention to act on
        event = moderator.decide()
        if event is None:
            continue
        text = note_for(event)
        # a lens lives in its agent's system prompt; the other notes go to the next speaker
        pending_note = None if event["rule"] == "lens" else text
        floor_to = event["agent"] if event["rule"] == "floor" else None
        session.record(Turn(speaker="moderator", text=text, round=turn_number, phase="moderator",
                            tokens=0, meta=event))
    summariser = session.rng.choice(agents)
    messages = prompts.open_synthesis(summariser.system, transcript(session.turns), config.idea_words)
    final = await session.ask(summariser.name, messages, phase="synthesis", round=config.turn_limit + 1)
    interventions = [t.meta["rule"] for t in session.turns if t.phase == "moderator"]
    session.meta.update(stop_reason="turn_limit", synthesiser=summariser.name,
                        steering=targets, interventions=len(interventions),
                        interventions_by_rule={r: interventions.count(r) for r in RULES},
                        lenses_assigned=[f"{agent}: {lens}" for agent, lens in moderator.lenses.items()])
    return clean_idea(final.text)

