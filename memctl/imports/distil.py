"""Distil: the facts a file gives by its strategy (what a worker thread does for an import).

- atomic: ingest's extract stage (the LLM, else the rules) runs over the
  text one unit at a time: for a conversation, its messages up to
  ``import.split_chars`` characters a unit; for any other text, one chunk of
  the smart split; up to ``extract.max_facts`` facts per ``extract.chunk_chars``
  characters of it;
- section: one fact per section, the section's text as content;
- document: one fact for the whole text (per chunk, for a text over the
  split limit), the text as content;
- records: one fact per memory of the other tool.

Section and document facts get their abstracts from ``summarise``. Every text
is scrubbed as it is read, as ingest scrubs transcripts. Each fact names its
source: ``file:<path>#<section, chunk, or conversation/message>``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from memctl.imports.detect import ATOMIC, SECTION, Survey
from memctl.imports.files import Progress, Reading, Target
from memctl.imports.formats.base import Kind, TextDoc, lines
from memctl.imports.sections import sections
from memctl.imports.split import split
from memctl.imports.summarise import Summary, summarise
from memctl.ingest.entities import known_word
from memctl.ingest.extract import extract
from memctl.ingest.facts import Fact, Passage
from memctl.ingest.known import CopyFinder
from memctl.ingest.parse.common import Tally
from memctl.ingest.parse.generic import text_messages
from memctl.ingest.pasted import pasted_by_user
from memctl.ingest.run import Run
from memctl.memories.lines import kept_speaker, said_line
from memctl.memories.privacy import Redactions, nothing_left, safe_line, scrub
from memctl.memories.scrubber import scrub_messages, scrub_stream
from memctl.model import Role

# A person's own notes, or memories another tool kept: surer than a rule's guess (0.6).
KEPT_CONFIDENCE = 0.8
# How much of a conversation's id (its title, when it has none) names it in a source: as
# much as a session's title keeps (ingest.capture).
ANCHOR_CHARS = 200


@dataclass
class Plan:
    """One file on its way: what the survey found and the strategy chosen for it."""

    target: Target
    survey: Survey
    strategy: str
    why: str

    def source(self, anchor: str = "") -> str:
        where = f"file:{self.target.source}"
        return f"{where}#{anchor}" if anchor else where


@dataclass(frozen=True)
class Gone:
    """The home's forget key and the keyed digests of the messages a forget or redact took
    text out of (``store.taken_out``), read before the workers start: a chat export
    imported again after one repeats those messages, and none is distilled again."""

    key: bytes
    digests: frozenset[str]

    def finder(self) -> CopyFinder:
        return CopyFinder(self.key, self.digests.__contains__)


def distil(
    run: Run, plan: Plan, progress: Progress | None = None, gone: Gone | None = None
) -> list[Fact]:
    """Read the file again and return its facts (without vectors: the writer embeds them);
    a conversation's messages repeating one taken out (``gone``) give none."""
    with plan.target.open(progress) as reading:
        kind = plan.survey.kind
        if kind == Kind.TEXT:
            return _document(run, plan, plan.survey.format.read(reading))
        if kind == Kind.CHAT:
            finder = gone.finder() if gone is not None else None
            return _extract(run, _groups(_chat_passages(plan, reading, finder), run))
        return _records(plan, reading)


def _document(run: Run, plan: Plan, doc: TextDoc) -> list[Fact]:
    clean = scrub_stream(doc.pieces, Redactions())
    if plan.strategy != ATOMIC:
        return _whole_texts(run, plan, doc, clean)
    facts = _extract(run, _units(run, plan, clean))
    for fact in facts:
        fact.tags = [*fact.tags, *doc.tags]
    return facts


def _units(run: Run, plan: Plan, clean: Iterator[str]) -> Iterator[list[Passage]]:
    """What extract reads at a time: a conversation's messages in runs, or a smart-split chunk."""
    s = run.settings
    if plan.survey.counts.role_lines >= s.import_conversation_lines:
        messages = text_messages(lines(clean), Tally())
        said = (
            Passage(
                m.content,
                m.role,
                plan.source(f"message-{n}"),
                pasted=pasted_by_user(m.role, m.content),
            )
            for n, m in enumerate(messages, start=1)
        )
        yield from _groups(said, run)
        return
    for n, chunk in enumerate(split(clean, s.import_split_chars, s.import_split_overlap), 1):
        yield [Passage(chunk, Role.USER, plan.source(f"chunk-{n}"))]


def _whole_texts(run: Run, plan: Plan, doc: TextDoc, clean: Iterator[str]) -> list[Fact]:
    """Section or document memories: the texts themselves, with their abstracts."""
    s, title = run.settings, plan.survey.title
    limit, overlap = s.import_split_chars, s.import_split_overlap
    trace = run.stage("summarise")
    made: list[tuple[Summary, str, str]] = []
    if plan.strategy == SECTION:
        for section in sections(lines(clean), limit, overlap):
            summary = summarise(run, section.text, "section", section.heading, title)
            made.append((summary, section.text, section.anchor))
    else:
        parted = plan.survey.counts.chars > limit
        for n, chunk in enumerate(split(clean, limit, overlap), start=1):
            summary = summarise(run, chunk, "document", title=title)
            made.append((summary, chunk, f"part-{n}" if parted else ""))
    trace.kept = len(made)
    by_llm = sum(summary.by == "llm" for summary, _, _ in made)
    trace.notes.append(f"{by_llm} abstracts by the LLM, {len(made) - by_llm} derived")
    return [_fact(summary, text, plan.source(anchor), doc.tags) for summary, text, anchor in made]


def _fact(summary: Summary, text: str, source: str, tags: list[str]) -> Fact:
    return Fact(
        content=text,
        category=summary.category,
        l0_abstract=summary.l0,
        l1_overview=summary.l1,
        l2_content=summary.l2,
        tags=[*tags, *summary.tags],
        importance=summary.importance,
        confidence=KEPT_CONFIDENCE,
        source=source,
    )


def _chat_passages(
    plan: Plan, reading: Reading, copies: CopyFinder | None = None
) -> Iterator[Passage]:
    for conversation in plan.survey.format.conversations(reading):
        said = ((m.content, (n, m)) for n, m in enumerate(conversation.messages, start=1))
        for text, (n, message) in scrub_messages(said, Redactions(), known=known_word):
            if not nothing_left(text):
                # the title is the export's text: a secret or private text in it stays out
                named = safe_line(conversation.id or conversation.title, ANCHOR_CHARS)
                anchor = f"{named}/{n}"
                # who said it, as a chat between people reads: "Tim: ..." (facts name them)
                content = said_line(kept_speaker(message.speaker), text.strip())
                if copies is not None and copies.copied(message.role, content):
                    continue
                pasted = pasted_by_user(message.role, content)
                yield Passage(
                    content, message.role, plan.source(anchor), message.created_at, pasted
                )


def _groups(passages: Iterable[Passage], run: Run) -> Iterator[list[Passage]]:
    """Passages in runs of at most ``import.split_chars`` characters (one if longer)."""
    group: list[Passage] = []
    size = 0
    for passage in passages:
        if group and size + len(passage.text) > run.settings.import_split_chars:
            yield group
            group, size = [], 0
        group.append(passage)
        size += len(passage.text)
    if group:
        yield group


def _extract(run: Run, units: Iterable[list[Passage]]) -> list[Fact]:
    """Extract's facts from each unit; as many as it allows per ``extract.chunk_chars``
    characters (what one LLM call reads), so a long unit is not cut short.

    One file gives at most ``import.max_facts`` facts from its first
    ``import.extract_chars`` characters: the work (extraction, then embedding and
    reconciling every fact) and the memory it holds stay bounded however big the
    file is; the whole text is stored raw and searchable all the same.
    """
    s = run.settings
    facts: list[Fact] = []
    read = 0
    for unit in units:
        size = sum(len(p.text) for p in unit)
        if read >= s.import_extract_chars or len(facts) >= s.import_max_facts:
            run.note(
                f"facts extracted from the first {read:,} characters only "
                f"({len(facts)} facts; import.max_facts {s.import_max_facts}, "
                f"import.extract_chars {s.import_extract_chars:,}); the whole text is stored "
                "and searchable"
            )
            break
        calls = math.ceil(size / s.extract_chunk_chars)
        facts += extract(run, unit, s.extract_max_facts * max(1, calls))
        read += size
    return facts[: s.import_max_facts]


def _records(plan: Plan, reading: Reading) -> list[Fact]:
    facts = []
    for record in plan.survey.format.records(reading):
        text, _ = scrub(record.content)
        if nothing_left(text):
            continue
        facts.append(
            Fact(
                content=text,
                category=record.category,
                tags=record.tags,
                confidence=KEPT_CONFIDENCE,
                source=plan.source(record.id),
                created_at=record.created_at,
            )
        )
    return facts
