"""Stage 6, rerank (off unless recall.rerank): an LLM scores each candidate's relevance.

score = rerank_weight x LLM score + (1 - rerank_weight) x score. When the LLM
cannot answer, every candidate keeps its score and recall says why. Every
candidate's pre-rerank score is kept for the BM25 floor.
"""

from __future__ import annotations

from typing import Protocol

from memctl.errors import MemctlError
from memctl.retrieve.run import KEPT, RESCORED, Candidate, Run, by_score

STAGE = "rerank"


class Judge(Protocol):
    def relevance(self, query: str, passages: list[str]) -> list[float]: ...


def judge_for(run: Run) -> Judge:
    from memctl.llm.recall_judge import recall_judge

    return recall_judge(run.ctx.settings, run.params.llm_model)


def rerank(run: Run, candidates: list[Candidate], judge: Judge | None = None) -> list[Candidate]:
    for candidate in candidates:
        candidate.pre_rerank = candidate.score
    if not run.params.rerank or not candidates:
        return candidates
    try:
        scores = (judge or judge_for(run)).relevance(
            run.query.text, [c.memory.content for c in candidates]
        )
    except MemctlError as exc:
        run.notes.append(f"rerank skipped, original order kept: {exc}")
        for candidate in candidates:
            run.record(STAGE, candidate, KEPT, why="reranker unavailable")
        return candidates
    weight = run.params.rerank_weight
    for candidate, llm in zip(candidates, scores, strict=True):
        before = candidate.score
        candidate.score = weight * llm + (1 - weight) * before
        factor = candidate.score / before if before else 1.0
        candidate.factors[STAGE] = factor
        run.record(STAGE, candidate, RESCORED, factor, f"LLM relevance {llm:.2f}")
    return by_score(candidates)
