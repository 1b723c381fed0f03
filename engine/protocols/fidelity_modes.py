"""Paper A's structures as the paper describes them, or as the authors' code ran them.

Paper A's text (appendix A.1.2) and the authors' generation code (GitHub
``pitehu/llm_multiagent_creativity``, ``generation/discussion_modes.py``,
``data_strategies.py``, ``message_strategies.py``, ``conversation.py``) disagree on several
points. Every paper-A structure takes ``fidelity``:

* ``paper`` (the default): what the text says, read as a careful reader would;
* ``release``: what the release's code does, rewritten in our own words and code.

What ``release`` changes (each protocol's docstring cites the release function it follows):

1. instructed: an action counts only on a line that starts with ``Agree:`` / ``Modify:`` /
   ``Replace:`` (or the bold ``**Agree:**``), exactly as written (``paper`` also reads a line
   start, but ignores case and markdown around the keyword; ``engine.protocols.actions``);
2. instructed: an unreadable reply, or a Replace naming no pool idea while the pool has one,
   is asked again up to 50 times, then the session fails (``paper``: 3 times, then the
   turn stands as unreadable, counted); without the initial phase the release does not ask
   again and reads an unreadable reply as Agree (counted);
3. instructed: after a Modify or Replace the pool is refilled from the next-ranked ideas;
   a Replace must copy a pool idea exactly while the pool is not empty;
4. open and instructed turns see the last N responses (N = team size), not the whole
   discussion; instructed also sees the idea as it stood before them and the replaced ideas;
5. iterative: the proposer sees every idea generated so far and then alone picks the best
   idea (verbatim) among its proposal, the current idea and the last N + 1 current ideas;
6. progressive: the divergent phase runs agent by agent, each shown every ranked initial
   idea plus its teammates' new ones; the final vote also includes the initial top 5;
7. open: the last speaker writes the synthesis (not a random agent), and an initial phase
   (if any) is not shown to the discussion;
8. hand-raising: drafts are bid on 1-10 with one decimal (first number read, clamped to
   1-10, none = 0), every agent that did not just agree bids each turn, and the discussion
   ends when the chosen speaker answers "Agree: No changes needed" (an Agree is booked to
   the last bidder, as the release's bookkeeping does); Agree is offered from turn
   ``min_rounds`` and counted whenever it is said.

``docs/reference/fidelity.md`` lists these and every remaining difference between the two modes.
"""

from __future__ import annotations

FIDELITIES = ("paper", "release")
DEFAULT_FIDELITY = "paper"
# generation/discussion_modes.py, GenericDiscussionMode.generate_with_retries(max_retries=50)
RELEASE_REPLY_ATTEMPTS = 50
PAPER_REPLY_ATTEMPTS = 3


def default_reply_attempts(fidelity: str) -> int:
    """Asks per instructed turn before the reply counts as unreadable."""
    return RELEASE_REPLY_ATTEMPTS if fidelity == "release" else PAPER_REPLY_ATTEMPTS
