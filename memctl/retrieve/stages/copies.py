"""Stage 3b, copies: what memctl holds twice counts once.

One thing comes into the store twice, and recall handed it back two or three times:

- The same conversation taken in twice: ``memctl import`` of a chat (a SpecStory
  history, a Cursor export) and ``memctl ingest`` of it; a SpecStory history beside the
  client's own transcript of the session (SpecStory runs beside Claude Code, Codex,
  Cursor). Each copy stays its own session, so nothing of either is lost (a reader's own
  notes of a tool call, a turn only one of them holds). What says a message word for word
  (its role and its text, ``provenance.VERBATIM_CHARS`` or more), itself or by the
  messages provenance folded into it, in two sessions counts once: the copy with the
  better label and score stands, with the best score of them, and names the others
  (``Candidate.members``). A copy is a message, or the same memory distilled from each
  copy (the same text; each copy's digest); a fact and a digest stay two results.
- memctl's own answer told back: a reply whose turn only read memctl
  (memories/told_back.py) that restates a memory among the candidates (``RESTATES`` of its
  words) is that memory again. It goes, and lends the memory nothing: it is no evidence.

It runs on the gate's two lists at once, as provenance does.
"""

from __future__ import annotations

from memctl.memories.provenance import DIGEST_TAG
from memctl.retrieve.run import DROPPED, RESCORED, Candidate, Run, by_score
from memctl.retrieve.stages.fuse import plain_words
from memctl.retrieve.stages.provenance import VERBATIM_CHARS, flat
from memctl.store.message_search import MESSAGE_SEPARATOR, is_message_id, message_role
from memctl.store.transcripts import turns_before

STAGE = "copies"
# The share of a memory's words a reply telling memctl's answer back holds to restate it
# (reasoned: most of them, as a reply words the memory in a sentence of its own: "From
# memory: the cache listens on 6380" restates "The Redis cache listens on port 6380").
RESTATES = 0.6


def says(run: Run, candidates: list[Candidate]) -> dict[str, set[tuple[str, str]]]:
    """What each candidate says word for word, as (role, text) of ``VERBATIM_CHARS`` or
    more, whitespace and case aside: a message its own text, and any candidate the
    messages provenance folded into it (one query for them all)."""
    members = {m for c in candidates for m in c.members if is_message_id(m)}
    keys = [
        (session, int(seq))
        for session, _, seq in (m.rpartition(MESSAGE_SEPARATOR) for m in members)
        if seq.isdigit()
    ]
    texts = {
        f"{s}{MESSAGE_SEPARATOR}{n}": said[-1]
        for (s, n), said in turns_before(run.ctx.db, keys, 0).items()
        if said
    }
    found: dict[str, set[tuple[str, str]]] = {}
    for candidate in candidates:
        own = (
            [(message_role(candidate.memory), candidate.memory.content)]
            if candidate.is_message
            else []
        )
        said = [*own, *(texts[m] for m in candidate.members if m in texts)]
        found[candidate.id] = {
            (role, flat(text)) for role, text in said if len(flat(text)) >= VERBATIM_CHARS
        }
    return found


def said_twice(run: Run, candidates: list[Candidate], kept: set[str]) -> list[list[Candidate]]:
    """Groups of candidates of two sessions or more that say the same (``says``), best
    first: one the gate kept (among ``kept``), the clear one, then by score."""
    holders: dict[tuple[str, str], list[Candidate]] = {}
    said = says(run, candidates)
    for candidate in candidates:
        for text in said[candidate.id]:
            holders.setdefault(text, []).append(candidate)
    return [
        sorted(by_score(group), key=lambda c: (c.id not in kept, not c.clear))
        for group in holders.values()
        if len({c.memory.session_id for c in group}) > 1
    ]


def copy_of(best: Candidate, other: Candidate) -> bool:
    """Whether ``other``, saying what ``best`` says in another copy of the conversation, is
    the same record again: a message, or the memory distilled alike from each copy (the
    same text; each copy's digest). A fact and a digest, or a message and the memory
    distilled from it, are two records: each stays."""
    if other.memory.session_id == best.memory.session_id:
        return False
    if other.is_message or best.is_message:
        return other.is_message
    digests = DIGEST_TAG in best.memory.tags and DIGEST_TAG in other.memory.tags
    return digests or flat(best.memory.content) == flat(other.memory.content)


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
    for group in said_twice(run, everyone, {c.id for c in candidates}):
        best, *others = [c for c in group if c.id not in gone] or group[:1]
        copied = [c for c in others if copy_of(best, c)]
        if not copied:
            continue
        best.score = max(c.score for c in (best, *copied))
        best.members = (*best.members, *(m for c in copied for m in (c.id, *c.members)))
        run.record(STAGE, best, RESCORED, why=f"said word for word in {len(copied)} other copies")
        for other in copied:
            run.record(STAGE, other, DROPPED, why=f"says what {best.id[:40]} says: a copy")
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
