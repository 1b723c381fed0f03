"""Paper A, "Progressive Improvement" (A.1.2): a divergent phase, then a convergent one.

After the initial generation-and-selection phase:
(``max_tokens`` is the budget of one idea; a reply listing several ideas gets one budget each.)
1. Divergent: every agent writes ``ideas_per_agent`` radically new ideas inspired by, but
   unlike, the top ``refine_top`` initial ideas (novelty before usefulness).
2. Convergent: every agent rates all new ideas on novelty only; the ``refine_top`` most
   novel go forward; agents in turn refine that list for usefulness while keeping its
   novelty, each starting from the previous agent's version.
The final idea is the best, by the team's creativity ratings, among the refined ideas only:
the protocol's output comes from its convergent phase, so an initial idea that skipped both
phases cannot be returned. A single refined idea needs no vote. ``refine_unparsed`` counts
refinement replies that could not be split into ideas (the previous list then goes on
unchanged). This is ``fidelity="paper"``: the divergent phase asks every agent at once,
shown the top ``refine_top`` initial ideas.

``fidelity="release"`` (``generation/discussion_modes.py``, ``run_creative_generation``;
``message_strategies.py``, ``_add_creative_generation_instructions``):

* Divergent: agents in team order, one after the other, each shown every ranked initial
  idea and the new ideas its teammates wrote before it in this phase (the release splits
  the list at 5 x N: the first 5 x N entries are shown as ranked, the rest as new); a
  reply's first ``ideas_per_agent`` non-empty lines (numbering "1. " removed) are its ideas.
* Convergent: agents in team order refine the list; every non-empty line of a reply is the
  next list.
* The final vote is over the refined ideas and the initial top ``refine_top`` (the
  release: top 5) together, shuffled.
"""

from __future__ import annotations

import re

from engine import prompts

from engine.prompts import release as prompts_release
from engine.protocols.parsing import split_ideas
from engine.protocols.session import Ask, Session
from engine.protocols.team import build_team, initial_phase, rank, rate, speaking_order


_NUMBERING = re.compile(r"^\d+\.\s+")


async def run(session: Session) -> str:
    config = session.config
    release = config.fidelity == "release"
    build_team(session)
    ranked = await initial_phase(session)
    top = ranked[:config.refine_top]
    novel = await (_diverge_release(session, ranked) if release else _diverge_paper(session, top))
    novel = list(dict.fromkeys(novel))
    novelty = await rate(session, novel, criterion="novelty", round=2, phase="rating")
    chosen = [novel[i] for i in rank(novel, novelty, session)[:config.refine_top]]
    session.meta["novel_selected"] = list(chosen)

    refined, unparsed = chosen, 0
    for agent in (session.agents if release else speaking_order(session)):
        turn = await session.ask(agent.name, prompts.progressive_refine(agent.system, refined,
                                                                        config.idea_words),
                                 phase="convergent", round=3,
                                 max_tokens=config.max_tokens * max(1, len(refined)))
        parsed = _lines(turn.text) if release else split_ideas(turn.text, len(refined))
        turn.meta["parsed"] = len(parsed)
        if parsed:
            refined = parsed
        else:
            unparsed += 1

    finalists = list(dict.fromkeys(refined + (top if release else [])))
    if release:
        session.rng.shuffle(finalists)
    if len(finalists) == 1:
        best = finalists[0]
    else:
        scores = await rate(session, finalists, round=4, phase="rating")
        best = finalists[rank(finalists, scores, session)[0]]
    session.meta.update(stop_reason="selected", refine_unparsed=unparsed,
                        final_from="refined" if best in refined else "initial")
    return best


async def _diverge_paper(session: Session, top: list[str]) -> list[str]:
    config = session.config
    asks = [Ask(a.name, prompts.progressive_diverge(a.system, top, config.ideas_per_agent,
                                                    config.idea_words), phase="divergent", round=1,
                max_tokens=config.max_tokens * config.ideas_per_agent)
            for a in session.agents]
    novel: list[str] = []
    for turn in await session.ask_all(asks):
        novel += split_ideas(turn.text, config.ideas_per_agent)
    return novel


async def _diverge_release(session: Session, ranked: list[str]) -> list[str]:
    """run_creative_generation, step 1: agents in turn; the shown list grows with each reply."""
    config = session.config
    shown, novel = list(ranked), []
    split = config.ideas_per_agent * config.agents  # the release's threshold: 5 x llm_count
    for agent in session.agents:
        messages = prompts_release.progressive_diverge(agent.system, shown[:split], shown[split:],
                                                       config.ideas_per_agent, config.idea_words)
        turn = await session.ask(agent.name, messages, phase="divergent", round=1,
                                 max_tokens=config.max_tokens * config.ideas_per_agent)
        ideas = [_NUMBERING.sub("", line) for line in _lines(turn.text)][:config.ideas_per_agent]
        novel += ideas
        shown += ideas
    return novel


def _lines(text: str) -> list[str]:
    """The release's reading of a list reply: every non-empty line, stripped."""
    return [line.strip() for line in text.split("\n") if line.strip()]
