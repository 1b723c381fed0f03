"""Every prompt the engine sends, in one place, written in our own words.

Paper A (Methods; appendix A.1): idea generation (interactive or nominal), 1-10 ratings,
open discussion with a final synthesis, instructed Agree / Modify / Replace turns, the
1-7 hand-raising question, iterative proposals, and progressive divergent / convergent
phases. Paper B (sections 3 and 5): initial answers, debate rounds over peer responses,
personas (Hetero-MAD), cognitive lenses (Creative-MAD), Self-Refine and the judge-based
consensus. The LLM judge's questions (novelty / usefulness, rubric, pairwise) live here too.
Each builder returns a list of chat messages. These are the ``fidelity="paper"`` prompts of
paper A's structures; ``engine.prompts.release`` holds those of ``fidelity="release"``.
"""

from __future__ import annotations

from typing import Sequence

Messages = list[dict[str, str]]

# -- who the agents are ---------------------------------------------------------------------
# Short participant-style profiles (paper A, "Persona Manipulation"): same = everyone gets the
# first; different = each agent its own. Also the distinct roles of Hetero-MAD (paper B).
PERSONAS = (
    "You are a 29-year-old product designer who sketches many rough options quickly and likes "
    "borrowing ideas from games and toys.",
    "You are a 41-year-old public-health researcher who trusts evidence, thinks about how people "
    "actually behave, and asks who is left out.",
    "You are a 35-year-old small-business owner who cares about cost, simple logistics and what can "
    "be launched next month.",
    "You are a 24-year-old engineering graduate who enjoys strange technical hacks and combining "
    "unrelated technologies.",
    "You are a 52-year-old community organiser who thinks in terms of neighbourhoods, rituals and "
    "getting people to join in.",
    "You are a 31-year-old novelist who looks at problems through stories, metaphors and emotions.",
)

# Creative-MAD's cognitive lenses (paper B, section 5, Cognitive Lens Assignment): a stable way
# of processing information that the agent keeps in every round.
LENSES = {
    "logical": "Think through the LOGICAL lens: reason step by step from causes to effects, "
               "check that each part of the idea follows from the last, and build on clear mechanisms.",
    "emotional": "Think through the EMOTIONAL lens: start from how people feel, what they fear, enjoy "
                 "or hope for, and shape ideas that move people.",
    "critical": "Think through the CRITICAL lens: look for weaknesses, hidden assumptions and failure "
                "modes, and propose ideas that survive them.",
    "analogical": "Think through the ANALOGICAL lens: borrow structures from distant fields (nature, "
                  "history, games, other industries) and transfer them to this problem.",
    "practical": "Think through the PRACTICAL lens: focus on what can be built, paid for and adopted "
                 "by real people with real constraints.",
}
LENS_ORDER = ("logical", "emotional", "critical", "analogical", "practical")


def _system(text: str) -> dict[str, str]:
    return {"role": "system", "content": text}


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def _numbered(ideas: Sequence[str], label: str = "Idea") -> str:
    return "\n".join(f"{label} {i + 1}: {idea}" for i, idea in enumerate(ideas))


def agent_role(index: int, persona: str | None = None) -> str:
    """Who a paper-A agent is in ``fidelity="paper"`` mode: paper A's generic agent identity
    ("You are Agent 1", Persona Manipulation) followed by the persona, if any; no team size and
    no brainstorming rules (the text names Osborn's principles as the conditions' design basis,
    appendix A.1.1, not as a prompt; open discussion has none "beyond the task description")."""
    who = f"You are Agent {index}."
    return who if persona is None else f"{who} {persona}"


def agent_system(role: str, task_prompt: str) -> str:
    """The system message of a paper-A agent: its role, then the task (the release sends the
    role and the task as two system messages, ``generation/message_strategies.py``; one
    message here, the role text first and unchanged)."""
    return f"{role}\n\nTask: {task_prompt}"


# -- paper A: initial generation and rating -------------------------------------------------
def generate_ideas(system: str, n_ideas: int, words: str, previous: Sequence[str] = ()) -> Messages:
    """Ask for ``n_ideas`` ideas, one per line; in interactive mode the earlier ideas are shown."""
    ask = (f"Write {n_ideas} different ideas for the task. Each idea is one paragraph of about "
           f"{words} words on a single line. Put each idea on its own line, no numbering, no "
           f"headings, no extra commentary.")
    if previous:
        ask = (f"Ideas already proposed by your teammates:\n{_numbered(previous)}\n\n"
               f"{ask} Your ideas must differ from the ones above.")
    return [_system(system), _user(ask)]


def rate_ideas(system: str, ideas: Sequence[str], criterion: str = "creativity") -> Messages:
    """Rate every idea 1-10 on creativity (novelty and usefulness together) or on novelty only."""
    meaning = {
        "creativity": "creativity, which means both novelty (how original or surprising it is) and "
                      "usefulness (how practical and valuable it is)",
        "novelty": "novelty only (how original, surprising and unlike the usual solutions it is), "
                   "ignoring practicality",
    }[criterion]
    return [_system(system), _user(
        f"Rate each idea below on {meaning}, from 1 (very low) to 10 (exceptional). Spread your "
        f"scores and avoid ties where you can.\n\n{_numbered(ideas)}\n\n"
        f"Answer with one line per idea in the form 'Idea N: score' and nothing else.")]


# -- paper A: open discussion -----------------------------------------------------------------
def open_turn(system: str, transcript: str, turn: int, turn_limit: int,
              start_idea: str | None = None) -> Messages:
    start = f"Starting idea chosen by the team:\n{start_idea}\n\n" if start_idea else ""
    history = transcript or "(nobody has spoken yet)"
    return [_system(system), _user(
        f"{start}Team discussion so far:\n{history}\n\nThis is message {turn} of at most "
        f"{turn_limit}. Add your next contribution to the brainstorm in a few sentences: propose, "
        f"extend or combine ideas.")]


def open_synthesis(system: str, transcript: str, words: str) -> Messages:
    return [_system(system), _user(
        f"Team discussion:\n{transcript}\n\nThe discussion is over. Combine it into one single, "
        f"well-defined final idea of about {words} words, stated as the team's answer to the task. "
        f"Begin with 'FINAL IDEA:'.")]


# -- paper A: instructed discussion -----------------------------------------------------------
def instructed_turn(system: str, current: str, transcript: str, pool: Sequence[str], turn: int,
                    turn_limit: int, agree_allowed: bool, words: str) -> Messages:
    actions = []
    if agree_allowed:
        actions.append("Agree: if the current idea is already excellent and you cannot make it more "
                       "creative, answer exactly 'Agree: No changes needed'.")
    actions.append("Modify: if the idea is promising but needs a major improvement (not polishing), "
                   "answer 'Modify: <the full revised idea> - Reason: <why>'.")
    if pool:
        actions.append("Replace: if the idea is weak, swap it for one of the pool ideas listed below, "
                       "answer 'Replace: <the full replacement idea> - Reason: <why>'.")
    else:
        actions.append("Replace: if the idea is weak, write a completely new idea, answer "
                       "'Replace: <the full new idea> - Reason: <why>'.")
    pool_text = f"\n\nReplacement pool:\n{_numbered(pool)}" if pool else ""
    rule = "" if agree_allowed else "\nAgreeing is not allowed yet: modify or replace."
    return [_system(system), _user(
        f"Current idea:\n{current}{pool_text}\n\nDiscussion so far:\n{transcript or '(none yet)'}\n\n"
        f"Turn {turn} of at most {turn_limit}. The team wants the single most creative idea. "
        f"Choose one action:\n- " + "\n- ".join(actions) + rule +
        f"\nKeep any idea to about {words} words.")]


def hand_raise(system: str, current: str, draft: str) -> Messages:
    """Paper A's hand-raising: how much would speaking now add, 1-7."""
    return [_system(system), _user(
        f"Current idea:\n{current}\n\nWhat you would say next:\n{draft}\n\nOn a scale from 1 (adds "
        f"nothing) to 7 (adds a great deal), how much value would your contribution add to the "
        f"team's creativity right now? Answer with a single number.")]


# -- paper A: iterative refinement ------------------------------------------------------------
def iterative_propose(system: str, current: str | None, recent: Sequence[str], words: str) -> Messages:
    if current is None:
        return [_system(system), _user(f"Propose one creative idea for the task in about {words} "
                                       f"words. Answer with the idea only.")]
    recent_text = f"\nRecently considered ideas:\n{_numbered(recent)}\n" if recent else ""
    return [_system(system), _user(
        f"Current best idea:\n{current}\n{recent_text}\nPropose ONE new idea that would be more "
        f"creative than all of these, in about {words} words. Answer with the idea only.")]


# -- paper A: progressive improvement ---------------------------------------------------------
def progressive_diverge(system: str, top_ideas: Sequence[str], n_ideas: int, words: str) -> Messages:
    return [_system(system), _user(
        f"Top ideas so far:\n{_numbered(top_ideas)}\n\nUse them only as a springboard: write "
        f"{n_ideas} radically new ideas that change the approach at its root. Put novelty before "
        f"usefulness and do not just combine the ideas above. Each idea about {words} words on its "
        f"own line, no numbering, nothing else.")]


def progressive_refine(system: str, ideas: Sequence[str], words: str) -> Messages:
    return [_system(system), _user(
        f"These ideas were chosen for their novelty:\n{_numbered(ideas)}\n\nImprove each one so it "
        f"becomes more useful and workable while keeping what makes it original. Return the "
        f"{len(ideas)} improved ideas, one per line, each about {words} words, no numbering, "
        f"nothing else.")]


# -- paper B: debate ----------------------------------------------------------------------------
def debate_system(task_prompt: str, persona: str | None = None, lens: str | None = None) -> str:
    parts = []
    if persona:
        parts.append(persona)
    if lens:
        parts.append(LENSES[lens] + " Keep this lens in every round.")
    parts.append(f"Task: {task_prompt}")
    return "\n".join(parts)


def debate_initial(system: str, words: str) -> Messages:
    return [_system(system), _user(f"Give your answer to the task: one creative idea in about "
                                   f"{words} words.")]


def debate_round(system: str, own: str, peers: Sequence[str], words: str) -> Messages:
    peers_text = "\n\n".join(f"Response from another agent:\n{p}" for p in peers) or "(none)"
    return [_system(system), _user(
        f"Your previous answer:\n{own}\n\n{peers_text}\n\nUsing these responses as extra input, "
        f"write your updated answer to the task: one creative idea in about {words} words.")]


def self_refine_feedback(system: str, answer: str) -> Messages:
    return [_system(system), _user(f"Here is an answer to the task:\n{answer}\n\nGive brief, "
                                   f"concrete feedback on how to make it more novel and more useful.")]


def self_refine_revise(system: str, answer: str, feedback: str, words: str) -> Messages:
    return [_system(system), _user(
        f"Answer:\n{answer}\n\nFeedback:\n{feedback}\n\nRewrite the answer using the feedback: one "
        f"creative idea in about {words} words.")]


def consensus_select(task_prompt: str, responses: Sequence[str]) -> Messages:
    """Paper B's judge-based consensus: pick the best of the agents' final responses."""
    return [_system("You are an impartial judge of creative ideas."), _user(
        f"Task: {task_prompt}\n\n{_numbered(responses, 'Response')}\n\nWhich response is the best "
        f"answer, being both novel and useful? Answer only 'Response N'.")]


def consensus_vote(system: str, responses: Sequence[str]) -> Messages:
    """Consensus by vote: an agent names the best of the final responses (its own included)."""
    return [_system(system), _user(
        f"{_numbered(responses, 'Response')}\n\nThe debate is over. Which response is the best "
        f"answer to the task, being both novel and useful? Answer only 'Response N'.")]


# -- the LLM judge -------------------------------------------------------------------------------
def judge_novelty_usefulness(task_prompt: str, idea: str) -> Messages:
    """Paper A's two scales (Methods, Creativity Evaluation), 1-10, irrelevant ideas get 0."""
    return [_system("You are an expert judge of creative problem solving."), _user(
        f"Task: {task_prompt}\n\nIdea: {idea}\n\nRate the idea on two scales from 1 to 10.\n"
        f"Novelty: how original it is compared with the solutions people usually suggest.\n"
        f"Usefulness: how practical, feasible and effective it would be.\nIf the idea does not "
        f"address the task at all, give 0 on both.\nAnswer exactly in two lines:\n"
        f"Novelty: <number>\nUsefulness: <number>")]


def judge_batch(task_prompt: str, ideas: Sequence[str]) -> Messages:
    """Paper A's raters (Methods, Creativity Evaluation; Consensual Assessment Technique): the
    ideas of one task seen together and rated relative to each other, 1-10, 0 if irrelevant."""
    return [_system("You are an expert judge of creative problem solving."), _user(
        f"Task: {task_prompt}\n\nBelow are {len(ideas)} ideas proposed for this task. Read all of "
        f"them first, then rate each one relative to the others on two scales from 1 to 10.\n"
        f"Novelty: how original it is compared with the other ideas and the usual solutions.\n"
        f"Usefulness: how practical, feasible and effective it would be.\nUse the whole range "
        f"across the set. If an idea does not address the task at all, give it 0 on both.\n\n"
        f"{_numbered(ideas)}\n\nAnswer with one line per idea, in the form\n"
        f"Idea N: Novelty <number>, Usefulness <number>\nand nothing else.")]


def paraphrase_idea(idea: str, max_words: int = 100) -> Messages:
    """Paper A's harmonisation before rating (Methods, "standardization"; appendix A.2): the same
    plain, neutral style for every idea (third person, active voice, everyday words, about
    100 words), its core mechanism kept, stylistic cues of its origin removed. Our wording of
    the rules the paper lists and the release's ``preprocessing/azure_paraphrase_service.py``
    applies (final concept of "evolve X into Y", the main idea under section headers)."""
    return [_system(
        "You rewrite ideas in one plain, neutral style so that readers judge their substance, not "
        "how they were written. Keep the core meaning and mechanism; add nothing and give no "
        "opinion. Write in the third person only (never we, I, you, us, our), in the active voice, "
        "with everyday words instead of jargon. Drop brand names, catchy names in quotes and "
        "decorative phrases. If the text describes turning X into Y, describe only Y; if it has a "
        "final or main idea under a heading, use only that; if it mixes several ideas without a "
        "main one, treat them as one idea. Leave out brainstorming remarks. Output only the "
        "rewritten idea, with no introduction."), _user(
        f"Rewrite this idea in at most {max_words} words, in simple language anyone can "
        f"understand:\n{idea}")]


RUBRIC = ("originality (surprising, not the obvious answer)", "relevance to the task",
          "usefulness and feasibility", "clarity and specificity", "depth of the mechanism")


def judge_rubric(task_prompt: str, idea: str, criteria: Sequence[str] = RUBRIC) -> Messages:
    """Paper B's rubric-based absolute score, 1-10 (``criteria``: a benchmark's own rubric)."""
    criteria = "\n".join(f"- {c}" for c in criteria)
    return [_system("You are a strict, impartial judge of creative writing and ideas."), _user(
        f"Task: {task_prompt}\n\nResponse: {idea}\n\nScore the response from 1 to 10 considering:\n"
        f"{criteria}\nAnswer with 'Score: <number>' and nothing else.")]


def judge_item_score(prompt: str, response: str, criterion: str, description: str, low: int, high: int) -> Messages:
    """One score per item on the human raters' scale, for checking a judge against people
    (``engine.judging.item_scores``): the criterion and its meaning, from ``low`` to ``high``."""
    return [_system("You are an expert judge of creative thinking."), _user(
        f"Prompt: {prompt}\n\nResponse: {response}\n\nRate the {criterion} of the response, that is "
        f"{description}, on a whole-number scale from {low} (lowest) to {high} (highest).\n"
        f"Answer with 'Score: <number>' and nothing else.")]


def judge_pairwise(task_prompt: str, first: str, second: str) -> Messages:
    """Paper B's pairwise comparison (called twice, with the positions swapped)."""
    return [_system("You are a strict, impartial judge of creative writing and ideas."), _user(
        f"Task: {task_prompt}\n\nResponse A: {first}\n\nResponse B: {second}\n\nWhich response is "
        f"better overall, being novel, useful and clear? Answer 'A', 'B' or 'tie' only.")]
