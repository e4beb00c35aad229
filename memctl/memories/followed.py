"""The secrets an earlier capture of a session hid where its messages repeated them bare
(``scrubber.Scrubber.followed``), known to the session's next capture by keyed digests
only: capture reads a transcript from where it stopped (a Stop hook after each turn,
``ingest`` of a growing file, a resumed session), so a value shown and redacted in one
capture and repeated by the assistant in the next would otherwise be stored.

A digest is an HMAC-SHA256 under the home's ``forget.key`` (beside the database, never in
it, a backup, an export or the sync repository): a copy of the database cannot have a
short password tried against it, as a plain SHA-256 could.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter
from dataclasses import dataclass

from memctl.lazy_re import lazy
from memctl.memories.scrubber import REPEAT_MIN, followable, lettered

# What a digest is taken of: this prefix and the value, so that it equals no other keyed
# digest of the home (a forgotten message's, a session id's) of the same text.
DIGEST_OF = "followed secret\0"
# The longest value followed from one capture to the next: a candidate is every run of a
# word between two non-letters, so the work grows with the square of this; a longer
# labelled value is a blob (a key's body, a JWT) that the scanner finds by its shape again.
FOLLOW_MAX = 256
# A value has no blank, quote, backtick nor angle bracket (``scrubber.made``): the words
# a message's candidates are taken from.
_WORD = lazy(r"[^\s<>\"'`]+")


def value_digest(key: bytes, value: str) -> str:
    return hmac.new(key, (DIGEST_OF + value).encode("utf-8"), hashlib.sha256).hexdigest()


def digests(key: bytes, values: dict[str, str]) -> dict[str, str]:
    """Each followed value's digest -> its kind, the too long left out (``FOLLOW_MAX``)."""
    return {value_digest(key, v): kind for v, kind in values.items() if len(v) <= FOLLOW_MAX}


@dataclass(frozen=True)
class Followed:
    """The digests (-> kind) of the values earlier captures of a session hid."""

    key: bytes
    kinds: dict[str, str]

    def hide(self, text: str, counts: Counter[str]) -> str:
        """``text`` with each value an earlier capture hid redacted, counted in ``counts``;
        a value is bounded as the scrubber's repeats are (no ASCII letter or digit beside)."""
        parts, at = [], 0
        for start, end, kind in self._hits(text):
            parts += [text[at:start], f"[REDACTED:{kind}]"]
            counts[kind] += 1
            at = end
        return "".join(parts) + text[at:] if parts else text

    def _hits(self, text: str) -> list[tuple[int, int, str]]:
        hits: list[tuple[int, int, str]] = []
        for word in _WORD.finditer(text):
            hits += [(word.start() + s, word.start() + e, k) for s, e, k in self._in(word.group())]
        return hits

    def _in(self, word: str) -> list[tuple[int, int, str]]:
        """The longest followed value starting at each place, leftmost first, not
        overlapping."""
        if len(word) < REPEAT_MIN:
            return []
        starts = [0] + [i for i in range(1, len(word)) if not _ascii_alnum(word[i - 1])]
        ends = [i for i in range(1, len(word)) if not _ascii_alnum(word[i])] + [len(word)]
        found: list[tuple[int, int, str]] = []
        for start in starts:
            if found and start < found[-1][1]:
                continue
            for end in reversed(ends):
                size = end - start
                if size < REPEAT_MIN:
                    break
                value = word[start:end]
                if size > FOLLOW_MAX or not followable(value):
                    continue
                kind = self.kinds.get(value_digest(self.key, value))
                if kind is None and lettered(value):  # kept lower case (``Scrubber``)
                    kind = self.kinds.get(value_digest(self.key, value.lower()))
                if kind is not None:
                    found.append((start, end, kind))
                    break
        return found


def _ascii_alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()
