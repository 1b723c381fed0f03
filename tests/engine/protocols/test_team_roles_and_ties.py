"""Paper A's team: the system prompt of each fidelity (release: exactly the text
``generation/main.py`` and ``generation/roles.py`` build, worked out by hand below from the
release at commit f7e5245; paper: the generic identity), and rating ties broken as the release
does or at random by the session's seed, never by generation order."""

from __future__ import annotations

import asyncio
import re
from collections import Counter

import pytest
from scipy import stats as scipy_stats

from engine.llm import ScriptedBackend
from engine.protocols import make_config, run_session
from engine.tasks import get_task

TASK = "plastic_waste"
AGENT = re.compile(r"You are (Agent \d+)\.")
SUFFIX = " You have the knowledge of this person. You talk like this person. You think like this person."
# generation/roles.py, SAME_PERSONA_DESCRIPTION and BASE_ROLES["Profile_A"], as released
SAME = ("You are a 24-year-old White female with a graduate degree in business and management. You work as a "
        "management consultant in a consulting firm. According to the Big Five model, below is your personality "
        "profile: Openness to Experience 3.7, Conscientiousness 3.5, Extraversion 3.0, Agreeableness 3.8, and "
        "Neuroticism 2.7. These personality scales range from 1 to 5, where 1 indicates a low score and 5 "
        "indicates a high score.")
PROFILE_A = ("You are a 22-year-old Black male with an undergraduate degree in computer science. You work as a "
             "software engineer in an information technology company. According to the Big Five model, below is "
             "your personality profile: Openness to Experience 4.2, Conscientiousness 3.0, Extraversion 3.6, "
             "Agreeableness 3.3, and Neuroticism 2.0. These personality scales range from 1 to 5, where 1 "
             "indicates a low score and 5 indicates a high score.")


def system_messages(persona: str, fidelity: str, agents: int = 3, seed: int = 0) -> list[str]:
    seen: dict[str, str] = {}

    def reply(messages):
        system = messages[0]["content"]
        seen.setdefault(re.match(r"You are (Agent \d+)\.", system).group(1), system)
        if "'Idea N: score'" in messages[-1]["content"]:
            return "Idea 1: 5"
        return "one idea"

    config = make_config("none", agents=agents, persona=persona, fidelity=fidelity, ideas_per_agent=1)
    asyncio.run(run_session(ScriptedBackend(responder=reply), TASK, config, conversation_id="t", seed=seed))
    return [seen[f"Agent {k + 1}"] for k in range(agents)]


def test_release_system_prompt_is_the_releases_text():
    task = f"\n\nTask: {get_task(TASK).prompt}"
    assert system_messages("none", "release") == [f"You are Agent {k}.{task}" for k in (1, 2, 3)]
    assert system_messages("same", "release") == [f"You are Agent {k}. {SAME}{SUFFIX}{task}" for k in (1, 2, 3)]
    different = system_messages("different", "release")
    # the first three profiles (A, B, C) shuffled over the agents, each with the suffix
    roles = [text[: -len(task)] for text in different]
    assert [r[: len(f"You are Agent {k}. ")] for k, r in zip((1, 2, 3), roles)] == \
        [f"You are Agent {k}. " for k in (1, 2, 3)]
    assert all(r.endswith(SUFFIX) for r in roles) and len(set(roles)) == 3
    assert sum(PROFILE_A in r for r in roles) == 1
    assert not any("team of" in t or "brainstorming" in t for t in different)


def test_paper_system_prompt_is_the_generic_identity_without_rules():
    task = f"\n\nTask: {get_task(TASK).prompt}"
    assert system_messages("none", "paper") == [f"You are Agent {k}.{task}" for k in (1, 2, 3)]
    same = system_messages("same", "paper")
    assert all(t.startswith(f"You are Agent {k}. You are a ") for k, t in zip((1, 2, 3), same))
    assert not any("team of" in t or "brainstorming" in t for t in same)


def winners(fidelity: str, sessions: int = 200) -> Counter:
    """Who wrote the final idea of ``none`` sessions in which every rating is tied."""
    authors = Counter()
    for seed in range(sessions):
        def reply(messages):
            system, prompt = messages[0]["content"], messages[-1]["content"]
            if "'Idea N: score'" in prompt:
                return "\n".join(f"Idea {n}: 5" for n in range(1, 4))
            return "an idea written by " + AGENT.match(system).group(1)

        config = make_config("none", agents=3, fidelity=fidelity, ideas_per_agent=1)
        conversation = asyncio.run(run_session(ScriptedBackend(responder=reply), TASK, config,
                                               conversation_id=f"tie-{seed}", seed=seed))
        authors[conversation.final_idea.removeprefix("an idea written by ")] += 1
    return authors


@pytest.mark.parametrize("fidelity", ["release", "paper"])
def test_tied_ratings_fall_to_no_agent_in_particular(fidelity):
    authors = winners(fidelity)
    assert sum(authors.values()) == 200 and set(authors) == {"Agent 1", "Agent 2", "Agent 3"}
    # uniform over the three authors: 200 / 3 expected each
    assert scipy_stats.chisquare([authors[f"Agent {k}"] for k in (1, 2, 3)]).pvalue > 0.01


@pytest.mark.parametrize("option, sent", [(None, 1.0), (0.0, 0.0)])
def test_the_consensus_judge_samples_at_its_own_temperature_and_says_so(option, sent):
    def judging(messages):
        return messages[0]["content"].startswith("You are an impartial judge")

    def reply(messages):
        return "Response 2" if judging(messages) else "an answer"

    backend = ScriptedBackend(responder=reply, model="debater")
    extra = {} if option is None else {"consensus_temperature": option}
    config = make_config("homo_mad", agents=3, rounds=1, temperature=1.0, **extra)
    conversation = asyncio.run(run_session(backend, TASK, config, conversation_id="c", seed=3))
    judge_calls = [h for h in backend.history if judging(h["messages"])]
    assert len(judge_calls) == 1 and judge_calls[0]["temperature"] == sent
    assert all(h["temperature"] == 1.0 for h in backend.history if not judging(h["messages"]))
    assert conversation.meta["consensus_temperature"] == sent
    assert conversation.meta["consensus_judge_model"] == "debater"
