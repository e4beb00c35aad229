"""Stage 3b, copies: what memctl holds twice counts once.

One thing comes into the store twice, and recall handed it back two or three times:

- The same conversation taken in twice: ``memctl import`` of a chat (a SpecStory
  history, a Cursor export) and ``memctl ingest`` of it; a SpecStory history beside the
  client's own transcript of the session (SpecStory runs beside Claude Code, Codex,
  Cursor). Each copy stays its own session, so nothing of either is lost (a reader's own
  notes of a tool call, a turn only one of them holds). Two sessions are copies when half
  the shorter one's messages are the other's too (``Conversations``); what says a message
  word for word (its role and its text, ``provenance.VERBATIM_CHARS`` or more), itself or
  by the messages provenance folded into it, in copies counts once: the copy with the
  better label and score stands, with the best score of them, and names the others
  (``Candidate.members``). A copy is a message, or the same memory distilled from each
  copy (the same text; each copy's digest); a fact and a digest stay two results.
- memctl's own answer told back: a reply whose turn only read memctl
  (memories/told_back.py) that restates a memory among the candidates (``RESTATES`` of its
  words) is that memory again. It goes, and lends the memory nothing: it is no evidence.

It runs on the gate's two lists at once, as provenance does.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from memctl.memories.provenance import DIGEST_TAG
from memctl.retrieve.run import DROPPED, RESCORED, Candidate, Run, by_score
from memctl.retrieve.stages.fuse import plain_words
from memctl.retrieve.stages.provenance import STAGE as PROVENANCE
from memctl.retrieve.stages.provenance import VERBATIM_CHARS, flat
from memctl.store.database import Database
from memctl.store.message_search import message_role
from memctl.store.sessions import message_hashes

STAGE = "copies"
# The share of a memory's words a reply telling memctl's answer back holds to restate it
# (reasoned: most of them, as a reply words the memory in a sentence of its own: "From
# memory: the cache listens on 6380" restates "The Redis cache listens on port 6380").
RESTATES = 0.6
# The share of the shorter session's messages another holds too for the two to be copies of
# one conversation (reasoned: a SpecStory history and Claude Code's own transcript write a
# tool's notes differently, and the prose alike: about half of a session's messages)
COPY_SHARE = 0.5


# What a candidate says, keyed (role, text), and the session it says it in
Said = dict[tuple[str, str], str | None]
# A group of candidates saying one thing: each, and the session it says it in
Holders = list[tuple[Candidate, str | None]]
DIGEST = "digest"  # the key's role for a digest's request


def said_as(message: Candidate) -> tuple[str, str] | None:
    """A message's role and text, whitespace and case aside, when ``VERBATIM_CHARS`` long."""
    text = flat(message.memory.content)
    return (message_role(message.memory), text) if len(text) >= VERBATIM_CHARS else None


def says(run: Run, candidate: Candidate) -> Said:
    """What ``candidate`` says word for word (``said_as``), and where: a message its own
    text, any message provenance folded into it (``Run.folded``), and a digest the request
    its heading names ("Session of 2026-01-25 (claude-code) — <the first request>": each
    copy's digest names the same)."""
    folded = (run.folded[m] for m in candidate.members if m in run.folded)
    found: Said = {
        said: c.memory.session_id
        for c in (candidate, *folded)
        if c.is_message and (said := said_as(c)) is not None
    }
    if DIGEST_TAG in candidate.memory.tags:
        request = candidate.memory.content.split("\n", 1)[0].partition(" — ")[2]
        found[(DIGEST, flat(request))] = candidate.memory.session_id
    return found


def said_twice(run: Run, candidates: list[Candidate], kept: set[str]) -> list[Holders]:
    """Groups of candidates that say the same (``says``) in two sessions or more, best
    first: one the gate kept (among ``kept``), the clear one, then by score."""
    holders: dict[tuple[str, str], Holders] = {}
    for candidate in by_score(candidates):
        for text, session in says(run, candidate).items():
            holders.setdefault(text, []).append((candidate, session))
    return [
        sorted(group, key=lambda held: (held[0].id not in kept, not held[0].clear))
        for group in holders.values()
        if len({session for _, session in group}) > 1
    ]


def copy_of(
    copies: Conversations, best: tuple[Candidate, str | None], other: tuple[Candidate, str | None]
) -> bool:
    """Whether ``other``, saying what ``best`` says (each in its session), is the same record
    again in another copy of the conversation (``Conversations.same``): a message, or the
    memory distilled alike from each copy (the same text; each copy's digest). A fact and
    a digest, or a message and the memory distilled from it, are two records: each stays."""
    (first, here), (second, there) = best, other
    if first.is_message or second.is_message:
        same_kind = second.is_message
    else:
        digests = DIGEST_TAG in first.memory.tags and DIGEST_TAG in second.memory.tags
        same_kind = digests or flat(first.memory.content) == flat(second.memory.content)
    return same_kind and copies.same(here, there)


@dataclass
class Conversations:
    """Which pairs of sessions are copies of one conversation, asked of the store once a
    pair in a recall."""

    db: Database
    known: dict[frozenset[str], bool] = field(default_factory=dict)

    def same(self, first: str | None, second: str | None) -> bool:
        """Whether two sessions are copies of one conversation: ``COPY_SHARE`` of the shorter
        one's messages (role and text, by their stored hashes) are the other's too. Two
        sessions that only share a prompt (one task asked twice) are two conversations."""
        if not first or not second or first == second:
            return False
        pair = frozenset((first, second))
        if pair not in self.known:
            one, two = (Counter(message_hashes(self.db, s)) for s in (first, second))
            shared = sum((one & two).values())
            self.known[pair] = shared >= COPY_SHARE * min(one.total(), two.total())
        return self.known[pair]


def restated(reply: Candidate, memories: list[Candidate]) -> Candidate | None:
    """The best-scored of ``memories`` that ``reply`` restates: it holds ``RESTATES`` of
    the memory's words or more."""
    said = plain_words(reply.memory.content)
    for memory in by_score(memories):
        words = plain_words(memory.memory.content)
        if words and len(words & said) >= RESTATES * len(words):
            return memory
    return None


def copies(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    everyone = [*candidates, *run.possible]
    gone: set[str] = set()
    conversations = Conversations(run.ctx.db)
    for group in said_twice(run, everyone, {c.id for c in candidates}):
        best, *others = [held for held in group if held[0].id not in gone] or group[:1]
        copied = [c for c, session in others if copy_of(conversations, best, (c, session))]
        if not copied:
            continue
        first = best[0]
        first.score = max(c.score for c in (first, *copied))
        first.members = (*first.members, *(m for c in copied for m in (c.id, *c.members)))
        run.record(STAGE, first, RESCORED, why=f"said word for word in {len(copied)} other copies")
        for other in copied:
            run.record(STAGE, other, DROPPED, why=f"says what {first.id[:40]} says: a copy")
            gone.add(other.id)
    memories = [c for c in everyone if not c.is_message]
    for reply in (c for c in everyone if c.told_back and c.id not in gone):
        memory = restated(reply, memories)
        if memory is not None:
            why = f"restates {memory.id[:8]}: memctl's own answer told back"
            run.record(STAGE, reply, DROPPED, why=why)
            gone.add(reply.id)
    run.possible = [c for c in run.possible if c.id not in gone]
    return by_score([c for c in candidates if c.id not in gone])


def folded_ids(run: Run) -> set[str]:
    """The session messages provenance folded into a memory (and the memories it folded
    into a message stating them better), and the copies that count once: each stands
    for the candidate it was folded into."""
    return {
        s.memory_id for s in run.trace if s.stage in (PROVENANCE, STAGE) and s.action == DROPPED
    }
