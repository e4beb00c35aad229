"""Questions a memory answers: their own rows (``memory_questions``, m013), full-text indexed
and with a vector, each pointing at its memory.

Recall searches them to find their memory (retrieve/stages/candidates.py); nothing shows
their text as a memory's content. A memory's questions go with it: removed when it is
deleted (soft or permanent, and when the undo of its creation deletes it), never found
while it is not recallable (the memory filter applies to the memory they point at).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from memctl.model import now_iso
from memctl.store.database import QUESTIONS_FTS, Database
from memctl.store.memories import MemoryFilter, WordCounts, word_document_counts
from memctl.store.migrations import (
    QUESTION_VECTORS_CHANGES,
    QUESTION_VECTORS_GENERATION,
    QUESTION_VECTORS_REWRITTEN,
)
from memctl.store.pruned_bm25 import best_matches

QUESTIONS_PER_MEMORY = 3  # memories/questions.py MAX_QUESTIONS: how deep to read the hits
QUESTIONS = "memory_questions"  # their table, whose words word_document_counts counts
# question_fts reads at most this many times limit x QUESTIONS_PER_MEMORY of the best questions:
# the filter (scope, state, time) may pass few of their memories (its depth since m016)
QUESTIONS_READ = 4


def add_questions(
    db: Database, memory_id: str, questions: Sequence[tuple[str, bytes]], model: str
) -> int:
    """Store (text, vector) questions of a memory; a question it already has is not stored
    twice. Returns how many were new."""
    rowid = db.value("SELECT rowid FROM memories WHERE id = ?", (memory_id,))
    if rowid is None or not questions:
        return 0
    before = questions_count(db, memory_id)
    at = now_iso()
    for text, vector in questions:
        db.execute(
            "INSERT OR IGNORE INTO memory_questions (memory_rowid, text, embedding, model, "
            "created_at) VALUES (?, ?, ?, ?, ?)",
            (rowid, text, vector, model, at),
        )
    return questions_count(db, memory_id) - before


def questions_count(db: Database, memory_id: str) -> int:
    return int(
        db.value(
            "SELECT count(*) FROM memory_questions WHERE memory_rowid = "
            "(SELECT rowid FROM memories WHERE id = ?)",
            (memory_id,),
        )
        or 0
    )


def questions_of(db: Database, memory_id: str) -> list[str]:
    """The questions a memory answers, in the order they were stored."""
    return [
        str(text)
        for (text,) in db.tuples(
            "SELECT q.text FROM memory_questions q JOIN memories m ON m.rowid = q.memory_rowid "
            "WHERE m.id = ? ORDER BY q.rowid",
            (memory_id,),
        )
    ]


def delete_questions(db: Database, memory_ids: Iterable[str]) -> int:
    """Remove every question of these memories; how many were removed."""
    removed = 0
    for memory_id in memory_ids:
        removed += questions_count(db, memory_id)
        db.execute(
            "DELETE FROM memory_questions WHERE memory_rowid = "
            "(SELECT rowid FROM memories WHERE id = ?)",
            (memory_id,),
        )
    return removed


def all_questions_rewritten(db: Database) -> None:
    """Mark every question's vector rewritten, so that the questions' vector index
    (store/vector_index.py QUESTION_VECTORS) is made again from the table: its files then
    keep nothing of a removed question (a removal alone only marks its row dead, m024)."""
    at = int(db.meta(QUESTION_VECTORS_GENERATION) or 0) + 1
    db.set_meta(QUESTION_VECTORS_GENERATION, str(at))
    db.set_meta(QUESTION_VECTORS_REWRITTEN, str(at))
    db.set_meta(QUESTION_VECTORS_CHANGES, "[]")


def question_word_counts(db: Database, words: list[str]) -> WordCounts:
    """(at least as many as the stored questions, how many questions hold each of ``words``:
    0 for a word none holds): ``question_fts``'s counts."""
    rows, held = word_document_counts(db, words, QUESTIONS)
    return rows, {w: held.get(w, 0) for w in words if rows}


def question_fts(
    db: Database,
    phrases: Iterable[Sequence[str]],
    limit: int,
    where: MemoryFilter,
    counts: WordCounts | None = None,
) -> list[tuple[str, float]]:
    """(memory id, bm25 of its best matching question) of the memories passing ``where``
    whose questions match any of ``phrases``, best first, among the best ``limit`` x
    QUESTIONS_PER_MEMORY x QUESTIONS_READ questions. The best ``limit`` x
    QUESTIONS_PER_MEMORY are read first, and the rest only when those name fewer than
    ``limit`` such memories: FTS5 ranks tied questions in rowid order, so the shorter ranking
    is the start of the longer one, and the same memories come first. ``counts``
    (``question_word_counts`` of the phrases' words) spares scoring the questions that hold
    only a common word (store/pruned_bm25.py): the same answer, the sooner the shallower."""
    wanted = [tuple(p) for p in phrases]
    rows, held = counts if counts is not None else (0, {})
    first = limit * QUESTIONS_PER_MEMORY
    best: dict[str, float] = {}
    for fetch in (first, first * QUESTIONS_READ) if limit > 0 else ():
        hits = best_matches(db, wanted, fetch, held, rows, QUESTIONS_FTS)
        owners = question_owners(db, [rowid for rowid, _ in hits], where) if hits else {}
        best = {}
        for rowid, score in hits:  # best first: a memory keeps its best question's score
            if rowid in owners:
                best.setdefault(owners[rowid], float(score))
        if len(best) >= limit or len(hits) < fetch:
            break
    return list(best.items())[:limit]


def question_owners(db: Database, rowids: list[int] | None, where: MemoryFilter) -> dict[int, str]:
    """question rowid -> its memory's id, of the questions (among ``rowids``, or all) whose
    memory passes ``where`` (``question_fts``'s owners, and store/vector_query.py ``nearest``'s)."""
    condition, params = where.where()
    if rowids is None:
        sql = (
            "SELECT q.rowid, m.id FROM memory_questions q "
            f"CROSS JOIN memories m ON m.rowid = q.memory_rowid WHERE {condition}"
        )
    else:
        sql = (
            "SELECT q.rowid, m.id FROM json_each(?) AS wanted "
            "CROSS JOIN memory_questions q ON q.rowid = wanted.value "
            f"CROSS JOIN memories m ON m.rowid = q.memory_rowid WHERE {condition}"
        )
        params = [json.dumps(rowids), *params]
    return {int(rowid): str(memory_id) for rowid, memory_id in db.tuples(sql, params)}
