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
phases cannot be returned (the authors' release also puts the initial top ideas in that
last vote; we follow the paper's description of the two phases). A single refined idea
needs no vote. ``refine_unparsed`` counts refinement replies that could not be split into
ideas (the previous list then goes on unchanged).
"""

from __future__ import annotations

from engine import prompts
from engine.protocols.parsing import split_ideas
from engine.protocols.session import Ask, Session
from engine.protocols.team import build_team, initial_phase, rank, rate, speaking_order


async def run(session: Session) -> str:
    config = session.config
    build_team(session)
    top = (await initial_phase(session))[:config.refine_top]

    asks = [Ask(a.name, prompts.progressive_diverge(a.system, top, config.ideas_per_agent,
                                                    config.idea_words), phase="divergent", round=1,
                max_tokens=config.max_tokens * config.ideas_per_agent)
            for a in session.agents]
    novel: list[str] = []
    for turn in await session.ask_all(asks):
        novel += split_ideas(turn.text, config.ideas_per_agent)
    novel = list(dict.fromkeys(novel))
    novelty = await rate(session, novel, criterion="novelty", round=2, phase="rating")
    chosen = [novel[i] for i in rank(novel, novelty)[:config.refine_top]]
    session.meta["novel_selected"] = list(chosen)

    refined, unparsed = chosen, 0
    for agent in speaking_order(session):
        turn = await session.ask(agent.name, prompts.progressive_refine(agent.system, refined,
                                                                        config.idea_words),
                                 phase="convergent", round=3,
                                 max_tokens=config.max_tokens * len(refined))
        parsed = split_ideas(turn.text, len(refined))
        turn.meta["parsed"] = len(parsed)
        if parsed:
            refined = parsed
        else:
            unparsed += 1

    finalists = list(dict.fromkeys(refined))
    if len(finalists) == 1:
        best = finalists[0]
    else:
        scores = await rate(session, finalists, round=4, phase="rating")
        best = finalists[rank(finalists, scores)[0]]
    session.meta.update(stop_reason="selected", final_from="refined", refine_unparsed=unparsed)
    return best
