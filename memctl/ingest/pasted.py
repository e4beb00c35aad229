"""What the user pasted rather than wrote: a man page, a docs page, a log, a stack trace,
a diff, a config file or a JSON body put into a user turn.

Its sentences are not the user's rules ("Format JSON output using a Go template" from
``gh pr view``'s manual is no preference of theirs), so the rule-based distiller reads no
fact from such a turn; the turn itself is kept verbatim in the session and stays
searchable there. The signal is the text's shape alone, never its words: a long turn
most of whose lines are laid out as a document is (headings, option tables, indented or
fenced code, log and prompt lines, diff hunks, key/value lines, short title lines), where
typed prose is paragraphs of whole sentences.
"""

from __future__ import annotations

from itertools import dropwhile

from memctl.lazy_re import lazy
from memctl.model import Role
from memctl.retrieve.asking import LAID_OUT  # the shapes a line is laid out in

# A typed request is shorter: in the 59 sessions of benchmarks/sessions the longest user
# turn a rule was read from is 1,103 characters (the user's own plan), and the pasted
# ones run from 1,289 (a build log) to 36,692 (a HAR file). Below this, a paste is too
# short to hold many sentences a rule could misread.
MIN_CHARS = 1500
# ... and most of its lines look laid out: typed prose is mostly whole sentences, a
# bulleted list counting as prose (the user's own steps are often written as one).
MIN_LAID_OUT_SHARE = 0.5
# a title line ("Options", "Tool environments", "See also"): short, no sentence's end
TITLE_MAX_CHARS = 40
# ... or it is a docs page of prose under titles (uv's, copied from a browser): three
# sections, each a title or a markdown heading over a paragraph. A typed request has
# none; a typed spec may have a heading or two, mostly over lists.
MIN_SECTIONS = 3
# the line a model reads above a paste (extract.py's and host.py's prompts say what it is)
PASTE_MARK = "[pasted by the user: {lines} lines]"
BULLET = lazy(r"^\s*(?:[-*•]|\d+[.)])\s+\S")
HEADING = lazy(r"^\s{0,3}#{1,6}\s|^[A-Z]")
SENTENCE_END = lazy(r"[.!?:;,。！？)\]\"'`]\s*$")


def laid_out(line: str) -> bool:
    """The line is a document's, not a sentence of prose: ``LAID_OUT``, or a short title
    line (no list marker, no sentence's end)."""
    return bool(LAID_OUT.search(line)) or title(line)


def title(line: str) -> bool:
    """A short line with no sentence's end, not a list's item."""
    text = line.strip()
    return len(text) <= TITLE_MAX_CHARS and not BULLET.match(line) and not SENTENCE_END.search(text)


def sections(lines: list[str]) -> int:
    """How many of the lines are a heading (a markdown one, or a capitalised title line)
    with a paragraph of prose under it."""
    return sum(
        bool(HEADING.match(head)) and title(head) and not laid_out(body)
        for head, body in zip(lines, lines[1:], strict=False)
    )


def looks_pasted(text: str) -> bool:
    """``text`` is long, and most of its non-blank lines are laid out as a document, or
    it is prose in sections, as a docs page is."""
    if len(text) < MIN_CHARS:
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    shaped = sum(map(laid_out, lines)) >= MIN_LAID_OUT_SHARE * len(lines)
    return shaped or sections(lines) >= MIN_SECTIONS


def pasted_by_user(role: Role, text: str) -> bool:
    """A user turn (a session's or a chat export's) that ``looks_pasted``."""
    return role == Role.USER and looks_pasted(text)


def paste_start(text: str) -> int:
    """Where the paste starts in a pasted turn: after the user's first paragraph, or at
    its first laid-out line if sooner ("From now on we deploy with `make ship`. Here is
    the error I get:" over a traceback). What follows is all the paste's: its end is no
    clear line (a pytest run ends in summary lines, a docs page in paragraphs, both shaped
    as prose), nor is a second paragraph above its first laid-out line (a docs page's
    first paragraph sits over its first title)."""
    offset = len(text) - len(text.lstrip())
    for line in text[offset:].splitlines(keepends=True):
        if not line.strip() or laid_out(line):
            break
        offset += len(line)
    return offset


def own_words(text: str) -> str:
    """What the user wrote of a pasted turn: the words above ``paste_start``."""
    return text[: paste_start(text)].strip()


def marked(text: str) -> str:
    """A pasted turn as a model reads it: the user's words, then the paste under a line
    naming it, so the model knows where what they wrote ends."""
    start = paste_start(text)
    paste = list(dropwhile(lambda line: not line.strip(), text[start:].rstrip().splitlines()))
    own = text[:start].strip()
    return "\n".join([*([own] if own else []), PASTE_MARK.format(lines=len(paste)), *paste])
