"""A session message that only asks: the question a user asked before, never its answer.

Asked again, a question finds itself: "which reverse proxy sits in front of the app?"
holds every word of a session's "which reverse proxy sits in front of the app?" and
none of the memory that answers it ("we use Caddy in front of the app"), so the question
led, clear, and the answer came second. A user's message whose every sentence asks (it
ends with "?", or opens with a question word and an auxiliary verb: "how do we deploy
the billing service") states nothing: it is second-hand evidence, like a message of tool
notes (fuse.second_hand), a possible match at most, and weighs TOOL_NOTES_FACTOR of its
score. It still points at the session where the answer was given, and the session's
answer, when it holds the query's words or meaning, is found on its own.

Only a user's message: an assistant's question ("Shall I run the tests?") closes a
reply that states things. A message with one statement among its questions ("We use
nginx today. Should we move to Caddy?") is not one.
"""

from __future__ import annotations

import re

from memctl.lazy_re import lazy
from memctl.model import Role
from memctl.retrieve.fit import sentences

# A sentence without "?" that asks: a question word, then an auxiliary verb ("how do we",
# "what's", "where are"); "When you deploy, use helm" opens with a question word and states.
ASKING = lazy(
    r"(?:what|which|who|whom|whose|when|where|why|how)(?:'s|'re|\s+(?:do|does|did|is|are|"
    r"was|were|can|could|should|would|will|shall|has|have|had|may|might|must))\b",
    re.I,
)


def asks(sentence: str) -> bool:
    """Whether one sentence is a question, not a statement."""
    text = sentence.strip()
    return text.endswith("?") or ASKING.match(text) is not None


def only_asks(role: str, text: str) -> bool:
    """Whether a session message of ``role`` is a user's question and nothing else: every
    sentence of its text asks."""
    text = text.strip()
    # a message holding no "?" nor opening with a question asks nothing (most: no split)
    if role != Role.USER or ("?" not in text and ASKING.match(text) is None):
        return False
    # line by line: a pasted log or code stops at its first line, which asks nothing
    return all(asks(part) for line in text.splitlines() for part in sentences(line) if part.strip())


ECHO_WHY = "a user's question only: asked again, it answers nothing"
TOLD_BACK_WHY = "memctl's own answer told back: no new evidence"


def echo_why(asks: bool, told_back: bool = False) -> str:
    """What ``--explain`` adds to the label of a user's question only (``asks``) or of a
    reply telling memctl's answer back (``told_back``); "" for any other message."""
    return f", {ECHO_WHY}" if asks else f", {TOLD_BACK_WHY}" if told_back else ""
