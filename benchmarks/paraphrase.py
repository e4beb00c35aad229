"""Questions asked in other words: does recall find the fact, and say nothing when none fits?

The facts (``benchmarks/paraphrase/facts.jsonl``) are notes of the kinds a
developer keeps; each has a question that shares no content word with it,
written by hand by someone who did not see memctl's scores. The unrelated
questions (``unrelated.jsonl``) are answered by no fact. Both were written
once and are never changed to fit the results.

Stores: every ``SMALL`` facts alone (the store a new user has), and all the
facts among distractors up to each larger size: dialog turns of the LoCoMo
or LongMemEval files given with ``--distractors`` (never the facts'
questions). Per store size it reports, for memctl and the vector leg alone:
the share of paraphrase questions with their fact in the top ``K``, the share
that returned nothing, and the share of unrelated questions that returned
anything. Every figure is given for the two halves apart (odd ids: the half
recall's constants may be tuned on; even ids: the half they never are), so a
change that only helps the tuned half shows. With ``--details``, each fact
memctl misses also says where it was lost, as ``memctl recall --why-not``
tells it (``where_lost``): never a candidate, dropped by a stage, or ranked below
the rows shown.

The named questions (``named_unanswered.jsonl``, when present) each name a person, project,
place or tool a fact names and ask for something no fact states ("What is Nadia Okafor's
phone number?"). They are asked of memctl alone, in every store as the unrelated ones are;
their row says the share whose results hold a clear match (``named clear``) and whose
first result is clear (``named clear@1``): a clear match is what the per-prompt hook
injects, and none of them has an answer to give.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.embedcache import EmbeddingCache
from benchmarks.haystack import BENCH_SCOPE, BenchStores
from benchmarks.retrievers import Question, Retriever, memctl_recall
from memctl.config import Settings
from memctl.context import Context
from memctl.errors import InputError
from memctl.model import Category, Kind, Memory, Tier, format_time

DATA = Path(__file__).with_name("paraphrase")
SMALL = 30  # facts per small store: a new user's first weeks
K = 5  # a fact found "in the top K"
DEPTH = 10  # results asked for: recall's default limit
HALVES = ("tune", "check")
# When the facts were stored, relative to when they are asked (spread over a month, so
# recency does not decide).
STORED_OVER = timedelta(days=30)


@dataclass(frozen=True)
class Fact:
    id: str
    fact: str
    question: str
    kind: str

    @property
    def half(self) -> str:
        return half_of(self.id)


def half_of(identifier: str) -> str:
    """``tune`` for odd-numbered ids, ``check`` for even ones."""
    digits = "".join(ch for ch in identifier if ch.isdigit())
    return HALVES[0] if digits and int(digits) % 2 else HALVES[1]


def read_jsonl(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        raise InputError(f"no paraphrase data at {path}")
    try:
        return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path} is not JSON lines: {exc}") from None


def load_facts(path: Path) -> list[Fact]:
    try:
        return [Fact(r["id"], r["fact"], r["question"], r["kind"]) for r in read_jsonl(path)]
    except KeyError as exc:
        raise InputError(f"{path}: a line has no {exc} field") from None


def load_unrelated(path: Path) -> list[tuple[str, str]]:
    try:
        return [(r["id"], r["question"]) for r in read_jsonl(path)]
    except KeyError as exc:
        raise InputError(f"{path}: a line has no {exc} field") from None


def distractor_texts(paths: list[Path]) -> Iterator[str]:
    """Dialog turns of LoCoMo and LongMemEval files, as the benchmarks store them, once each."""
    from benchmarks import locomo, longmemeval
    from benchmarks.datafile import read_json_list
    from benchmarks.haystack import turn_content

    seen: set[str] = set()
    for path in paths:
        first = read_json_list(path, "benchmark")[0]
        if isinstance(first, dict) and "conversation" in first:
            turns = [t for c in locomo.load(path) for t in c.turns]
        else:
            turns = [t for case in longmemeval.load(path) for t in case.turns]
        for turn in turns:
            text = turn_content(turn)
            if text not in seen:
                seen.add(text)
                yield text


def fact_memory(fact: Fact, at: datetime) -> Memory:
    return Memory(
        content=fact.fact,
        kind=Kind.SEMANTIC,
        category=Category.ENTITIES,
        tier=Tier.WORKING,
        created_at=format_time(at),
        scope=BENCH_SCOPE,
        source=f"paraphrase:{fact.id}",
    )


def distractor_memory(text: str, at: datetime) -> Memory:
    return Memory(
        content=text,
        kind=Kind.EPISODIC,
        category=Category.EVENTS,
        tier=Tier.WORKING,
        created_at=format_time(at),
        scope=BENCH_SCOPE,
        source="paraphrase:distractor",
    )


@dataclass
class Tally:
    """Counts per (retriever, half)."""

    asked: dict[tuple[str, str], int] = field(default_factory=dict)
    found: dict[tuple[str, str], int] = field(default_factory=dict)
    empty: dict[tuple[str, str], int] = field(default_factory=dict)
    unrelated: dict[tuple[str, str], int] = field(default_factory=dict)
    answered: dict[tuple[str, str], int] = field(default_factory=dict)
    named: dict[tuple[str, str], int] = field(default_factory=dict)
    named_clear: dict[tuple[str, str], int] = field(default_factory=dict)
    named_first: dict[tuple[str, str], int] = field(default_factory=dict)
    # one record per question asked: what each retriever's top K were (``--details``)
    per_question: list[dict[str, object]] = field(default_factory=list)
    lost: bool = False  # where each fact memctl misses was lost, in its record (``where_lost``)

    def add(self, counts: dict[tuple[str, str], int], key: tuple[str, str], n: int = 1) -> None:
        counts[key] = counts.get(key, 0) + n

    def rows(self, size: int) -> list[dict[str, object]]:
        rows: list[dict[str, object]] = []
        for name, half in sorted(self.asked):
            key = (name, half)
            asked, unrelated = self.asked[key], self.unrelated.get(key, 0)
            named = self.named.get(key, 0)
            row: dict[str, object] = {
                "store": size,
                "retriever": name,
                "half": half,
                "paraphrases": asked,
                f"found@{K}": round(100 * self.found.get(key, 0) / asked, 1),
                "empty": round(100 * self.empty.get(key, 0) / asked, 1),
                "unrelated": unrelated,
                "unrelated answered": round(100 * self.answered.get(key, 0) / unrelated, 1)
                if unrelated
                else 0.0,
            }
            if named:
                row["named"] = named
                row["named clear"] = round(100 * self.named_clear.get(key, 0) / named, 1)
                row["named clear@1"] = round(100 * self.named_first.get(key, 0) / named, 1)
            rows.append(row)
        return rows


def ask(
    stores: BenchStores,
    facts: list[Fact],
    distractors: list[str],
    unrelated: list[tuple[str, str]],
    retrievers: dict[str, Retriever],
    tally: Tally,
    named_questions: Sequence[tuple[str, str]] = (),
) -> None:
    """One store of ``facts`` and ``distractors``; every question asked of every retriever."""
    now = datetime.now(UTC).replace(microsecond=0)
    step = STORED_OVER / max(1, len(facts) + len(distractors))
    memories = [fact_memory(f, now - STORED_OVER + i * step) for i, f in enumerate(facts)]
    start = len(memories)
    memories += [
        distractor_memory(text, now - STORED_OVER + (start + i) * step)
        for i, text in enumerate(distractors)
    ]
    ctx = stores.new()
    stores.fill(ctx, memories, chunk=1000)
    wanted = {m.id: f.id for m, f in zip(memories, facts, strict=False)}
    stored = {f: m for m, f in wanted.items()}
    # each stored memory by a name identical runs share (its memory id is new each run)
    named = {m.id: wanted.get(m.id, f"distractor:{i - start}") for i, m in enumerate(memories)}
    size = len(memories)
    try:
        for name, retriever in retrievers.items():
            for fact in facts:
                key = (name, fact.half)
                found = retriever(ctx, Question(fact.question, now), DEPTH)
                tally.add(tally.asked, key)
                tally.add(tally.empty, key, not found)
                hit = fact.id in {wanted.get(i) for i in found[:K]}
                tally.add(tally.found, key, hit)
                top = [named.get(i, i) for i in found[:K]]
                detail = _detail(size, name, fact.id, top)
                if tally.lost and not hit and retriever is memctl_recall:
                    detail["lost"] = where_lost(ctx, Question(fact.question, now), stored[fact.id])
                tally.per_question.append(detail)
            for identifier, question in unrelated:
                key = (name, half_of(identifier))
                found = retriever(ctx, Question(question, now), DEPTH)
                tally.add(tally.unrelated, key)
                tally.add(tally.answered, key, bool(found))
                top = [named.get(i, i) for i in found[:K]]
                tally.per_question.append(_detail(size, name, identifier, top))
            if retriever is memctl_recall:
                for identifier, question in named_questions:
                    labels = clear_labels(ctx, Question(question, now))
                    key = (name, half_of(identifier))
                    tally.add(tally.named, key)
                    tally.add(tally.named_clear, key, any(labels))
                    tally.add(tally.named_first, key, bool(labels) and labels[0])
    finally:
        stores.discard(ctx)


def clear_labels(ctx: Context, question: Question) -> list[bool]:
    """Whether each of recall's results (as ``memctl_recall`` runs it) is a clear match."""
    from memctl.retrieve.pipeline import recall

    found = recall(ctx, question.text, DEPTH, now=question.now, touch=False)
    return [r.clear for r in found.results]


def where_lost(ctx: Context, question: Question, memory_id: str) -> dict[str, object]:
    """Where recall (as ``memctl_recall`` runs it) loses a memory it does not show in its
    top ``K``: the stage and reason ``memctl recall --why-not`` gives (``candidates``: no
    leg found it, with its rank in the vector leg over the whole store; ``limit``: a
    candidate ranked below the rows shown; another stage: it dropped it) and its row."""
    from memctl.retrieve.explain import why_not
    from memctl.retrieve.pipeline import recall

    found = recall(ctx, question.text, DEPTH, now=question.now, touch=False)
    report = why_not(ctx, found, memory_id)
    return {"stage": report.stage, "row": report.rank, "reason": report.reason}


def _detail(size: int, retriever: str, question: str, top: list[str]) -> dict[str, object]:
    return {"store": size, "retriever": retriever, "question": question, f"top{K}": top}


def run(
    settings: Settings,
    cache: EmbeddingCache,
    sizes: list[int],
    distractor_files: list[Path],
    retrievers: dict[str, Retriever],
    data: Path = DATA,
    details: list[dict[str, object]] | None = None,
) -> list[dict[str, object]]:
    """One row per store size, retriever and half; ``details`` gets a record per question."""
    facts = load_facts(data / "facts.jsonl")
    unrelated = load_unrelated(data / "unrelated.jsonl")
    named_path = data / "named_unanswered.jsonl"
    named = load_unrelated(named_path) if named_path.is_file() else []
    largest = max(sizes) - len(facts)
    pool = []
    if largest > 0:
        pool = [t for _, t in zip(range(largest), distractor_texts(distractor_files), strict=False)]
    rows = []
    with BenchStores(settings, cache) as stores:
        for size in sizes:
            tally = Tally(lost=details is not None)
            if size <= SMALL:
                for start in range(0, len(facts), size):
                    group = facts[start : start + size]
                    ask(stores, group, [], unrelated, retrievers, tally, named)
            else:
                needed = size - len(facts)
                if needed > len(pool):
                    raise InputError(
                        f"a store of {size} needs {needed} distractor turns; "
                        f"--distractors gave {len(pool)}"
                    )
                ask(stores, facts, pool[:needed], unrelated, retrievers, tally, named)
            rows += tally.rows(size)
            if details is not None:
                details += tally.per_question
    return rows
