"""The model's tokenizer for short ASCII text, in plain Python: a recall's query.

Importing ``tokenizers`` and building its BERT tokenizer from vocab.txt cost about
20 ms of CPU, paid by every `memctl recall` process for one short question. For
ASCII text the pipeline the model's tokenizer.json describes is short: the BERT
normaliser drops control characters (tab, newline and carriage return become
spaces) and lower-cases; the pre-tokenizer splits at whitespace and makes each
punctuation character a word of its own, which in ASCII leaves runs of letters and
digits; WordPiece then takes the longest vocabulary entry at each place ("##" after
a word's start), and a word with no split, or over 100 characters, is [UNK]. Any
other text goes to ``tokenizers``. tests/embed/test_wordpiece.py checks that both
give the same ids.
"""

from __future__ import annotations

import re
from pathlib import Path

UNKNOWN, FIRST, LAST = "[UNK]", "[CLS]", "[SEP]"
CONTINUED = "##"  # WordPiece's prefix of a piece that does not start a word
MAX_WORD_CHARS = 100  # the tokenizer's max_input_chars_per_word
# What Rust's trim_end() strips from a vocabulary line (Unicode White_Space): Python's own
# strip() also strips U+001C..U+001F.
LINE_END_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + ("\u2028\u2029\u202f\u205f\u3000")
)
TRAILING_SPACE = LINE_END_SPACE.replace("\n", "")  # what a line split at "\n" may end in
# The normaliser: tab, newline and carriage return become spaces; every other ASCII
# control character (category Cc) is dropped.
CLEAN = {c: None for c in [*range(0x20), 0x7F]} | {ord(c): " " for c in "\t\n\r"}
WORDS = re.compile(r"[a-z0-9]+|[^ a-z0-9]")  # ASCII: a run of letters and digits, or a sign


class WordPiece:
    """Token ids of ASCII texts, as the model's tokenizer gives them (truncated to
    ``max_tokens`` with [CLS] and [SEP] counted)."""

    def __init__(self, vocab: dict[str, int], max_tokens: int) -> None:
        self.vocab = vocab
        self.unknown = vocab[UNKNOWN]
        self.first, self.last = vocab[FIRST], vocab[LAST]
        self.pieces = max_tokens - 2

    @classmethod
    def from_file(cls, path: Path, max_tokens: int) -> WordPiece:
        """The tokenizer of a vocab.txt (one entry a line, its id its line number; a later
        duplicate wins, as in ``tokenizers``). KeyError when a special token is missing."""
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        if lines and not lines[-1]:
            lines.pop()
        # the model's vocab.txt holds no such space: its lines are taken as they are, ~3 ms
        # of a recall's own process less than stripping each
        if any(space in text for space in TRAILING_SPACE):
            lines = [line.rstrip(LINE_END_SPACE) for line in lines]
        return cls(dict(zip(lines, range(len(lines)), strict=True)), max_tokens)

    def ids(self, text: str) -> list[int]:
        """The ids of an ASCII ``text`` (ValueError for any other)."""
        if not text.isascii():
            raise ValueError("WordPiece takes ASCII text only")
        pieces: list[int] = []
        for word in WORDS.findall(text.translate(CLEAN).lower()):
            pieces += self._word(word)
            if len(pieces) >= self.pieces:
                break
        return [self.first, *pieces[: self.pieces], self.last]

    def _word(self, word: str) -> list[int]:
        if len(word) > MAX_WORD_CHARS:
            return [self.unknown]
        found, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else CONTINUED + word[start:end]
                if piece in self.vocab:
                    found.append(self.vocab[piece])
                    start = end
                    break
            else:
                return [self.unknown]
        return found
