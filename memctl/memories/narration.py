"""What an assistant says that says nothing: the filler that opens an answer ("Perfect!")
and the narration of its next step ("Now let me run the tests:").

Distillation cuts them from a report before condensing it (ingest/tools.py); recall weighs
a session message that holds nothing else as it weighs one of tool notes only
(retrieve/run.py): its words are the question's, and it answers nothing.
"""

from __future__ import annotations

import re

from memctl.lazy_re import lazy

# sentences that only open or narrate an answer ("Perfect!", "Now I have a full picture.")
# An interjection only when punctuation or the end closes it: "Good catch!" is filler as a
# whole, "Good" alone in "Good catch! ..." is not (it left "catch! ...").
FILLER = lazy(
    r"^\s*(?:(?:perfect|great|excellent|awesome|done|all done|good|okay|ok|sure|got it|"
    r"absolutely|exactly|(?:you're |you are )?(?:absolutely )?right|(?:you're|you are) welcome|"
    r"(?:good|great|nice|excellent) (?:catch|question|point|find|idea|call))"
    r"(?:\s*[!.,:\u2014\u2013]+\s*|\s*$))+",
    re.I,
)
NARRATION = lazy(
    r"^\s*(?:(?:now,? )?I (?:now )?have [^.!\n]{0,40}?(?:understanding|picture|view|"
    r"overview|information|idea|context)\b|(?:(?:now|so|based on [^,.\n]{0,80}),? )?let me\b|"
    r"I'll now\b|agentId:)"
    r"[^\n]*?(?:[.!:](?=\s|$)|\n|$)\s*",
    re.I,
)

# what is left, when it is one line ending in a colon, only announces what comes next (a
# tool call): "Let's also run the linter check:", "Now the CSS, for the native elements:"
ANNOUNCEMENT = lazy(r"^\s*[^\n]{0,200}:\s*$")


def without_filler(text: str) -> str:
    """``text`` without its opening filler and narration ("Perfect! Now I have..."); ''
    when all that is left announces the next step."""
    before = None
    while before != text:
        before = text
        text = NARRATION.sub("", FILLER.sub("", text))
    return ANNOUNCEMENT.sub("", text).strip()
