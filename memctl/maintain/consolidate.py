"""Task consolidate: episodes become knowledge, and old look-alike knowledge becomes one.

*extract*: active episodic memories older than ``maintain.consolidate_after_days``
(at most ``maintain.consolidate_max`` a run, oldest first) go through ingest's
extract -> noise -> admission -> reconcile stages (the LLM when configured,
rules otherwise). Only semantic facts are kept (events and cases would be
episodes again), and a fact reconcile matched to an episode is created rather
than folded into it. The episode stays, linked ``supports`` to each fact it
gave (new or already known), and is marked ``consolidated_at``; one transaction
per episode.

*merge*: clusters of active semantic memories older than
``maintain.merge_after_days``, of one scope, joined by cosine >=
``maintain.merge_similarity`` (at most ``maintain.merge_max_clusters`` a run,
biggest first) become one memory: the most complete member survives, with the
text the LLM writes from all of them when one is configured; the others are
superseded by it and their relations carried over.
"""

from __future__ import annotations

from typing import Any

from memctl.ingest.apply import apply
from memctl.ingest.extract import extract
from memctl.ingest.facts import Decision, Passage, Verdict
from memctl.ingest.pipeline import FACT_STAGES, embed
from memctl.ingest.reconcile import RECORDS, decide
from memctl.maintain import changes
from memctl.maintain.plan import Maintenance, TaskReport
from memctl.maintain.similar import cluster_ids, load_vectors, settle, star_clusters
from memctl.memories.privacy import model_text
from memctl.memories.provenance import DIGEST_TAG
from memctl.model import Kind, Memory, Relation, RelationType, Role, State
from memctl.store.events import last_event
from memctl.store.maintenance import episodes_to_consolidate
from memctl.store.memories import MemoryFilter, get_memories

ACTIVE = MemoryFilter(states=(State.ACTIVE,))
# A session digest's lines that quote its user's turns, cut and joined by "; "
# (ingest/digest.py): ingest read those turns whole, and read again they glue two turns into
# one fact (a walk's "Decided: don't produce code, design solution first; the main idea is
# fine, however ..." offered as a convention beside the two it joined).
QUOTED_LINES = ("Asked: ", "Decided: ")
# A digest's last section, the assistant's closing answer: read as the assistant's words,
# or the user-rule patterns take what it said ("Coverage: Tests on Python 3.12 and 3.13")
# as what the user stated.
OUTCOME = "Outcome: "
TASK = "merge"

MERGE_SYSTEM = """You merge near-duplicate notes of a long-term memory into one note. \
Keep every distinct detail, drop repetition, write in the notes' language, one short \
paragraph. Answer JSON: {"content": "..."}."""
MERGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"content": {"type": "string"}},
    "required": ["content"],
}


def _unread(episode: Memory) -> list[Passage]:
    """The text of ``episode`` ingest has not read already: a digest without its heading
    (the first request, cut) and the lines quoting its user's turns (``QUOTED_LINES``), its
    closing answer (``OUTCOME`` to the end) the assistant's."""
    source = f"memory:{episode.id}"
    if DIGEST_TAG not in episode.tags:
        return [Passage(episode.content, Role.USER, source, None)]
    _heading, *lines = episode.content.splitlines()
    closing = next((n for n, line in enumerate(lines) if line.startswith(OUTCOME)), len(lines))
    record = [line for line in lines[:closing] if not line.startswith(QUOTED_LINES)]
    answer = "\n".join(lines[closing:]).removeprefix(OUTCOME)
    passages = [("\n".join(record), Role.USER), (answer, Role.ASSISTANT)]
    return [Passage(text, role, source, None) for text, role in passages if text]


def distil(m: Maintenance, episode: Memory) -> list[Decision]:
    """The decisions ingest's stages make on one episode's text (semantic facts only)."""
    run = m.run
    run.scope, run.session_id, run.agent_id = episode.scope, episode.session_id, episode.agent_id
    passages = _unread(episode)
    facts = [f for f in extract(run, passages) if f.category not in RECORDS]
    for fact in facts:
        fact.source = f"memory:{episode.id}"
    embed(run, facts)
    for stage in FACT_STAGES:
        facts = stage(run, facts)
    decisions = decide(run, facts) if facts else []
    targets = get_memories(m.db, [d.target_id for d in decisions if d.target_id])
    for decision in decisions:
        # admitted as if said now (admission weighs recency), dated by the episode they
        # come from: not by the run that reads it
        decision.fact.created_at = episode.created_at
        target = targets.get(decision.target_id or "")
        if target is not None and target.kind == Kind.EPISODIC:
            decision.verdict, decision.target_id = Verdict.CREATE, None
            decision.reason = "the match is an episode, not knowledge: created"
    return decisions


def extract_facts(m: Maintenance, report: TaskReport) -> None:
    s = m.settings
    before = m.ago(s.maintain_consolidate_after_days)
    ids = episodes_to_consolidate(m.db, before, s.maintain_consolidate_max)
    since = last_event(m.db)
    episodes = get_memories(m.db, ids)
    for memory_id in ids:
        episode = episodes[memory_id]
        decisions = distil(m, episode)
        facts = [d.fact.content for d in decisions]
        with m.db.atomic():
            if m.overtaken(since, report):
                return
            apply(m.run, decisions)
            made = {d.memory_id for d in decisions if d.memory_id and d.memory_id != episode.id}
            for fact_id in sorted(made):
                m.writer.link(Relation(episode.id, fact_id, RelationType.SUPPORTS), reweight=False)
            m.writer.update(episode, {"consolidated_at": m.stamp}, reason="consolidate")
        report.change("consolidate", episode.id, facts=facts, memories=sorted(made))
        report.count("facts", len(made))


def merged_text(m: Maintenance, members: list[Memory]) -> str | None:
    """The LLM's merged text of the members, or None (no LLM, over budget, failed)."""
    notes = "\n".join(f"- {x.content}" for x in members)

    def valid(answer: Any) -> str:
        text = model_text(answer["content"])
        if not text:
            raise ValueError("empty content (once private text and secrets are out)")
        return text

    return m.run.ask(MERGE_SYSTEM, f"Notes:\n{notes}", MERGE_SCHEMA, valid)


def merge(m: Maintenance, report: TaskReport) -> None:
    """Search and merge until a search merges nothing, at most
    ``maintain.merge_max_clusters`` clusters."""
    s = m.settings
    before = m.ago(s.maintain_merge_after_days)
    vectors = load_vectors(m.db, TASK, lambda r: r[2] == Kind.SEMANTIC and r[3] < before)
    left = s.maintain_merge_max_clusters
    if vectors is not None:
        report.count("merge_compared", vectors.seeds())
    while vectors is not None:
        found, capped = star_clusters(vectors, s.maintain_merge_similarity, s, left)
        left -= len(found)
        ended: set[int] = set()
        rewritten = False
        for cluster, ids in zip(found, cluster_ids(m.db, vectors, found), strict=True):
            gone, text = merge_cluster(m, report, ids)
            ended.update(p for p, i in zip(cluster, ids, strict=True) if i in gone)
            rewritten = rewritten or text
        if capped:
            limit = s.maintain_merge_max_clusters
            report.notes.append(f"stopped at {limit} clusters; the rest wait for the next run")
        if capped:
            return
        with m.db.atomic():
            again = settle(m.db, TASK, vectors, found, ended)
        if not again or rewritten:  # a new text has a new vector: the next run compares it
            return


def merge_cluster(m: Maintenance, report: TaskReport, cluster: list[str]) -> tuple[set[str], bool]:
    """Merge one cluster into its most complete member: the ids superseded, and whether the
    LLM wrote the survivor a new text."""
    since = last_event(m.db)
    members = get_memories(m.db, cluster, ACTIVE)
    group = [members[i] for i in cluster if i in members]
    if len(group) < 2:
        return set(), False
    survivor = changes.most_complete(group)
    others = [x for x in group if x.id != survivor.id]
    text = merged_text(m, [survivor, *others])
    rewrite = bool(text) and text != survivor.content
    with m.db.atomic():
        if m.overtaken(since, report):
            return set(), False
        if text and rewrite:
            changes.rewrite(m, survivor, text, "merge")
        changes.fold(m, survivor, others, changes.MERGE)
    report.change("merge", survivor.id, superseded=[x.id for x in others], llm=bool(text))
    return {x.id for x in others}, rewrite


def consolidate(m: Maintenance) -> TaskReport:
    report = m.report("consolidate")
    extract_facts(m, report)
    merge(m, report)
    return report
