"""LoCoMo (Maharana et al., ACL 2024): does recall find the dialog turns a question rests on?

Per conversation a fresh store, every dialog turn one memory (a shared
image's caption kept with its turn, as the dataset gives it); the derived
``observation`` and summaries are never indexed, they leak the answers'
wording. Recall@k is the fraction of a question's evidence turns in the
top k, averaged over questions: per category, over categories 1-4 (the
usual figure) and over 1-5 (how the paper's DRAGON baseline is reported).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.datafile import read_json_list, record_errors
from benchmarks.embedcache import EmbeddingCache
from benchmarks.haystack import BenchStores, Turn
from benchmarks.metrics import Tally, recall_at
from benchmarks.report import Progress, QualityReport, Timer, gold_ranks, ingest_figures
from benchmarks.retrievers import CAVEATS, Question, Retriever
from benchmarks.unrelated import DEPTH as UNRELATED_DEPTH
from benchmarks.unrelated import QUERIES, unrelated_results
from memctl.config import Settings

DATE_FORMAT = "%I:%M %p on %d %B, %Y"
KS = (5, 10, 25, 50)
METRICS = [f"recall@{k}" for k in KS]
CATEGORIES = {1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop"}
ADVERSARIAL = "5 adversarial"
MAIN, ALL = "overall 1-4", "all 1-5"
# Odd-numbered conversations are the half recall's constants may be tuned on, even ones
# the half they never are: every report gives both, so a change that helps only the
# tuned half shows.
TUNE, CHECK = f"{MAIN}, tune half", f"{MAIN}, check half"
GROUPS = [*CATEGORIES.values(), MAIN, TUNE, CHECK, ADVERSARIAL, ALL]
SESSION = re.compile(r"session_(\d+)")
DIA_ID = re.compile(r"D0*(\d+):0*(\d+)")


@dataclass(frozen=True)
class Case:
    """One question; ``category`` and ``evidence`` are read only when scoring."""

    question: Question
    category: int
    evidence: frozenset[str]
    tune: bool = True  # from an odd-numbered conversation

    @property
    def groups(self) -> tuple[str, ...]:
        if self.category == 5:
            return (ADVERSARIAL, ALL)
        return (CATEGORIES[self.category], MAIN, TUNE if self.tune else CHECK, ALL)


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: list[Turn]
    cases: list[Case]
    unresolved: int  # evidence ids naming no turn, left out of scoring
    unscorable: int  # questions with no resolvable evidence, skipped


def dia_key(text: str) -> str | None:
    """``D30:05`` -> ``D30:5``: a dialog id without leading zeros, None if it is not one."""
    match = DIA_ID.fullmatch(text.strip())
    return f"D{int(match[1])}:{int(match[2])}" if match else None


def evidence_ids(evidence: list[str]) -> list[str]:
    """Evidence strings split on ``;``, commas and spaces (a few are joined that way)."""
    return [part for item in evidence for part in re.split(r"[;,\s]+", str(item)) if part]


def parse_date(text: str) -> datetime:
    """``1:56 pm on 8 May, 2023`` as a UTC datetime."""
    return datetime.strptime(text.strip(), DATE_FORMAT).replace(tzinfo=UTC)


def turn_text(turn: dict) -> str:  # type: ignore[type-arg]
    caption = turn.get("blip_caption")
    return f"{turn['text']} [shared image: {caption}]" if caption else str(turn["text"])


def conversation_turns(conversation: dict) -> list[Turn]:  # type: ignore[type-arg]
    numbers = sorted(int(m[1]) for key in conversation if (m := SESSION.fullmatch(key)) is not None)
    turns = []
    for number in numbers:
        at = parse_date(conversation[f"session_{number}_date_time"])
        for position, turn in enumerate(conversation[f"session_{number}"]):
            key = dia_key(turn["dia_id"]) or turn["dia_id"]
            session = f"session_{number}"
            turns.append(Turn(key, session, turn["speaker"], turn_text(turn), at, position))
    return turns


def conversation_from(
    record: dict,  # type: ignore[type-arg]
    questions: list[dict],  # type: ignore[type-arg]
    tune: bool = True,
) -> Conversation:
    turns = conversation_turns(record["conversation"])
    known = {turn.key for turn in turns}
    # questions come after the last session: after its last turn, or recall as of then
    # would not see that session's later turns
    asked_at = max(turn.said_at for turn in turns)
    cases, unresolved, unscorable = [], 0, 0
    for qa in questions:
        category = int(qa["category"])
        if category not in (*CATEGORIES, 5):
            raise ValueError(f"unknown question category {category}")
        keys = [dia_key(part) for part in evidence_ids(qa["evidence"])]
        evidence = frozenset(k for k in keys if k in known)
        unresolved += len(keys) - len(evidence)
        if not evidence:
            unscorable += 1
            continue
        cases.append(Case(Question(str(qa["question"]), asked_at), category, evidence, tune))
    return Conversation(str(record.get("sample_id", "")), turns, cases, unresolved, unscorable)


def load(path: Path, limit: int | None = None) -> list[Conversation]:
    """The conversations of a LoCoMo file with their questions; only the first ``limit``."""
    conversations, left = [], limit
    for index, record in enumerate(read_json_list(path, "LoCoMo"), start=1):
        if left is not None and left <= 0:
            break
        with record_errors(path, "conversation", index):
            questions = record["qa"][:left]
            conversations.append(conversation_from(record, questions, tune=index % 2 == 1))
        if left is not None:
            left -= len(questions)
    return conversations


def score(tally: Tally, name: str, case: Case, keys: list[str]) -> dict[str, int | None]:
    """Add one question's Recall@k for retriever ``name``; return where its evidence ranked."""
    for k in KS:
        tally.add(name, case.groups, f"recall@{k}", recall_at(keys, case.evidence, k))
    return gold_ranks(keys, case.evidence)


def run(
    settings: Settings,
    cache: EmbeddingCache,
    path: Path,
    retrievers: dict[str, Retriever],
    limit: int | None = None,
    progress: Progress | None = None,
    sessions: bool = False,
    message_vectors: bool = True,
) -> QualityReport:
    """Every retriever on every question, one fresh store per conversation: every turn a
    memory, or (``sessions``) a session message with (``message_vectors``) its stored
    vectors, as memctl keeps a real session before distilling it (retriever
    memctl-sessions ranks them)."""
    conversations = load(path, limit)
    total, done = sum(len(c.cases) for c in conversations), 0
    tally, timer = Tally(), Timer()
    per_question: list[dict[str, object]] = []
    unrelated: dict[str, int] = dict.fromkeys(retrievers, 0)
    with BenchStores(settings, cache) as stores:
        for conversation in conversations:
            source = f"locomo:{conversation.sample_id}"
            if sessions:
                ctx, turns = stores.session_haystack(conversation.turns, source, message_vectors)
            else:
                ctx, turns = stores.haystack(conversation.turns, source)
            try:
                timer.warm(ctx, retrievers)
                for name, count in unrelated_results(ctx, retrievers, UNRELATED_DEPTH).items():
                    unrelated[name] += count
                for case in conversation.cases:
                    ranks = {}
                    for name, retriever in retrievers.items():
                        ids = timer.run(name, retriever, ctx, case.question, max(KS))
                        # a result that is no turn (the graph's synthetic one) keeps its rank
                        keys = [turns[i].key if i in turns else i for i in ids]
                        ranks[name] = score(tally, name, case, keys)
                    per_question.append(
                        {
                            "conversation": conversation.sample_id,
                            "question": case.question.text,
                            "category": case.category,
                            "ranks": ranks,
                        }
                    )
                    done += 1
                    if progress:
                        progress(done, total)
            finally:
                stores.discard(ctx)
        ingest = ingest_figures(stores.stats, cache)
    cases = [case for c in conversations for case in c.cases]
    groups = [g for g in GROUPS if any(g in case.groups for case in cases)]
    return QualityReport(
        benchmark="locomo",
        data=str(path),
        retrievers=list(retrievers),
        groups=groups,
        metrics=METRICS,
        scores=tally.table(retrievers, groups, METRICS),
        questions={g: sum(1 for case in cases if g in case.groups) for g in groups},
        latency_ms=timer.summary(),
        ingest=ingest,
        notes=[
            f"{len(conversations)} conversations, {len(cases)} questions scored",
            f"{sum(c.unresolved for c in conversations)} evidence ids name no turn and are "
            f"left out; {sum(c.unscorable for c in conversations)} questions without any "
            "resolvable evidence are skipped",
            *(
                [
                    "turns stored as session messages, no memories, "
                    + ("with their vectors" if message_vectors else "without vectors")
                ]
                * sessions
            ),
            *CAVEATS,
        ],
        per_question=per_question,
        unrelated={"queries": len(QUERIES), "stores": len(conversations), "results": unrelated},
    )
