"""Task upkeep: vectors for every memory, compact indexes, and a backup.

- integrity: SQLite's integrity check runs before any task (see pipeline.py;
  the quick check when no backup is due); a damaged store stops the whole run
  (exit status 4).
- re-embed: a store whose vectors another model made is re-embedded whole;
  otherwise memories without a vector get one, and so do up to
  ``MESSAGES_PER_RUN`` session messages (a store from before message vectors,
  a session longer than its job embeds, one whose embedding failed), and the shown calls
  of as many messages of tool notes (a store from before m033: ingest/call_vectors.py).
- names: memories written without the vocabulary's names in their searched vector (a store
  from before m021, synced ones, an undo) get them, ``MEANING_PER_RUN`` a run
  (ingest/meaning.py).
- FTS5 ``optimize`` and vector index compaction, when something changed since
  the last time; the session messages' index whenever it holds more than one segment
  (any write since its last optimize: one at 1,000,000 messages took 0.6 s of CPU, and
  a recall searches one segment faster than the ten a growing store leaves).
- forgotten text: while the file may hold some (a forget or redact whose compaction a
  reader kept from emptying the WAL, a migration that took a path out: ``meta``'s
  ``forgotten_in_file``), ``VACUUM`` and the WAL emptied again (store/forget.py
  ``compact``); a reader still there leaves it for the next run, and the report says so.
- older backups: a backup an older memctl made is brought to this one's schema, so what a
  migration took out of the store (m032: a folder's plain digest) goes from it too.
- backup: ``VACUUM INTO`` (maintain/backup.py) when something changed since the
  last backup and it is ``maintain.backup_every_hours`` old, the newest
  ``maintain.backups`` kept; every run first removes the copies a killed backup or
  ``restore`` left (they hold the store's text, forgotten text too).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memctl.embed import BATCH_TEXTS, Embedder
from memctl.errors import StoreError
from memctl.ingest.asked import give_questions
from memctl.ingest.call_vectors import embed_calls
from memctl.ingest.meaning import give_names
from memctl.ingest.message_vectors import drop_unkept, embed_messages
from memctl.maintain.backup import (
    backup_due,
    bring_up_to_date,
    leftovers,
    make_backup,
    older_backups,
)
from memctl.maintain.plan import Maintenance, TaskReport
from memctl.maintain.reembed import reembed
from memctl.store.call_vectors import uncalled_count
from memctl.store.database import MESSAGES_FTS, Database
from memctl.store.forget import compact, forgotten_in_file
from memctl.store.maintenance import (
    change_mark,
    fts_segments,
    integrity_problems,
    optimize_fts,
)
from memctl.store.meaning import MEANING_MARK, QUESTIONS_MARK, contents_after, notes_after
from memctl.store.memories import get_memories, ids_without_vectors
from memctl.store.message_search import count_message_terms, counts_stale
from memctl.store.message_vectors import unembedded_count
from memctl.store.sessions import keeps_message_vectors
from memctl.store.vector_index import MEMORY_VECTORS, QUESTION_VECTORS, vector_index

VECTOR_SOURCES = (MEMORY_VECTORS, QUESTION_VECTORS)  # compacted by upkeep

FTS_MARK, BACKUP_MARK = "maintain.fts_mark", "maintain.backup_mark"
# Session messages embedded per maintain run: MiniLM made about 26 parts of up to 800
# characters a CPU-second here (docs/benchmarks.md, "Message vectors"), so a few CPU-minutes
# at most; the rest waits for the next run.
MESSAGES_PER_RUN = 5_000
# Memories the meaning pass reads per maintain run (each costs ~0.2 ms of reading; about
# two in five have names, each one embedding); the rest waits for the next run.
MEANING_PER_RUN = 5_000
# The vocabulary's names as a memory's searched vector holds them (ingest/meaning.py); a
# new one names every memory again. 2: and what the software it names is
# (retrieve/software_kinds.txt); 3: and what the technical terms it writes mean
# (retrieve/glossary.txt).
MEANING_VERSION = "3"
# Memories the written-questions pass reads per maintain run (~1.5 questions a note, each
# one embedding of ~4 ms CPU: docs/benchmarks.md, "Questions written by rule"): a few
# CPU-seconds at most; the rest waits for the next run.
QUESTIONS_PER_RUN = 1_000


def check_integrity(m: Maintenance) -> None:
    """Raise StoreError (exit status 4) when the store is damaged: the full check before a
    backup is due (a damaged store must not push a sound backup out), the quick one (pages
    and records, not the indexes' agreement with their tables) otherwise."""
    problems = integrity_problems(m.db, full=backup_due(m.settings))
    if problems:
        shown = "; ".join(problems[:3]) + (
            f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        )
        raise StoreError(
            f"{m.settings.db_path} is damaged ({shown}); nothing was changed. "
            "`memctl restore BACKUP` brings back a backup from "
            f"{m.settings.home / 'backups'}"
        )


def embed_missing(m: Maintenance, report: TaskReport) -> None:
    embedder = m.ctx.embedder
    model = m.db.vector_model()
    if model is not None and model != (embedder.name, embedder.dim):
        report.change("reembed_all", "*", model=f"{model[0]} -> {embedder.name}")
        if not m.dry_run:
            reembed(m.ctx)
        return
    missing = ids_without_vectors(m.db) if model is not None else []
    for memory_id in missing:
        report.change("embed", memory_id)
    if m.dry_run or not missing:
        return
    for start in range(0, len(missing), BATCH_TEXTS):
        batch = list(get_memories(m.db, missing[start : start + BATCH_TEXTS]).values())
        vectors = embedder.embed([x.content for x in batch])
        with m.db.atomic():
            m.writer.put_vectors(
                [
                    (x.id, v.astype(np.float32).tobytes())
                    for x, v in zip(batch, vectors, strict=True)
                ]
            )
            m.writer.reembedded(len(batch))


def embed_meaning(m: Maintenance, report: TaskReport) -> None:
    """Up to ``MEANING_PER_RUN`` memories this pass has not seen (every memory of a store
    from before m021, then each one written since, by any path) get their searched vector
    of the names the vocabulary gives what they mention (ingest/meaning.py); a new
    ``MEANING_VERSION`` (a new vocabulary) goes over them all again."""
    if m.db.vector_model() != (m.ctx.embedder.name, m.ctx.embedder.dim):
        return  # none yet, or re-embedded whole first (embed_missing)
    version, _, done = (m.db.meta(MEANING_MARK) or "").partition(":")
    after = int(done) if version == MEANING_VERSION and done.isdigit() else 0
    rows = contents_after(m.db, after, MEANING_PER_RUN)
    if not rows or m.dry_run:
        return
    memories = [(i, content) for _, i, content in rows]
    named = give_names(m.db, m.ctx.embedder, memories, again=version != MEANING_VERSION)
    with m.db.atomic():
        m.db.set_meta(MEANING_MARK, f"{MEANING_VERSION}:{rows[-1][0]}")
    if named:
        report.count("memories_named", named)


def write_questions(m: Maintenance, report: TaskReport) -> None:
    """Up to ``QUESTIONS_PER_RUN`` active memories this pass has not seen (a store from
    before it, imported and synced memories) get the questions written by rule that a
    memory stored without a host's has (ingest/asked.py); one with questions keeps them."""
    if m.db.vector_model() != (m.ctx.embedder.name, m.ctx.embedder.dim):
        return  # none yet, or re-embedded whole first (embed_missing)
    done = m.db.meta(QUESTIONS_MARK) or ""
    rows = notes_after(m.db, int(done) if done.isdigit() else 0, QUESTIONS_PER_RUN)
    if not rows or m.dry_run:
        return
    notes = [(i, content, category) for _, i, content, category in rows]
    floor = m.settings.remember_question_floor
    written = give_questions(m.db, m.ctx.embedder, notes, floor)
    with m.db.atomic():
        m.db.set_meta(QUESTIONS_MARK, str(rows[-1][0]))
    if written:
        report.count("questions_written", written)


def embed_messages_left(m: Maintenance, report: TaskReport) -> None:
    """Vectors for up to MESSAGES_PER_RUN session messages that have none, when the store
    keeps them (``recall.message_vectors``): those from before it was turned on, or from
    before auto's limit; auto, a store past its limit loses its message vectors."""
    dropped = drop_unkept(m.db, m.ctx.settings, m.dry_run)
    if dropped:
        report.count("message_vectors_dropped", dropped)
    if keeps_message_vectors(m.db, m.ctx.settings):
        _embed_waiting(
            m, report, unembedded_count, embed_messages, "messages_embedded", "session messages"
        )


def embed_calls_left(m: Maintenance, report: TaskReport) -> None:
    """Vectors for the shown calls of up to MESSAGES_PER_RUN messages of tool notes that have
    none (ingest/call_vectors.py): a store from before m033, or a job whose embedding failed.
    Every store has them: they are read, never searched."""
    _embed_waiting(
        m, report, uncalled_count, embed_calls, "calls_embedded", "messages of tool calls"
    )


def _embed_waiting(
    m: Maintenance,
    report: TaskReport,
    waiting: Callable[[Database], int],
    embed: Callable[[Database, Embedder, int], int],
    counted: str,
    what: str,
) -> None:
    """Up to MESSAGES_PER_RUN rows that ``waiting`` counts embedded by ``embed`` (a dry run
    counts them), counted as ``counted``; what is left named in the run's notes."""
    if m.db.vector_model() not in (None, (m.ctx.embedder.name, m.ctx.embedder.dim)):
        return  # re-embedded whole first (embed_missing); their vectors went with the model
    if m.dry_run:
        left = waiting(m.db)
        if left:
            report.count(counted, min(left, MESSAGES_PER_RUN))
        return
    done = embed(m.db, m.ctx.embedder, MESSAGES_PER_RUN)
    if done:
        report.count(counted, done)
    left = waiting(m.db) if done == MESSAGES_PER_RUN else 0
    if left:
        report.notes.append(f"{left} {what} wait for their vectors (next maintain)")


def compact_indexes(m: Maintenance, report: TaskReport) -> None:
    mark = change_mark(m.db)
    if m.db.meta(FTS_MARK) != mark:
        report.count("fts_optimized")
        if not m.dry_run:
            optimize_fts(m.db)
            with m.db.atomic():
                m.db.set_meta(FTS_MARK, change_mark(m.db))
    if fts_segments(m.db, MESSAGES_FTS) > 1:
        report.count("messages_fts_optimized")
        if not m.dry_run:
            optimize_fts(m.db, MESSAGES_FTS)
    if counts_stale(m.db):
        report.count("message_words_counted")
        if not m.dry_run:
            count_message_terms(m.db)
    if m.db.vector_model() is not None and not m.dry_run:
        # the memories' and the stored questions' (a deleted memory's stay dead till now)
        compacted = [vector_index(m.db, source).compact() for source in VECTOR_SOURCES]
        if any(compacted):
            report.count("vectors_compacted")


def compact_forgotten(m: Maintenance, report: TaskReport) -> None:
    """Finish what a forget's compaction left: the file rewritten and its WAL emptied."""
    if forgotten_in_file(m.db) is None:
        return
    if not m.dry_run and not compact(m.db):
        report.notes.append(
            "the store's file still holds forgotten text: another process is reading it "
            "(the next maintain tries again)"
        )
        return
    report.count("forgotten_compacted")


def older_backups_rewritten(m: Maintenance, report: TaskReport) -> None:
    """The backups an older memctl made, brought to this one's schema (maintain/backup.py
    ``bring_up_to_date``): what its migrations took out of the store goes from them too."""
    if m.dry_run:
        found = older_backups(m.settings)
        if found:
            report.count("backups_migrated", len(found))
        return
    for path in bring_up_to_date(m.settings, m.db):
        report.change("backup_migrated", path.name, path=str(path))


def backup(m: Maintenance, report: TaskReport) -> None:
    if not m.dry_run:
        for left in leftovers(m.settings):  # a killed backup's or restore's copy
            left.unlink(missing_ok=True)
    if not backup_due(m.settings) or m.db.meta(BACKUP_MARK) == change_mark(m.db):
        return
    if m.dry_run:
        report.count("backup")
        return
    with m.db.atomic():
        m.db.set_meta(BACKUP_MARK, change_mark(m.db))
    path = make_backup(m.settings, m.db)
    report.change("backup", path.name, path=str(path))


def upkeep(m: Maintenance) -> TaskReport:
    report = m.report("upkeep")
    embed_missing(m, report)
    embed_meaning(m, report)
    write_questions(m, report)
    embed_messages_left(m, report)
    embed_calls_left(m, report)
    compact_indexes(m, report)
    compact_forgotten(m, report)
    older_backups_rewritten(m, report)
    backup(m, report)
    return report
