"""Shortening a memory to the tokens left for it in a session's start block or a prompt's.

A memory that does not fit is not dropped whole: it keeps the first sentence of each of
its lines (so each list item, each digest section), then as many of the following
sentences as fit, in order, and says with "…" where it was cut. A first sentence too long
for the budget on its own is cut at a word (or, in CJK text, at a character).
"""

from __future__ import annotations

from collections.abc import Callable

from memctl.lazy_re import lazy

ELLIPSIS = "…"
# Where a sentence ends: after . ! ? followed by space (not after a list number such as
# "1."), after CJK full stops, and at "; " (digests join their items with it).
SENTENCE_END = lazy(r"(?<![0-9])[.!?]\s+|[。！？；]\s*|;\s+")

# The fewest tokens a line's first sentence is cut to when the lines share the budget.
MIN_SHARE = 12
# The fewest tokens worth shortening a memory to: fewer say nothing (a few words).
SHORTEST = 16
# How many answering sentences a shortened row keeps before its first line's opening: a
# row after a long first one has ROW_RESERVE tokens (context_block.py), and the opening (a
# digest's "Session of … —", a report's "[subagent report]") took them from the answer.
BEST_FIRST = 1

Cost = Callable[[str], int]
Weigh = Callable[[str], float]


def sentences(line: str) -> list[str]:
    """``line`` cut after each sentence end; the pieces join back to ``line``."""
    pieces, start = [], 0
    for end in SENTENCE_END.finditer(line):
        if end.end() > start and end.end() < len(line):
            pieces.append(line[start : end.end()])
            start = end.end()
    return [*pieces, line[start:]] if start < len(line) else pieces


def cut_words(text: str, budget: int, cost: Cost) -> str:
    """The longest start of ``text`` (at a space, else at a character) that costs at most
    ``budget`` with the ellipsis."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if cost(text[:middle] + ELLIPSIS) <= budget:
            low = middle
        else:
            high = middle - 1
    head = text[:low]
    if " " in head.strip() and low < len(text):
        head = head[: head.rstrip().rfind(" ")]
    return head.rstrip() + ELLIPSIS if head.strip() else ""


def shorten(text: str, budget: int, cost: Cost, weigh: Weigh | None = None) -> str:
    """``text`` within ``budget`` tokens: whole when it fits, else the first sentence of
    each line (cut to a fair share of the budget when longer), then the following
    sentences in order, with "…" where it was cut; '' when not even a few words fit.
    ``weigh``: how well a sentence answers what was asked (0: not at all); the sentences
    that answer come right after the first line's first sentence, best first, each whole
    (a digest's answer is often deep in its outcome, past every line's opening)."""
    if cost(text) <= budget:
        return text
    lines = [sentences(line.strip()) for line in text.splitlines() if line.strip()]
    fitting = _Fitting(lines, budget, cost)
    if weigh is not None and lines:
        fitting.answering(weigh, BEST_FIRST)
        fitting.opening(0)
        fitting.answering(weigh)
    for index in range(len(lines)):
        fitting.opening(index)
    fitting.following()
    if not any(fitting.kept):
        return cut_words(lines[0][0] if lines else text, budget, cost)
    return fitting.text()


class _Fitting:
    """The sentences of ``lines`` kept within ``budget`` so far (line -> sentence -> the
    piece shown), and the lines whose first sentence was cut (they take no more)."""

    def __init__(self, lines: list[list[str]], budget: int, cost: Cost) -> None:
        self.lines, self.budget, self.cost = lines, budget, cost
        self.share = max(MIN_SHARE, budget // max(1, len(lines)))
        self.kept: list[dict[int, str]] = [{} for _ in lines]
        self.done = [False] * len(lines)
        self.used = cost(ELLIPSIS)

    def take(self, line: int, index: int, piece: str) -> bool:
        price = self.cost(piece) + 1
        if not piece or self.used + price > self.budget:
            return False
        self.kept[line][index] = piece
        self.used += price
        return True

    def opening(self, line: int) -> None:
        """The line's first sentence, cut at a word to a fair share when longer."""
        first = self.lines[line][0]
        if 0 in self.kept[line]:
            return
        if self.cost(first) + 1 > self.share:
            self.done[line] = True
            first = cut_words(first, min(self.share, self.budget - self.used) - 1, self.cost)
        self.take(line, 0, first)

    def answering(self, weigh: Weigh, most: int | None = None) -> None:
        """Every sentence ``weigh`` finds answering (the ``most`` best), best first, where
        it fits whole."""
        weights = {
            (line, index): weigh(part)
            for line, parts in enumerate(self.lines)
            for index, part in enumerate(parts)
            if index not in self.kept[line]
        }
        found = sorted((k for k, w in weights.items() if w > 0), key=lambda k: (-weights[k], k))
        for line, index in found[:most]:
            self.take(line, index, self.lines[line][index])

    def following(self) -> None:
        """The sentences after those kept, in order, of each line not cut, while they fit."""
        for line, parts in enumerate(self.lines):
            if not self.kept[line] or self.done[line]:
                continue
            for index, part in enumerate(parts):
                if index not in self.kept[line] and not self.take(line, index, part):
                    break

    def text(self) -> str:
        out = [
            self.line_text(parts, taken, cut)
            for parts, taken, cut in zip(self.lines, self.kept, self.done, strict=True)
            if taken
        ]
        if not out[-1].endswith(ELLIPSIS) and sum(map(len, self.kept)) < sum(map(len, self.lines)):
            out[-1] += f" {ELLIPSIS}"
        return "\n".join(out)

    @staticmethod
    def line_text(parts: list[str], taken: dict[int, str], cut: bool) -> str:
        """A line's kept pieces, "…" where sentences between them were left out."""
        text, last = "", -1
        for index in sorted(taken):
            if index != last + 1:  # a gap: the sentences before this one are not shown
                stem = text.rstrip()
                gap = " " if stem.endswith(ELLIPSIS) else f" {ELLIPSIS} "
                text = f"{stem}{gap}" if stem else f"{ELLIPSIS} "
            text, last = text + taken[index], index
        text = text.rstrip()
        whole = len(taken) == len(parts) and not cut
        return text if whole or text.endswith(ELLIPSIS) else f"{text} {ELLIPSIS}"
