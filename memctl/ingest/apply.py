"""Write reconcile's decisions: every change one event carrying the run id.

CREATE inserts a memory. MERGE combines the fact into its target (the LLM's
merged text, else the target's text plus the sentences of the fact it lacks)
and re-embeds it; its event names the fact's ``source`` (and when it was said),
so the memory keeps every message it was distilled from (``api.sessions.origins``).
SKIP changes nothing; its event names the fact's ``source`` as one more source of
the memory it duplicates (so forgetting that memory's session keeps it).
SUPERSEDE inserts the fact and marks the target superseded (invalidated_at,
superseded_by; the row stays); a fact said before its target was (an older session
read late) is inserted already superseded by the target.
SUPPORT inserts the fact, links it ``supports`` to the target and raises the
target's confidence by ``reconcile.support_boost`` (at most 1).
CONTEXTUALIZE inserts the fact and links it ``contextualizes`` to the target.
CONTRADICT inserts the fact and links the two ``contradicts`` both ways.

Every write goes through the run's writer (store/writes.py), so each is an
event of the run holding what ``memctl undo`` needs to revert it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memctl.ingest import graph
from memctl.ingest.asked import derived_questions
from memctl.ingest.facts import Decision, Fact, Verdict, abstract
from memctl.ingest.meaning import document_text
from memctl.ingest.rule_sentences import sentences
from memctl.ingest.run import Run
from memctl.memories.operations import kept_tags
from memctl.memories.questions import on_topic
from memctl.model import (
    Category,
    Kind,
    Memory,
    Relation,
    RelationType,
    State,
    content_hash,
    parse_time,
)
from memctl.model import now_iso as _now
from memctl.store import memories as store
from memctl.store.graph import HOST as HOST_ORIGIN
from memctl.store.graph import LLM as LLM_ORIGIN
from memctl.store.meaning import put_plain_vectors

EPISODIC = (Category.EVENTS, Category.CASES)
DIGEST = "digest"  # Decision.by of a session digest (see pipeline.digest_decision)


def combine(old: str, new: str) -> str:
    """``old`` plus the sentences of ``new`` it does not already hold (``new`` if it holds old)."""
    if " ".join(old.lower().split()) in " ".join(new.lower().split()):
        return new
    known = {" ".join(s.lower().split()) for s in sentences(old)}
    extra = [s for s in sentences(new) if " ".join(s.lower().split()) not in known]
    return " ".join([old.rstrip(), *extra]) if extra else old


def _create(run: Run, fact: Fact, decision: Decision) -> Memory:
    memory = Memory(
        content=fact.content,
        l0_abstract=fact.l0_abstract,
        l1_overview=fact.l1_overview,
        l2_content=fact.l2_content,
        kind=Kind.EPISODIC if fact.category in EPISODIC else Kind.SEMANTIC,
        category=fact.category,
        tier=fact.tier,
        importance=fact.importance,
        confidence=fact.confidence,
        scope=run.scope_of(fact.category),
        tags=kept_tags([*fact.tags, *run.tags]),
        source=fact.source or f"{run.record.kind}:{run.id}",
        session_id=run.session_id,
        agent_id=run.agent_id,
        created_at=fact.created_at or _now(),  # dated by the session, not by the run
    )
    vector = fact.vector.astype(np.float32).tobytes()
    # a decision prepare_writes did not expect to create (its target went) embeds them here
    found = decision.asked if decision.asked is not None else _questions(run, fact, vector)
    searched = vector if fact.named is None else fact.named.astype(np.float32).tobytes()
    run.writer.create(
        memory, searched, decision=str(decision.verdict), by=decision.by, questions=len(found)
    )
    if fact.named is not None:  # its own vector stays for the relevance gate
        put_plain_vectors(run.db, [(memory.id, vector)])
    run.writer.add_questions(memory.id, found, run.ctx.embedder.name)
    decision.memory_id = memory.id
    return memory


def _questions(run: Run, fact: Fact, vector: bytes) -> list[tuple[str, bytes]]:
    """The fact's questions (the host's, else those written by rule: ingest/asked.py) that
    are about it, with their vectors."""
    questions = fact.questions or derived_questions(fact.content, str(fact.category))
    if not questions:
        return []
    vectors = [v.astype(np.float32).tobytes() for v in run.ctx.embedder.embed(questions)]
    floor = run.settings.remember_question_floor
    return on_topic(questions, vectors, vector, floor).kept


def _merge(run: Run, decision: Decision, target: Memory) -> None:
    fact = decision.fact
    content = decision.merged or combine(target.content, fact.content)
    named = None
    if decision.embedded is not None and decision.embedded[0] == content:
        vector, named = decision.embedded[1], decision.named
    else:  # the target changed since prepare_writes read it (maintain names it later)
        (vector,) = run.ctx.embedder.embed([content])
    changes: dict[str, Any] = {
        "content": content,
        "content_hash": content_hash(content),
        "l0_abstract": abstract(content),
        "l1_overview": content,
        "l2_content": content,
        "tags": kept_tags([*target.tags, *fact.tags]),
        "importance": max(target.importance, fact.importance),
        "confidence": max(target.confidence, fact.confidence),
    }
    evidence: dict[str, str] = {}
    if decision.by == DIGEST:  # a grown session's digest: it now covers more messages
        changes["source"] = fact.source
    elif fact.source and fact.source != target.source:  # the merged part's own origin
        evidence = {"source": fact.source, "source_at": fact.created_at or _now()}
    plain = vector.astype(np.float32).tobytes()
    run.writer.update(
        target,
        changes,
        plain if named is None else named.astype(np.float32).tobytes(),
        decision=str(decision.verdict),
        by=decision.by,
        **evidence,
    )
    if named is not None:  # its own vector stays for the relevance gate
        put_plain_vectors(run.db, [(target.id, plain)])
    decision.memory_id = target.id


def _stated_again(run: Run, decision: Decision, target: Memory) -> None:
    """A fact skipped as a duplicate of ``target``: its message is one more source of it
    (not a grown digest's range: its own digest already names the session), in its own
    wording and scope where they differ (a forget of ``target``'s session keeps the memory
    as this message states it: ``store.forget.restated``)."""
    fact = decision.fact
    if decision.by != DIGEST and fact.source and fact.source != target.source:
        at = fact.created_at or _now()
        own = {
            "content": fact.content,
            "l0_abstract": fact.l0_abstract,
            "scope": run.scope_of(fact.category),
        }
        stated = {k: v for k, v in own.items() if v != getattr(target, k)}
        run.writer.stated_again(target, fact.source, at, stated, decision=str(decision.verdict))


def _supersede(run: Run, decision: Decision, target: Memory) -> None:
    new = _create(run, decision.fact, decision)
    if _older(new, target):  # an older session read late: what it said is history at once
        run.writer.supersede(new, target.id, "supersede", superseded_by=target.id)
        run.writer.link(Relation(target.id, new.id, RelationType.SUPERSEDES))
        return
    run.writer.supersede(target, new.id, "supersede", superseded_by=new.id)
    run.writer.link(Relation(new.id, target.id, RelationType.SUPERSEDES))


def _older(new: Memory, target: Memory) -> bool:
    """``new`` was said before ``target`` was (both dated by their sessions)."""
    return parse_time(new.created_at) < parse_time(target.created_at)


def _support(run: Run, decision: Decision, target: Memory) -> None:
    new = _create(run, decision.fact, decision)
    boosted = min(1.0, target.confidence + run.settings.reconcile_support_boost)
    run.writer.update(
        target, {"confidence": boosted}, decision=str(decision.verdict), by=decision.by
    )
    run.writer.link(Relation(new.id, target.id, RelationType.SUPPORTS))


def _contextualize(run: Run, decision: Decision, target: Memory) -> None:
    new = _create(run, decision.fact, decision)
    run.writer.link(Relation(new.id, target.id, RelationType.CONTEXTUALIZES))


def _contradict(run: Run, decision: Decision, target: Memory) -> None:
    new = _create(run, decision.fact, decision)
    run.writer.link(Relation(new.id, target.id, RelationType.CONTRADICTS))
    run.writer.link(Relation(target.id, new.id, RelationType.CONTRADICTS))


HANDLERS = {
    Verdict.MERGE: _merge,
    Verdict.SUPERSEDE: _supersede,
    Verdict.SUPPORT: _support,
    Verdict.CONTEXTUALIZE: _contextualize,
    Verdict.CONTRADICT: _contradict,
}


def prepare_writes(run: Run, decisions: list[Decision]) -> None:
    """Embed the text every MERGE will write and the questions of every memory a decision
    will create, before the caller's write transaction: an embedding can take seconds, and
    every other writer would wait on the lock meanwhile."""
    for decision in decisions:
        if decision.verdict not in (Verdict.MERGE, Verdict.SKIP):
            vector = decision.fact.vector.astype(np.float32).tobytes()
            decision.asked = _questions(run, decision.fact, vector)
    texts: dict[str, str] = {}  # target id -> its text after this batch's merges so far
    merges: list[tuple[Decision, str]] = []
    for decision in decisions:
        if decision.verdict != Verdict.MERGE or decision.target_id is None:
            continue
        if decision.target_id not in texts:
            target = store.get_memory(run.db, decision.target_id)
            if target is None:
                continue
            texts[decision.target_id] = target.content
        merged = decision.merged or combine(texts[decision.target_id], decision.fact.content)
        texts[decision.target_id] = merged
        if merged == decision.fact.content and decision.fact.vector is not None:
            decision.embedded = (merged, decision.fact.vector)  # embedded already (a digest)
            decision.named = decision.fact.named
        else:
            merges.append((decision, merged))
    if merges:
        vectors = run.ctx.embedder.embed([merged for _, merged in merges])
        for (decision, merged), vector in zip(merges, vectors, strict=True):
            decision.embedded = (merged, vector)
        named = [(d, text) for d, merged in merges if (text := document_text(merged)) != merged]
        if named:
            made = run.ctx.embedder.embed([text for _, text in named])
            for (decision, _), vector in zip(named, made, strict=True):
                decision.named = vector


def apply(run: Run, decisions: list[Decision]) -> None:
    """Write every decision, in order, inside the caller's transaction (after
    ``prepare_writes`` outside it).

    A target another decision of this batch already superseded (or that is
    gone) is no longer there to act on: the fact is created instead.
    """
    embedder = run.ctx.embedder
    run.db.ensure_vector_model(embedder.name, embedder.dim)
    for decision in decisions:
        target = store.get_memory(run.db, decision.target_id) if decision.target_id else None
        if decision.verdict in HANDLERS and (target is None or target.state != State.ACTIVE):
            decision.reason = f"target no longer active (was {decision.verdict})"
            decision.verdict, decision.target_id = Verdict.CREATE, None
        run.count(str(decision.verdict))
        if decision.verdict == Verdict.SKIP:
            decision.memory_id = decision.target_id
            if target is not None:
                _stated_again(run, decision, target)
        elif decision.verdict == Verdict.CREATE or target is None:
            _create(run, decision.fact, decision)
        else:
            HANDLERS[decision.verdict](run, decision, target)
    record_graph(run, decisions)


def record_graph(run: Run, decisions: list[Decision]) -> None:
    """The graph stage: the entities and triples of every memory the decisions wrote."""
    written = {
        d.memory_id: d.fact.triples for d in decisions if d.memory_id and d.verdict != Verdict.SKIP
    }
    found = store.get_memories(run.db, list(written))
    # a host run's record names the host as its LLM (ingest/host.py HOST)
    origin = HOST_ORIGIN if run.record.llm == HOST_ORIGIN else LLM_ORIGIN
    graph.index(
        run.db,
        [
            graph.Written(m.id, m.content, m.source, m.content_hash, written[m.id], origin)
            for m in found.values()
        ],
    )
