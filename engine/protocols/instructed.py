"""Paper A, "Instructed Discussion" (A.1.2): Agree / Modify / Replace around one current idea.

Both fidelities (``engine.protocols.fidelity_modes``):

* Start: the top-ranked idea of the initial phase, or (without it) an idea written by the
  first speaker as the first turn.
* Each turn the speaker (fixed, random, or hand-raising order) answers Agree, Modify (a
  major revision) or Replace. Replies are read by ``engine.protocols.actions`` (a keyword
  counts where it begins a line); an unreadable reply is asked again
  (``engine.protocols.reask``), up to ``config.attempts`` asks in all.
* Agreement, as in the authors' release (``generation/data_strategies.py``,
  ``update_shared_data``: an Agree adds the speaker to the agreed set, every Modify or Replace
  empties it): agents who agreed sit out until the idea changes; the author of a new version
  (or of the first idea) does NOT count as agreeing, so every one of the N agents must
  answer Agree to the current version. The discussion ends when all N agree or at
  ``turn_limit``.

``fidelity="paper"`` (the text):

* Pool: ideas ranked 2..pool+1 of the initial phase; while it is not empty a Replace must
  take one of its ideas (``actions.read_paper``), which is then removed; once it is empty
  agents write new ideas. It is never refilled.
* Agreeing is refused (and ignored) before ``min_rounds`` turns have elapsed ("disabled until
  a minimum number of discussion rounds (30) had elapsed").
* A reply still unreadable after ``attempts`` asks (default 3) stands as an unreadable
  turn (``action=None``, idea unchanged), counted in ``meta["replies"]``.
* Each turn sees the whole discussion. Hand-raising (order=raise): every agent that has not
  agreed with the current version drafts its turn and rates its desire to speak 1-7; the
  highest (ties: random) speaks with that draft.

``fidelity="release"`` (``generation/discussion_modes.py``, ``discussion_all_at_once`` with an
initial phase, ``direct_discussion_ps_all_at_once`` without one; ``data_strategies.py``):

* Replies read by ``actions.read_release``; unreadable ones (and a Replace that does not copy
  a pool idea while the pool has one) asked again up to 50 times, then the session fails
  (``generate_with_retries``). Without the initial phase the release does not ask again: a
  reply with no action line is read as Agree (counted as ``read_as_agree``).
* Pool: after every Modify or Replace it is topped up to ``pool`` ideas from the next-ranked
  initial ideas (``update_shared_data``), so ranks beyond pool+1 come in.
* Agree is offered from turn ``min_rounds`` on and counted whenever it is said (the release
  only hides the option in the prompt).
* A turn sees the last N responses (N = team size), the idea as it stood before them, the
  current idea, the pool (in pool conditions) and the ideas replaced so far.
* Hand-raising: each turn the agreed set is emptied after the eligible agents are chosen
  (those who did not agree at the last turn), every one of them drafts and bids 1-10 (one
  decimal; the first number read, clamped to 1-10; none read = 0); the highest (ties:
  random) speaks, and the discussion ends when that reply says "Agree: No changes needed".
  An Agree is booked to the last agent that bid, not to the speaker (the release leaves its
  ``current_agent`` at the last bidder; ``update_shared_data`` books the Agree to it).
  Without an initial phase (``direct_discussion_ps_all_at_once``) the first speaker is
  chosen at random, agreements are not reset and that phrase does not end it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine import prompts

from engine.prompts import release as prompts_release
from engine.protocols import actions
from engine.protocols.parsing import parse_number
from engine.protocols.reask import (UnreadableReply, ask_all_until_read, ask_until_read, counters)
from engine.protocols.session import Agent, Ask, Session, transcript
from engine.protocols.team import build_team, initial_phase

AGREE_PHRASE = "agree: no changes needed"
_FIRST_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass
class State:
    current: str
    pool: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)      # release: ranked ideas that refill the pool
    replaced: list[str] = field(default_factory=list)  # release: shown to the agents
    agreed: set[str] = field(default_factory=set)
    said: list[tuple[str, str, str]] = field(default_factory=list)  # (speaker, text, idea before)


async def run(session: Session) -> str:
    config = session.config
    release = config.fidelity == "release"
    agents = build_team(session)
    turns_done = 0
    if config.initial_generation:
        ranked = await initial_phase(session)
        state = State(ranked[0], pool=ranked[1:1 + config.pool], left=ranked[1 + config.pool:])
    else:
        first = session.rng.choice(agents) if release and config.order == "raise" else session.next_speaker(agents)
        session.spoke(first)
        turn = await session.ask(first.name, prompts.iterative_propose(first.system, None, [],
                                                                       config.idea_words),
                                 phase="discussion", round=1, action="propose")
        state, turns_done = State(turn.text), 1
        state.said.append((first.name, turn.text, turn.text))
        turn.meta["agreed"] = []
    session.meta["pool_start"] = list(state.pool)
    stop = "turn_limit"
    while turns_done < config.turn_limit:
        eligible = [a for a in agents if a.name not in state.agreed]
        if not eligible:
            stop = "all_agreed"
            break
        number = turns_done + 1
        hand_raising = config.order == "raise"
        if release and hand_raising and config.initial_generation:
            state.agreed = set()  # discussion_all_at_once: reset_agreements() every hand-raising turn
        credit = None
        if hand_raising:
            speaker, turn, action = await _hand_raise(session, state, eligible, number)
            if release:  # the release never makes the chosen speaker its current agent: an
                credit = eligible[-1]  # Agree is booked to the last agent that bid
        else:
            speaker = session.next_speaker(eligible)
            turn, action = await _ask_turn(session, state, speaker, number)
        turns_done += 1
        _apply(session, state, speaker, turn, action, number, credit=credit)
        if release and hand_raising and config.initial_generation and AGREE_PHRASE in turn.text.lower():
            stop = "speaker_agreed"
            break
    else:
        if not [a for a in agents if a.name not in state.agreed]:
            stop = "all_agreed"
    session.meta.update(stop_reason=stop, pool_left=len(state.pool))
    counters(session)  # present (zeros) even when no turn needed reading
    return state.current


# -- one turn -----------------------------------------------------------------------------------
def _agree_offered(session: Session, number: int) -> bool:
    """paper: after ``min_rounds`` turns have elapsed; release: from turn ``min_rounds`` on
    (``message_strategies.py`` hides Agree while turn + 1 < min_responses, 0-based turn)."""
    min_rounds = session.config.min_rounds
    return number >= min_rounds if session.config.fidelity == "release" else number - 1 >= min_rounds


def _messages(session: Session, state: State, agent: Agent, number: int):
    config = session.config
    if config.fidelity != "release":
        return prompts.instructed_turn(agent.system, state.current, transcript(session.turns), state.pool,
                                       number, config.turn_limit, _agree_offered(session, number),
                                       config.idea_words)
    # conversation.py, get_previous_responses: the last N responses (without an initial phase
    # the proposal that opened the discussion is never among them) and the idea as it stood
    # when the N-th last response was made
    said = state.said if config.initial_generation else state.said[1:]
    window = said[-config.agents:]
    before = state.said[max(0, len(state.said) - config.agents)][2] if state.said else None
    with_pool = config.initial_generation and config.pool > 0
    return prompts_release.instructed_turn(
        agent.system, current=state.current,
        window=[prompts_release.said(name, text) for name, text, _ in window],
        idea_before=before,
        pool=state.pool if with_pool else None,
        replaced=state.replaced if config.initial_generation else [], turn=number,
        turn_limit=config.turn_limit, team_size=config.agents,
        agree_offered=_agree_offered(session, number), words=config.idea_words)


def _reader(session: Session, state: State, *, drafts: bool = False):
    """How a reply is read, and how many asks it gets (see the module docstring)."""
    config = session.config
    if config.fidelity != "release":
        return (lambda text: actions.read_paper(text, state.pool)), config.attempts
    if not config.initial_generation and not drafts:  # the release asks once and reads no action as Agree
        return (lambda text: actions.read_release(text, state.pool, validate=False)), 1
    return (lambda text: actions.read_release(text, state.pool)), config.attempts


async def _ask_turn(session: Session, state: State, speaker: Agent, number: int):
    read, attempts = _reader(session, state)
    turn, action = await ask_until_read(session, speaker.name, _messages(session, state, speaker, number),
                                        read, attempts=attempts, phase="discussion", round=number,
                                        record=False)
    _checked(session, action, attempts)  # the release ends the session: no unreadable turn kept
    return session.record(turn), action


def _checked(session: Session, action, attempts: int):
    if action is None and session.config.fidelity == "release":
        raise UnreadableReply(f"no readable Agree/Modify/Replace reply after {attempts} attempts "
                              f"(the release's generate_with_retries limit)")
    return action


async def _hand_raise(session: Session, state: State, eligible: list[Agent], number: int):
    release = session.config.fidelity == "release"
    read, attempts = _reader(session, state, drafts=True)
    asks = [Ask(a.name, _messages(session, state, a, number), "discussion", number) for a in eligible]
    drafts = await ask_all_until_read(session, asks, lambda text, _i: read(text), attempts=attempts)
    for turn, action in drafts:
        _checked(session, action, attempts)
    bid_prompt = prompts_release.hand_raise if release else prompts.hand_raise
    bids = await session.ask_all([Ask(a.name, bid_prompt(a.system, state.current, turn.text),
                                      phase="hand_raise", round=number, max_tokens=16 if release else 8)
                                  for a, (turn, _) in zip(eligible, drafts)])
    scores = [_bid(bid.text, release) for bid in bids]
    for bid, score in zip(bids, scores):
        bid.meta["desire"] = score
    top = max(scores)
    winners = [i for i, s in enumerate(scores) if s == top]
    chosen = winners[0] if len(winners) == 1 else session.rng.choice(winners)
    speaker = eligible[chosen]
    session.spoke(speaker)
    turn, action = drafts[chosen]
    turn.meta["desire"] = scores[chosen]
    return speaker, session.record(turn), action


def _bid(text: str, release: bool) -> float:
    """paper: a number 1-7 (unreadable = 0); release: the first number in the reply, clamped to
    1-10, none = 0 (``discussion_all_at_once``, hand_raising branch)."""
    if not release:
        score = parse_number(text, 1, 7)
        return score if score is not None else 0.0
    found = _FIRST_NUMBER.search(text)
    return 0.0 if found is None else max(1.0, min(10.0, float(found.group(0))))


# -- what a reply does ------------------------------------------------------------------------
def _apply(session: Session, state: State, speaker: Agent, turn, action, number: int, *,
           credit: Agent | None = None) -> None:
    """What the reply does to the idea, the pool and who has agreed; ``credit``: the agent an
    Agree is booked to when it is not the speaker (release hand-raising)."""
    config = session.config
    release = config.fidelity == "release"
    state.said.append((speaker.name, turn.text, state.current))
    if action is not None and action.note:
        turn.meta["read_note"] = action.note
        if action.note.startswith("no action line"):
            counters(session)["read_as_agree"] += 1
    if action is None:
        turn.meta["action"] = None
    elif action.kind == "agree":
        turn.meta["action"] = "agree"
        if not _agree_offered(session, number):
            if release:
                turn.meta["agree_offered"] = False  # counted all the same, as the release does
            else:
                turn.meta["action"] = "agree_refused"
        if turn.meta["action"] == "agree":
            booked = credit or speaker
            state.agreed.add(booked.name)
            if booked is not speaker:
                turn.meta["agree_booked_to"] = booked.name
    else:
        turn.meta["action"] = action.kind
        if action.kind == "replace":
            if action.pool_index is not None:
                turn.meta["from_pool"] = action.pool_index
                state.pool.pop(action.pool_index)
            if release:
                state.replaced.append(state.current)
        state.current = action.idea
        state.agreed = set()  # a new version: everyone, its author included, must agree again
        if release:  # update_shared_data: top the pool up from the next-ranked ideas
            while len(state.pool) < config.pool and state.left:
                state.pool.append(state.left.pop(0))
    turn.meta["agreed"] = sorted(state.agreed)
