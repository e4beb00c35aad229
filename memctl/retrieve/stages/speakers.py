"""Speakers: a question naming two people who speak in the stored conversations lifts the
lines its first-named person said. A boost, never a filter.

A message whose import or capture knew its author stores it (``messages.speaker``: a
WhatsApp or Slack export, a "Name: text" transcript split by turn); a chat kept as lines
(LoCoMo's turns as memories) opens each line with who said it: ``Tim: ...``,
``[8 May 2023] Tim: ...`` (``memories.lines.SPEAKER``, which the knowledge graph reads
too). A question naming two of them has a doer and one addressed: "What city did Tim
suggest to John?" is answered by a line of Tim's, so a line the first-named person said
x ``SPEAKER_LIFT``. Names joined as one subject ("What have Tim and John both painted?",
"between John and Tim") are both doers: no lift, each one's lines stand as they are.

One name alone lifts nothing: a question naming the wrong person on purpose (LoCoMo's
adversarial) would be led to that person's lines (docs/benchmarks.md, s27-locomo's
"subject lift"); with the other speaker named too, the question says who is whom.
A name counts as a speaker when a candidate line is said by it: no table of people.

Runs beside the intent boost, before the cap, and on possible matches too.
"""

from __future__ import annotations

import re

from memctl.memories.lines import line_speaker
from memctl.retrieve.run import Candidate, Run, rescore
from memctl.store.message_search import message_speaker

STAGE = "speakers"
# Reasoned, within s27-locomo's measured range for a named speaker's lines (x 1.15-1.6):
# a nudge the answer's own words and meaning still outweigh; chosen on LoCoMo's tune half.
SPEAKER_LIFT = 1.3
POSSESSIVE = re.compile(r"['’]s$")


def said_by(candidate: Candidate) -> str | None:
    """Who said a candidate: the speaker its message stores (an import or capture that knew
    the author), else the name its line opens with."""
    return message_speaker(candidate.memory) or line_speaker(candidate.memory.content)


def named_speakers(run: Run, candidates: list[Candidate]) -> list[str]:
    """The query's names, in the order it writes them, that say a line of ``candidates``."""
    speaking = {said_by(c) for c in candidates} - {None}
    names = dict.fromkeys(POSSESSIVE.sub("", name) for name in run.query.names)
    return [name for name in names if name in speaking]


def joined(text: str, first: str, second: str) -> bool:
    """Whether ``text`` joins the two names as one subject: "Tim and John", "John & Tim"."""
    pair = rf"\b{re.escape(first)}(?:['’]s)?\s+(?:and|&)\s+{re.escape(second)}\b"
    return re.search(pair, text) is not None


def speakers(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    named = named_speakers(run, candidates)
    if len(named) < 2 or joined(run.query.text, named[0], named[1]):
        return candidates
    doer, addressed = named[0], named[1]
    why = f"the question asks what {doer} did (to {addressed}): a line {doer} said"

    def factor(candidate: Candidate) -> tuple[float, str]:
        return (SPEAKER_LIFT, why) if said_by(candidate) == doer else (1.0, "")

    return rescore(run, STAGE, candidates, factor)
