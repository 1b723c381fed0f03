"""Paper A, "Open Discussion" (A.1.2): free brainstorming, then one synthesis.

Agents speak in the configured order (fixed rotation or random) with no rules beyond the
task, for ``turn_limit`` turns; then one agent condenses the whole discussion into one final
idea of about 80-100 words. No open condition of paper A's Table 6 (9-16) has an initial
generation phase, so it is off by default (``initial_generation=True`` adds it).

``fidelity="paper"``: each turn sees the whole discussion (and, with an initial phase, its
top-rated idea as the starting point); the synthesis is written by "one randomly selected
agent".

``fidelity="release"`` (``generation/discussion_modes.py``, ``run_open_discussion``;
``message_strategies.py``, ``_add_open_discussion_instructions``): each turn sees the turn
count, the last N responses (N = team size) and, in the last five turns, a note that the
end is near; nothing from an initial phase is shown (the release runs that phase, then
discusses without it). The synthesis is written by the agent who spoke last, shown the
whole discussion, and the final idea is what follows "FINAL IDEA:" in its reply.
"""

from __future__ import annotations

from engine import prompts

from engine.prompts import release as prompts_release
from engine.protocols.parsing import clean_idea
from engine.protocols.session import Session, transcript
from engine.protocols.team import build_team, initial_phase


async def run(session: Session) -> str:
    config = session.config
    release = config.fidelity == "release"
    agents = build_team(session)
    start = (await initial_phase(session))[0] if config.initial_generation else None
    said: list[str] = []
    speaker = None
    for turn_number in range(1, config.turn_limit + 1):
        speaker = session.next_speaker(agents)
        if release:
            messages = prompts_release.open_turn(speaker.system, said[-config.agents:], turn_number,
                                                 config.turn_limit, config.agents, speaker.name)
        else:
            messages = prompts.open_turn(speaker.system, transcript(session.turns), turn_number,
                                         config.turn_limit, start)
        turn = await session.ask(speaker.name, messages, phase="discussion", round=turn_number)
        said.append(prompts_release.said(speaker.name, turn.text))
    summariser = speaker if release else session.rng.choice(agents)
    messages = prompts.open_synthesis(summariser.system, transcript(session.turns), config.idea_words)
    final = await session.ask(summariser.name, messages, phase="synthesis",
                              round=config.turn_limit + 1)
    session.meta["stop_reason"] = "turn_limit"
    session.meta["synthesiser"] = summariser.name
    if release and "FINAL IDEA:" in final.text:
        return final.text.split("FINAL IDEA:")[1].strip()
    return clean_idea(final.text)
