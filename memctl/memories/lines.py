"""Who said a line of a chat kept as text: ``Tim: ...``, ``[8 May 2023] Tim: ...``.

An imported transcript, a chat export's messages and LoCoMo's turns open each line with its
speaker. The knowledge graph (ingest.entities) reads the speaker of a line for its triples,
recall (retrieve.stages.speakers) for a question naming who said what.
"""

from __future__ import annotations

from memctl.lazy_re import lazy
from memctl.memories.privacy import safe_line

# A speaker's name as stored (messages.speaker) is kept to this many characters: a name, not
# a paragraph (a WhatsApp notice misread as "Name: text" stays short).
SPEAKER_CHARS = 80

# A name of one or two capitalised words (a title before it), after an optional bracketed
# date, then a colon and a space.
SPEAKER = lazy(
    r"^(?:\[[^\]]{1,40}\]\s*)?"
    r"((?:(?:Dr|Mr|Mrs|Ms|Prof)\. )?[A-Z][\w'-]{1,30}(?: [A-Z][\w'-]{1,30})?):\s"
)


def line_speaker(text: str) -> str | None:
    """The name a line opens with as its speaker, or None; labels ("Note: ...") included:
    a caller that needs a person filters them (ingest.entities.speaker)."""
    match = SPEAKER.match(text)
    return match.group(1) if match else None


def kept_speaker(name: str) -> str:
    """A speaker's name as a message stores it: one line, privacy applied, at most
    ``SPEAKER_CHARS`` characters; '' for none."""
    return safe_line(name, SPEAKER_CHARS) if name else ""


def said_line(speaker: str, text: str) -> str:
    """A chat message as it is stored and distilled: ``Tim: text`` when its speaker is
    named. The name stays in the text so that the words and the meaning search it: a
    question names the person ("What did Tim suggest?"), and LoCoMo's turns stored without
    their names lost 18 points of R@10 (docs/benchmarks.md, s38-speaker)."""
    return f"{speaker}: {text}" if speaker else text


def unsaid(speaker: str, content: str) -> str:
    """A stored message's text without the ``Name: `` its speaker opens it with (a page
    that names the speaker above the text says it once)."""
    return content.removeprefix(f"{speaker}: ") if speaker else content
