"""Vectors for session messages, made on the slow path: the worker after each session's
ingest job (maintain/queue.py), and ``memctl maintain`` for what is left (upkeep), a
bounded number per run. A session-end hook never embeds.

Which stores have them (``recall.message_vectors``): on, every store; off, none; auto
(the default), a store while it holds at most ``recall.message_vectors_up_to`` session
messages. Past that, the worker and maintain drop the store's message vectors and make no
more: recall finds its messages by their words, at a words-alone cost, and recall's cost
with vectors has a ceiling (docs/benchmarks.md, "Message vectors by the store's size").

A message is embedded in parts of at most ``CHUNK_CHARS`` characters, cut between
words: MiniLM reads only its first 256 tokens (about 1,000 characters of English), so
one vector of a long message would stand for its opening alone. MemPalace indexes
exchanges of up to 800 characters the same way. Past ``MAX_PARTS`` parts the rest of
a message is not embedded (its words are still searched): a long message's opening
says what it is about, and its later parts cost the slow path most of its CPU. Tool
calls' notes are not embedded: a message opening with one is not, and such lines are
left out of the others. Of the tool messages, only a sub-agent's report is: it is what
the sub-agent said, often its session's longest answer (``REPORT_PARTS``).
"""

from __future__ import annotations

from memctl.config import Settings
from memctl.embed import BATCH_TEXTS, Embedder
from memctl.ingest.tools import NOTE_START, SUBAGENT_REPORT
from memctl.store.database import Database
from memctl.store.sessions import keeps_message_vectors, message_vector_count

CHUNK_CHARS = 800  # MemPalace's exchange chunks; under MiniLM's 256-token window
# 1,600 characters. 16 parts (12,800 characters, longer than 99.9 % of LongMemEval_S's
# turns) embedded 292,444 characters of the real sessions, 2 parts 168,205: LongMemEval
# and the real questions found as much or more (docs/benchmarks.md, "Message vectors by
# the store's size")
MAX_PARTS = 2
# A sub-agent's report (a tool message opening ``SUBAGENT_REPORT``) in up to this many parts
# (6,400 characters: whole for 27 of the dev store's 32 reports): a report answers what its
# task asked in sections, and the one a question is about is rarely its opening (q57's
# "Error handling for corrupted ZIP files" starts 3,300 characters in). Reports are about 1 %
# of a store's messages: their parts add ~12 % to the parts of the real-questions stores.
# Measured 4, 8 and 16 (docs/benchmarks.md, "A sub-agent's report found by meaning").
REPORT_PARTS = 8


def said(text: str) -> str:
    """The text without its tool calls' notes (lines opening with "[tool ", ingest/tools.py):
    what was said, not what was run."""
    lines = [line for line in text.splitlines() if not NOTE_START.match(line.strip())]
    return "\n".join(lines)


def parts(text: str) -> list[str]:
    """The text said (``said``) in pieces of at most CHUNK_CHARS characters, cut at
    whitespace (a word longer than a piece is cut inside), at most MAX_PARTS of them (a
    sub-agent's report: REPORT_PARTS, without memctl's mark, which no one said); never
    none."""
    pieces: list[str] = []
    current = ""
    most = MAX_PARTS
    if text.startswith(SUBAGENT_REPORT):
        text, most = text.removeprefix(SUBAGENT_REPORT), REPORT_PARTS
    for word in said(text).split():
        while len(word) > CHUNK_CHARS:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(word[:CHUNK_CHARS])
            word = word[CHUNK_CHARS:]
        if current and len(current) + 1 + len(word) > CHUNK_CHARS:
            pieces.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
        if len(pieces) >= most:
            return pieces[:most]
    if current:
        pieces.append(current)
    return pieces[:most] or [text[:CHUNK_CHARS]]  # no word: the text as it is


def embed_messages(
    db: Database, embedder: Embedder, limit: int, session_id: str | None = None
) -> int:
    """Embed up to ``limit`` messages (of one session, or the newest of any) that have no
    vectors yet, a batch per transaction; how many were embedded. A batch a forget or a
    redact overtook while it was embedded is read again: its vectors would keep the text
    taken out."""
    from memctl.store.events import forgotten_since, last_event
    from memctl.store.message_vectors import add_message_vectors, quantised, unembedded

    done = 0
    while done < limit:
        since = last_event(db)
        batch = unembedded(db, min(BATCH_TEXTS, limit - done), session_id)
        if not batch:
            break
        pieces = [(rowid, n, piece) for rowid, text in batch for n, piece in enumerate(parts(text))]
        vectors = embedder.embed([piece for _, _, piece in pieces])
        with db.atomic():
            if forgotten_since(db, since):
                continue
            db.ensure_vector_model(embedder.name, embedder.dim)
            add_message_vectors(
                db,
                [
                    (rowid, number, quantised(vector))
                    for (rowid, number, _), vector in zip(pieces, vectors, strict=True)
                ],
            )
        done += len(batch)
    return done


def drop_unkept(db: Database, settings: Settings, dry_run: bool = False) -> int:
    """Drop the message vectors of a store that is not to have them (auto, past its limit;
    off keeps them, for whoever turns it on again): how many parts go (with ``dry_run``,
    would go)."""
    if settings.recall_message_vectors != "auto" or keeps_message_vectors(db, settings):
        return 0
    from memctl.store.message_vectors import drop_message_vectors

    count = message_vector_count(db)
    if count and not dry_run:
        drop_message_vectors(db)
    return count
