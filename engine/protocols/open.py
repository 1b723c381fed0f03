"""Paper A, "Open Discussion" (A.1.2): free brainstorming, then one synthesis.

Agents speak in the configured order (fixed rotation or random) with no rules beyond the
task, for ``turn_limit`` turns. Then one randomly chosen agent condenses the whole
discussion into one final idea of about 80-100 words. No open condition of paper A's
Table 6 (9-16) has an initial generation phase, so it is off by default; with it on
(``initial_generation=True``, CLI ``--initial-generation``) the top-rated idea of that phase
is shown as the starting point, as the authors' release does in its three-stage mode.
"""

from __future__ import annotations

from engine import prompts
from engine.protocols.parsing import clean_idea
from engine.protocols.session import Session, transcript
from engine.protocols.team import build_team, initial_phase


async def run(session: Session) -> str:
    config = session.config
    agents = build_team(session)
    start = (await initial_phase(session))[0] if config.initial_generation else None
    for turn_number in range(1, config.turn_limit + 1):
        agent = session.next_speaker(agents)
        messages = prompts.open_turn(agent.system, transcript(session.turns), turn_number,
                                     config.turn_limit, start)
        await session.ask(agent.name, messages, phase="discussion", round=turn_number)
    summariser = session.rng.choice(agents)
    messages = prompts.open_synthesis(summariser.system, transcript(session.turns), config.idea_words)
    final = await session.ask(summariser.name, messages, phase="synthesis",
                              round=config.turn_limit + 1)
    session.meta["stop_reason"] = "turn_limit"
    session.meta["synthesiser"] = summariser.name
    return clean_idea(final.text)
