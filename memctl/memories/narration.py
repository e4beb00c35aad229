"""What an assistant says that says nothing: the filler that opens an answer ("Perfect!")
and the narration of its next step ("Now let me run the tests:").

Distillation cuts them from a report before condensing it (ingest/tools.py), and every
next step from a session's closing answer (``without_next_steps``, ingest/digest.py);
recall weighs a session message that holds nothing else as it weighs one of tool notes
only (retrieve/run.py): its words are the question's, and it answers nothing.
"""

from __future__ import annotations

import re

from memctl.lazy_re import lazy

# sentences that only open or narrate an answer ("Perfect!", "Now I have a full picture.")
# An interjection only when punctuation or the end closes it: "Good catch!" is filler as a
# whole, "Good" alone in "Good catch! ..." is not (it left "catch! ...").
FILLER = lazy(
    r"^\s*(?:(?:perfect|great|excellent|awesome|done|all done|good|okay|ok|sure|got it|"
    r"absolutely|exactly|(?:you['’]re |you are )?(?:absolutely )?right|"
    r"(?:you['’]re|you are) welcome|"
    r"(?:good|great|nice|excellent) (?:catch|question|point|find|idea|call))"
    r"(?:\s*[!.,:\u2014\u2013]+\s*|\s*$))+",
    re.I,
)
NARRATION = lazy(
    r"^\s*(?:(?:now,? )?I (?:now )?have [^.!\n]{0,40}?(?:understanding|picture|view|"
    r"overview|information|idea|context)\b|(?:(?:now|so|based on [^,.\n]{0,80}),? )?let me\b|"
    r"I['’]ll now\b|agentId:)"
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


# A sentence of a closing answer that only says what comes next ("Now I need to update the
# player color mapping.", "Let me check the MCP servers status.") or offers more help ("Let
# me know if you need anything else."): when a session ends on it, the work it announces
# never shows in the transcript, so as the session's outcome it misleads (4 of the 21 dev
# digests ended so, s32-distill). A promise kept from now on ("I'll always ...") stays.
# Codex writes a curly apostrophe ("I’ll read X first"): both are matched.
NEXT_STEP = lazy(
    r"^\W*(?:(?:now|next|then|first|so|ok(?:ay)?|and),? )?(?:let me\b|let['’]s\b|"
    r"I(?:['’]ll| will| need to|['’]m going to| am going to) (?!always\b|never\b|no longer\b)|"
    r"feel free to\b|hope this helps\b)",
    re.I,
)
# a connective left alone once the steps around it go ("... function: Then: Now let me ...")
CONNECTIVE = lazy(r"^\W*(?:then|next|also|and|finally)\W*$", re.I)
# sentences of one line of an answer: after .!? or a colon, before a capital
SENTENCE_BREAK = lazy(r"(?<=[.!?:])\s+(?=[A-Z\"'`])")


def without_next_steps(text: str) -> str:
    """``text`` without its sentences that announce a next step or offer more help
    (``NEXT_STEP``), line by line (a list keeps its lines); '' when nothing else is said."""
    lines = []
    for line in text.splitlines():
        said = [s for s in SENTENCE_BREAK.split(line) if not NEXT_STEP.match(s)]
        kept = " ".join(s for s in said if not CONNECTIVE.match(s)).rstrip()
        if kept or not line.strip():
            lines.append(kept)
    return "\n".join(lines).strip()
