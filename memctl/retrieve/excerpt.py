"""The line a recalled memory shows a person: its part that answers the question.

A table has room for one line of each result. For a short memory that line is its
summary. A long one (a session's digest, a long session message) holds the answer deep
in its text, behind a title that does not say it: "Session of 2026-05-11 (codex) — show
tools" hides the "threshold: 0.9" that the question asked for. Such a memory shows its
summary cut short, then the sentences that hold the query's words (and the vocabulary's
words for them) that the summary lacks, best first up to the width, in their order,
joined by " … " (after a piece cut short, its own "…" marks the gap).

Pure functions over the text and the query; the tables (``cli/recall_out.py``) call them.
"""

from __future__ import annotations

import re

from memctl.retrieve.fit import ELLIPSIS, cut_words, sentences
from memctl.retrieve.query import STOPWORDS
from memctl.retrieve.vocabulary import expand, forms

GAP = " … "
WORD = re.compile(r"[^\W_]+")
# A summary shown before the excerpt keeps at most this share of the width: the rest is
# for the sentences that answer.
SUMMARY_SHARE = 0.4
# The vocabulary's words count at this share of the query's own (recall.vocabulary_weight's
# default: a sentence holding "pull request" answers "PRs" less surely than one holding "PRs").
VOCABULARY_SHARE = 0.7


def flat(text: str) -> str:
    return " ".join(text.split())


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut at a word with "…"."""
    return text if len(text) <= width else cut_words(text, width, len)


def query_words(query: str) -> dict[str, float]:
    """Each word (and its singular forms) a sentence may hold to answer ``query``, and its
    weight: 1 for the query's own content words, VOCABULARY_SHARE for the vocabulary's."""
    weights: dict[str, float] = {}
    for phrase in expand(query).phrases:
        for word in phrase:
            if word not in STOPWORDS:
                weights[word] = VOCABULARY_SHARE
    for word in WORD.findall(query.lower()):
        if word not in STOPWORDS:
            for form in forms(word):
                weights[form] = 1.0
    return weights


def held(
    text: str, weights: dict[str, float], known: dict[str, tuple[str, ...]] | None = None
) -> dict[str, float]:
    """The query words ``text`` holds (by any singular form), with their weights, in the
    order the text first says them. ``known``: each word's forms found so far, kept in it
    (a 200-line memory's table row took ~5 ms, the forms of every word it says found twice)."""
    found: dict[str, float] = {}
    known = {} if known is None else known
    # each word once, in the order of its first saying: a word said again adds nothing
    for word in dict.fromkeys(WORD.findall(text.lower())):
        if word not in known:
            known[word] = forms(word)
        for form in known[word]:
            if form in weights:
                found[form] = weights[form]
    return found


def joined(pieces: list[str]) -> str:
    """The pieces with ``GAP`` between them; after a piece cut short, its own "…" marks the
    gap ("…add a Github… You can test it", not "…add a Github… … You can test it")."""
    text = pieces[0] if pieces else ""
    for piece in pieces[1:]:
        text += (" " if text.endswith(ELLIPSIS) else GAP) + piece
    return text


def excerpt(summary: str, content: str, query: str, width: int) -> str:
    """One line of at most ``width`` characters for a memory: its content when that fits,
    its summary when the summary's first line holds every query word the content holds,
    else that line cut short and the content's sentences that hold the rest, best first,
    in their order."""
    whole = flat(content)
    head = flat(next((line for line in summary.splitlines() if line.strip()), ""))
    if len(whole) <= width:
        return whole
    weights = query_words(query)
    known: dict[str, tuple[str, ...]] = {}
    lacking = {w: v for w, v in held(whole, weights, known).items() if w not in held(head, weights)}
    if not lacking:
        return cut(flat(summary), width)
    parts = [flat(s) for line in content.splitlines() for s in sentences(line) if flat(s)]
    parts = [p for p in parts if p not in head]
    gains = [sum(v for w, v in held(p, lacking, known).items()) for p in parts]
    ranked = sorted((i for i, g in enumerate(gains) if g > 0), key=lambda i: (-gains[i], i))
    title = cut(head, max(12, int(width * SUMMARY_SHARE)))
    room = width - len(title)
    chosen: list[int] = []
    for index in ranked:
        price = len(GAP) + len(parts[index])
        if price <= room:
            chosen.append(index)
            room -= price
        elif not chosen:
            chosen.append(index)
            room = 0
        if room <= len(GAP) + 12:
            break
    order = sorted(chosen)
    # a summary made by cutting the content's opening (an extracted fact's "…") is that
    # opening again: the sentence alone says it, once
    lead = head.split("…", 1)[0].rstrip()
    repeats = len(lead) >= 12 and bool(order) and parts[order[0]].startswith(lead)
    pieces = [] if repeats else [title]
    used = -len(GAP) if repeats else len(title)
    for index in order:
        left = width - used - len(GAP)
        if left < 12:
            break
        pieces.append(cut(parts[index], left))
        used += len(GAP) + len(pieces[-1])
    return joined(pieces)
