"""LongMemEval (Wu et al., ICLR 2025): does recall find the sessions that hold the answer?

Each question has its own haystack of about 50 dated chat sessions: a fresh
store per question, every turn one memory. Recall is asked the question as
of ``question_date``; a session ranks where its best-ranked turn does.
Scored as in the paper: session-level recall_all@k (every evidence session
in the top k) and NDCG@k, recall_any@k (at least one evidence session in the
top k, the figure peers publish), plus turn-level recall@10 against the turns
marked ``has_answer``; abstention questions (``_abs``) are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.datafile import read_json_list, record_errors
from benchmarks.embedcache import EmbeddingCache
from benchmarks.haystack import BenchStores, Turn, turn_content
from benchmarks.metrics import Tally, distinct, ndcg_at, recall_all_at, recall_any_at, recall_at
from benchmarks.report import Progress, QualityReport, Timer, gold_ranks, ingest_figures
from benchmarks.retrievers import CAVEATS, Question, Retriever
from benchmarks.unrelated import DEPTH as UNRELATED_DEPTH
from benchmarks.unrelated import QUERIES, unrelated_results
from memctl.config import Settings

DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"
DEPTH = 100  # memories retrieved per question: enough to rank 10 distinct sessions
SESSION_KS = (5, 10)
TURN_K = 10
METRICS = [
    *(f"{name}@{k}" for k in SESSION_KS for name in ("recall_all", "recall_any", "ndcg")),
    f"turn_recall@{TURN_K}",
]
TYPES = [
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
]
OVERALL = "overall"
# Odd-numbered questions are the half recall's constants may be tuned on, even ones the
# half they never are: every report gives both.
TUNE, CHECK = f"{OVERALL}, tune half", f"{OVERALL}, check half"


@dataclass(frozen=True)
class Case:
    """One question with its haystack; the gold fields are read only when scoring."""

    qid: str
    qtype: str
    question: Question
    turns: list[Turn]
    answer_sessions: frozenset[str]
    answer_turns: frozenset[str]
    tune: bool = True  # an odd-numbered question of its file

    @property
    def groups(self) -> tuple[str, ...]:
        return (self.qtype, OVERALL, TUNE if self.tune else CHECK)

    @property
    def abstention(self) -> bool:
        return self.qid.endswith("_abs")


def parse_date(text: str) -> datetime:
    """``2023/05/30 (Tue) 23:47`` as a UTC datetime."""
    return datetime.strptime(text, DATE_FORMAT).replace(tzinfo=UTC)


def case_from(record: dict, tune: bool = True) -> Case:  # type: ignore[type-arg]
    turns, answer_turns = [], set()
    sessions = zip(
        record["haystack_session_ids"],
        record["haystack_dates"],
        record["haystack_sessions"],
        strict=True,
    )
    for session_id, date, session in sessions:
        at = parse_date(date)
        for index, turn in enumerate(session):
            key = f"{session_id}:{index}"
            turns.append(Turn(key, session_id, turn["role"], turn["content"], at, index))
            if turn.get("has_answer"):
                answer_turns.add(key)
    # Some haystacks hold sessions dated later on the question's own day (up to 13 hours in
    # the dev file); they are part of what the question is asked against, so it is asked
    # after them (the same day: "last Saturday" reads the same).
    asked = max([parse_date(record["question_date"]), *(turn.said_at for turn in turns)])
    return Case(
        qid=str(record["question_id"]),
        qtype=str(record["question_type"]),
        question=Question(str(record["question"]), asked),
        turns=turns,
        answer_sessions=frozenset(record["answer_session_ids"]),
        answer_turns=frozenset(answer_turns),
        tune=tune,
    )


def load(
    path: Path, limit: int | None = None, half: str | None = None, every: int = 1
) -> list[Case]:
    """The questions of a LongMemEval file (the first ``limit``; of one ``half``, "tune" or
    "check", when given; every ``every``-th of those: the file is sorted by type, so a
    half, or every third question, keeps every type), in file order."""
    records = read_json_list(path, "LongMemEval")
    cases = []
    for index, record in enumerate(records, start=1):
        with record_errors(path, "question", index):
            cases.append(case_from(record, tune=index % 2 == 1))
    if half is not None:
        cases = [c for c in cases if c.tune == (half == "tune")]
    return cases[::every][:limit]


def haystack_texts(case: Case, sessions: bool) -> list[str]:
    """What a question's store embeds: its turns, or (``sessions``) their messages' parts."""
    from memctl.ingest.message_vectors import parts

    if not sessions:
        return [turn_content(turn) for turn in case.turns]

    return [piece for turn in case.turns for piece in parts(turn.text)]


def score(tally: Tally, name: str, case: Case, ranked: list[Turn]) -> dict[str, object]:
    """Add one question's figures for retriever ``name``; return where the gold ranked."""
    groups = case.groups
    sessions = distinct(turn.session for turn in ranked)
    keys = [turn.key for turn in ranked]
    for k in SESSION_KS:
        tally.add(name, groups, f"recall_all@{k}", recall_all_at(sessions, case.answer_sessions, k))
        tally.add(name, groups, f"recall_any@{k}", recall_any_at(sessions, case.answer_sessions, k))
        tally.add(name, groups, f"ndcg@{k}", ndcg_at(sessions, case.answer_sessions, k))
    if case.answer_turns:
        tally.add(name, groups, f"turn_recall@{TURN_K}", recall_at(keys, case.answer_turns, TURN_K))
    return {
        "sessions": gold_ranks(sessions, case.answer_sessions),
        # the row of the results each evidence session first shows at: several rows from
        # one session push the others down the list a person reads
        "rows": gold_ranks([turn.session for turn in ranked], case.answer_sessions),
        "turns": gold_ranks(keys, case.answer_turns),
    }


def run(
    settings: Settings,
    cache: EmbeddingCache,
    path: Path,
    retrievers: dict[str, Retriever],
    limit: int | None = None,
    progress: Progress | None = None,
    sessions: bool = False,
    message_vectors: bool = True,
    half: str | None = None,
    every: int = 1,
    embedded_only: bool = False,
) -> QualityReport:
    """Every retriever on every non-abstention question, each in a fresh store: every turn
    a memory, or (``sessions``) a session message with its stored vectors, as memctl
    keeps a real session before distilling it (retriever memctl-sessions ranks them).
    ``embedded_only``: only the questions whose turns ``cache`` holds every vector of (a
    run cut short resumes from what it embedded; the report counts the questions)."""
    cases = load(path, limit, half, every)
    scored = [c for c in cases if not c.abstention]
    if embedded_only:
        scored = [c for c in scored if cache.holds(haystack_texts(c, sessions))]
    tally, timer = Tally(), Timer()
    per_question: list[dict[str, object]] = []
    unrelated: dict[str, int] = dict.fromkeys(retrievers, 0)
    with BenchStores(settings, cache) as stores:
        for done, case in enumerate(scored, start=1):
            source = f"longmemeval:{case.qid}"
            if sessions:
                ctx, turns = stores.session_haystack(case.turns, source, message_vectors)
            else:
                ctx, turns = stores.haystack(case.turns, source)
            try:
                timer.warm(ctx, retrievers)
                for name, count in unrelated_results(ctx, retrievers, UNRELATED_DEPTH).items():
                    unrelated[name] += count
                ranks = {}
                for name, retriever in retrievers.items():
                    ids = timer.run(name, retriever, ctx, case.question, DEPTH)
                    # a result that is no turn (the graph's synthetic one) is left out
                    ranks[name] = score(tally, name, case, [turns[i] for i in ids if i in turns])
                per_question.append(
                    {
                        "id": case.qid,
                        "type": case.qtype,
                        "question": case.question.text,
                        "ranks": ranks,
                    }
                )
            finally:
                stores.discard(ctx)
            if progress:
                progress(done, len(scored))
        ingest = ingest_figures(stores.stats, cache)
    groups = [t for t in TYPES if any(c.qtype == t for c in scored)]
    groups += sorted({c.qtype for c in scored} - set(TYPES)) + [OVERALL, TUNE, CHECK]
    counts = {g: sum(1 for c in scored if g in c.groups) for g in groups}
    return QualityReport(
        benchmark="longmemeval",
        data=str(path),
        retrievers=list(retrievers),
        groups=groups,
        metrics=METRICS,
        scores=tally.table(retrievers, groups, METRICS),
        questions=counts,
        latency_ms=timer.summary(),
        ingest=ingest,
        notes=[
            f"{len(cases) - len(scored)} abstention questions skipped",
            f"{sum(1 for c in scored if not c.answer_turns)} questions have no has_answer turn "
            f"(left out of turn_recall@{TURN_K})",
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
        unrelated={"queries": len(QUERIES), "stores": len(scored), "results": unrelated},
    )
