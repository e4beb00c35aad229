"""Task rescrub: what memctl keeps, read again through today's privacy filter.

A detector added in a later memctl (a password given on a command line, a credentials file
an IDE copied in) finds nothing in what an older one stored: the password stays in the
messages, the memories and digests distilled from them, their full-text and vector indexes,
the event log, the backups and the sync repository. This task scrubs every stored message
(each session's as one conversation, as capture does: ``memories.scrubber``), every name
a message is said by, every session's title, directory and source, and every memory's
texts, source and tags, and rewrites what changed in place, in one transaction:

- a message gets its new text and the new text's digest (a capture of its transcript finds
  it stored); its full-text row follows (triggers) and its vectors go (m018, m033), so the
  next upkeep embeds the new text;
- a memory is updated (embedded again, its next sync file saying it was redacted, so the
  machines that pull it take the old text out too) in a run of its own, as a redact's:
  `memctl undo` refuses it (the text is gone for good), and the maintain run stays one it
  reverts;
- each value hidden, and each memory's old text, is replaced where else it is quoted (the
  event log, runs, jobs, other sessions' messages: ``store.forget.replace_quotes``) and
  what memctl derived from it goes (entities, questions, profile lines);
- one event of that run says how many of which kind were hidden, never a value.

Then, as a redact does (``maintain.everywhere``): the file compacted, every backup scrubbed
the same way, the changed memories' files out of the sync clone, the spool and the logs
rewritten. A backup is read only where its texts differ from what the store's scan found
clean (``Found.clean``: a digest of each session's messages, each session's texts, each
memory's fields): the scrub is a function of those texts alone, so the same texts are clean
there too, and a backup costs a read of its rows, not a scan. The filter's digest
(``filter_digest``) is kept in ``meta``: while it is the same, the task reads nothing
(what a capture stored since went through the same filter).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memctl.config.files import forget_key
from memctl.context import Context
from memctl.maintain.everywhere import (
    WITHDRAWS,
    Forgotten,
    apply_everywhere,
    edit_run,
    rewrite_logs,
    rewrite_missed,
)
from memctl.maintain.plan import Maintenance
from memctl.maintain.report import TaskReport
from memctl.maintain.spawn import LOG_DIR
from memctl.memories import privacy, scrubber
from memctl.memories.filter_digest import behaviour_digest
from memctl.memories.followed import digests
from memctl.memories.lines import kept_speaker
from memctl.memories.privacy import (
    REDACTED,
    Redactions,
    find_secrets,
    redact_hits,
    secret_in_id,
    without_blocks,
)
from memctl.memories.scrubber import MESSAGE_JOINS, Scrubber
from memctl.model import Memory
from memctl.store import forget as erase
from memctl.store.database import Database
from memctl.store.graph import restate
from memctl.store.memories import get_memories
from memctl.store.rescrub import (
    RESCRUBBED_WITH,
    MessageRow,
    drop_graph_rows,
    drop_quoting,
    graph_texts,
    memory_ids,
    message_speakers,
    rename_speakers,
    rewrite_messages,
    session_texts,
    sessions_messages,
    set_session_texts,
    stating_rows,
)
from memctl.store.sessions import add_followed_digests
from memctl.store.writes import Writer

# A memory's fields scrubbed as one text each (its tags one by one).
MEMORY_FIELDS = (*erase.MEMORY_TEXTS, "source")
# The ids a memory records of where it was stored (an MCP client's session and name, which
# memctl kept verbatim before s37-leak: ``mcp_server.stored_in``, ``call_client``).
MEMORY_IDS = ("session_id", "agent_id")
# The kind an id holding a secret counts as (its mark when quoted elsewhere).
ID_KIND = "secret"
# Memories read at a time.
MEMORY_BATCH = 500
# A clean row's digest: 128 bits, no two texts meet by chance (``texts_digest``).
TEXTS_DIGEST_BYTES = 16
REASON = "rescrub"
# What its run and event say it took out (never a value).
WHAT = "secrets today's privacy filter finds"
# The kind a ``<private>`` block left in a stored text counts as.
PRIVATE_KIND = "private"


def filter_digest() -> str:
    """A digest of what the privacy filter does (its detectors and the conversation
    scrubber: their patterns, lists, constants and code, not their comments or docstrings):
    a new detector or a detector's changed pattern changes it."""
    return behaviour_digest([privacy, scrubber])


@dataclass
class Found:
    """What today's filter hides in a store that the stored texts still hold."""

    messages: list[tuple[int, str, str, str]] = field(default_factory=list)  # rowid, role,
    # old text, new text
    speakers: dict[str, str] = field(default_factory=dict)  # a message's speaker -> new name
    sessions: dict[str, dict[str, str]] = field(default_factory=dict)  # id -> new texts
    memories: dict[str, Counter[str]] = field(default_factory=dict)  # id -> kinds hidden
    values: dict[str, str] = field(default_factory=dict)  # value hidden -> its kind
    kinds: Counter[str] = field(default_factory=Counter)
    # session -> the values its scrubber follows (value -> kind), for its next capture
    followed: dict[str, dict[str, str]] = field(default_factory=dict)
    # digests of what it read and found nothing in (a session's messages, a session's
    # texts, a memory's fields): a backup's copy of one is skipped (``found_in``)
    clean: set[bytes] = field(default_factory=set)
    # the graph's rows whose text holds a secret (``store.rescrub.GRAPH_TABLES`` -> ids)
    graph: dict[str, set[int]] = field(default_factory=dict)
    # a value's head an older memctl stored cut short ("Tr0ub4…": a digest's item, a title),
    # which the filter no longer knows without the rest -> its value's kind
    heads: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.messages or self.speakers or self.sessions or self.memories or self.graph)

    def take(self, found: Redactions, values: dict[str, str]) -> None:
        self.kinds.update(found.secrets)
        self.kinds[PRIVATE_KIND] += found.private_blocks
        self.values.update(values)


def scrubbed(text: str) -> tuple[str, Redactions, dict[str, str]]:
    """``text`` as the filter keeps it today, what it took out, and each value it hid
    (-> its kind)."""
    found = Redactions()
    blocked = without_blocks(text, found)
    hits = find_secrets(blocked)
    values = {blocked[h.start : h.end]: h.kind for h in hits}
    return redact_hits(blocked, hits, found.secrets), found, values


def _known_word(word: str) -> bool:
    # imported here: the word lists (~10 ms) load only when a password of letters is found
    from memctl.ingest.entities import known_word

    return known_word(word)


def texts_digest(texts: Iterable[str]) -> bytes:
    """A digest of these texts in order (each one's length first, so no two lists share
    one): what the filter reads of a row, the same in a backup as in the store."""
    digest = hashlib.blake2b(digest_size=TEXTS_DIGEST_BYTES)
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.digest()


def _session_messages(
    session_id: str, rows: list[MessageRow], found: Found, clean: Set[bytes]
) -> None:
    """A session's messages scrubbed as one conversation, as capture scrubs them, unless
    their texts are ``clean`` (the scrubber reads nothing else); the values it follows
    kept for the session's next capture, which reads on from where the last stopped and
    would not see the label again (``memories.followed``)."""
    read = texts_digest(row[2] for row in rows)
    if read in clean:
        return
    changed = len(found.messages)
    redactions = Redactions()
    scrub: Scrubber[MessageRow] = Scrubber(redactions, MESSAGE_JOINS, known=_known_word)
    pushed = (part for row in rows for part in scrub.push(row[2], row))
    for text, (rowid, role, old) in [*pushed, *scrub.close()]:
        # what the filter hides, not the whitespace around it: an import keeps a document's
        # last line break, and a new store's first maintain said "6 messages" rescrubbed
        if text.strip() != old.strip():
            found.messages.append((rowid, role, old, text.strip()))
    if redactions.secret_count or redactions.private_blocks:
        found.take(redactions, scrub.hidden_values)
    if scrub.followed:
        found.followed[session_id] = scrub.followed
    if len(found.messages) == changed and not (redactions.secret_count or scrub.followed):
        found.clean.add(read)


def memory_changes(
    memory: Memory, heads: Mapping[str, str] | None = None
) -> tuple[dict[str, Any], Redactions, dict[str, str]]:
    """A memory's fields the filter changes today, each of ``heads`` (``Found.heads``) in
    them marked as its value's kind, with their new text; what the filter took out."""
    changes: dict[str, Any] = {}
    found, values, heads = Redactions(), dict[str, str](), heads or {}
    for name in MEMORY_FIELDS:
        new, taken, hidden = scrubbed(getattr(memory, name))
        for head in sorted(heads, key=len, reverse=True):  # one may hold a shorter
            new = new.replace(head, _mark(heads[head]))
        if new != getattr(memory, name):
            changes[name] = new
            found.add(taken)
            values |= hidden
    tags = []
    for tag in memory.tags:
        new, taken, hidden = scrubbed(tag)
        tags.append(new)
        found.add(taken)
        values |= hidden
    if tags != memory.tags:
        changes["tags"] = tags
    for name in MEMORY_IDS:  # an id holding a secret names nothing worth keeping
        given = getattr(memory, name)
        if given and secret_in_id(given):
            changes[name] = None
            found.secrets[ID_KIND] += 1
            values[given] = ID_KIND
    return changes, found, values


def _memory_digest(memory: Memory) -> bytes:
    """What ``memory_changes`` reads of a memory."""
    ids = [getattr(memory, n) or "" for n in MEMORY_IDS]
    return texts_digest([*(getattr(memory, n) for n in MEMORY_FIELDS), *ids, *memory.tags])


def found_in(db: Database, clean: Set[bytes] = frozenset()) -> Found:
    """What today's filter hides in the store's texts; a row whose texts are ``clean``
    (another copy of the store read them and found nothing: a backup) is not read again."""
    found = Found()
    for session_id, rows in sessions_messages(db):
        _session_messages(session_id, rows, found, clean)
    for name in message_speakers(db):  # kept as capture and import keep a name
        read = texts_digest([f"speaker={name}"])
        if read in clean:
            continue
        kept = kept_speaker(name)
        if kept != name:
            found.speakers[name] = kept
            found.take(*scrubbed(name)[1:])
        else:
            found.clean.add(read)
    for session_id, texts in session_texts(db):
        read = texts_digest([f"{n}={t}" for n, t in texts.items()])
        if read in clean:
            continue
        new = {}
        for name, text in texts.items():
            kept, taken, values = scrubbed(text)
            if kept != text:
                new[name] = kept
                found.take(taken, values)
        if new:
            found.sessions[session_id] = new
        else:
            found.clean.add(read)
    ids = memory_ids(db)
    for start in range(0, len(ids), MEMORY_BATCH):
        for memory in get_memories(db, ids[start : start + MEMORY_BATCH]).values():
            read = _memory_digest(memory)
            if read in clean:
                continue
            changes, taken, values = memory_changes(memory)
            if changes:
                found.memories[memory.id] = Counter(taken.secrets)
                found.take(taken, values)
            else:
                found.clean.add(read)
    for table, row_id, text in graph_texts(db):  # an LLM's or the host's, cheap to read
        kept, taken, values = scrubbed(text)
        if kept != text:
            found.graph.setdefault(table, set()).add(row_id)
            found.take(taken, values)
    _cut_heads(db, found)
    return found


def _cut_heads(db: Database, found: Found) -> None:
    """The heads of the values found that a stored text holds cut short
    (``store.forget.cut_heads``), and the memories holding one: an older memctl cut the
    value in a digest, a note or a title, where today's filter sees no value."""
    values = [v for v in found.values if len(v) >= erase.MIN_NEEDLE]
    found.heads = {h: found.values[v] for h, v in erase.cut_heads(db, values).items()}
    for head, kind in found.heads.items():
        for memory_id in erase.ids_containing(db, head):
            found.memories.setdefault(memory_id, Counter())[kind] += 1


def _mark(kind: str) -> str:
    return REDACTED if kind == PRIVATE_KIND else f"[REDACTED:{kind}]"


Embed = Callable[[list[str]], list[bytes]]


def _rewrite(
    db: Database,
    found: Found,
    memories: list[Memory],
    writer: Writer,
    embed: Embed,
    done: Forgotten,
) -> None:
    """Write what ``found`` holds, in the caller's transaction: the messages still as read,
    the sessions' texts, each of ``memories`` scrubbed again as it is now (embedded again);
    then the values and the memories' old texts replaced where else they are quoted."""
    rewrite_messages(db, found.messages)
    rename_speakers(db, found.speakers)
    restating = stating_rows(db, found.graph)  # their files state less now: sent again
    drop_graph_rows(db, found.graph)  # derived rows holding a secret go, as erase_derived
    restate(db, restating)
    for session_id, texts in found.sessions.items():
        set_session_texts(db, session_id, texts)
    replacements: dict[str, str] = {}
    edits = [(m, memory_changes(m, found.heads)[0]) for m in memories]
    contents = [c["content"] for _, c in edits if "content" in c]
    vectors = dict(zip(contents, embed(contents) if contents else [], strict=True))
    for memory, changes in edits:
        if not changes:
            continue
        kinds = {k: n for k, n in found.memories[memory.id].items() if n}
        vector = vectors.get(changes.get("content", ""))
        writer.update(memory, changes, vector, reason=REASON, redacted=kinds, **WITHDRAWS)
        replacements |= {getattr(memory, n): t for n, t in changes.items() if n in MEMORY_FIELDS}
        done.memories.append(memory.id)
    values = {v: _mark(k) for v, k in found.values.items() if len(v) >= erase.MIN_NEEDLE}
    values |= {head: _mark(kind) for head, kind in found.heads.items()}
    done.quotes = erase.replace_quotes(db, replacements | values, REDACTED)
    # a profile line resting on a changed memory may quote it: the profile task writes it anew
    erase.erase_derived(db, [*values, *replacements], done.memories)
    drop_quoting(db, done.memories, [v for v in found.values if v])
    done.messages = len(found.messages)
    done.restated = [m for m in restating if m not in done.memories]
    kinds = {k: n for k, n in found.kinds.items() if n}
    writer.forgotten(WHAT, rows=done.messages, **kinds)


def rescrub(m: Maintenance) -> TaskReport:
    """Scrub what the store keeps with today's privacy filter, when it changed since the
    last rescrub."""
    report = m.report("rescrub")
    digest = filter_digest()
    if m.db.meta(RESCRUBBED_WITH) == digest:
        return report.skip("the privacy filter has not changed since the last rescrub")
    found = found_in(m.db)
    _counted(report, found)
    if m.dry_run:
        return report
    if found:
        done = rescrubbed(m, found)
        report.counts["backups"] = len(done.backups)
        report.notes += [n for n in (done.file_note(), done.history_note()) if n]
    marks, missed = _hooks_records(m.ctx.settings.home, found)
    report.counts.update({k: n for k, n in (("pending_marks", marks), ("missed", missed)) if n})
    with m.db.atomic():
        m.db.set_meta(RESCRUBBED_WITH, digest)
    return report


def _counted(report: TaskReport, found: Found) -> None:
    """The report's counts (how many texts, of which kinds: never a value)."""
    report.counts.update(
        {
            "messages": len(found.messages),
            **({"speakers": len(found.speakers)} if found.speakers else {}),
            "sessions": len(found.sessions),
            "memories": len(found.memories),
            **({"graph": sum(map(len, found.graph.values()))} if found.graph else {}),
            **{f"hidden.{k}": n for k, n in sorted(found.kinds.items()) if n},
        }
    )
    for memory_id, kinds in sorted(found.memories.items()):
        report.changes.append({"action": "rescrubbed", "id": memory_id, "kinds": sorted(kinds)})


def rescrubbed(m: Maintenance, found: Found) -> Forgotten:
    """Write ``found`` to the store, its file and every backup (each scrubbed afresh),
    then the spool and the logs."""
    ctx = m.ctx
    done = Forgotten(WHAT)

    key = forget_key(ctx.settings.home)

    def apply(db: Database, into: Forgotten, live: Context | None) -> None:
        # a backup: what the store read clean is read clean there too (the same texts)
        here = found if live is not None else found_in(db, found.clean)
        with db.atomic():
            # a session named by a digest of its opening, which held a value (as redact)
            opened = erase.named_by_opening(db, erase.openings_holding(db, list(here.values)))
            memories = list(get_memories(db, sorted(here.memories)).values())
            # its own run, as a redact's: the maintain run stays one `memctl undo` reverts
            with edit_run(db, live, REASON, memories, WHAT) as writer:
                _rewrite(db, here, memories, writer, ctx.vectors, into)
            if live is not None:
                for session_id, values in here.followed.items():
                    add_followed_digests(db, session_id, digests(key, values))
        erase.key_session_ids(db, key, opened)

    apply_everywhere(ctx, done, apply)
    _outside_the_store(ctx, found, done)
    return done


def _outside_the_store(ctx: Context, found: Found, done: Forgotten) -> None:
    """Each value hidden, out of the spool and memctl's logs (a value's cut head, out of
    the logs)."""
    from memctl.ingest.spool import redact_spooled  # ingest's parsers: only here

    for value, kind in found.values.items():
        if len(value) >= erase.MIN_NEEDLE:
            done.spooled += redact_spooled(ctx, value, _mark(kind))
            done.logs += rewrite_logs(ctx.settings.home / LOG_DIR, value, _mark(kind))
    for head, kind in found.heads.items():  # a transcript waiting is the client's, never cut
        done.logs += rewrite_logs(ctx.settings.home / LOG_DIR, head, _mark(kind))


def _hooks_records(home: Path, found: Found) -> tuple[int, int]:
    """The hooks' records of why a capture failed, read through today's filter, each value
    the store held replaced too: a pending mark's error (its path, directory and session
    stay as the client gave them, to open the transcript again; a mark naming a value goes,
    as a redact drops it, and the next hook marks the transcript again) and a hook's
    missed record (``hooks/missed/``: "no transcript of session 'ID' found"). How many
    marks and records changed."""
    from memctl.ingest.pending import drop_marks, rewrite_errors

    values = {v: _mark(k) for v, k in found.values.items() if len(v) >= erase.MIN_NEEDLE}

    def kept(text: str) -> str:
        text = scrubbed(text)[0]
        for value in sorted(values, key=len, reverse=True):  # one may hold a shorter
            text = text.replace(value, values[value])
        return text

    marks = drop_marks(
        home, lambda e: any(v in f for v in values for f in (e.path, e.cwd, e.session_id or ""))
    )
    marks += rewrite_errors(home, kept)
    return marks, rewrite_missed(home, kept)
