"""Shortening a memory to the tokens left for it in a session's start block.

A memory that does not fit is not dropped whole: it keeps the first sentence of each of
its lines (so each list item, each digest section), then as many of the following
sentences as fit, in order, and says with "…" where it was cut. A first sentence too long
for the budget on its own is cut at a word (or, in CJK text, at a character).
"""

from __future__ import annotations

import re
from collections.abc import Callable

ELLIPSIS = "…"
# Where a sentence ends: after . ! ? followed by space (not after a list number such as
# "1."), after CJK full stops, and at "; " (digests join their items with it).
SENTENCE_END = re.compile(r"(?<![0-9])[.!?]\s+|[。！？；]\s*|;\s+")

Cost = Callable[[str], int]


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


def shorten(text: str, budget: int, cost: Cost) -> str:
    """``text`` within ``budget`` tokens: whole when it fits, else its first sentences and
    its list items with "…"; '' when not even a few words fit."""
    if cost(text) <= budget:
        return text
    lines = [sentences(line.strip()) for line in text.splitlines() if line.strip()]
    taken = [0] * len(lines)
    used = cost(ELLIPSIS)
    for depth in (1, None):  # the first sentence of every line, then the rest in order
        for index, parts in enumerate(lines):
            while taken[index] < len(parts) and (depth is None or taken[index] < depth):
                price = cost(parts[taken[index]]) + 1
                if used + price > budget:
                    break
                used += price
                taken[index] += 1
    if not any(taken):
        return cut_words(lines[0][0] if lines else text, budget, cost)
    kept = []
    for parts, count in zip(lines, taken, strict=True):
        if count:
            line = "".join(parts[:count]).rstrip()
            kept.append(line if count == len(parts) else f"{line} {ELLIPSIS}")
    if not kept[-1].endswith(ELLIPSIS) and sum(taken) < sum(map(len, lines)):
        kept[-1] += f" {ELLIPSIS}"
    return "\n".join(kept)
