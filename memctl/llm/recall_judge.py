"""The two LLM services recall can use: relevance scores for reranking, and translation of
a non-English query for the dual pass. Both through Ollama's chat API with JSON output.

Both go through the one LLM client of this package (memctl.llm.ollama).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memctl.config import Settings
    from memctl.llm import LLM

RERANK_PROMPT = (
    "Rate how relevant each numbered memory is to the query, from 0 (unrelated) to 10 "
    '(answers it). Answer with JSON: {"scores": [{"id": <number>, "score": <0-10>}]}.'
)
TRANSLATE_PROMPT = (
    "Translate the user's search query into English. Keep names, identifiers and file "
    'paths as they are. Answer with JSON: {"english": "<translation>"}.'
)
SCORES_SCHEMA = {
    "type": "object",
    "properties": {
        "scores": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "score": {"type": "number"}},
                "required": ["id", "score"],
            },
        }
    },
    "required": ["scores"],
}
TRANSLATION_SCHEMA = {
    "type": "object",
    "properties": {"english": {"type": "string"}},
    "required": ["english"],
}


class RecallJudge:
    """Reranking and translation with one LLM; recall waits for it, so no retries."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    def relevance(self, query: str, passages: list[str]) -> list[float]:
        """A score in [0, 1] per passage; a passage the model skipped scores 0."""
        listing = "\n".join(f"[{i}] {' '.join(p.split())[:600]}" for i, p in enumerate(passages))
        prompt = f"Query: {query}\n\nMemories:\n{listing}"
        return self.llm.complete_json(
            RERANK_PROMPT, prompt, SCORES_SCHEMA, lambda answer: _scores(answer, len(passages))
        ).value

    def translate(self, text: str) -> str:
        return self.llm.complete_json(TRANSLATE_PROMPT, text, TRANSLATION_SCHEMA, _english).value


def _scores(answer: Any, count: int) -> list[float]:
    scores = [0.0] * count
    try:
        for item in answer["scores"]:
            index, score = int(item["id"]), float(item["score"])
            if 0 <= index < count:
                scores[index] = min(max(score / 10.0, 0.0), 1.0)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"scores in the wrong shape: {exc}") from None
    return scores


def _english(answer: Any) -> str:
    english = answer.get("english") if isinstance(answer, dict) else None
    if not isinstance(english, str) or not english.strip():
        raise ValueError("no translation")
    return english.strip()


def recall_judge(settings: Settings, model: str) -> RecallJudge:
    """The judge for ``recall.llm_model`` on the configured Ollama server."""
    from memctl.llm.ollama import OllamaLLM

    return RecallJudge(OllamaLLM(settings.ollama_host, model, settings.ollama_timeout, retries=0))
