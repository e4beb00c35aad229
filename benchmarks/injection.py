"""Per-prompt injection (issue 24): is the evidence in the block the per-prompt hook adds,
and is nothing added for an unrelated prompt?

Per LoCoMo conversation a fresh store, every dialog turn one memory (as
``benchmarks.locomo`` stores them). Each question (categories 1-4) is a
prompt: it goes through ``memctl.api.recall.prompt_context``, what the
``UserPromptSubmit`` hook calls, as of when it is asked, in a session that has
been given nothing yet. Scored: the share of its evidence turns in the injected
block (averaged over questions, next to the recall@5 of ``memctl recall`` on
the same store, the figure to match), whether any evidence was injected, and
whether nothing was. Then every unrelated prompt (``--unrelated``, JSON lines
with ``id`` and ``question``; and the 20 queries of ``benchmarks.unrelated``)
goes to every store: the share of (prompt, store) pairs given a block, for the
hook and for ``memctl recall`` (anything returned).

Two halves, as in the other benchmarks: odd-numbered conversations and
odd-numbered unrelated ids are the tune half (constants may be chosen on it),
even ones the check half (they never are).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import locomo
from benchmarks.embedcache import EmbeddingCache
from benchmarks.haystack import BENCH_SCOPE, BenchStores
from benchmarks.metrics import recall_at
from benchmarks.paraphrase import HALVES, half_of, load_unrelated
from benchmarks.retrievers import Question, memctl_prompt
from benchmarks.unrelated import QUERIES
from memctl.config import Settings
from memctl.context import Context
from memctl.retrieve.pipeline import recall

UNRELATED = Path(__file__).with_name("paraphrase") / "unrelated.jsonl"
K = 5  # recall@K of `memctl recall`: the figure injection is held to

Progress = Callable[[int, int], None]


def recalled(ctx: Context, question: Question, clear_only: bool = False) -> list[str]:
    """What `memctl recall --as-of DATE --no-touch` returns (its default limit): its clear
    matches then its possible ones, or with ``clear_only`` the clear ones alone."""
    found = recall(
        ctx,
        question.text,
        None,
        (BENCH_SCOPE,),
        now=question.now,
        touch=False,
        possible=0 if clear_only else None,
    )
    return [r.memory.id for r in found.results]


@dataclass
class Half:
    """Sums over one half's questions and unrelated prompts."""

    questions: int = 0
    recall: float = 0.0  # recall@K of `memctl recall`, summed
    evidence: float = 0.0  # share of evidence turns injected, summed
    any_evidence: int = 0
    nothing: int = 0
    items: int = 0  # memories injected, over the questions
    unrelated: int = 0  # (prompt, store) pairs
    unrelated_injected: int = 0
    unrelated_recalled: int = 0

    def row(self, half: str) -> dict[str, object]:
        asked, pairs = max(1, self.questions), max(1, self.unrelated)
        return {
            "half": half,
            "questions": self.questions,
            f"recall@{K}": round(100 * self.recall / asked, 1),
            "evidence injected": round(100 * self.evidence / asked, 1),
            "any evidence injected": round(100 * self.any_evidence / asked, 1),
            "nothing injected": round(100 * self.nothing / asked, 1),
            "memories per block": round(self.items / asked, 2),
            "unrelated prompts": self.unrelated,
            "unrelated injected": round(100 * self.unrelated_injected / pairs, 1),
            "unrelated with a clear match": round(100 * self.unrelated_recalled / pairs, 1),
        }


@dataclass
class Report:
    halves: dict[str, Half] = field(default_factory=lambda: {h: Half() for h in HALVES})
    per_question: list[dict[str, object]] = field(default_factory=list)

    def rows(self) -> list[dict[str, object]]:
        return [self.halves[h].row(h) for h in HALVES]


def unrelated_prompts(path: Path) -> list[tuple[str, str]]:
    """(half, prompt): the file's by their ids, the 20 built-in queries by position."""
    prompts = [(half_of(identifier), text) for identifier, text in load_unrelated(path)]
    return prompts + [(HALVES[i % 2], text) for i, text in enumerate(QUERIES)]


def ask_conversation(
    ctx: Context,
    conversation: locomo.Conversation,
    keys: dict[str, str],
    unrelated: list[tuple[str, str]],
    report: Report,
) -> None:
    """Every question of one conversation's store, then every unrelated prompt."""
    for case in conversation.cases:
        if case.category == 5:
            continue  # adversarial: the question names what was never said
        half = report.halves[HALVES[0] if case.tune else HALVES[1]]
        ranked = [keys[i] for i in recalled(ctx, case.question)]
        given = [keys[i] for i in memctl_prompt(ctx, case.question, K)]
        share = recall_at(given, case.evidence, len(given)) if given else 0.0
        half.questions += 1
        half.recall += recall_at(ranked, case.evidence, K)
        half.evidence += share
        half.any_evidence += share > 0
        half.nothing += not given
        half.items += len(given)
        report.per_question.append(
            {
                "conversation": conversation.sample_id,
                "question": case.question.text,
                "category": case.category,
                "evidence": sorted(case.evidence),
                "recalled": ranked[:K],
                "injected": given,
            }
        )
    asked_at = conversation.cases[0].question.now if conversation.cases else None
    for half_name, text in unrelated:
        half = report.halves[half_name]
        question = Question(text, asked_at)
        half.unrelated += 1
        half.unrelated_injected += bool(memctl_prompt(ctx, question, K))
        half.unrelated_recalled += bool(recalled(ctx, question, clear_only=True))


Asker = Callable[[Context, locomo.Conversation, dict[str, str]], None]


def each_conversation(
    settings: Settings,
    cache: EmbeddingCache,
    path: Path,
    ask: Asker,
    limit: int | None = None,
    progress: Progress | None = None,
) -> None:
    """``ask`` each of ``path``'s conversations in a store of its own (its turns as memories;
    ``keys``: a memory's id -> its turn's key), the store discarded after."""
    conversations = locomo.load(path, limit)
    with BenchStores(settings, cache) as stores:
        for done, conversation in enumerate(conversations, start=1):
            ctx, turns = stores.haystack(conversation.turns, f"locomo:{conversation.sample_id}")
            try:
                ask(ctx, conversation, {memory_id: turn.key for memory_id, turn in turns.items()})
            finally:
                stores.discard(ctx)
            if progress:
                progress(done, len(conversations))


def run(
    settings: Settings,
    cache: EmbeddingCache,
    path: Path,
    unrelated_path: Path = UNRELATED,
    limit: int | None = None,
    progress: Progress | None = None,
) -> Report:
    """Every question and unrelated prompt of ``path``'s conversations, one store each."""
    unrelated = unrelated_prompts(unrelated_path)
    report = Report()
    each_conversation(
        settings,
        cache,
        path,
        lambda ctx, conversation, keys: ask_conversation(
            ctx, conversation, keys, unrelated, report
        ),
        limit,
        progress,
    )
    return report
