"""How a turn is cut into the sentences the rules try, and which of them are no fact
whatever they say: questions, sentences about a bare "it", the assistant's narration,
typed command lines, sentences that introduce a list; and the instruction to keep a fact
a sentence may open with."""

from __future__ import annotations

import re

from memctl.lazy_re import lazy

MIN_CHARS = 4
MAX_CHARS = 500
# A sentence ends at .!? before whitespace and a capital, quote, bracket or a letter of
# another script (Korean puts ". " between sentences; "e.g. x" and "config.yaml" stay
# whole), at CJK end punctuation, and at line breaks.
SENTENCE_END = lazy(
    r"(?<=[.!?])\s+(?=[A-Z\"'(\[`\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af])|(?<=[。！？；])|\n+"
)
# a sentence that asserts a rule even when it ends in a question mark ("we should run it on
# every push?", "注释用中文，提交信息用英文，可以吗？")
ASSERTIVE = lazy(
    r"\bI think we should\b|\bwe (?:must|should always)\b|必须|不要|应该|统一|一律|반드시|必ず"
)
# question-like sentences are asks, not facts
QUESTION = lazy(
    r"[?？]\s*$|^\W*(?:what|why|how|where|when|which|who|can|could|would|"
    r"should|is|are|do|does)\b.*[?？]",
    re.I,
)
# a sentence whose subject or object is a bare pronoun ("I plan to enhance it with more
# features", "I like it, but not as part of the current plan": fresh4's polychrome kept
# that as an instruction, s32-distill): out of its conversation nobody knows what "it"
# was, so it is no memory ("I like this approach" names it)
DANGLING = lazy(
    r"^\W*(?:it|this|that|they|these|those)\b(?!\s+(?:project|repo|app|service|file))|"
    r"\b(?:to|will|'ll|should|can|must)\s+\w+\s+(?:it|them)\b|"
    r"\bI(?: really| much| do)? (?:like|love|hate|dislike|prefer)\s+(?:it|this|that|them)\b"
    r"(?!\s+[a-z])",
    re.I,
)
BULLET = lazy(r"^\s*(?:[-*•]|\d+[.)])\s+")
# The instruction to the assistant a fact may open with ("Remember that the bucket is ...",
# "FYI: ...", "Keep in mind that ..."): the stored fact is what follows. "Remember to run
# X" keeps its words: without them it would be an order, not a fact.
LEAD_IN = lazy(
    r"^\W*(?:please\s+)?(?:(?:remember|note|keep in mind|bear in mind|don't forget|do not forget|"
    r"be aware|just so you know)\s+that\b|fyi\b|just so you know\b|for your information\b|"
    r"(?:please\s+)?(?:note|remember|note (?:for later|to self)|for the record)\s*:)[\s,:-]*",
    re.I,
)
# Asked in so many words to keep it ("Remember: the release train leaves every second
# Thursday", "Note for later: staging listens on port 5433"): the user's own choice of a
# fact, kept when no pattern knows its words (a walk's two sessions lost theirs), as
# ``classify`` files a text no pattern knows: a fact about the project. Not a bare
# "Note:", nor one after a comment's or a list's marks: code and docs pasted in a user
# turn are full of those (102 in the real transcripts, none a request)
ASKED_SOURCE = r"^(?:please\s+)?(?:remember|note (?:for later|to self)|for the record)\s*:"
ASKED_TO_KEEP = lazy(ASKED_SOURCE, re.I)
# assistant sentences that are only a tool note, or narrate the next step
NARRATION = lazy(
    r"^\s*(?:\[tool\b|let me\b|now (?:let me|I'll)\b|I'll (?:start|now|first)\b)", re.I
)
# A command line typed as a line of its own, after a prompt sign or a label ("$ make ship",
# "RUN: ~/.venv/bin/memctl recall --json ... | python3 top.py"): a command to run, no fact
# (the s29-walk's prompt lines were kept as project facts: "python3" read as a version)
TYPED_COMMAND = lazy(
    r"^\s*(?:[$%]|[A-Z]{2,}:)\s*(?:[~./]\S*|\w[\w.-]*/\S*|[\w.-]+(?:\s+[\w.:-]+)?\s+(?:-|\||&&))"
)
# A sentence that ends in a colon introduces what follows it (a list, a paste, a code
# block): cut from it, it is half a sentence ("The refactoring broke some functionality
# because:"; 3 of the 121 facts of the studied sessions, s30-distill)
INTRODUCES = lazy(r"[:：]\s*$")


# What a turn opens with to acknowledge the answer before it, its punctuation closing it,
# and the "but" or "so" that leads on ("great, but keep in mind that the new file …",
# "ok, so …", "Thanks! …"): a reply to the conversation, no part of the fact that follows
# (2 of the dev set's facts opened so, s32-distill). "Good code is tested" opens with none.
ACKNOWLEDGED = lazy(
    r"^\W*(?:great|good|ok(?:ay)?|perfect|nice|cool|thanks|thank you|yes|yeah|yup|sure|"
    r"alright|awesome|fine|got it)\s*[,.!;:\u2014\u2013-]+\s*(?:(?:but|and|so|then|now)\b,?\s*)?",
    re.I,
)


def without_lead_in(sentence: str) -> str:
    """``sentence`` without a leading acknowledgement (``ACKNOWLEDGED``) and instruction to
    the assistant (``LEAD_IN``), its first letter raised; the sentence as it is when
    nothing (or nothing after them) is left."""
    rest = LEAD_IN.sub("", ACKNOWLEDGED.sub("", sentence, count=1), count=1)
    if rest == sentence or len(rest) < MIN_CHARS:
        return sentence
    return rest[0].upper() + rest[1:]


def asked_to_keep(sentence: str, stated: str) -> bool:
    """The user asked to keep this sentence (``ASKED_TO_KEEP``), and what follows the ask
    says something of its own (not "it" or "this")."""
    return (
        stated != sentence and bool(ASKED_TO_KEEP.match(sentence)) and not DANGLING.search(stated)
    )


def sentences(text: str) -> list[str]:
    """The sentences of a text, trimmed, in order."""
    return [s.strip() for s in SENTENCE_END.split(text) if s and s.strip()]


# A sentence typed in lower case ends too: at .!? after a word of three letters or more that
# is no abbreviation, before whitespace and a lower-case letter ("fix merge conflicts. don't
# add regressions", "ouch. we _should_ be running node 22.", "… to this project. we should
# use …": each was kept as one fact with the request or the exclamation before it, fresh4
# and fresh7). "e.g. x", "vs. y", "etc. and" and "approx. 5" stay whole, and so does a
# sentence an example of it follows ("no just add entire name. so for example for session
# handoff it should print Entire Session Handoff: etc....", fresh8's entireskills: cut, the
# correction kept "no just add entire name." and lost what it named).
LOWER_CASE_END = lazy(
    r"(?<=[^\W\d_]{3}[.!?])(?<!\betc\.)(?<!\bincl\.)(?<!\bapprox\.)(?<!\besp\.)"
    r"(?<!\bresp\.)(?<!\bviz\.)(?<!\bfig\.)\s+(?=[a-z])"
    r"(?!(?:so,? )?(?:for (?:example|instance)|e\.g\.|i\.e\.|like)\b)"
)


def said_sentences(text: str) -> list[str]:
    """The sentences the rules try: ``sentences``, each cut again where a sentence typed in
    lower case ends (``LOWER_CASE_END``). Recall keeps ``sentences``: a lower-case turn it
    shows or matches whole is not cut."""
    return [part.strip() for s in sentences(text) for part in LOWER_CASE_END.split(s) if part]
