"""The prompt-ready block session-start hooks paste into a prompt.

    <memctl-context>
    Memories relevant to: how do we deploy?
    ## cases
    - (3d ago) We deploy with `make release` from main.
    </memctl-context>

Grouped by category, best group first, with relative ages (from when the source
message was said, when the memory came from one). The tag name is
fixed: ingest strips these blocks from transcripts so that recalled memories
are never ingested again.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from memctl.memories.markdown import Headings
from memctl.memories.privacy import kept_text
from memctl.memories.provenance import DIGEST_TAG, YOU, origin
from memctl.model import parse_time
from memctl.retrieve.excerpt import held, query_words
from memctl.retrieve.fit import SHORTEST, Weigh, shorten
from memctl.retrieve.params import Params
from memctl.retrieve.pipeline import Recalled, RecallResult
from memctl.retrieve.run import Candidate, Run
from memctl.retrieve.stages.fuse import (
    coverage,
    gate_share,
    relevance_strength,
    strength_of,
    text_share,
)
from memctl.retrieve.stages.pack import ITEM_TOKENS, estimate_tokens
from memctl.retrieve.stages.stale import content_words

CONTEXT_TAG = "memctl-context"
# Memories the per-prompt hook adds at most (L3): a prompt is not a search page; compact
# context (context.compact) caps L3 at 3 (issue 24's compact mode).
PROMPT_LIMIT = 5
COMPACT_PROMPT_LIMIT = 3
# The per-prompt hook adds a block only when one of its memories weighs at least this
# (cosine + recall.words_weight x word share, as recall's gate weighs it): an explicit
# recall may answer on weaker evidence, a block nobody asked for must not be noise. Chosen
# on the tune half of `python -m benchmarks injection` (docs/benchmarks.md).
PROMPT_FLOOR = 0.55
# Tokens the per-prompt block keeps for each row after the one it fits (``shares``): a fact
# of three in four of the dev store's lengths (156 characters, ~40 tokens, with its line's
# own 4), so a digest longer than the budget no longer takes the fact after it away
# (docs/benchmarks.md, "The per-prompt block, a second pass").
ROW_RESERVE = 40
# What the rarity of the query's words a sentence holds (a share, 0 to 1) adds to its count
# of them (``answers``): a tie-break only, under the least step between two counts (0.1: three
# of the vocabulary's words, 2.1, against two of the query's own).
RARITY_TIE = 0.01
# A heading ending in one of these reads on as it is ("Why?", "Setup:"), without a colon.
LABEL_ENDS = ".:!?"
# A message with this share of its words in its own session's digest, the block holding that
# digest, says nothing the block does not (reasoned as the written profile's REPEAT_SHARE,
# maintain/profile.py: a line with most of its words in another repeats it; a digest quotes
# the request and the outcome, cut, so the rest is a message's own).
HELD_SHARE = 0.8
AGES = (("y", 365 * 86400), ("mo", 30 * 86400), ("w", 7 * 86400), ("d", 86400), ("h", 3600))


def relative_age(iso: str, now: datetime) -> str:
    seconds = max(0.0, (now - parse_time(iso)).total_seconds())
    for unit, size in AGES:
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


# The start of a tag (``<system>``, ``</memctl-context>``, ``<!--``): inside memory text,
# escaped, so no stored text can close memctl's block or open one of its own.
TAG_START = re.compile(r"<(?=/?\s*[A-Za-z!?])")
ESCAPED_TAG = "&lt;"


def escape_tags(text: str) -> str:
    """``text`` with every tag's ``<`` escaped (``&lt;system>``): quoted, never markup."""
    return TAG_START.sub(ESCAPED_TAG, text)


def memory_line(item: Recalled, now: datetime, said_by: str = YOU) -> str:
    """One memory as a line of a block: ``- (3d ago) text``, and who said it when it was
    not the user: ``- (3d ago; assistant) text``, ``- (1d ago; host 4f2a9c1e) text``. Tags
    in the text are escaped (``escape_tags``)."""
    text = escape_tags(flattened(item.memory.content))
    marker = "" if said_by == YOU else f"; {said_by}"
    return f"- ({relative_age(item.dated_at, now)}{marker}) {text}"


def flattened(text: str) -> str:
    """``text`` on one line, a Markdown heading as a label: "# Runbook" then its text reads
    "Runbook: Restart ...", not "# Runbook Restart ..." (and no "##" of a memory's reads as
    one of the block's own group headings)."""
    headings = Headings()
    parts = []
    for line in text.splitlines():
        found = headings.heading(line)
        parts.append(line if found is None else _label(found[1]))
    return " ".join(" ".join(parts).split())


def _label(heading: str) -> str:
    return heading if heading[-1] in LABEL_ENDS else f"{heading}:"


def prompt_items(
    result: RecallResult, shown: frozenset[str], compact: bool = False, session: str | None = None
) -> list[Recalled]:
    """What the per-prompt hook adds for ``result``'s prompt: the clear memories and session
    messages recalled that the session does not have (``shown``, and those of ``session``
    itself: its messages, digest and facts are in its conversation already), at most
    PROMPT_LIMIT (COMPACT_PROMPT_LIMIT when ``compact``), when one weighs PROMPT_FLOOR.
    A message stands for itself: in a developer's store the answer is as often said in a
    session's turn as in its digest or a fact (docs/benchmarks.md, "Why the per-prompt
    hook gave so few real questions a block")."""
    if result.run is None:
        return []
    fresh = [
        r
        for r in result.clear
        if r.memory.id not in shown and not (session and r.memory.session_id == session)
    ]
    fresh = fresh[: COMPACT_PROMPT_LIMIT if compact else PROMPT_LIMIT]
    weights = (floor_weight(result.run, r) for r in fresh)
    return fresh if max(weights, default=0.0) >= PROMPT_FLOOR else []


def floor_weight(run: Run, item: Recalled) -> float:
    """What ``item`` weighs against ``PROMPT_FLOOR``: its cosine and word share
    (``strength_of``), and a session message, at least what its words weigh alone, as the
    relevance gate labels it (``gate_share``: its cosine never labels a message, and a
    message that answers in the words asked, far in meaning as a turn's narration is, was
    clear and under the floor: docs/benchmarks.md, "The per-prompt block, a second pass")."""
    candidate = Candidate(item.memory, raw=item.raw, is_message=item.is_message)
    strength = strength_of(run, candidate)
    if not item.is_message:
        return strength
    words = gate_share(run, candidate, coverage(run, candidate))
    return max(strength, relevance_strength(run, None, words))


def answers(runs: list[Run], query: str) -> Weigh:
    """How well a sentence answers ``query`` (a prompt's questions, each recalled: ``runs``):
    the query's words it holds (excerpt's ``held``: 1 each, the vocabulary's 0.7), and of
    sentences holding as many, the one holding the rarer (``text_share``, by rarity, as the
    gate counts them): a question's rare words name what it asks about, its common ones (a
    project's own name, "use", "code") are in many sentences of a long row."""
    weights = query_words(query)

    def weigh(sentence: str) -> float:
        found = held(sentence, weights)
        if not found:
            return 0.0
        rarer = max(text_share(run, sentence) for run in runs)
        return sum(found.values()) + RARITY_TIE * rarer

    return weigh


def within(
    items: list[Recalled], budget: int, compact: bool, params: Params, weigh: Weigh | None = None
) -> list[Recalled]:
    """The first of ``items`` (the per-prompt hook's, of each question a prompt asks) within
    its limit (``PROMPT_LIMIT``, ``COMPACT_PROMPT_LIMIT`` when ``compact``) and its token
    ``budget``, as recall's pack stage counts them, in order, each leaving the rows after it
    room (``shares``). One longer than its room is shortened to it (``fit.shorten``),
    keeping the sentences that ``weigh`` finds answering (``answers``): a session's digest
    is often longer than the whole budget, and first it took every row after it away, then,
    shortened to its openings, its own answer."""
    chosen = items[: COMPACT_PROMPT_LIMIT if compact else PROMPT_LIMIT]
    costs = [ITEM_TOKENS + estimate_tokens(item.memory.content, params) for item in chosen]
    kept = []
    for item, cost, room in zip(chosen, costs, shares(costs, budget), strict=True):
        if cost > room:
            text = ""
            if room >= SHORTEST:
                text = shorten(
                    item.memory.content,
                    room - ITEM_TOKENS,
                    lambda t: estimate_tokens(t, params),
                    weigh,
                )
            if not text:
                continue
            item = shortened(item, text)
        kept.append(item)
    return kept


def shares(costs: list[int], budget: int) -> list[int]:
    """Each row's tokens of ``budget``, in order: what the rows before it left, less
    ``ROW_RESERVE`` (or its whole cost, when less) for each row after it."""
    rooms, left = [], budget
    for index, cost in enumerate(costs):
        room = max(0, left - sum(min(c, ROW_RESERVE) for c in costs[index + 1 :]))
        rooms.append(room)
        left -= min(cost, room)
    return rooms


def shortened(item: Recalled, text: str) -> Recalled:
    """``item`` showing ``text`` in its memory's stead (the memory itself is unchanged)."""
    return replace(item, memory=replace(item.memory, content=text))


def said_once(results: list[Recalled]) -> list[Recalled]:
    """``results`` without the session messages whose own session's digest, among
    ``results``, holds ``HELD_SHARE`` of their words: recall ranks both (the message may
    say the answer in the words asked), a block says each thing once."""
    digests: dict[str, set[str]] = {}
    for item in results:
        if not item.is_message and item.memory.session_id and DIGEST_TAG in item.memory.tags:
            words = digests.setdefault(item.memory.session_id, set())
            words |= content_words(item.memory.content)
    return [item for item in results if not _held(item, digests)]


def _held(item: Recalled, digests: dict[str, set[str]]) -> bool:
    held = digests.get(item.memory.session_id or "") if item.is_message else None
    if held is None:
        return False
    words = content_words(item.memory.content)
    return len(words & held) >= HELD_SHARE * len(words)


def render_context(
    query: str,
    results: list[Recalled],
    now: datetime,
    heading: str = "Memories relevant to",
    hosts: dict[str, str] | None = None,
) -> str:
    """The block for ``results`` (already packed to the budget), one line per memory, each
    said once (``said_once``); ``hosts``: the memories another machine pushed, with its
    host id."""
    hosts = hosts or {}
    groups: dict[str, list[Recalled]] = {}
    for item in said_once(results):
        label = "session messages" if item.is_message else str(item.memory.category)
        groups.setdefault(label, []).append(item)
    # the query as the person may keep it: a password or <private> part of a prompt is not
    # said back into the session (nor into the client's transcript of it)
    quoted = escape_tags(" ".join(kept_text(query).split()))
    lines = [f"<{CONTEXT_TAG}>", f"{heading}: {quoted}"]
    for label, items in groups.items():
        lines.append(f"## {label}")
        lines.extend(
            memory_line(item, now, origin(item.memory, hosts.get(item.memory.id))) for item in items
        )
    if not results:
        lines.append("(no memories found)")
    lines.append(f"</{CONTEXT_TAG}>")
    return "\n".join(lines)
