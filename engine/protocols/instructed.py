"""Paper A, "Instructed Discussion" (A.1.2): Agree / Modify / Replace around one current idea.

* Start: the top-ranked idea of the initial phase, or (without it) an idea written by the
  first speaker as the first turn.
* Each turn the speaker (fixed, random, or hand-raising order) answers Agree, Modify (a
  major revision) or Replace (a pool idea, or a new idea when the pool is empty or absent).
* Pool: ideas ranked 2..pool+1 of the initial phase; a pool idea used as a replacement is
  removed. A replacement is "from the pool" when it overlaps a pool idea's words by >= 0.5.
* Agreement, as in the authors' release (``generation/data_strategies.py``: an Agree adds
  the speaker to the agreed set, every Modify or Replace empties it): agents who agreed sit
  out until the idea changes; the author of a new version (or of the first idea) does NOT
  count as agreeing, so every one of the N agents must answer Agree to the current version.
  Agreeing is refused (and ignored) before ``min_rounds`` turns have elapsed (paper A,
  A.1.2: "disabled until a minimum number of discussion rounds (30) had elapsed"). The
  discussion ends when all N agents agree with the current version or at ``turn_limit``.
* Hand-raising (order=raise): every agent that has not agreed with the current version
  drafts its turn and rates its desire to speak 1-7; the highest (ties: random) speaks with
  that draft.
  (This follows the paper's text, "agents who had not yet agreed rated their desire to
  speak"; the release's hand-raising mode instead lets every agent bid each turn and ends
  when the chosen speaker agrees. The release also offers Agree from turn ``min_rounds``
  itself, one turn before the paper's "had elapsed".)
Unreadable replies leave the idea unchanged and are marked ``action=None``.
"""

from __future__ import annotations

from engine import prompts
from engine.protocols.parsing import parse_action, parse_number, word_overlap
from engine.protocols.session import Agent, Ask, Session, transcript
from engine.protocols.team import build_team, initial_phase

POOL_MATCH = 0.5


async def run(session: Session) -> str:
    config = session.config
    agents = build_team(session)
    turns_done = 0
    pool: list[str] = []
    if config.initial_generation:
        ranked = await initial_phase(session)
        current = ranked[0]
        pool = ranked[1:1 + config.pool]
        agreed: set[str] = set()
    else:
        first = session.next_speaker(agents)
        turn = await session.ask(first.name, prompts.iterative_propose(first.system, None, [],
                                                                       config.idea_words),
                                 phase="discussion", round=1, action="propose")
        current, turns_done, agreed = turn.text, 1, set()
        turn.meta["agreed"] = []
    session.meta["pool_start"] = list(pool)
    stop = "turn_limit"
    while turns_done < config.turn_limit:
        eligible = [a for a in agents if a.name not in agreed]
        if not eligible:
            stop = "all_agreed"
            break
        agree_allowed = turns_done >= config.min_rounds
        number = turns_done + 1

        def messages_for(agent: Agent):
            return prompts.instructed_turn(agent.system, current, transcript(session.turns), pool,
                                           number, config.turn_limit, agree_allowed, config.idea_words)

        if config.order == "raise":
            speaker, turn = await _hand_raise(session, eligible, current, messages_for, number)
        else:
            speaker = session.next_speaker(eligible)
            turn = await session.ask(speaker.name, messages_for(speaker), phase="discussion",
                                     round=number)
        turns_done += 1
        action, idea, _reason = parse_action(turn.text)
        turn.meta["action"] = action
        if action == "agree":
            if agree_allowed:
                agreed.add(speaker.name)
            else:
                turn.meta["action"] = "agree_refused"
        elif action in ("modify", "replace"):
            if action == "replace" and pool:
                best = max(range(len(pool)), key=lambda i: word_overlap(idea, pool[i]))
                if word_overlap(idea, pool[best]) >= POOL_MATCH:
                    turn.meta["from_pool"] = best
                    idea = pool.pop(best)
            current = idea
            agreed = set()  # a new version: everyone, its author included, must agree again
        turn.meta["agreed"] = sorted(agreed)
    else:
        if not [a for a in agents if a.name not in agreed]:
            stop = "all_agreed"
    session.meta.update(stop_reason=stop, pool_left=len(pool))
    return current


async def _hand_raise(session: Session, eligible: list[Agent], current: str, messages_for, number: int):
    drafts = await session.ask_all([Ask(a.name, messages_for(a), phase="discussion", round=number)
                                    for a in eligible], record=False)
    asks = [Ask(a.name, prompts.hand_raise(a.system, current, d.text), phase="hand_raise", round=number,
                max_tokens=8) for a, d in zip(eligible, drafts)]
    bids = await session.ask_all(asks)
    scores = []
    for bid in bids:
        score = parse_number(bid.text, 1, 7)
        bid.meta["desire"] = score
        scores.append(score if score is not None else 0.0)
    top = max(scores)
    winners = [i for i, s in enumerate(scores) if s == top]
    chosen = winners[0] if len(winners) == 1 else session.rng.choice(winners)
    speaker = eligible[chosen]
    session.spoke(speaker)
    turn = drafts[chosen]
    turn.meta["desire"] = scores[chosen]
    return speaker, session.record(turn)
