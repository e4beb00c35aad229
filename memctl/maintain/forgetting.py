"""Forgetting that forgets: a session, one message or a memory, taken out of every place
memctl keeps text (``memctl sessions forget``, and ``delete --permanent`` / ``forget`` of
a session message; one leaked value: ``maintain.redaction``).

In the store, in one transaction: the messages (a whole session's rows go, its row and
read marks stay, marked forgotten, so capture never stores it again; one message's text
becomes ``[forgotten]`` in place), the memories distilled from them (deleted for good:
a fact of the message, a digest spanning it, and a fact ``maintain`` consolidated from
one of those; a memory one of its facts was merged into gets back its text from before
that merge; a fact another session not forgotten states too, its fact skipped as a
duplicate or merged in, stays, that session's message now its source: ``kept``), every
quote of that text in the event log, ingest runs and jobs, and what was derived from it:
entities, questions, profile lines, learned noise (``store.forget``); a new event says
what was forgotten, without the text. Then the file, its vector indexes and each backup
are rewritten without it (``maintain.everywhere``). The sync repository gets a tombstone
for each deleted memory that was shared, at the next sync (other machines forget it when
they pull it: ``forget_pulled``; the history keeps what it had: see docs/privacy.md); a
memory whose text a revert changed gets its new text saying so, and the machines that
pull it take the old text out too (``redaction.redact_pulled``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memctl.config.files import forget_key, known_forget_key
from memctl.context import Context
from memctl.errors import NotFoundError, UsageError
from memctl.home import injected_file
from memctl.maintain.everywhere import (
    EVERY_SESSION,
    WITHDRAWS,
    Forgotten,
    Vectors,
    apply_everywhere,
    drop_started,
    edit_run,
    rewrite_logs,
    rewrite_missed,
)
from memctl.maintain.spawn import LOG_DIR
from memctl.memories.privacy import no_session, quoted_ref
from memctl.model import Memory, RelationType, Session, State, now_iso
from memctl.store import forget as erase
from memctl.store import memories as store
from memctl.store.database import Database
from memctl.store.graph import forget_memory
from memctl.store.message_search import MESSAGE_SEPARATOR, get_message
from memctl.store.questions import delete_questions
from memctl.store.sessions import KEYED_ID, get_session, keyed_session_id, session_known_as
from memctl.store.sync import forgotten_by_sync
from memctl.store.taken_in import TakenIn, drop_tags, going
from memctl.store.transcripts import session_ids_like
from memctl.store.writes import Writer

# A memory superseded by one a session forget deletes is current again.
UNSUPERSEDED = {"superseded_by": None, "invalidated_at": None}


@dataclass(frozen=True)
class _Target:
    session_id: str
    seqs: list[int] | None  # None: the whole session

    @property
    def name(self) -> str:
        return self.session_id if self.seqs is None else f"{self.session_id}#{self.seqs[0]}"


# How a forget's ``ref`` is read when it could be either (``read_ref``): the whole id of a
# session ("#" and all), or ``SESSION#N``, one message.
READS = ("session", "message")


def read_ref(db: Database, home: Path, ref: str, reads: str | None = None) -> _Target:
    """``SESSION`` (an id or unique prefix) or ``SESSION#N``; a stored session's whole id
    names it even when it holds a "#" (``ingest --session-id`` takes any id). A ref that
    names both a stored session and a stored message (a session "X#3", and message 3 of
    "X") is refused unless ``reads`` says which: forgetting the other cannot be undone."""
    ref = ref.strip()
    if reads not in (None, *READS):
        raise UsageError(f"reads takes {' or '.join(READS)}, not {reads!r}", ["reads"])
    if reads == "session":
        return _Target(_session(db, home, ref).id, None)
    wanted, separator, number = ref.rpartition(MESSAGE_SEPARATOR)
    whole = session_known_as(db, ref, known_forget_key(home)) if reads is None else None
    if whole is not None:
        if separator and number.isdigit() and _has_message(db, ref):
            raise UsageError(
                f"{quoted_ref(ref)} names session {quoted_ref(ref)} and message {number} of "
                f"session {quoted_ref(wanted)}: reads (session or message) says which",
                ["reads"],
            )
        return _Target(whole.id, None)
    if not separator and reads is None:
        return _Target(_session(db, home, ref).id, None)
    if not separator or not number.isdigit():
        raise UsageError(f"{quoted_ref(ref)}: give SESSION-ID or SESSION-ID#N, a message's number")
    return _Target(_session(db, home, wanted).id, [int(number)])


def _has_message(db: Database, ref: str) -> bool:
    try:
        get_message(db, ref)
    except NotFoundError:
        return False
    return True


def _session(db: Database, home: Path, wanted: str) -> Session:
    """The stored session ``wanted`` names: its whole id, else a unique prefix."""
    session = session_known_as(db, wanted, known_forget_key(home)) if wanted else None
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
    return session


def copies(ctx: Context, ref: str, reads: str | None = None) -> dict[str, int]:
    """The other sessions holding verbatim copies of a session's (``SESSION``) or a
    message's (``SESSION#N``) messages: session id -> how many."""
    target = read_ref(ctx.db, ctx.settings.home, ref, reads)
    found = erase.copies_of(ctx.db, target.session_id, target.seqs)
    return {session_id: len(seqs) for session_id, seqs in found.items()}


def forget_session(
    ctx: Context, ref: str, with_copies: bool = False, reads: str | None = None
) -> Forgotten:
    """Forget a session (``SESSION``) or one of its messages (``SESSION#N``) everywhere
    (``reads``: which ``ref`` is, when it could be either: ``read_ref``); with
    ``with_copies``, its messages' verbatim copies in other sessions too (a resume's or a
    fork's: ``store.forget.copies_of``), else only say which sessions hold them."""
    target = read_ref(ctx.db, ctx.settings.home, ref, reads)
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
        _, taken = going(ctx.db, each.session_id, each.seqs, found)
        vectors |= _kept_vectors(ctx, erase.restated(ctx.db, each.session_id, each.seqs))
        vectors |= _reverted_vectors(ctx, taken)
    key = forget_key(ctx.settings.home)
    old = _old_id(ref, target, session, key)
    unkeyed = erase.unkeyed_forgotten(ctx.db) + [i for t in targets for i in _opened(ctx.db, t)]
    unkeyed += [old] if old is not None else []
    renamed = [(each, keyed_session_id(key, each)) for each in unkeyed]
    if target.seqs is None and session is not None and len(session.source) >= erase.MIN_NEEDLE:
        # a hook's line on its transcript ("transcript ... does not exist (yet)") names it
        renamed.append((session.source, erase.FORGOTTEN))
    # The logs first: once the store has forgotten the session, nothing here knows its
    # transcript's path, so a crash then would leave them naming it for good. Then again
    # after: a line written meanwhile.
    done.logs += _logs_renamed(ctx.settings.home, renamed)
    apply_everywhere(
        ctx, done, lambda db, into, live: _forget_all_in(db, targets, into, live, vectors, key)
    )
    done.logs += _logs_renamed(ctx.settings.home, renamed)
    if target.seqs is None:
        done.pending = _forget_beside(ctx, old or target.session_id)
    return done


def _old_id(ref: str, target: _Target, session: Session | None, key: bytes) -> str | None:
    """The id the files beside the store (the spool, the hooks' records, memctl's logs)
    know a whole session by, which the forget keys (``key_session_ids``): its id; for one
    forgotten already, kept under its id keyed, the id a forget run again names it by
    (``ref``, whole), so that one a crash cut short after the store's part finishes the
    rest. None for a message, or a forgotten session named otherwise."""
    if session is None or target.seqs is not None:
        return None
    if not session.forgotten_at:
        return session.id
    wanted = ref.strip()
    return wanted if keyed_session_id(key, wanted) == session.id else None


def _logs_renamed(home: Path, renamed: list[tuple[str, str]]) -> int:
    """Each old text of ``renamed`` (a session's id, its transcript's path) replaced by its
    new one in memctl's logs and the hooks' records of what they missed; how many files
    changed."""
    changed = 0
    for old, new in renamed:  # the worker's log names the session it distilled
        changed += rewrite_logs(home / LOG_DIR, old, new)
        changed += _missed_renamed(home, old, new)
    return changed


def _forget_beside(ctx: Context, session_id: str) -> int:
    """A forgotten session out of the files beside the store: its spooled copy, the hooks'
    marks of its transcript (their path and directory: how many went), their records of
    what it was given and of the client process that started it."""
    from memctl.ingest.pending import drop_marks
    from memctl.ingest.spool import drop_session  # ingest's parsers: only here

    drop_session(ctx, session_id)  # a spooled copy would be stored no more anyway
    dropped = drop_marks(ctx.settings.home, lambda entry: entry.session_id == session_id)
    injected_file(ctx.settings.home, session_id).unlink(missing_ok=True)
    drop_started(ctx.settings.home, lambda started: started == session_id)
    return dropped


def _missed_renamed(home: Path, old: str, new: str) -> int:
    """Name a forgotten session by the id it is kept under in the hooks' records of why
    their last run captured nothing (``hooks/missed/<client>.<event>``: "no transcript of
    session 'ID' found", which `memctl doctor` shows until that hook captures again); how
    many were rewritten. Only the quoted id: a short one may be a word of the rest."""
    named, renamed = f"session {old!r}", f"session {new!r}"
    return rewrite_missed(home, lambda reason: reason.replace(named, renamed))


def _run_name(target: _Target, key: bytes) -> str:
    """What the forget's run is named by: a whole session by the id it is kept under
    (``keyed_session_id``), as every record naming it is rewritten once it is forgotten;
    a run's notes are free text, which no name shorter than ``MIN_NEEDLE`` is taken out
    of (``memctl ingest --session-id hr-q3``)."""
    if target.seqs is not None or target.session_id.startswith(KEYED_ID):
        return target.name
    return keyed_session_id(key, target.session_id)


def _opened(db: Database, target: _Target) -> list[str]:
    """The target's session, when named by its first message and the target takes it."""
    if target.seqs is None or 1 not in target.seqs:
        return []
    return erase.named_by_opening(db, [target.session_id])


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
        opened = _opened(db, target)
        found = erase.memories_from(db, target.session_id, target.seqs)
        ids, taken = going(db, target.session_id, target.seqs, found)
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
        named = _run_name(target, key)
        with edit_run(db, live, "sessions forget", list(edited.values()), named) as writer:
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
        erase.key_session_ids(db, key, opened)  # after the run, whose record names it
        done.memories = sorted(memories)


def forget_memories(ctx: Context, memories: list[Memory], verb: str) -> Forgotten:
    """Delete memories for good, with the facts ``maintain`` consolidated from them and
    every quote of their text (``delete --permanent``, ``purge --permanent``)."""
    ids = [m.id for m in memories]
    done = Forgotten(ids[0] if len(ids) == 1 else f"{len(ids)} memories")
    _, taken = going(ctx.db, None, None, ids + erase.consolidated_from(ctx.db, ids))
    vectors = _reverted_vectors(ctx, taken)
    apply_everywhere(
        ctx, done, lambda db, into, live: _memories_in(db, ids, into, live, verb, vectors)
    )
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
        found, taken = going(db, None, None, stating)
        memories = list(store.get_memories(db, found).values())
        needles = erase.memory_texts(db, found) + erase.past_texts(db, found)
        needles += [text for t in taken for text in t.since]
        revived = _to_revive(db, found, taken, only_folded=True)
        changed = store.get_memories(db, [t.memory_id for t in taken])
        weighed = erase.corrected_by(db, found)
        uncorrected = store.get_memories(db, list(weighed))
        edited = {**{m.id: m for m in memories}, **revived, **changed, **uncorrected}
        with edit_run(db, live, verb, list(edited.values())) as writer:
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
    db: Database, gone: list[str], taken: list[TakenIn], only_folded: bool = False
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


def _reverted_vectors(ctx: Context, taken: list[TakenIn]) -> Vectors:
    """The vectors of the texts the memories that took in a forgotten text go back to,
    embedded before the forget's transaction (an embedding can take seconds)."""
    wanted = [t for t in taken if "content" in t.before]
    texts = [t.before["content"] for t in wanted]
    return dict(
        zip([t.memory_id for t in wanted], ctx.vectors(texts) if texts else [], strict=True)
    )


def _revert(
    db: Database, writer: Writer, taken: list[TakenIn], vectors: Vectors, verb: str
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
            drop_tags(db, memory.id, t.first_event, t.tags)  # the update's "before" too
            forget_memory(db, memory.id)  # the next maintain reads its text into the graph again
            if "content" in changes:  # questions asked of the merged wording may quote it
                delete_questions(db, [memory.id])
            erase.drop_merge_sources(db, t.merges)
            for src, dst, kind in t.links:
                writer.unlink(src, dst, RelationType(kind), reason=verb)
            reverted.append(memory.id)
    return sorted(reverted)
