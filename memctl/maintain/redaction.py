"""Redaction: one leaked value replaced by ``[REDACTED]`` everywhere memctl keeps text
(``memctl redact``): every session's messages (and who said them), titles, tags, sources
and directories, memories (their texts, embedded again, their tags and source), imported
files' paths, the event log, runs, jobs, backups, the spool and memctl's logs
(``maintain.everywhere``); a memory whose text changed gets its new file saying so at the
next sync, and the machines that pull it take the old text out too (``redact_pulled``).
"""

from __future__ import annotations

from typing import Any

from memctl.config.files import forget_key
from memctl.context import Context
from memctl.errors import UsageError
from memctl.maintain.everywhere import (
    EVERY_SESSION,
    WITHDRAWS,
    Forgotten,
    Vectors,
    apply_everywhere,
    drop_injected,
    edit_run,
    rewrite_file_backups,
    rewrite_logs,
    rewrite_missed,
)
from memctl.maintain.spawn import LOG_DIR
from memctl.memories.privacy import REDACTED
from memctl.model import Memory
from memctl.retrieve.identity import redact_identity
from memctl.store import forget as erase
from memctl.store import memories as store
from memctl.store.database import Database
from memctl.store.graph import restate
from memctl.store.sessions import keyed_session_id
from memctl.store.sync import redacted_by_sync


def redact(ctx: Context, text: str) -> Forgotten:
    """Replace one leaked value by ``[REDACTED]`` everywhere: messages, memories (embedded
    again), the event log, runs, jobs, backups, the spool and the logs. A value of several
    lines (a private key) goes whole, each line of ``MIN_NEEDLE`` characters or more, and
    flattened onto one line (as a digest or a note quotes it)."""
    needle = text.strip()
    if len(needle) < erase.MIN_NEEDLE:
        raise UsageError(
            f"give the value to redact, {erase.MIN_NEEDLE} characters or more: a shorter one "
            "would rewrite common words"
        )
    lines = [line.strip() for line in needle.splitlines()]
    # "\r\n": a value pasted from a Windows file, stored as a client wrote it ("\n")
    forms = {needle, "\n".join(needle.splitlines()), " ".join(needle.split()), *lines}
    values = sorted(v for v in forms if len(v) >= erase.MIN_NEEDLE)
    return _redact_values(ctx, values, [], f"a value of {len(needle)} characters")


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
    what quotes a memory (events, runs, jobs; not the sessions). A value's head memctl
    stored cut short goes too (``store.forget.cut_heads``), from what memctl writes: not
    from a transcript waiting in the spool or an identity file, which are the user's."""
    given, values = values, _with_heads(ctx.db, values)
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
    opened = erase.named_by_opening(ctx.db, erase.openings_holding(ctx.db, values))
    apply_everywhere(
        ctx,
        done,
        lambda db, into, live: _redact_in(
            db,
            (values if live is not None else _with_heads(db, given), texts),
            into,
            live,
            vectors,
            verb,
            key,
        ),
    )
    from memctl.ingest.pending import drop_marks
    from memctl.ingest.spool import redact_spooled  # ingest's parsers: only here

    for needle in given:
        done.spooled += redact_spooled(ctx, needle, REDACTED)  # else the next maintain stores it
    for needle in values:
        done.logs += rewrite_logs(ctx.settings.home / LOG_DIR, needle, REDACTED)
    done.logs += rewrite_missed(ctx.settings.home, lambda reason: _replaced(reason, values))
    drop_injected(ctx.settings.home, given)  # a session id the client chose, as a file's name
    for old in opened:  # the worker's log names the session by a digest of the value
        done.logs += rewrite_logs(ctx.settings.home / LOG_DIR, old, keyed_session_id(key, old))
    done.backups += rewrite_file_backups(ctx.settings.home, given, REDACTED)
    identity = redact_identity(ctx.settings.home, ctx.settings.cwd, given, REDACTED)
    done.identity = [str(path) for path in identity.rewritten]
    done.identity_left = [str(path) for path in identity.left]
    done.pending = drop_marks(
        ctx.settings.home,
        lambda e: any(n in p for n in values for p in (e.path, e.cwd, e.error, e.session_id or "")),
    )
    return done


def _with_heads(db: Database, values: list[str]) -> list[str]:
    """``values`` and their heads this copy of the store holds cut short (a backup may hold
    one the store no longer does)."""
    return [*values, *erase.cut_heads(db, values).keys()]


def _holding(db: Database, values: list[str]) -> list[str]:
    """The memories holding one of ``values`` (``store.forget.ids_containing``)."""
    return sorted({memory_id for v in values for memory_id in erase.ids_containing(db, v)})


def _replaced(text: str, values: list[str]) -> str:
    """``text`` with each of ``values`` replaced by ``REDACTED``, the longer first (one
    may hold a shorter)."""
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    return text


def _redact_in(
    db: Database,
    needles: tuple[list[str], list[str]],
    done: Forgotten,
    live: Context | None,
    vectors: Vectors,
    verb: str,
    key: bytes,
) -> None:
    values, texts = needles
    with db.atomic():
        opened = erase.named_by_opening(db, erase.openings_holding(db, values))
        memories = store.get_memories(db, _holding(db, values))
        with edit_run(db, live, verb, list(memories.values()), done.target) as writer:
            for memory in memories.values():
                changes = redacted(memory, values)
                writer.update(memory, changes, vectors.get(memory.id), reason=verb, **WITHDRAWS)
            done.quotes = erase.erase_quotes(db, values, REDACTED, key=key)
            for name, count in erase.erase_quotes(db, texts, REDACTED, EVERY_SESSION).items():
                done.quotes[name] = done.quotes.get(name, 0) + count
            restated = erase.stating(db, values + texts)
            erase.erase_derived(db, values + texts, [])
            restate(db, restated)
            writer.forgotten("a redacted value", rows=sum(done.quotes.values()))
        erase.key_session_ids(db, key, opened)  # named by a digest of a redacted value
        done.memories = sorted(memories)
        done.restated = [m for m in restated if m not in memories]
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
