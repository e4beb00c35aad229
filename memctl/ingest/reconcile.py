"""Stage: decide, fact by fact, how the new facts change the stored memories.

1. Gather: for each fact, the active memories of the run's scopes (and global)
   most similar by vector (``reconcile.vector_top``, similarity >=
   ``reconcile.min_similarity``) and by full text (``reconcile.fts_top``), at
   most ``reconcile.max_candidates`` distinct memories for the whole batch.
2. Decide: the preference slot guard first (no LLM); a case a stored case states
   already (``reconcile_rules.same_case``) is SKIPped onto it, its session one more
   source (no LLM: the two differ only in the command lines around the failure); a
   project command that runs what a stored one ran another way (``reconcile_rules.
   replaced_command``: "type checks run with `uv run ty check`" after "… `uv run pyright`")
   SUPERSEDEs it (no LLM: which is newer is a date, not a judgement), and so does a fact of
   the project's runtime version said again with another version (``reconcile_rules.
   replaced_version``: "we should be running node 22" after "… running in node 18");
   a fact with no candidate is CREATEd; the rest go to the LLM in one call, and whatever it
   leaves undecided (or when there is no LLM) to the rules.
3. Enforce the rules no decision may break: profile facts MERGE into a
   matching profile memory; events and cases are only CREATEd or SKIPped; a
   CONTRADICT in a temporal category (profile, preferences, entities) is a
   SUPERSEDE; pinned memories, events and cases are never merged or superseded, and a
   session's digest is never merged, superseded or contradicted by a fact (CREATE instead).

``apply`` (in ``memctl.ingest.apply``) then writes the decisions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from memctl.config.scope import GLOBAL_SCOPE
from memctl.ingest import reconcile_llm, reconcile_rules
from memctl.ingest.extract_actions import COMMAND_TAG
from memctl.ingest.facts import Decision, Fact, Verdict
from memctl.ingest.run import Run
from memctl.memories.provenance import DIGEST_TAG
from memctl.model import Category, Kind, Memory, State, now_iso
from memctl.store.memories import (
    MemoryFilter,
    content_vectors_for,
    fts_search,
    get_memories,
)
from memctl.store.vector_query import nearest_in_store

TEMPORAL = (Category.PROFILE, Category.PREFERENCES, Category.ENTITIES)
RECORDS = (Category.EVENTS, Category.CASES)
NEEDS_TARGET = frozenset(Verdict) - {Verdict.CREATE}


@dataclass
class Candidates:
    """The memories gathered for a batch, and per fact (memory, similarity), best first."""

    memories: list[Memory]
    per_fact: list[list[tuple[Memory, float]]]


def gather(run: Run, facts: list[Fact]) -> Candidates:
    s = run.settings
    where = MemoryFilter(scopes=(run.scope, GLOBAL_SCOPE), states=(State.ACTIVE,))
    embedder = run.ctx.embedder
    has_vectors = run.db.vector_model() == (embedder.name, embedder.dim)
    ids: dict[str, None] = {}
    hits_per_fact = []
    for fact in facts:
        hits = []
        if has_vectors and s.reconcile_vector_top:
            hits += [
                memory_id
                for memory_id, distance in nearest_in_store(
                    run.db, fact.vector, s.reconcile_vector_top, where
                )
                if 1.0 - distance >= s.reconcile_min_similarity
            ]
        if s.reconcile_fts_top:
            hits += [m for m, _ in fts_search(run.db, fact.content, s.reconcile_fts_top, where)]
        kept = []
        for memory_id in dict.fromkeys(hits):
            if memory_id in ids or len(ids) < s.reconcile_max_candidates:
                ids.setdefault(memory_id, None)
                kept.append(memory_id)
        hits_per_fact.append(kept)
    memories = get_memories(run.db, list(ids))
    vectors = {
        k: np.frombuffer(v, dtype=np.float32)
        for k, v in content_vectors_for(run.db, list(ids)).items()
    }
    per_fact = []
    for fact, hits in zip(facts, hits_per_fact, strict=True):
        pairs = [
            (memories[m], float(fact.vector @ vectors[m]) if m in vectors else 0.0)
            for m in hits
            if m in memories
        ]
        per_fact.append(sorted(pairs, key=lambda pair: -pair[1]))
    return Candidates([memories[m] for m in ids if m in memories], per_fact)


def _guard(fact: Fact, pairs: list[tuple[Memory, float]], threshold: float) -> Decision | None:
    """The preference slot guard: same brand, different item is a new memory."""
    if fact.category != Category.PREFERENCES:
        return None
    for memory, similarity in pairs:
        if similarity >= threshold and reconcile_rules.slot_guard(fact.content, memory.content):
            return Decision(
                Verdict.CREATE,
                fact,
                reason=f"preference slot guard: same brand, another item than {memory.id[:8]}",
                by="guard",
            )
    return None


def _first(
    fact: Fact,
    pairs: list[tuple[Memory, float]],
    verdict: Verdict,
    holds: Callable[[Memory], bool],
    why: str,
) -> Decision | None:
    """``verdict`` on the first gathered memory ``holds`` is true of, ``why`` naming it."""
    for memory, _ in pairs:
        if holds(memory):
            return Decision(verdict, fact, memory.id, reason=why.format(memory.id[:8]), by="rules")
    return None


def _seen_case(fact: Fact, pairs: list[tuple[Memory, float]]) -> Decision | None:
    """A case a stored case already states (the same failure, fixed the same way), SKIPped
    onto it: ``apply`` names this session as one more source of it."""
    if fact.category != Category.CASES:
        return None
    return _first(
        fact,
        pairs,
        Verdict.SKIP,
        lambda m: (
            m.category == Category.CASES and reconcile_rules.same_case(fact.content, m.content)
        ),
        "the same failure and fix as {}, seen again",
    )


def _replaced_command(fact: Fact, pairs: list[tuple[Memory, float]]) -> Decision | None:
    """A project command run another way than a stored one of the same purpose and
    language: the project's way now, the stored one its history (SUPERSEDE)."""
    if fact.category != Category.PATTERNS or COMMAND_TAG not in fact.tags:
        return None
    return _first(
        fact,
        pairs,
        Verdict.SUPERSEDE,
        lambda m: (
            COMMAND_TAG in m.tags and reconcile_rules.replaced_command(fact.content, m.content)
        ),
        "runs what {} ran, another way",
    )


def _replaced_version(fact: Fact, pairs: list[tuple[Memory, float]]) -> Decision | None:
    """A fact saying the project runs on another version of a runtime than a stored fact
    said: the project's version now, the stored one its history (SUPERSEDE)."""
    if fact.category not in TEMPORAL:
        return None
    return _first(
        fact,
        pairs,
        Verdict.SUPERSEDE,
        lambda m: (
            m.category in TEMPORAL and reconcile_rules.replaced_version(fact.content, m.content)
        ),
        "another version of the runtime {} names",
    )


def enforce(
    decision: Decision, best: tuple[Memory, float] | None, memories: dict[str, Memory], match: float
) -> Decision:
    """The decision, changed where it breaks one of the rules every decision keeps."""
    fact = decision.fact
    target = memories.get(decision.target_id or "")

    def becomes(verdict: Verdict, why: str, to: Memory | None = target) -> Decision:
        decision.verdict, decision.reason = verdict, f"{why} (was {decision.verdict})"
        decision.target_id = to.id if to is not None and verdict in NEEDS_TARGET else None
        return decision

    if decision.verdict in NEEDS_TARGET and target is None:
        return becomes(Verdict.CREATE, "no such memory to act on")
    profile_match = best is not None and best[1] >= match and best[0].category == Category.PROFILE
    # another value for the slot the memory sets ("I live in Porto" after "I live in Lisbon")
    # replaces it: merging would keep both as one
    replaces = (
        best is not None
        and decision.verdict in (Verdict.CONTRADICT, Verdict.SUPERSEDE)
        and reconcile_rules.another_value(fact.content, best[0].content)
    )
    if (
        fact.category == Category.PROFILE
        and profile_match
        and decision.verdict != Verdict.SKIP
        and not replaces
    ):
        if decision.verdict != Verdict.MERGE and best is not None:
            becomes(Verdict.MERGE, "profile facts always merge when matched", best[0])
            target = best[0]
    if fact.category in RECORDS and decision.verdict not in (Verdict.CREATE, Verdict.SKIP):
        return becomes(Verdict.CREATE, f"{fact.category} are only created or skipped")
    if decision.verdict == Verdict.CONTRADICT and fact.category in TEMPORAL:
        becomes(Verdict.SUPERSEDE, f"{fact.category} change over time: the newer holds")
    if (
        target is not None
        and target.category in RECORDS
        and decision.verdict in (Verdict.MERGE, Verdict.SUPERSEDE)
    ):
        # what happened stays as it was said: a later fact stands beside it
        return becomes(Verdict.CREATE, f"{target.category} are records, never rewritten")
    if (
        target is not None
        and target.kind == Kind.PINNED
        and decision.verdict in (Verdict.MERGE, Verdict.SUPERSEDE)
    ):
        return becomes(Verdict.CREATE, "pinned memories are never merged or superseded")
    if (
        target is not None
        and DIGEST_TAG in target.tags
        and decision.verdict in (Verdict.MERGE, Verdict.SUPERSEDE, Verdict.CONTRADICT)
    ):
        # a digest is the record of its session: a fact stands beside it (and goes before
        # it in the start block), never replacing the rest of what the session did
        return becomes(Verdict.CREATE, "a session's digest is never merged or superseded")
    return decision


def decide(run: Run, facts: list[Fact]) -> list[Decision]:
    """One decision per fact, in order."""
    trace = run.stage("reconcile")
    s = run.settings
    found = gather(run, facts)
    decided: dict[int, Decision] = {}
    for index, (fact, pairs) in enumerate(zip(facts, found.per_fact, strict=True)):
        guarded = (
            _guard(fact, pairs, s.reconcile_related_similarity)
            or _seen_case(fact, pairs)
            or _replaced_command(fact, pairs)
            or _replaced_version(fact, pairs)
        )
        if guarded is not None:
            decided[index] = guarded
        elif not pairs:
            decided[index] = Decision(Verdict.CREATE, fact, reason="nothing similar stored")
    open_ = [i for i in range(len(facts)) if i not in decided]
    if open_ and run.llm is not None:
        asked = reconcile_llm.ask(run, [facts[i] for i in open_], found.memories, now_iso())
        decided.update({open_[k]: d for k, d in asked.items()})
    by_id = {m.id: m for m in found.memories}
    decisions = []
    for index, fact in enumerate(facts):
        best = found.per_fact[index][0] if found.per_fact[index] else None
        decision = decided.get(index) or reconcile_rules.decide(
            fact, best[0] if best else None, best[1] if best else 0.0, s
        )
        decisions.append(enforce(decision, best, by_id, s.reconcile_match_similarity))
    trace.kept = sum(d.verdict != Verdict.SKIP for d in decisions)
    trace.notes.append(f"{len(found.memories)} existing memories gathered")
    return decisions
