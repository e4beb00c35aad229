"""Forgetting that forgets: a session, one message, a memory or one leaked value, taken out
of every place memctl keeps text (``memctl sessions forget``, ``memctl redact``, and
``delete --permanent`` / ``forget`` of a session message).

In the store, in one transaction: the messages (a whole session's rows go, its row and
read marks stay, marked forgotten, so capture never stores it again; one message's text
becomes ``[forgotten]`` in place), the memories distilled from them (deleted for good:
a fact of the message, a digest spanning it, and a fact ``maintain`` consolidated from
one of those; a memory one of its facts was merged into gets back its text from before
that merge; a fact another session not forgotten states too, its fact skipped as a
duplicate or merged in, stays, that session's message now its source: ``kept``), every
quote of that text in the event
log, ingest runs and jobs, and what was derived from it: entities, questions, profile
lines, learned noise (``store.forget``); a new event says what was forgotten, without
the text. Then the vector indexes beside the file are made again without its vectors,
and the file itself: SQLite overwrites deleted content with zeros (``secure_delete``),
the full-text indexes merge (a deleted row's terms linger in old segments until then),
``VACUUM`` rewrites the file without free pages and the WAL is emptied into it. Each
backup ``maintain`` made is rewritten the same way. The sync repository gets a tombstone
for each deleted memory that was shared, at the next sync (other
machines forget it when they pull it: ``forget_pulled``; the history keeps what it had:
see docs/privacy.md); a memory whose text a redact or a revert changed gets its new text
saying so, and the machines that pull it take the old text out too (``redact_pulled``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memctl.config.files import forget_key, write_private
from memctl.context import Context
from memctl.errors import NotFoundError, UsageError
from memctl.home import injected_file
from memctl.maintain.backup import backups, leftovers, restoring
from memctl.maintain.spawn import LOG_DIR
from memctl.memories.operations import edit
from memctl.memories.privacy import REDACTED, safe_line
from memctl.model import Memory, RelationType, State, now_iso
from memctl.retrieve.identity import redact_identity
from memctl.store import forget as erase
from memctl.store import memories as store
from memctl.store.database import Database
from memctl.store.graph import forget_memory
from memctl.store.maintenance import vacuum_into
from memctl.store.message_search import MESSAGE_SEPARATOR, get_message
from memctl.store.questions import delete_questions
from memctl.store.sessions import get_session
from memctl.store.sync import TEXT_WITHDRAWN, files_of, forgotten_by_sync, redacted_by_sync
from memctl.store.transcripts import session_ids_like
from memctl.store.writes import Writer

# A memory superseded by one a session forget deletes is current again.
UNSUPERSEDED = {"superseded_by": None, "invalidated_at": None}
# The columns ``redact`` also rewrites: the messages, titles, tags, sources (a
# transcript's path) and directories of every session, and the paths of imported files.
EVERY_SESSION = (
    "messages.content",
    "sessions.title",
    "sessions.tags",
    "sessions.source",
    "sessions.cwd",
    "imports.path",
)
REWRITING = ".forgetting"  # a backup being written anew
# What an update that takes text out of a memory logs: its next file says it was redacted,
# so the machines that pull it take the old text out too (``sync.outgoing``).
WITHDRAWS = {TEXT_WITHDRAWN: True}


# How much of a session reference an error quotes (a REF of 50,000 characters was echoed whole).
QUOTED_REF_CHARS = 60


def quoted_ref(ref: str) -> str:
    """A reference as an error quotes it: one line, its start only, secrets hidden."""
    return repr(safe_line(ref, QUOTED_REF_CHARS))


def no_session(wanted: str) -> NotFoundError:
    """The one-line error for a session reference that names no stored session."""
    return NotFoundError(f"no stored session {quoted_ref(wanted)} (see `memctl sessions list`)")


@dataclass
class Forgotten:
    """What a forget removed, and where."""

    target: str
    messages: int = 0
    memories: list[str] = field(default_factory=list)
    quotes: dict[str, int] = field(default_factory=dict)
    backups: list[str] = field(default_factory=list)  # rewritten
    wal_emptied: bool = True
    shared: list[str] = field(default_factory=list)  # of memories: those a sync published
    reverted: list[str] = field(default_factory=list)  # memories it had been merged into
    revived: list[str] = field(default_factory=list)  # memories it alone had superseded
    spooled: int = 0  # transcripts waiting in the spool, rewritten
    identity: list[str] = field(default_factory=list)  # identity files rewritten
    identity_left: list[str] = field(default_factory=list)  # a project's, holding it still
    logs: int = 0  # memctl's logs, rewritten (a path holding the value)
    pending: int = 0  # transcripts' pending marks removed (their path or session went)
    copies: dict[str, int] = field(default_factory=dict)  # other sessions -> messages copied
    copies_forgotten: bool = False  # those copied messages were forgotten too
    kept: dict[str, str] = field(default_factory=dict)  # of its memories: id -> a session
    # stating it too (``store.forget.restated``), now its source
    reworded: list[str] = field(default_factory=list)  # of those kept: now in its words

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "messages": self.messages,
            "memories": self.memories,
            "quotes": self.quotes,
            "backups_rewritten": self.backups,
            "wal_emptied": self.wal_emptied,
            "shared": self.shared,
            "reverted": self.reverted,
            "revived": self.revived,
            "spooled_rewritten": self.spooled,
            "identity_rewritten": self.identity,
            "identity_left": self.identity_left,
            "logs_rewritten": self.logs,
            "pending_dropped": self.pending,
            "copies": self.copies,
            "copies_forgotten": self.copies_forgotten,
            "kept": self.kept,
            "reworded": self.reworded,
        }

    def add(self, other: Forgotten) -> None:
        """Count what another target's forget in the same run took out."""
        self.messages += other.messages
        self.memories = sorted({*self.memories, *other.memories})
        for name, count in other.quotes.items():
            self.quotes[name] = self.quotes.get(name, 0) + count
        self.reverted = sorted({*self.reverted, *other.reverted})
        self.revived = sorted({*self.revived, *other.revived})
        self.kept = {k: v for k, v in {**self.kept, **other.kept}.items() if k not in self.memories}
        self.reworded = sorted({*self.reworded, *other.reworded} & set(self.kept))

    def history_note(self) -> str:
        """What a forget cannot reach, said when it matters: a memory a sync published
        leaves its old text in the repository's git history ("" when none was shared)."""
        if not self.shared:
            return ""
        count = len(self.shared)
        return (
            f"{count} of these memories {'was' if count == 1 else 'were'} shared through sync: "
            "the next `memctl sync` replaces the text, but the repository's git history (the "
            "remote's and the clone in the data directory) keeps it; rotate a secret it held"
        )


@dataclass(frozen=True)
class _Target:
    session_id: str
    seqs: list[int] | None  # None: the whole session

    @property
    def name(self) -> str:
        return self.session_id if self.seqs is None else f"{self.session_id}#{self.seqs[0]}"


def _target(db: Database, ref: str) -> _Target:
    """``SESSION`` (an id or unique prefix) or ``SESSION#N``."""
    wanted, separator, number = ref.strip().partition(MESSAGE_SEPARATOR)
    if separator and not number.isdigit():
        raise UsageError(f"{quoted_ref(ref)}: give SESSION-ID or SESSION-ID#N, a message's number")
    session = get_session(db, wanted) if wanted else None
    if session is None and len(wanted) >= 4:
        matches = session_ids_like(db, wanted)
        if len(matches) > 1:
            raise UsageError(
                f"session prefix {quoted_ref(wanted)} is ambiguous ({' and '.join(matches)} "
                "match it, at least): give more of the id"
            )
        session = get_session(db, matches[0]) if matches else None
    if session is None:
        raise no_session(wanted)
    return _Target(session.id, [int(number)] if separator else None)


def copies(ctx: Context, ref: str) -> dict[str, int]:
    """The other sessions holding verbatim copies of a session's (``SESSION``) or a
    message's (``SESSION#N``) messages: session id -> how many."""
    target = _target(ctx.db, ref)
    found = erase.copies_of(ctx.db, target.session_id, target.seqs)
    return {session_id: len(seqs) for session_id, seqs in found.items()}


def forget_session(ctx: Context, ref: str, with_copies: bool = False) -> Forgotten:
    """Forget a session (``SESSION``) or one of its messages (``SESSION#N``) everywhere;
    with ``with_copies``, its messages' verbatim copies in other sessions too (a resume's or
    a fork's: ``store.forget.copies_of``), else only say which sessions hold them."""
    target = _target(ctx.db, ref)
    if target.seqs is not None:
        get_message(ctx.db, f"{target.session_id}{MESSAGE_SEPARATOR}{target.seqs[0]}")
    done = Forgotten(target.name)
    session = get_session(ctx.db, target.session_id)  # its transcript's path: blanked below
    copies = erase.copies_of(ctx.db, target.session_id, target.seqs)
    done.copies = {session_id: len(seqs) for session_id, seqs in copies.items()}
    done.copies_forgotten = with_copies and bool(copies)
    targets = [target, *(_Target(s, seqs) for s, seqs in copies.items() if with_copies)]
    vectors: Vectors = {}
    for each in targets:
        found = erase.memories_from(ctx.db, each.session_id, each.seqs)
        _, taken = erase.going(ctx.db, each.session_id, each.seqs, found)
        vectors |= _kept_vectors(ctx, erase.restated(ctx.db, each.session_id, each.seqs))
        vectors |= _reverted_vectors(ctx, taken)
    key = forget_key(ctx.settings.home)
    _everywhere(
        ctx, done, lambda db, into, live: _forget_all_in(db, targets, into, live, vectors, key)
    )
    if target.seqs is None:
        from memctl.ingest.pending import drop_marks
        from memctl.ingest.spool import drop_session  # ingest's parsers: only here

        drop_session(ctx, target.session_id)  # a spooled copy would be stored no more anyway
        done.pending = drop_marks(  # its transcript's path and directory: stored no more
            ctx.settings.home, lambda entry: entry.session_id == target.session_id
        )
        injected_file(ctx.settings.home, target.session_id).unlink(missing_ok=True)
        if session is not None and len(session.source) >= erase.MIN_NEEDLE:
            # a hook's line on it ("transcript ... does not exist (yet)") names it
            done.logs = _redact_logs(ctx.settings.home / LOG_DIR, session.source, erase.FORGOTTEN)
    return done


def _forget_all_in(
    db: Database,
    targets: list[_Target],
    done: Forgotten,
    live: Context | None,
    vectors: Vectors,
    key: bytes,
) -> None:
    """Forget each target in one database file, in one transaction."""
    with db.atomic():
        for target in targets:
            part = Forgotten(target.name)
            _forget_in(db, target, part, live, vectors, key)
            done.add(part)


def _forget_in(
    db: Database,
    target: _Target,
    done: Forgotten,
    live: Context | None,
    vectors: Vectors,
    key: bytes,
) -> None:
    """Take the target's text out of one database file, in one transaction."""
    with db.atomic():
        found = erase.memories_from(db, target.session_id, target.seqs)
        ids, taken = erase.going(db, target.session_id, target.seqs, found)
        kept = erase.restated(db, target.session_id, target.seqs)
        restating = store.get_memories(db, list(kept))
        needles = _unstated(db, target, restating, kept)
        needles += erase.read_from(db, target.session_id) if target.seqs is None else []
        needles += erase.memory_texts(db, ids) + erase.past_texts(db, ids)
        needles += [text for t in taken for text in t.since]
        memories = store.get_memories(db, ids)
        revived = _to_revive(db, ids, taken)
        changed = store.get_memories(db, [t.memory_id for t in taken])
        weighed = erase.corrected_by(db, ids)
        uncorrected = store.get_memories(db, list(weighed))
        edited = {**memories, **revived, **changed, **uncorrected, **restating}
        with _edit(db, live, "sessions forget", list(edited.values()), target.name) as writer:
            for memory in memories.values():
                writer.delete(memory, reason="sessions forget")
            done.kept, done.reworded = _kept(writer, restating, kept, vectors, "sessions forget")
            erase.drop_merge_sources(db, erase.skips_naming(db, target.session_id, target.seqs))
            _uncorrect(writer, uncorrected, weighed, "sessions forget")
            done.revived = _revive(writer, revived, "sessions forget")
            done.reverted = _revert(db, writer, taken, vectors, "sessions forget")
            done.messages = erase.forget_messages(
                db, target.session_id, target.seqs, now_iso(), key
            )
            done.quotes = erase.erase_quotes(db, needles, erase.FORGOTTEN, EVERY_SESSION)
            erase.drop_all_tags(db, list(memories))
            erase.erase_derived(db, needles, [*memories, *done.reverted])
            writer.forgotten(target.name, messages=done.messages, memories=len(memories))
        done.memories = sorted(memories)


def forget_memories(ctx: Context, memories: list[Memory], verb: str) -> Forgotten:
    """Delete memories for good, with the facts ``maintain`` consolidated from them and
    every quote of their text (``delete --permanent``, ``purge --permanent``)."""
    ids = [m.id for m in memories]
    done = Forgotten(ids[0] if len(ids) == 1 else f"{len(ids)} memories")
    _, taken = erase.going(ctx.db, None, None, ids + erase.consolidated_from(ctx.db, ids))
    vectors = _reverted_vectors(ctx, taken)
    _everywhere(ctx, done, lambda db, into, live: _memories_in(db, ids, into, live, verb, vectors))
    return done


# The verb of the run that forgets what another machine forgot (``forget_pulled``).
PULLED = "sync forget"


def forget_pulled(ctx: Context) -> Forgotten | None:
    """Forget here, as ``delete --permanent`` does, each memory a sync marked deleted from
    another machine's tombstone of a memory it removed for good (``store.sync.
    forgotten_by_sync``); None when there is none. Run after a sync (outside its lock: the
    forget takes it), so one a crash interrupted is done by the next."""
    ids = forgotten_by_sync(ctx.db)
    if not ids:
        return None
    return forget_memories(ctx, list(store.get_memories(ctx.db, ids).values()), PULLED)


def _memories_in(
    db: Database,
    memory_ids: list[str],
    done: Forgotten,
    live: Context | None,
    verb: str,
    vectors: Vectors,
) -> None:
    with db.atomic():
        given = list(store.get_memories(db, memory_ids))
        if not given:
            return
        stating = given + erase.consolidated_from(db, given)  # the facts stating their text
        found, taken = erase.going(db, None, None, stating)
        memories = list(store.get_memories(db, found).values())
        needles = erase.memory_texts(db, found) + erase.past_texts(db, found)
        needles += [text for t in taken for text in t.since]
        revived = _to_revive(db, found, taken, only_folded=True)
        changed = store.get_memories(db, [t.memory_id for t in taken])
        weighed = erase.corrected_by(db, found)
        uncorrected = store.get_memories(db, list(weighed))
        edited = {**{m.id: m for m in memories}, **revived, **changed, **uncorrected}
        with _edit(db, live, verb, list(edited.values())) as writer:
            for memory in memories:
                writer.delete(memory, reason=verb)
            _uncorrect(writer, uncorrected, weighed, verb)
            done.revived = _revive(writer, revived, verb)
            done.reverted = _revert(db, writer, taken, vectors, verb)
            done.quotes = erase.erase_quotes(db, needles, erase.FORGOTTEN, EVERY_SESSION)
            erase.drop_all_tags(db, found)
            erase.erase_derived(db, needles, [*found, *done.reverted])
        done.memories = sorted(found)


def _to_revive(
    db: Database, gone: list[str], taken: list[erase.TakenIn], only_folded: bool = False
) -> dict[str, Memory]:
    """The memories current again: those a forgotten memory alone superseded (unless
    ``only_folded``), and those a merge folded into a memory that goes back to before it
    (it no longer holds their text)."""
    ids = [] if only_folded else erase.superseded_by(db, gone)
    ids += [memory_id for t in taken for memory_id in t.folded if memory_id not in gone]
    return store.get_memories(db, list(dict.fromkeys(ids)))


def _unstated(
    db: Database, target: _Target, kept: dict[str, Memory], by: dict[str, erase.Restated]
) -> list[str]:
    """The texts of the target's messages, and the wording of the memories it alone gave
    words to, that no memory kept states in the words it keeps (``_kept``)."""
    stated = [t for m in kept.values() for t in _kept_texts(m, by[m.id]).values() if t]
    needles = erase.message_texts(db, target.session_id, target.seqs)
    needles += erase.memory_texts(db, [m for m in kept if "content" in by[m].stated])
    return [n for n in needles if not any(n in text for text in stated)]


def _kept_texts(memory: Memory, by: erase.Restated) -> dict[str, str]:
    """A kept memory's texts as the other session's message states it (its own when that
    message's fact was worded the same)."""
    if "content" not in by.stated:
        return {name: getattr(memory, name) for name in erase.MEMORY_TEXTS}
    content = by.stated["content"]
    abstract = by.stated.get("l0_abstract", memory.l0_abstract)
    return {
        "content": content,
        "l0_abstract": abstract,
        "l1_overview": content,
        "l2_content": content,
    }


def _kept_vectors(ctx: Context, kept: dict[str, erase.Restated]) -> Vectors:
    """The vectors of the kept memories the other session words differently, embedded
    before the forget's transaction (as ``_reverted_vectors``)."""
    worded = {m: by.stated["content"] for m, by in kept.items() if "content" in by.stated}
    return dict(zip(worded, ctx.vectors(list(worded.values())) if worded else [], strict=True))


def _kept(
    writer: Writer,
    memories: dict[str, Memory],
    by: dict[str, erase.Restated],
    vectors: Vectors,
    verb: str,
) -> tuple[dict[str, str], list[str]]:
    """The memories another session states too stay as its message states them: that
    message their source, its time their creation, its wording and scope theirs (what the
    forgotten session alone worded, dated or scoped goes). Memory id -> that session, and
    the ids of those reworded (out of the graph until the next maintain reads them again,
    their questions, asked of the old wording, gone)."""
    reworded = []
    for memory in memories.values():
        said = by[memory.id]
        changes: dict[str, Any] = {"source": said.source, "session_id": said.session_id}
        changes |= {"created_at": said.at} if said.at else {}
        changes |= {"scope": said.stated["scope"]} if "scope" in said.stated else {}
        if "content" in said.stated:
            changes |= _kept_texts(memory, said)
            forget_memory(writer.db, memory.id)
            delete_questions(writer.db, [memory.id])
            reworded.append(memory.id)
        withdraws = WITHDRAWS if "content" in said.stated else {}
        writer.update(memory, changes, vectors.get(memory.id), reason=verb, **withdraws)
    return {memory_id: by[memory_id].session_id for memory_id in sorted(memories)}, sorted(reworded)


def _uncorrect(
    writer: Writer, memories: dict[str, Memory], before: dict[str, float], verb: str
) -> None:
    """Give the digests a forgotten memory alone corrected back their confidence."""
    for memory in memories.values():
        writer.update(memory, {"confidence": before[memory.id]}, reason=verb)


def _revive(writer: Writer, revived: dict[str, Memory], verb: str) -> list[str]:
    for memory in revived.values():
        writer.set_state(memory, State.ACTIVE, verb, dict(UNSUPERSEDED))
    return sorted(revived)


Vectors = dict[str, bytes]  # memory id -> the vector of the text it is reverted to


def _reverted_vectors(ctx: Context, taken: list[erase.TakenIn]) -> Vectors:
    """The vectors of the texts the memories that took in a forgotten text go back to,
    embedded before the forget's transaction (an embedding can take seconds)."""
    wanted = [t for t in taken if "content" in t.before]
    texts = [t.before["content"] for t in wanted]
    return dict(
        zip([t.memory_id for t in wanted], ctx.vectors(texts) if texts else [], strict=True)
    )


def _revert(
    db: Database, writer: Writer, taken: list[erase.TakenIn], vectors: Vectors, verb: str
) -> list[str]:
    """Each memory a forgotten text was merged into gets back its texts from before that
    merge (what was merged into it after goes too: its messages stay in their sessions, and
    no longer count among its origins), and leaves the knowledge graph until the next
    maintain reads it again; the ids of those changed."""
    memories = store.get_memories(db, [t.memory_id for t in taken])
    reverted = []
    for t in taken:
        memory = memories.get(t.memory_id)
        if memory is None:
            continue
        changes = {k: v for k, v in t.before.items() if getattr(memory, k) != v}
        if changes:
            writer.update(memory, changes, vectors.get(memory.id), reason=verb, **WITHDRAWS)
            erase.drop_tags(db, memory.id, t.first_event, t.tags)  # the update's "before" too
            forget_memory(db, memory.id)  # the next maintain reads its text into the graph again
            erase.drop_merge_sources(db, t.merges)
            for src, dst, kind in t.links:
                writer.unlink(src, dst, RelationType(kind), reason=verb)
            reverted.append(memory.id)
    return sorted(reverted)


def redact(ctx: Context, text: str) -> Forgotten:
    """Replace one leaked value by ``[REDACTED]`` everywhere: messages, memories (embedded
    again), the event log, runs, jobs, backups, the spool and the logs."""
    needle = text.strip()
    if len(needle) < erase.MIN_NEEDLE:
        raise UsageError(
            f"give the value to redact, {erase.MIN_NEEDLE} characters or more: a shorter one "
            "would rewrite common words"
        )
    return _redact_values(ctx, [needle], [], f"a value of {len(needle)} characters")


# The verb of the run that redacts what another machine redacted (``redact_pulled``).
PULLED_REDACT = "sync redact"


def redact_pulled(ctx: Context) -> int:
    """Take out here the text another machine took out of a memory (its file said
    ``redacted: true``, and a sync applied its new text: ``store.sync.redacted_by_sync``):
    each value its redaction replaced by ``[REDACTED]`` (``replaced_values``), everywhere
    as ``memctl redact`` does; a text put back otherwise (a forget's revert of a merge),
    the old text whole, out of the event log, runs and jobs. How many values and texts it
    took out (0: none left); the taken-out ``before`` equals its ``after`` (or is ``[REDACTED]``),
    so one a crash interrupted is done by the next sync and a done one not again."""
    values: set[str] = set()
    texts: set[str] = set()
    for before, after in redacted_by_sync(ctx.db):
        for name in erase.MEMORY_TEXTS:
            old, new = before.get(name), after.get(name)
            if not isinstance(old, str) or not isinstance(new, str) or old in new:
                continue  # no text went (a field that only grew, or one taken out already)
            found = replaced_values(old, new)
            if found is not None:
                values.update(found)
            elif REDACTED not in old:  # a redacted text keeps nothing to take out
                texts.add(old)
    values = {v for v in values if len(v) >= erase.MIN_NEEDLE and REDACTED not in v}
    texts = {t for t in texts if len(t) >= erase.MIN_NEEDLE}
    if values or texts:
        what = f"{len(values) + len(texts)} texts another machine redacted"
        _redact_values(ctx, sorted(values), sorted(texts), what, PULLED_REDACT)
    return len(values) + len(texts)


def replaced_values(before: str, after: str) -> list[str] | None:
    """The values of ``before`` that ``after`` has ``[REDACTED]`` in place of (each
    mark's text, the shortest from the left); None when ``after`` is not ``before`` with
    values so replaced (a mark of ``before`` kept reads as itself)."""
    parts = after.split(REDACTED)
    if len(parts) == 1 or not before.startswith(parts[0]) or not before.endswith(parts[-1]):
        return None
    values, start, end = [], len(parts[0]), len(before) - len(parts[-1])
    for part in parts[1:-1]:
        found = before.find(part, start + 1, end)
        if found < 0:
            return None
        values.append(before[start:found])
        start = found + len(part)
    if end <= start:
        return None
    return [*values, before[start:end]]


def _redact_values(
    ctx: Context, values: list[str], texts: list[str], what: str, verb: str = "redact"
) -> Forgotten:
    """Replace ``values`` by ``[REDACTED]`` everywhere (memories embedded again, messages,
    events, backups, the spool, the logs), and ``texts`` (a memory's old text whole) in
    what quotes a memory (events, runs, jobs; not the sessions)."""
    found = [
        m
        for m in store.get_memories(ctx.db, _holding(ctx.db, values)).values()
        if any(v in m.content for v in values)
    ]
    contents = [_replaced(m.content, values) for m in found]
    vectors = dict(
        zip([m.id for m in found], ctx.vectors(contents) if contents else [], strict=True)
    )
    done = Forgotten(what)
    key = forget_key(ctx.settings.home)
    _everywhere(
        ctx,
        done,
        lambda db, into, live: _redact_in(db, (values, texts), into, live, vectors, verb, key),
    )
    from memctl.ingest.pending import drop_marks
    from memctl.ingest.spool import redact_spooled  # ingest's parsers: only here

    for needle in values:
        done.spooled += redact_spooled(ctx, needle, REDACTED)  # else the next maintain stores it
        done.logs += _redact_logs(ctx.settings.home / LOG_DIR, needle, REDACTED)
    identity = redact_identity(ctx.settings.home, ctx.settings.cwd, values, REDACTED)
    done.identity = [str(path) for path in identity.rewritten]
    done.identity_left = [str(path) for path in identity.left]
    done.pending = drop_marks(
        ctx.settings.home,
        lambda e: any(n in p for n in values for p in (e.path, e.cwd, e.error, e.session_id or "")),
    )
    return done


def _holding(db: Database, values: list[str]) -> list[str]:
    """The memories holding one of ``values`` (``store.forget.ids_containing``)."""
    return sorted({memory_id for v in values for memory_id in erase.ids_containing(db, v)})


def _replaced(text: str, values: list[str]) -> str:
    """``text`` with each of ``values`` replaced by ``REDACTED``, the longer first (one
    may hold a shorter)."""
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    return text


def _redact_logs(folder: Path, needle: str, mark: str) -> int:
    """Replace ``needle`` by ``mark`` in memctl's logs (the hooks', the worker's, the
    resident process's: a transcript's path holding it, an error quoting it); how many
    changed."""
    changed = 0
    for path in sorted(folder.glob("*.log")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if needle in text:
            write_private(path, text.replace(needle, mark))
            changed += 1
    return changed


def _redact_in(
    db: Database,
    needles: tuple[list[str], list[str]],
    done: Forgotten,
    live: Context | None,
    vectors: dict[str, bytes],
    verb: str,
    key: bytes,
) -> None:
    values, texts = needles
    with db.atomic():
        memories = store.get_memories(db, _holding(db, values))
        with _edit(db, live, verb, list(memories.values()), done.target) as writer:
            for memory in memories.values():
                changes = redacted(memory, values)
                writer.update(memory, changes, vectors.get(memory.id), reason=verb, **WITHDRAWS)
            done.quotes = erase.erase_quotes(db, values, REDACTED, key=key)
            for name, count in erase.erase_quotes(db, texts, REDACTED, EVERY_SESSION).items():
                done.quotes[name] = done.quotes.get(name, 0) + count
            erase.erase_derived(db, values + texts, [])
            writer.forgotten("a redacted value", rows=sum(done.quotes.values()))
        done.memories = sorted(memories)
        done.messages = done.quotes.get("messages.content", 0)


def redacted(memory: Memory, values: list[str]) -> dict[str, Any]:
    """A memory's fields that hold one of ``values`` (its texts, its source, a tag), with
    each replaced by ``REDACTED``."""
    changes: dict[str, Any] = {
        name: _replaced(getattr(memory, name), values)
        for name in (*erase.MEMORY_TEXTS, "source")
        if any(v in getattr(memory, name) for v in values)
    }
    tags = [_replaced(tag, values) for tag in memory.tags]
    if tags != memory.tags:
        changes["tags"] = tags
    return changes


Apply = Callable[[Database, Forgotten, "Context | None"], None]


def _indexes_rebuilt(db: Database, memories: bool) -> None:
    """The vector indexes made again now, so their files keep no copy of a forgotten
    vector: the messages' (a removed message vector marks it rewritten, m018), the stored
    questions' and, when memories were deleted or rewritten, the memories' (a replaced or
    removed vector of either is otherwise kept, marked dead, in its segment until a
    compaction)."""
    from memctl.store.message_vectors import message_vector_index
    from memctl.store.questions import all_questions_rewritten
    from memctl.store.vector_index import QUESTION_VECTORS, vector_index

    with db.atomic():
        all_questions_rewritten(db)
        if memories:
            db.note_vector_write(everything=True)
    if memories:
        vector_index(db)
    message_vector_index(db)
    vector_index(db, QUESTION_VECTORS)


def _everywhere(ctx: Context, done: Forgotten, apply: Apply) -> None:
    """``apply`` to the store, then to its file (zeroed, merged, compacted, the WAL
    emptied), then to every backup; never while a sync runs (``_no_sync``)."""
    with _no_sync(ctx):
        _apply_everywhere(ctx, done, apply)


@contextlib.contextmanager
def _no_sync(ctx: Context) -> Iterator[None]:
    """The sync lock, when there is a sync clone: a sync that read a memory before the
    forget would otherwise write its file, and push it, after (and the forget could not
    say so). A SyncError when a sync holds it past ``sync.lock_wait``: nothing forgotten."""
    from memctl.sync.pipeline import clone_path, lock_path  # sync's YAML and git: only here

    if not (clone_path(ctx.settings) / ".git").exists():
        yield
        return
    from memctl.sync.lock import sync_lock

    with sync_lock(lock_path(ctx.settings), ctx.settings.sync_lock_wait):
        yield


def _apply_everywhere(ctx: Context, done: Forgotten, apply: Apply) -> None:
    _erased(ctx.db, lambda db: apply(db, done, ctx))
    _indexes_rebuilt(ctx.db, bool(done.memories or done.reverted or done.reworded))
    done.shared = _out_of_the_clone(ctx, [*done.memories, *done.reverted, *done.reworded])
    done.wal_emptied = erase.compact(ctx.db)
    _leftovers_removed(ctx)
    for path in backups(ctx.settings):
        partial = path.with_name(path.name + REWRITING)
        partial.unlink(missing_ok=True)
        db = Database.open(path)
        try:
            _erased(db, lambda db: apply(db, Forgotten(""), None))
            vacuum_into(db, partial)
        finally:
            db.close()
        os.chmod(partial, 0o600)
        partial.replace(path)
        for extra in ("-wal", "-shm"):
            Path(str(path) + extra).unlink(missing_ok=True)
        done.backups.append(path.name)


def _leftovers_removed(ctx: Context) -> None:
    """Remove the copies a killed backup, forget or restore left; a restore under way (it
    holds the maintain lock) keeps the copy it is making."""
    from memctl.maintain.lock import maintain_lock

    with maintain_lock(ctx.settings) as holder:
        for left in leftovers(ctx.settings, REWRITING):
            if holder is None or left != restoring(ctx.settings):
                left.unlink(missing_ok=True)


def _out_of_the_clone(ctx: Context, memory_ids: list[str]) -> list[str]:
    """Remove the memories' files from the work tree of the sync clone in the data
    directory (the next sync writes their tombstones or new text: ``sync.outgoing``); the
    memories that had one, whose old text the repository's history keeps."""
    from memctl.sync.pipeline import clone_path  # sync's YAML and git: only here

    clone = clone_path(ctx.settings)
    shared = files_of(ctx.db, memory_ids)
    for files in shared.values():
        for file in files:
            (clone / file.path).unlink(missing_ok=True)
    return sorted(shared)


def _erased(db: Database, apply: Callable[[Database], None]) -> None:
    """``apply`` while SQLite zeroes what is deleted, then the full-text indexes merged (a
    deleted row's terms linger in old segments until they are) and the words' message
    counts taken again (a word is a key there)."""
    erase.secure_delete(db, True)
    try:
        apply(db)
        erase.merge_indexes(db)
        erase.recount_message_terms(db)
    finally:
        erase.secure_delete(db, False)


@contextlib.contextmanager
def _edit(
    db: Database, live: Context | None, verb: str, memories: list[Memory], what: str = ""
) -> Any:
    """The live store's edit run (``memctl runs`` lists it, naming ``what``: never text),
    or a bare writer for a backup."""
    if live is None:
        yield Writer(db)
        return
    with edit(live, verb, memories, what) as writer:
        yield writer
