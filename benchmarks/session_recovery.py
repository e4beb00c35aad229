"""Recovery: how often the verbatim sessions give back a question's evidence turn, by
`memctl sessions grep` (top 10) and, with ``--expand``, by `memctl sessions expand` on
the memories `memctl recall` returns.

    .venv/bin/python benchmarks/session_recovery.py --locomo PATH [--longmemeval PATH] \
        [--limit N] [--k 10] [--expand]

Each LoCoMo conversation (and each LongMemEval question's haystack) is stored
as memctl sessions in a fresh store, one session per dataset session, one
message per turn (LoCoMo: ``Speaker: text``, the first speaker as the user),
written through the store as capture writes them (no privacy pass: public data).
Each question, as asked, goes to ``memctl.api.sessions.grep`` (every project,
``--limit K``) and the hits are mapped back to dataset turns.

With ``--expand`` the store is then distilled as a user's is: each session's
job queued as capture queues it and run by the worker's own drain
(``memctl.api.ingest.drain_jobs``: rule-based facts and a digest per session,
``llm: none``, the configured embedder). Each question goes to recall
(``memctl.retrieve.pipeline.recall``, its default limit, as of when it is
asked, every scope, no access recorded), and ``memctl.api.sessions.expand``
(its default turns around) opens every memory of its top 5 and top 10; the
messages opened are mapped back to dataset turns. Also shown: from the top 10's
facts alone and from its digests alone (a digest opens its whole session), the
messages opened per question, and what the distilled store held.

Printed: the share of questions with at least one evidence turn reached (and,
for grep and expand top 10, with every one), by category and by half (odd
conversations or questions: the tune half; even: the check half). Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import locomo, longmemeval  # noqa: E402
from benchmarks.haystack import Turn  # noqa: E402
from memctl.api import sessions as api  # noqa: E402
from memctl.api.ingest import drain_jobs  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.embed import Embedder, get_embedder  # noqa: E402
from memctl.errors import MemctlError  # noqa: E402
from memctl.ingest.capture import queue_distillation  # noqa: E402
from memctl.memories.provenance import DIGEST_TAG  # noqa: E402
from memctl.model import Memory, Message, Role, Session, State, format_time  # noqa: E402
from memctl.retrieve.pipeline import recall  # noqa: E402
from memctl.store.memories import MemoryFilter, list_memories  # noqa: E402
from memctl.store.sessions import insert_messages, save_session  # noqa: E402

EVERYWHERE = api.Where(all_scopes=True)
ACTIVE = MemoryFilter(states=(State.ACTIVE,))
TOP = 10  # recall's default limit
EXPAND_KS = (5, TOP)  # expand recall's top 5 and top 10
Keys = dict[tuple[str, int], str]  # (session id, seq) -> the turn's dataset key
LME_GROUPS = [*longmemeval.TYPES, longmemeval.OVERALL, longmemeval.TUNE, longmemeval.CHECK]
COUNTS = (f"opened@{TOP}", f"by facts@{TOP}")  # figures that are a mean per question, not a share


def store(ctx: Context, turns: Iterable[Turn], named: bool) -> Keys:
    """The turns as sessions; (session id, seq) -> the turn's dataset key."""
    by_session: dict[str, list[Turn]] = defaultdict(list)
    for turn in turns:
        by_session[turn.session].append(turn)
    keys = {}
    with ctx.db.atomic():
        for session_id, said in by_session.items():
            first = said[0].speaker
            session = Session(
                id=session_id,
                client="generic",
                scope="bench",
                started_at=format_time(said[0].at),
                created_at=format_time(said[0].at),
                message_count=len(said),
            )
            save_session(ctx.db, session)
            messages = []
            for seq, turn in enumerate(said, start=1):
                role = Role.USER if turn.speaker in (first, "user") else Role.ASSISTANT
                text = f"{turn.speaker}: {turn.text}" if named else turn.text
                messages.append(Message(role, text, format_time(turn.said_at), session_id, seq))
                keys[(session_id, seq)] = turn.key
            insert_messages(ctx.db, messages)
    return keys


def queue_and_drain(ctx: Context, keys: Keys) -> int:
    """Queue each session's job as capture does and run them as the worker does; the jobs
    that failed."""
    for session_id in dict.fromkeys(session for session, _ in keys):
        queue_distillation(ctx.db, session_id)
    return len(drain_jobs(ctx, "ingest").failed)


@dataclass
class Held:
    """What the distilled stores held, summed over them."""

    stores: int = 0
    sessions: int = 0
    messages: int = 0
    facts: int = 0
    digests: int = 0
    failed_jobs: int = 0
    cpu_seconds: float = 0.0  # distilling (this process's CPU time)
    categories: Counter[str] = field(default_factory=Counter)
    said_by: Counter[str] = field(default_factory=Counter)  # a fact's source role
    sessions_without_facts: int = 0

    def distil(self, ctx: Context, keys: Keys) -> None:
        """Distil a store as the worker does, and add what it then holds."""
        began = time.process_time()
        failed = queue_and_drain(ctx, keys)
        self.cpu_seconds += time.process_time() - began
        memories = list_memories(ctx.db, ACTIVE, limit=None)
        sessions = {session for session, _ in keys}
        facts = [m for m in memories if DIGEST_TAG not in m.tags]
        self.stores += 1
        self.sessions += len(sessions)
        self.messages += len(keys)
        self.facts += len(facts)
        self.digests += len(memories) - len(facts)
        self.failed_jobs += failed
        self.categories.update(str(m.category) for m in facts)
        self.said_by.update(m.source.rpartition(":")[2] for m in facts)
        self.sessions_without_facts += len(sessions - {m.session_id for m in facts})

    def lines(self) -> list[str]:
        per = max(1, self.sessions)
        return [
            f"distilled: {self.stores} stores, {self.sessions} sessions, {self.messages} messages"
            f" -> {self.facts} facts ({self.facts / per:.2f} a session; "
            f"{self.sessions_without_facts} sessions with none) and {self.digests} digests "
            f"({self.digests / per:.2f} a session); {self.failed_jobs} jobs failed; "
            f"{self.cpu_seconds:.1f} s CPU",
            "facts by category: " + _counts(self.categories),
            "facts by who said them: " + _counts(self.said_by),
        ]


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counter.most_common()) or "none"


@dataclass
class Tally:
    """Per group, per figure: how many questions reached their evidence (or a sum)."""

    figures: list[str] = field(default_factory=list)
    asked: Counter[str] = field(default_factory=Counter)
    sums: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))

    def add(self, groups: Iterable[str], figures: dict[str, float]) -> None:
        for name in figures:
            if name not in self.figures:
                self.figures.append(name)
        for group in groups:
            self.asked[group] += 1
            self.sums[group].update(figures)

    def print(self, title: str, groups: list[str]) -> None:
        """One row per group (in ``groups``' order): each figure as a share of its
        questions, or (``COUNTS``) as a mean per question."""
        print(title)
        print(f"{'group':<26} {'questions':>9} " + " ".join(f"{f:>15}" for f in self.figures))
        for group in [g for g in groups if g in self.asked]:
            asked = self.asked[group]
            cells = [
                f"{self.sums[group][f] / asked:15.1f}"
                if f in COUNTS
                else f"{self.sums[group][f] / asked:15.1%}"
                for f in self.figures
            ]
            print(f"{group:<26} {asked:9d} " + " ".join(cells))


@dataclass
class Expander:
    """Recall, then ``sessions expand`` on what it returns, in one distilled store."""

    ctx: Context
    keys: Keys
    unexpandable: Counter[str]  # why a returned memory could not be opened
    opened: dict[str, set[str]] = field(default_factory=dict)  # memory id -> turns

    def turns(self, memory: Memory) -> set[str]:
        if memory.id not in self.opened:
            try:
                passages = api.expand(self.ctx, memory.id)
            except MemctlError as error:
                self.unexpandable[f"{type(error).__name__}: {error}".split(" (")[0]] += 1
                found: set[str] = set()
            else:
                found = {self.keys[(m.session_id, m.seq)] for p in passages for m in p.messages}
            self.opened[memory.id] = found
        return self.opened[memory.id]

    def figures(
        self, text: str, now: datetime | None, evidence: frozenset[str]
    ) -> dict[str, float]:
        results = recall(self.ctx, text, None, None, now=now, touch=False).results
        memories = [r.memory for r in results if not r.is_message]
        figures: dict[str, float] = {}
        for k in EXPAND_KS:
            reached = set().union(*(self.turns(m) for m in memories[:k]))
            figures[f"expand@{k}"] = bool(reached & evidence)
        top = memories[:TOP]
        reached = set().union(*(self.turns(m) for m in top))
        facts = set().union(*(self.turns(m) for m in top if DIGEST_TAG not in m.tags))
        digests = set().union(*(self.turns(m) for m in top if DIGEST_TAG in m.tags))
        figures[f"expand all@{TOP}"] = evidence <= reached
        figures[f"facts@{TOP}"] = bool(facts & evidence)
        figures[f"digests@{TOP}"] = bool(digests & evidence)
        figures[f"opened@{TOP}"] = len(reached)
        figures[f"by facts@{TOP}"] = len(facts)
        figures["no clear memory"] = not any(r.clear and not r.is_message for r in results)
        return figures


@dataclass
class Run:
    """The settings every store of a run is made with, and its one embedder."""

    tmp: Path
    k: int
    expand: bool
    overrides: dict[str, str]
    embedder: Embedder
    held: Held = field(default_factory=Held)
    unexpandable: Counter[str] = field(default_factory=Counter)
    grep_times: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, tmp: Path, k: int, expand: bool) -> Run:
        # grep alone needs no model; expand needs the store a user has: the configured
        # embedder, and the rules (no LLM) for distillation
        overrides = {"llm": "none"} if expand else {"embedder": "hash"}
        embedder = get_embedder(load_settings(home=tmp, overrides=overrides))
        return cls(tmp, k, expand, overrides, embedder)

    @contextmanager
    def fresh(self, name: str, turns: Iterable[Turn], named: bool) -> Iterator[Expander]:
        """A store of its own holding ``turns`` as sessions, distilled with ``--expand``."""
        settings = load_settings(home=self.tmp / name, overrides=self.overrides)
        with Context(settings, self.embedder) as ctx:
            keys = store(ctx, turns, named)
            if self.expand:
                self.held.distil(ctx, keys)
            yield Expander(ctx, keys, self.unexpandable)

    def grep(self, expander: Expander, text: str) -> list[api.GrepMatch]:
        began = time.perf_counter()
        hits = api.grep(expander.ctx, text, EVERYWHERE, limit=self.k, around=0)
        self.grep_times.append(time.perf_counter() - began)
        return hits

    def print_footer(self) -> None:
        times = sorted(self.grep_times)
        if times:
            print(f"grep p50 {1000 * times[len(times) // 2]:.1f} ms over {len(times)} questions")
        if self.expand:
            for line in self.held.lines():
                print(line)
            print("returned memories expand could not open: " + _counts(self.unexpandable))


def run_locomo(run: Run, path: Path, limit: int | None) -> Tally:
    tally = Tally()
    for conversation in locomo.load(path, limit):
        with run.fresh(f"locomo-{conversation.sample_id}", conversation.turns, True) as expander:
            for case in conversation.cases:
                hits = run.grep(expander, case.question.text)
                found = {expander.keys[(m.hit.session_id, m.hit.seq)] for m in hits}
                figures: dict[str, float] = {
                    f"grep@{run.k}": bool(found & case.evidence),
                    f"grep all@{run.k}": case.evidence <= found,
                }
                if run.expand:
                    question = case.question
                    figures |= expander.figures(question.text, question.now, case.evidence)
                tally.add(case.groups, figures)
    return tally


def run_longmemeval(run: Run, path: Path, limit: int | None) -> Tally:
    tally = Tally()
    for index, case in enumerate(longmemeval.load(path, limit)):
        if case.abstention or not case.answer_turns:
            continue
        with run.fresh(f"lme-{index}", case.turns, False) as expander:
            hits = run.grep(expander, case.question.text)
            found = {expander.keys[(m.hit.session_id, m.hit.seq)] for m in hits}
            figures: dict[str, float] = {
                f"grep@{run.k}": bool(found & case.answer_turns),
                f"grep session@{run.k}": bool(
                    {m.hit.session_id for m in hits} & case.answer_sessions
                ),
            }
            if run.expand:
                question = case.question
                figures |= expander.figures(question.text, question.now, case.answer_turns)
        tally.add(case.groups, figures)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locomo", type=Path)
    parser.add_argument("--longmemeval", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="questions per file")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument(
        "--expand",
        action="store_true",
        help="also distil each store and expand the memories recall returns",
    )
    args = parser.parse_args()
    if not args.locomo and not args.longmemeval:
        parser.error("give --locomo PATH and/or --longmemeval PATH")
    with tempfile.TemporaryDirectory() as tmp:
        if args.locomo:
            run = Run.of(Path(tmp), args.k, args.expand)
            tally = run_locomo(run, args.locomo, args.limit)
            tally.print(f"LoCoMo ({args.locomo.name}): evidence turns reached", locomo.GROUPS)
            run.print_footer()
        if args.longmemeval:
            run = Run.of(Path(tmp), args.k, args.expand)
            tally = run_longmemeval(run, args.longmemeval, args.limit)
            tally.print(
                f"LongMemEval ({args.longmemeval.name}): evidence turns reached", LME_GROUPS
            )
            run.print_footer()


if __name__ == "__main__":
    main()
