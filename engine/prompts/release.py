"""Prompts of paper A's structures in ``fidelity="release"`` mode, in our own words.

Each builder says what the authors' generation code (GitHub
``pitehu/llm_multiagent_creativity``) shows the agent at that step, and which function
builds it there; the wording is ours, the content (what is shown, in what order, which
options are offered) follows the release. The ``paper`` mode's prompts are in
``engine.prompts``. Each builder returns a list of chat messages.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Sequence

Messages = list[dict[str, str]]

FINAL_ROUNDS_NOTE = 5  # message_strategies.py: a note in the last 5 turns of an open discussion
PERSONAS_FILE = Path(__file__).with_name("release_personas.json")


@lru_cache(maxsize=1)
def release_personas() -> dict:
    """The release's persona profiles (``generation/roles.py``), shipped as data under the
    repository's licence with its source and commit (``release_personas.json``)."""
    return json.loads(PERSONAS_FILE.read_text(encoding="utf-8"))


def release_roles(persona: str, team_size: int, rng) -> list[str]:
    """Each agent's role text exactly as ``generation/main.py`` builds it: none -> "You are
    Agent k."; same -> "You are Agent k. " + the same persona + the release's suffix;
    different -> "You are Agent k. " + one of the first N profiles, shuffled (``rng``, the
    session's seeded stream for this), + the suffix ("No profile assigned." past the six)."""
    data = release_personas()
    if persona == "none":
        return [f"You are Agent {k + 1}." for k in range(team_size)]
    if persona == "same":
        return [f"You are Agent {k + 1}. {data['same']}{data['suffix']}" for k in range(team_size)]
    profiles = list(data["profiles"][:team_size])
    rng.shuffle(profiles)
    return [f"You are Agent {k + 1}. " + (profiles[k] + data["suffix"] if k < len(profiles)
                                          else "No profile assigned.") for k in range(team_size)]


def _system(text: str) -> dict[str, str]:
    return {"role": "system", "content": text}


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def said(speaker: str, text: str) -> str:
    """One entry of the release's history (``conversation.py``, ``get_previous_responses``)."""
    return f"{speaker} said: {text}"


def _listed(ideas: Sequence[str]) -> str:
    return "\n".join(f"{i + 1}. {idea}" for i, idea in enumerate(ideas))


def open_turn(system: str, window: Sequence[str], turn: int, turn_limit: int, team_size: int,
              name: str) -> Messages:
    """``message_strategies.py``, ``_add_open_discussion_instructions``: the turn count, a request
    to avoid lists, the last N responses (N = team size), a note in the last five turns, then
    the agent is asked for its response. Nothing else (no initial ideas, no rules)."""
    history = "\n".join(window) if window else "(the open discussion starts here)"
    remaining = turn_limit - turn + 1
    note = (f"---\nNote: the discussion is close to its end ({remaining} turn(s) left, this one "
            f"included).\n---\n" if remaining <= FINAL_ROUNDS_NOTE else "")
    return [_system(system), _user(
        f"Your team has at most {turn_limit} turns to settle its ideas; this is turn {turn}. Write in "
        f"sentences and avoid lists or bullet points unless they are really needed.\n\n"
        f"Discussion history (last {team_size} responses, oldest first):\n{history}\n{note}"
        f"\n---\nNow, {name}: what is your response?")]


def instructed_turn(system: str, *, current: str, window: Sequence[str], idea_before: str | None,
                    pool: Sequence[str] | None, replaced: Sequence[str], turn: int, turn_limit: int,
                    team_size: int, agree_offered: bool, words: str) -> Messages:
    """``message_strategies.py``, ``_add_discussion_instructions`` (rating selection, one idea):
    the actions (Agree hidden before ``min_rounds``; Replace from the pool, or with a new idea
    when the condition has no pool), the idea before the last N responses and those
    responses, then the current idea, the pool (``pool`` None: a no-pool condition) and
    the ideas replaced so far."""
    actions = []
    if agree_offered:
        actions.append('Agree: if the current idea is extremely creative and you cannot think of a '
                       'more creative one, answer "Agree: No changes needed."')
    actions.append("Modify: if the idea shows creative promise but needs a major overhaul, rework it "
                   "so that it becomes clearly more creative (no polishing, no small additions). "
                   'Answer "Modify: [the full modified idea] - Reason: [why]."')
    if pool is None:
        actions.append("Replace: if the idea is not creative or misses the task, replace it with a new "
                       'idea of your own. Answer "Replace: [the full new idea] - Reason: [why]."')
    else:
        actions.append("Replace: if the idea is not creative or misses the task, replace it with one "
                       "idea from the replacement pool below (not allowed when the pool is empty). "
                       'Answer "Replace: [the full replacement idea, as written in the pool] - '
                       'Reason: [why]."')
    history = []
    if idea_before is not None:
        history.append(f"The idea under discussion before the responses below:\n1. {idea_before}")
    if window:
        history.append(f"Teammates' last {team_size} responses, oldest first:\n" + "\n".join(window))
    history_text = "\n\n".join(history) or "No discussion yet."
    state = [f"Current idea:\n1. {current}"]
    if pool is not None:
        state.append("Replacement pool:\n" + (_listed(pool) if pool else "(empty)"))
    if replaced:
        state.append("Ideas replaced so far:\n" + _listed(replaced))
    return [_system(system), _user(
        f"You are reviewing the team's current top idea. The team has at most {turn_limit} turns to "
        f"settle on it; this is turn {turn}. The aim is the single most creative idea, not an idea "
        f"that keeps growing.\nChoose one action:\n- " + "\n- ".join(actions) +
        f"\nThe idea should be about {words} words. Do not state word counts.\n\n"
        f"Discussion history:\n{history_text}\n\n" + "\n\n".join(state))]


def hand_raise(system: str, current: str, draft: str) -> Messages:
    """``discussion_modes.py``, ``discussion_all_at_once`` (hand_raising) with ``prompts.py``'s
    intention-scoring text: the agent rates its own drafted response 1-10 with one decimal,
    from its own perspective, score first."""
    return [_system(system), _user(
        f"Current idea:\n{current}\n\nYour suggested response:\n{draft}\n\nConsidering the task and "
        f"the current idea, rate how much your suggested response would contribute, from 1 (adds "
        f"nothing: plain agreement or repetition) through 4-5 (useful but could wait) and 6-7 (an "
        f"important improvement) to 10 (the discussion cannot go on without it). Judge from your own "
        f"perspective and background, not general helpfulness, and avoid safe middle scores. Use one "
        f"decimal place. Answer with the score first (e.g. '6.5'), then a line starting 'Reason: '.")]


def iterative_propose(system: str, ideas_so_far: Sequence[str]) -> Messages:
    """``message_strategies.py``, ``_add_iterative_refinement_instructions``: one idea that is
    clearly more creative than, and different from, every idea generated so far (the initial
    phase's ranked ideas and every proposal), shown as a numbered list."""
    return [_system(system), _user(
        "Write ONE new idea that is clearly more creative than the ideas so far and different from "
        "them. One excellent idea, not several. Answer with the idea itself and nothing else.\n\n"
        f"Ideas so far:\n{_listed(ideas_so_far)}\n\nNow write a new idea that is clearly more "
        "creative than these.")]


def iterative_pick(system: str, options: Sequence[str]) -> Messages:
    """``discussion_modes.py``, ``run_iterative_refinement``: the proposer alone names the most
    creative of the shown ideas, copying it word for word."""
    shown = "\n".join(f"Idea {i + 1}: {idea}" for i, idea in enumerate(options))
    return [_system(system), _user(
        "Creativity means novelty (how original or unexpected the idea is here) together with "
        "usefulness (how much practical value it has for the goal). Give the BEST idea for "
        f"creativity.\nIdeas:\n{shown}\nAnswer with the best idea only, copied word for word: no "
        "explanation, no markdown, no numbering.")]


def progressive_diverge(system: str, ranked: Sequence[str], new: Sequence[str], n_ideas: int,
                        words: str) -> Messages:
    """``message_strategies.py``, ``_add_creative_generation_instructions``: radically novel
    ideas, shown the team's ranked initial ideas and the new ideas teammates wrote before
    this agent in the same phase."""
    return [_system(system), _user(
        f"You have the team's ranked list of ideas. Write exactly {n_ideas} radically NOVEL ideas, "
        f"inspired by the existing ones but not just combinations of them. Think about fundamental "
        f"changes of approach. Use the top-ranked ideas as inspiration without being limited by "
        f"them. Put novelty first; usefulness comes later. Return only the ideas, one per line, no "
        f"explanations, markdown or numbering, each about {words} words. They must differ radically "
        f"from both lists below.\n\nIdeas ranked by the team:\n"
        f"{_listed(ranked) if ranked else '(none)'}\n\nNew ideas from teammates in this phase:\n"
        f"{_listed(new) if new else '(none)'}")]
