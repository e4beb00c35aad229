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
    """``text`` within ``budget`` tokens: whole when it fits, else the first sentence of
    each line (cut to a fair share of the budget when longer), then the following
    sentences in order, with "…" where it was cut; '' when not even a few words fit."""
    if cost(text) <= budget:
        return text
    lines = [sentences(line.strip()) for line in text.splitlines() if line.strip()]
    share = max(MIN_SHARE, budget // max(1, len(lines)))
    kept: list[list[str]] = [[] for _ in lines]
    done = [False] * len(lines)  # a line whose first sentence was cut takes no more
    used = cost(ELLIPSIS)
    for index, parts in enumerate(lines):
        price = cost(parts[0]) + 1
        if price > share:
            head = cut_words(parts[0], min(share, budget - used) - 1, cost)
            price, done[index] = cost(head) + 1, True
        else:
            head = parts[0]
        if head and used + price <= budget:
            kept[index].append(head)
            used += price
    for index, parts in enumerate(lines):
        while kept[index] and not done[index] and len(kept[index]) < len(parts):
            price = cost(parts[len(kept[index])]) + 1
            if used + price > budget:
                break
            kept[index].append(parts[len(kept[index])])
            used += price
    if not any(kept):
        return cut_words(lines[0][0] if lines else text, budget, cost)
    out = []
    for parts, taken, cut in zip(lines, kept, done, strict=True):
        if taken:
            line = "".join(taken).rstrip()
            whole = len(taken) == len(parts) and not cut
            out.append(line if whole or line.endswith(ELLIPSIS) else f"{line} {ELLIPSIS}")
    if not out[-1].endswith(ELLIPSIS) and sum(map(len, kept)) < sum(map(len, lines)):
        out[-1] += f" {ELLIPSIS}"
    return "\n".join(out)
