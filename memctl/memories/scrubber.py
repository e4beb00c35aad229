"""Scrubbing what arrives in parts: the messages of one conversation, or a document read
in pieces (``memories.privacy`` scrubs one text). Each part is scrubbed alone, and the
seam with the next is searched too, so a secret cut in two is found on both sides; a
block (``<private>``, injected context, a private key) left open in one part hides every
later part up to its close.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

from memctl.lazy_re import lazy
from memctl.memories.privacy import (
    MARK,
    PEM_BEGIN,
    VALUE_END,
    Cut,
    Hit,
    Redactions,
    block_name,
    closing_of,
    find_secrets,
    has_label,
    open_block,
    private_texts,
    redact_cuts,
    redact_hits,
    without_blocks,
)

T = TypeVar("T")
# How far either side of a seam between two parts is searched for a secret cut in two.
SEAM_CHARS = 1024
# Parts of a document are joined as they were cut; messages as if one ran on into the next
# (a secret whole in one message is not run on into the next one's first word), or as the
# next line (a question naming a password, answered with the value alone).
DOCUMENT_JOINS = ("",)
MESSAGE_JOINS = ("", " ", "\n")


_RUN_END = lazy(r"[A-Za-z0-9+/_=-]+\Z")
# A part ending in a closing bracket ended its value there (`"max_output_tokens": 4000}]`):
# run on into the next part with no space, it would make one value of both
_CLOSED_END = lazy(r"[\]})]\Z")
_RUN_START = lazy(r"[A-Za-z0-9+/_=-]+")
# Half of the shortest unlabelled secret: a secret cut in two leaves at least this much
# of itself on one side.
HALF_TOKEN = 8


def _may_join(tail: str, head: str) -> bool:
    """Whether the run of token characters ending ``tail`` and the one starting ``head``
    could be one secret cut in two (a label in ``tail`` is checked apart)."""
    before, after = _RUN_END.search(tail), _RUN_START.match(head)
    if before is None or after is None:
        return False
    return max(len(before.group()), len(after.group())) >= HALF_TOKEN


# Tokens whose maker fixes their length after the prefix (GitHub's, Hugging Face's, GitLab's,
# npm's, AWS key ids): one ending a message shorter than that was cut, and its rest is the
# first token-like word among the next message's first few ("...the rest: STUV0123").
FIXED_LENGTHS = {
    "ghp_": ("github-token", 36),
    "gho_": ("github-token", 36),
    "ghu_": ("github-token", 36),
    "ghs_": ("github-token", 36),
    "ghr_": ("github-token", 36),
    "github_pat_": ("github-token", 82),
    "hf_": ("huggingface-token", 34),
    "glpat-": ("gitlab-token", 20),
    "npm_": ("npm-token", 36),
    "AKIA": ("aws-access-key", 16),
    "ASIA": ("aws-access-key", 16),
}
_CUT_TOKEN = lazy(
    r"(?<![\w-])(?P<p>" + "|".join(map(re.escape, FIXED_LENGTHS)) + r")(?P<t>[A-Za-z0-9_-]*)"
    r"[^\w\s]{0,3}\s*\Z"
)
_REST = lazy(r"[A-Za-z0-9_-]{4,}")
CONTINUATION_WORDS = 12
# A secret found by its label in one part is hidden where a later part repeats it with no
# label left (the assistant saying "SIGNING is set to Kestrel-Plum-5521" after the tool
# output's ``password: Kestrel-Plum-5521`` was redacted); a secret of a known shape is
# found by its shape again. Only a value that looks made is followed (``made``): a word
# or markup a label's match took by mistake (``Reading tokens:</strong>``) would be hidden
# everywhere after, and a value shorter than a key the scanner vets (``privacy._keyish``:
# 6) recurs by chance (a PIN's digits as counts and line numbers).
LABELLED_KINDS = frozenset(
    {"password", "secret", "auth-token", "connection-string", "bearer-token", "cookie"}
)
REPEAT_MIN = 6
# The kind of a value a ``<private>`` block held, hidden where the conversation repeats it
PRIVATE = "private"
# What a word of a private block may have about it that is no part of its value
_PRIVATE_TRIM = "\"'`()[]{}<>,;.:!?*_"
_ALNUM = "A-Za-z0-9"


def _parts(value: str, kind: str) -> list[str]:
    """What a repeat of ``value`` would show: a cookie header's values one by one, a bare
    value without the sentence's end its match took ("the password is V." says V)."""
    if kind != "cookie":
        return [value.rstrip(VALUE_END)]
    return [pair.partition("=")[2].strip() for pair in value.split(";")]


def made(value: str) -> bool:
    """A value that is no word, name nor markup: a digit or a sign in one run of 6
    characters or more (``SIGNING``, a secret's name, is a word)."""
    return (
        len(value) >= REPEAT_MIN
        and not any(c.isspace() or c in "<>\"'`" for c in value)
        and not MARK.search(value)
        and not value.isalpha()
        and any(c.isalnum() for c in value)
    )


def lettered(value: str) -> bool:
    """A value of 6 letters or more and nothing else (``swordfish``): followed only when
    no dictionary knows it (``Scrubber``'s ``known``)."""
    return len(value) >= REPEAT_MIN and value.isascii() and value.isalpha()


def followable(value: str) -> bool:
    """A value a later part may repeat that is worth looking up: made, or of letters."""
    return made(value) or lettered(value)


def _repeated(value: str) -> str:
    """The pattern of a followed value said again: between non-letters, and a password of
    letters (kept lower case) in any case ("Swordfish works" begins a sentence)."""
    said = re.escape(value)
    return f"(?<![{_ALNUM}]){f'(?i:{said})' if lettered(value) else said}(?![{_ALNUM}])"


def _continuation(left: str, right: str) -> tuple[list[Hit], list[Hit]]:
    """A fixed-length token cut at the end of ``left``, and its rest early in ``right``."""
    shift = max(0, len(left) - SEAM_CHARS)
    cut = _CUT_TOKEN.search(left, shift)
    if cut is None:
        return [], []
    kind, length = FIXED_LENGTHS[cut["p"]]
    missing = length - len(cut["t"])
    if missing <= 0:
        return [], []
    before = [Hit(cut.start(), cut.end("t"), kind, cut.span())]
    for word in re.finditer(r"\S+", right[:SEAM_CHARS]):
        if word.start() and right[: word.start()].count(" ") >= CONTINUATION_WORDS:
            break
        rest = _REST.search(word.group())
        if rest is None or MARK.search(word.group()):
            continue
        value = rest.group()
        if len(value) >= min(missing, 4) and (
            any(c.isdigit() or c.isupper() for c in value) or len(value) >= missing
        ):
            at = word.start() + rest.start()
            return before, [Hit(at, at + len(value), kind, (at, at + len(value)))]
    return before, []


def _covered(cut: Cut, kind: str, hits: list[Hit]) -> bool:
    """True when a hit of the same kind holds all of ``cut``, with what its match took
    after the value (a bare value's full stop: ``privacy.VALUE_END``, hidden no more)."""
    return any(
        h.kind == kind and h.start <= cut[0] and cut[1] <= max(h.end, h.outer[1]) for h in hits
    )


class Scrubber(Generic[T]):
    """Scrubs the parts of one text or conversation in order, one part behind.

    Each part is scrubbed alone, and the seam with the next part is searched too: a
    token, a password after its label, or a random string cut in two is redacted on
    both sides. A ``<private>`` block, injected context or private key left open in
    one part hides every later part (each then scrubbed to nothing) up to its close.
    ``push`` takes a part with a payload (its message's role and time, say) and yields
    the previous part, scrubbed, with its payload; ``close`` yields the last one.
    """

    def __init__(
        self,
        found: Redactions,
        joins: tuple[str, ...] = DOCUMENT_JOINS,
        taken: dict[str, str] | None = None,
        known: Callable[[str], bool] | None = None,
    ) -> None:
        self.found, self.joins = found, joins
        # secrets taken out before the parts came (a parser's notes), filled as they come
        self.taken = {} if taken is None else taken
        # whether a word is an everyday word or a name (``postgres``): a password of letters
        # (``the db password is swordfish``) is followed unless it is one; without it, never
        self.known = known
        self._hiding: re.Pattern[str] | None = None
        self._held: deque[tuple[str, list[Hit], T]] = deque()
        self._found_values: dict[str, str] = {}  # a secret found earlier -> its kind
        # a private block's values (a word of letters lower-cased) -> PRIVATE: looked up word
        # by word, as a pasted private document's thousands would make one slow pattern
        self._private: dict[str, str] = {}
        # every value hidden so far -> its kind: what maintain's rescrub also takes out of
        # what else quotes it (the event log, backups, the spool)
        self.hidden_values: dict[str, str] = {}
        self._repeats: re.Pattern[str] | None = None
        self.left_open: str | None = None  # the block the last part left open (``close``)

    @property
    def followed(self) -> dict[str, str]:
        """The secrets hidden where a later part repeats them (value -> kind), so far."""
        return self._found_values | self._private

    def push(self, part: str, payload: T) -> Iterator[tuple[str, T]]:
        text = self._unblock(part)
        cuts: list[Hit] = []
        if self._held:
            previous, previous_cuts, _ = self._held[-1]
            before, after = self._seam(previous, text)
            if self.joins == MESSAGE_JOINS and not after:
                cut_before, cut_after = _continuation(previous, text)
                self.found.secrets.update(h.kind for h in cut_before)
                before, after = before + cut_before, after + cut_after
            previous_cuts += before
            cuts += after
        self._held.append((text, cuts, payload))
        while len(self._held) > 1:
            yield self._finish(*self._held.popleft())

    def close(self) -> Iterator[tuple[str, T]]:
        self.left_open = None if self._hiding is None else block_name(self._hiding)
        while self._held:
            yield self._finish(*self._held.popleft())
        self._hiding = None

    def hidden(self, text: str) -> str:
        """``text``, said apart from the parts (a conversation's title), with each secret
        the parts so far held hidden where it repeats one bare."""
        return self._hide_repeats(text)

    def inside(self, block: str) -> None:
        """Begin inside the block named ``block`` (``privacy.BLOCK_NAMES``), which an
        earlier part of the conversation, scrubbed by another scrubber, left open: every
        part is hidden up to its close."""
        self._hiding = closing_of(block)

    def _unblock(self, part: str) -> str:
        if self._hiding is not None:
            end = self._hiding.search(part)
            if block_name(self._hiding) == PRIVATE:
                self._follow_private([part if end is None else part[: end.start()]])
            if end is None:
                return ""
            part, self._hiding = part[end.end() :], None
        self._follow_private(private_texts(part))
        self._hiding = open_block(part)
        if self._hiding is not None and self._hiding.pattern.startswith("-----END"):
            self.found.secrets["private-key"] += 1
            begin = re.compile(PEM_BEGIN).search(part)
            assert begin is not None
            return without_blocks(part[: begin.start()], self.found) + "[REDACTED:private-key]"
        return without_blocks(part, self.found)

    def _seam(self, left: str, right: str) -> tuple[list[Hit], list[Hit]]:
        """Secrets crossing the seam between two parts, as cuts in each."""
        if not left or not right:
            return [], []
        # every detector a seam can cut runs within a line (a block left open is hidden)
        tail = left[max(left.rfind("\n") + 1, len(left) - SEAM_CHARS) :]
        newline = right.find("\n")
        head = right[: min(SEAM_CHARS, len(right) if newline == -1 else newline)]
        labelled = has_label(tail)
        if not labelled and not _may_join(tail, head):
            return [], []
        shift, seam = len(left) - len(tail), len(tail)
        messages = self.joins != DOCUMENT_JOINS
        alone: tuple[list[Hit], list[Hit]] | None = None
        # (cut in left, cut in right) -> kind; the same secret seen through two joins is one
        crossing: dict[tuple[Cut | None, Cut | None], str] = {}
        for join in self.joins:
            if join and not labelled:
                continue  # only a label (or a command) runs on over a space
            if not join and _CLOSED_END.search(tail):
                continue
            after = seam + len(join)  # where ``right`` starts in the joined text
            for hit in find_secrets(tail + join + head):
                if not (hit.outer[0] < seam and hit.outer[1] > after):
                    continue
                cut_left = (hit.start, min(hit.end, seam)) if hit.start < seam else None
                cut_right = (
                    (max(hit.start - after, 0), hit.end - after) if hit.end > after else None
                )
                # a message's secret found whole on one side is not run on into the other
                if messages:
                    alone = alone or (find_secrets(tail), find_secrets(head))
                    if (cut_left and _covered(cut_left, hit.kind, alone[0])) or (
                        cut_right and _covered(cut_right, hit.kind, alone[1])
                    ):
                        continue
                crossing.setdefault((cut_left, cut_right), hit.kind)
        if crossing:
            self.found.secrets.update(crossing.values())
        before = [Hit(shift + c[0], shift + c[1], k, c) for (c, _), k in crossing.items() if c]
        after_cuts = [Hit(c[0], c[1], k, c) for (_, c), k in crossing.items() if c]
        return before, after_cuts

    def _finish(self, text: str, cuts: list[Hit], payload: T) -> tuple[str, T]:
        self.hidden_values.update({text[c.start : c.end]: c.kind for c in cuts})
        cut = redact_cuts(text, cuts) if cuts else text
        hits = find_secrets(cut)
        self.hidden_values.update({cut[h.start : h.end]: h.kind for h in hits})
        self._remember(self.taken | {cut[h.start : h.end]: h.kind for h in hits})
        self._remember_words({cut[h.start : h.end]: h.kind for h in hits})
        return self._hide_repeats(redact_hits(cut, hits, self.found.secrets)), payload

    def _remember(self, values: dict[str, str]) -> None:
        """Keep the secrets found by a label for the later parts (``LABELLED_KINDS``)."""
        self._follow(
            {
                each: kind
                for value, kind in values.items()
                if kind in LABELLED_KINDS
                for each in _parts(value, kind)
                if made(each)
            }
        )

    def _remember_words(self, values: dict[str, str]) -> None:
        """Keep a password of letters the scanner found by its label (``the db password is
        swordfish``) that no word list knows; not a parser's ``taken`` value of letters (a
        credentials file's line, a command's output: as often a name as a secret)."""
        if self.known is None:
            return
        self._follow(
            {
                each: kind
                for value, kind in values.items()
                if kind == "password"
                for each in (part.lower() for part in _parts(value, kind))
                if lettered(each) and not self.known(each)
            }
        )

    def _follow_private(self, texts: list[str]) -> None:
        """Hide where the conversation repeats it (the assistant's "Done: employee number
        EMP-77341 ...") each value of a ``<private>`` block a repeat gives away: one that
        looks made (a number, an email, an id: ``made``), and, with ``known``, a word of 6
        letters or more that no word list knows (a name: ``Ormondroyd``). A document's
        author wrote its other text as it stands: only a conversation's are followed."""
        if self.joins != MESSAGE_JOINS:
            return
        values: dict[str, str] = {}
        for text in texts:
            for word in text.split():
                value = word.strip(_PRIVATE_TRIM)
                if made(value):
                    values[value] = PRIVATE
                elif lettered(value) and self.known is not None and not self.known(value):
                    values[value.lower()] = PRIVATE
        self._private |= values

    def _follow(self, new: dict[str, str]) -> None:
        """Hide each of ``new`` (value -> kind) where a later part repeats it bare."""
        if not new.keys() - self._found_values.keys():
            return
        self._found_values |= new
        words = sorted(self._found_values, key=len, reverse=True)
        self._repeats = re.compile("|".join(map(_repeated, words)))

    def _hide_repeats(self, text: str) -> str:
        """``text`` with each secret an earlier part (or this one) held replaced bare, and
        each value of a private block."""
        return self._hide_private(self._hide_secrets(text))

    def _hide_private(self, text: str) -> str:
        if not self._private:
            return text
        parts, at = [], 0
        for word in _WORD.finditer(text):
            for start, end in _held(word.group(), self._private):
                parts += [text[at : word.start() + start], f"[REDACTED:{PRIVATE}]"]
                at = word.start() + end
                self.found.secrets[PRIVATE] += 1
                self.hidden_values[text[word.start() + start : at]] = PRIVATE
        return "".join(parts) + text[at:] if parts else text

    def _hide_secrets(self, text: str) -> str:
        if self._repeats is None:
            return text

        def mark(found: re.Match[str]) -> str:
            said = found.group()
            kind = self._found_values.get(said) or self._found_values[said.lower()]
            self.found.secrets[kind] += 1
            self.hidden_values[said] = kind
            return f"[REDACTED:{kind}]"

        return self._repeats.sub(mark, text)


# The runs a value may be found in: no blank, quote, backtick nor angle bracket (``made``)
_WORD = lazy(r"[^\s<>\"'`]+")
# The longest value of a private block looked for (a longer run is no name nor number)
_HELD_MAX = 256


def _held(word: str, values: dict[str, str]) -> list[tuple[int, int]]:
    """Where ``word`` holds one of ``values`` between non-letters (a word of letters in any
    case): the longest at each place, leftmost first, not overlapping."""
    if len(word) < REPEAT_MIN:
        return []
    starts = [0] + [i for i in range(1, len(word)) if not _alnum(word[i - 1])]
    ends = [i for i in range(1, len(word)) if not _alnum(word[i])] + [len(word)]
    found: list[tuple[int, int]] = []
    for start in starts:
        if found and start < found[-1][1]:
            continue
        for end in reversed(ends):
            if end - start < REPEAT_MIN:
                break
            value = word[start:end]
            if end - start <= _HELD_MAX and (
                value in values or (lettered(value) and value.lower() in values)
            ):
                found.append((start, end))
                break
    return found


def _alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()


def scrub_stream(pieces: Iterable[str], found: Redactions) -> Iterator[str]:
    """Scrub a text that arrives in pieces (as it was cut), adding to ``found``."""
    scrubber: Scrubber[None] = Scrubber(found)
    for piece in pieces:
        for text, _ in scrubber.push(piece, None):
            yield text
    for text, _ in scrubber.close():
        yield text


def scrub_messages(
    texts: Iterable[tuple[str, T]],
    found: Redactions,
    taken: dict[str, str] | None = None,
    known: Callable[[str], bool] | None = None,
) -> Iterator[tuple[str, T]]:
    """Scrub the messages of one conversation in order, each with its payload; a secret
    ``taken`` holds (a parser's, filled as it reads) is hidden where a message repeats it,
    and with ``known`` a password of letters (``Scrubber``'s)."""
    scrubber: Scrubber[T] = Scrubber(found, MESSAGE_JOINS, taken, known)
    for text, payload in texts:
        yield from scrubber.push(text, payload)
    yield from scrubber.close()
